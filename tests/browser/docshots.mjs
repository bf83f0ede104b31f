// docshots.mjs - the pictures of docs/gui.md, taken in Debian's chromium
// (playwright-core, headless) from `heapscope view` of traces made here:
// demo-heap and the stress target recorded with `heapscope run`, and the
// perf script fixture. `ninja -C build gui-docs` runs it; each picture is
// written over its file in docs/img/ (look at them before committing).
// Not a test: it checks only that each view shows what its picture is of.
//
// The harness owns the view process, the browser and the temporary
// directory; this script owns the list of pictures (PICTURES) and how each
// is made. Every picture but the first is of a 1000-pixel-wide window.
//
// Environment: HS_BIN, HS_SRC, HS_BUILD (set by meson), HS_CHROMIUM
// (default /usr/bin/chromium), HS_DOCS_IMG (default $HS_SRC/docs/img),
// HS_ONLY (pictures to take, comma separated). Output is TAP.

import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { BIN, BUILD, SRC, begin, launchBrowser, ok, openTrace, runTest, setBox, settled,
  sleep, startView, tab } from './harness.mjs';

const OUT = process.env.HS_DOCS_IMG || path.join(SRC, 'docs/img');
const PERF = path.join(SRC, 'tests/data/perf/workload.data.txt');
const HOT = 'hotloop!hot_function', COLD = 'hotloop!cold_function';
const byName = (key) => `#view-byname .row[data-key="${key}"]`;

let page = null;

// The window @width x @height, after @prepare (which may need the new
// size: rows are drawn again), as docs/img/gui-NAME.png; or only the
// element @el of it.
async function picture(name, { width = 1000, height = 420, el = null, prepare = null } = {}) {
  await page.setViewportSize({ width, height });
  await sleep(300);
  if (prepare) await prepare();
  const file = path.join(OUT, `gui-${name}.png`);
  if (el) await page.locator(el).screenshot({ path: file });
  else await page.screenshot({ path: file });
  console.log(`# wrote ${file}`);
}

// Select the characters [@a, @b) of the When cell of @rowSel and wait for
// the readout (Net and Peak) on the status line.
async function selectWhen(rowSel, a = 0, b = null) {
  await page.evaluate(() => { document.getElementById('status').dataset.net = ''; });
  await page.evaluate(({ rowSel, a, b }) => {
    const t = document.querySelector(`${rowSel} .c-when`).firstChild;
    window.getSelection().setBaseAndExtent(t, a, t, b ?? t.length);
  }, { rowSel, a, b });
  await page.waitForFunction(() => document.getElementById('status').dataset.net !== '' &&
    /Net .* Peak/.test(document.getElementById('status').textContent));
}

// ---- the pictures: [name, function(traces)] ----

// ByName of a 525 MiB heap trace, the mouse on the timeline (its legend).
async function heapByName(t) {
  await openTrace(t.stress);
  await picture('heap-byname', { width: 1400, height: 900, prepare: async () => {
    const r = await page.$eval('#timeline .u-over', (e) => {
      const b = e.getBoundingClientRect();
      return { x: b.x + b.width / 2, y: b.y + b.height / 2 };
    });
    await page.mouse.move(r.x, r.y);
    await sleep(150);
  } });
  ok(/525\.0 MiB/.test(await page.textContent('#summary')), 'heap-byname: 525.0 MiB in all');
}

// Two Exc cells selected: their sum on the status line.
async function cells(t) {
  await openTrace(t.perf);
  await picture('cells', { prepare: async () => {
    await page.click(`${byName(HOT)} .c-exc`);
    await page.click(`${byName(COLD)} .c-exc`, { modifiers: ['Shift'] });
  } });
  ok((await page.textContent('#status')).includes('Sum of 2'), 'cells: the sum of two cells');
}

// Dragging over a When cell of ByName: the range, Net and Peak.
async function when(t) {
  await openTrace(t.heap);
  await picture('when', { prepare: () => selectWhen(byName('demo-heap!cache_insert'), 3, 30) });
}

// The perf trace's Callers tab on HOT, every node expanded.
async function openCallersOfHot(t) {
  await openTrace(t.perf);
  await setBox('exc', '');
  await settled(() => page.dblclick(`${byName(HOT)} .c-name`));
  await tab('callers');
  await page.click('#view-callers .row[data-index="0"]');
  await settled(() => page.click('#expandall'));
}

