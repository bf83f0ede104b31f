// retained.test.mjs - the Retained column of a heap snapshot's ByName and
// CallTree (web/js table.js, main.js; /api/retained): playwright-core
// drives Debian's chromium against `heapscope view` of the committed
// .gcdump and a perf trace. The heap view's ByName shows each type's
// retained bytes (the 1,000 Node objects retain 1,056,000 with their
// payloads: tests/data/dotnet/heap.md), its CallTree each node's (the
// List<Node> node 1,064,248), empty with a reason where FoldPats put
// the byte[] payloads on the Node node; the retained view and the perf
// trace hide the column. Output is TAP; every wait is bounded.
//
// Environment: HS_BIN, HS_SRC, HS_BUILD (set by meson), HS_CHROMIUM; the
// TAP lines, deadline, view process and browser are harness.mjs's.

import path from 'node:path';
import { SRC, WAIT, begin, errors, launchBrowser, ok, runTest, setBox, settled,
  startView } from './harness.mjs';

const GCDUMP = path.join(SRC, 'tests/data/dotnet/heap-1000.gcdump');
const PERF = path.join(SRC, 'tests/data/perf/workload.data.txt');
const NODE = 'dotnet-heap.dll!Node';
const LIST = 'System.Private.CoreLib.dll!System.Collections.Generic.List<Node>';

// The Retained header's text and width, and the List<Node> row's cell.
function retainedColumn(page) {
  return page.evaluate((node) => {
    const v = document.getElementById('view-byname');
    const h = v.querySelector('.head [data-col="retained"]');
    const row = [...v.querySelectorAll('.row:not([hidden])')].find((r) => r.dataset.key === node);
    const cell = row?.querySelector('.c-retained');
    return { head: h.textContent, width: h.offsetWidth, text: cell?.textContent ?? null,
      tip: cell?.title ?? null };
  }, NODE);
}

// The CallTree's Retained header and the cell of the row named @key.
function treeCell(page, key) {
  return page.evaluate((k) => {
    const v = document.getElementById('view-calltree');
    const h = v.querySelector('.head [data-col="retained"]');
    const row = [...v.querySelectorAll('.row:not([hidden])')].find((r) => r.dataset.key === k);
    const cell = row?.querySelector('.c-retained');
    return { head: h.textContent, width: h.offsetWidth, row: !!row,
      text: cell?.textContent ?? null, tip: cell?.title ?? null };
  }, key);
}

// CallTree of the heap view: open the rows down to the List's static
// variable (its chain of one child each opens with it), then each node's
// own retained bytes.
async function callTree(page) {
  await settled(() => page.click('#tabs [data-tab="calltree"]'));
  for (const key of ['[.NET Roots]', '[static vars]',
    '[static var System.Collections.Generic.List<Node>.Nodes]']) {
    const sel = `#view-calltree .row[data-key="${key}"] .twist`;
    await page.waitForSelector(sel);
    if ((await page.textContent(sel)) === '\u25b8') await settled(() => page.click(sel));
  }
  await page.waitForFunction((k) => !!document.querySelector(
    `#view-calltree .row[data-key="${k}"] .c-retained`)?.textContent, NODE, { timeout: WAIT });
  let c = await treeCell(page, LIST);
  ok(c.head === 'Retained' && c.width > 20 && /^1,064,248\b/.test(c.tip),
    'CallTree: the List<Node> node retains its array, nodes and payloads', c);
  c = await treeCell(page, NODE);
  ok(/^1,056,000\b/.test(c.tip), 'CallTree: the Node node retains its nodes and payloads', c);
  await setBox('fold', 'System.Byte[]');
  await page.waitForFunction((k) => document.querySelector(
    `#view-calltree .row[data-key="${k}"] .c-retained`)?.title?.startsWith('not shown'), NODE,
  { timeout: WAIT });
  c = await treeCell(page, NODE);
  ok(c.text === '' && /^not shown/.test(c.tip),
    'CallTree: a node FoldPats merged with what it holds has no Retained, and says why', c);
  ok(/^1,064,248\b/.test((await treeCell(page, LIST)).tip), 'CallTree: the List node is unchanged');
  await setBox('fold', '');
  await settled(() => page.click('#tabs [data-tab="byname"]'));
}

async function main() {
  begin({ name: 'retained', limitS: 120 });
  const url = await startView([GCDUMP, PERF]);
  const { page } = await launchBrowser();
  await page.goto(url);
  await page.waitForSelector('body[data-ready="1"]');
  await page.waitForFunction((node) => !!document.querySelector(
    `#view-byname .row[data-key="${node}"] .c-retained`)?.textContent, NODE, { timeout: WAIT });
  let c = await retainedColumn(page);
  ok(c.head === 'Retained' && c.width > 20, 'the heap view of a .gcdump shows a Retained column', c);
  ok(/^1,056,000\b/.test(c.tip), "Node's retained bytes: 1,000 nodes and their byte[1000]", c);
  await callTree(page);

  await page.selectOption('#source', 'retained');
  await page.waitForFunction(() => document.querySelector('#view-byname .vtable')
    .classList.contains('no-retained'), null, { timeout: WAIT });
  c = await retainedColumn(page);
  ok(c.head === '' && c.width === 0, 'the retained view needs no column of its own', c);

  await page.selectOption('#trace', '1');
  await page.waitForFunction(() => document.querySelector('#view-byname .vtable')
    .classList.contains('no-retained'), null, { timeout: WAIT });
  c = await retainedColumn(page);
  ok(c.head === '' && c.width === 0, 'a perf trace has no Retained column', c);
  ok(errors.length === 0, 'no page errors', errors);
}

await runTest(main);