// The readout over a Callers node's When cell is that node's own.
async function whenCallers(t) {
  await openCallersOfHot(t);
  const thread = '#view-callers .row[data-key="Thread (11214)"]';
  await picture('when-callers', { height: 520, prepare: async () => {
    await page.$eval(thread, (r) => r.scrollIntoView({ block: 'center' }));
    await selectWhen(thread);
  } });
  ok((await page.textContent('#status')).includes('\u2190 Thread (11214)'),
    'when-callers: the readout of the node Thread (11214)');
}

// Show Events on a Callers node: the samples that came through it.
async function eventsCallers(t) {
  await openCallersOfHot(t);
  await page.click('#view-callers .row[data-key="Thread (11214)"]', { button: 'right' });
  await page.waitForSelector('#menu:not([hidden])');
  await settled(() => page.click('#menu [data-action="events"]'));
  await picture('events-callers', { height: 520 });
  ok(/Callers of .*: 14 samples$/.test(await page.textContent('#view-events h3')),
    'events-callers: the 14 samples of the node Thread (11214)');
}

// The flame graph as an icicle, modules hidden, Find counting its matches.
async function icicle(t) {
  await openTrace(t.perf);
  await tab('flame');
  await page.check('#flame-icicle');
  await page.check('#flame-hideModules');
  await page.fill('#find', 'function');
  await settled(() => page.press('#find', 'Enter'));
  await picture('icicle');
  await page.uncheck('#flame-icicle');
  await page.uncheck('#flame-hideModules');
}

// A slow source switch: the busy bar with Cancel, the views dimmed.
async function busy(t) {
  await openTrace(t.heap);
  let release = null;
  await page.route('**/api/stats', async (route) => {
    await new Promise((r) => { release = r; setTimeout(r, 20000); });
    await route.continue().catch(() => {});
  });
  await page.selectOption('#source', 'peak');
  await page.waitForFunction(() => document.body.classList.contains('busy'));
  await picture('busy', { prepare: () => sleep(600) });
  await page.click('#cancel');
  release?.();
  await page.unroute('**/api/stats');
}

// heaptrack_gui's pages: the whole tab, the memory of the top call sites
// with the legend at the mouse, the allocation sizes.
async function charts(t) {
  await openTrace(t.heap);
  await tab('charts');
  await page.waitForSelector('#chart-sizes .u-over');
  await picture('charts', { height: 640 });
  await page.setViewportSize({ width: 1400, height: 900 });
  await sleep(300);
  const over = await page.$eval('#chart-memory .u-over', (e) => {
    const r = e.getBoundingClientRect();
    return { x: r.x + r.width * 0.78, y: r.y + r.height / 2 };
  });
  await page.mouse.move(over.x, over.y);
  await picture('charts-memory', { width: 1400, height: 900, el: '#chart-memory' });
  await page.locator('#chart-sizes').scrollIntoViewIfNeeded();
  await picture('charts-sizes', { width: 1400, height: 900, el: '#chart-sizes' });
}

const PICTURES = [
  ['heap-byname', heapByName], ['cells', cells], ['when', when], ['when-callers', whenCallers],
  ['events-callers', eventsCallers], ['icicle', icicle], ['busy', busy], ['charts', charts],
];

async function main() {
  const tmp = begin({ name: 'docshots', limitS: 300 });
  mkdirSync(OUT, { recursive: true });
  const heap = path.join(tmp, 'demo-heap.heapscope'), stress = path.join(tmp, 'stress.heapscope');
  execFileSync(BIN, ['run', '-q', '--no-view', '-o', heap, '--', path.join(BUILD, 'examples/demo-heap')],
    { stdio: 'ignore' });
  execFileSync(BIN, ['run', '-q', '--no-view', '-o', stress, '--',
    path.join(BUILD, 'tests/targets/stress'), '1', '1100000'], { stdio: 'ignore' });
  const url = await startView([heap, PERF, stress]);
  const traces = { heap: 0, perf: 1, stress: 2 };
  ({ page } = await launchBrowser({ ignoreConsole: /^Failed to load resource/ }));
  await page.goto(url);
  await page.waitForSelector('body[data-ready="1"]');
  const only = process.env.HS_ONLY ? process.env.HS_ONLY.split(',') : null;
  for (const [name, fn] of PICTURES) {
    if (only && !only.includes(name)) continue;
    await fn(traces);
    await page.setViewportSize({ width: 1400, height: 900 });
  }
}

await runTest(main);
