// update.test.mjs - what an Update costs the GUI (issue 17's 200 ms for a
// heap trace's Update): playwright-core drives Debian's chromium against
// `heapscope view` of a heap trace of tests/targets/stress and a folded
// profile of 500 functions. Checked: ByName asks for a screenful of rows
// at a time and still shows every row when scrolled; an Update's rows
// request leaves before its timeline request; an Update draws no screen
// of pending rows before its answer; the timeline is not drawn again when
// its answer did not change (Fold%), and is when it did (IncPats); a
// switch to a source this page has shown asks no /api/stats and the
// Source box names the shown source until the new one's rows came, with
// the same rows as at the open. Screenshots go to
// $HS_BUILD/browser-artifacts/update-*.png. Output is TAP; every wait is
// bounded.
//
// Environment: HS_BIN, HS_SRC, HS_BUILD (set by meson), HS_CHROMIUM.

import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { BIN, BUILD, begin, check, errors, launchBrowser, openTrace, runTest, setBox, settled, shot,
  startView } from './harness.mjs';

const WIDE = 500;		// functions of the folded profile (trace 1)
const PAGE_MAX = 60;		// rows an answer may carry (main.js PAGE)

let page = null;

// The API requests (path and body) that @action causes until the page settled.
async function requestsOf(action) {
  const seen = [];
  const on = (r) => {
    const p = new URL(r.url()).pathname;
    if (p.startsWith('/api/')) seen.push({ path: p.slice(5), body: r.postData() });
  };
  page.on('request', on);
  try {
    await settled(action);
  } finally {
    page.off('request', on);
  }
  return seen;
}

// ByName's rows on screen: key and exact Exc (the Exc cell's tooltip).
function byName() {
  return page.$$eval('#view-byname .row:not([hidden])', (rows) => rows.map((r) => ({
    key: r.dataset.key, pending: r.classList.contains('pending'), exc: r.children[2].title })));
}

// Item 5's paging: a screenful a request, every row reachable.
async function paging() {
  await openTrace(1);
  const asked = await requestsOf(() => setBox('exc', 'f000499'));
  const rows = asked.filter((q) => q.path === 'rows').map((q) => JSON.parse(q.body));
  const shown = await byName();
  check(rows.length >= 1 && rows.every((q) => q.count <= PAGE_MAX) &&
    shown.length > 20 && shown.every((r) => !r.pending),
  'an Update of ByName asks for a screenful of rows and shows them all', { rows, n: shown.length });
  await page.$eval('#view-byname .scroll', (s) => { s.scrollTop = s.scrollHeight; });
  // the scroll is handled on a later frame: wait for the bottom's rows
  // (ROOT last) with nothing pending, not only for nothing pending, which
  // the rows from before the scroll already are
  await page.waitForFunction(() => {
    const rs = [...document.querySelectorAll('#view-byname .row:not([hidden])')];
    return rs.length && rs[rs.length - 1].dataset.key === 'ROOT' &&
      rs.every((r) => !r.classList.contains('pending'));
  }, null, { timeout: 10000 }).catch(() => {});
  // the smallest function kept is f000498 (f000499 is excluded), below
  // it only main (1) and ROOT (0)
  const bottom = (await byName()).map((r) => r.key).slice(-3);
  check(bottom[0].endsWith('f000498') && bottom[2] === 'ROOT',
    'scrolled to the bottom, ByName shows its last rows', bottom);
  await shot('update-paging');
  await setBox('exc', '');
}

// The order of an Update's requests, and no screen of pending rows.
async function order() {
  await openTrace(0);
  await page.evaluate(() => {
    window.pendingDrawn = 0;
    const mo = new MutationObserver((ms) => {
      for (const m of ms)
        if (m.target.classList?.contains('pending') && m.oldValue !== null &&
          !m.oldValue.split(' ').includes('pending')) window.pendingDrawn++;
    });
    mo.observe(document.getElementById('view-byname'), { subtree: true, attributes: true,
      attributeFilter: ['class'], attributeOldValue: true });
    window.pendingObserver = mo;
  });
  const keys = (await byName()).map((r) => r.key).filter((k) => k && k !== 'ROOT');
  const asked = await requestsOf(() => setBox('inc', keys[0]));
  const drawn = await page.evaluate(() => {
    window.pendingObserver.disconnect();
    return window.pendingDrawn;
  });
  const paths = asked.map((q) => q.path);
  check(paths[0] === 'rows' && paths.includes('timeline'),
    'an Update sends its rows request first, then the timeline one', paths);
  check(drawn === 0, 'an Update draws no screen of pending rows before its answer', { drawn });
  await setBox('inc', '');
}

// The timeline is drawn again only when its answer changed.
async function timelineDraws() {
  await openTrace(0);
  await page.evaluate(() => {
    window.timelineDraws = 0;
    const clear = CanvasRenderingContext2D.prototype.clearRect;
    CanvasRenderingContext2D.prototype.clearRect = function (...a) {
      if (this.canvas.closest('#timeline')) window.timelineDraws++;
      return clear.apply(this, a);
    };
  });
  const draws = () => page.evaluate(() => window.timelineDraws);
  await setBox('foldpct', '3');
  const fold = await draws();
  const keys = (await byName()).map((r) => r.key).filter((k) => k && k !== 'ROOT');
  await setBox('inc', keys[0]);
  const inc = await draws();
  check(fold === 0 && inc > fold,
    'Fold% leaves the timeline as drawn; IncPats draws it again', { fold, inc });
  await setBox('inc', '');
  await setBox('foldpct', '');
}

// A switch to a source this page has shown is an Update: no /api/stats.
async function sources() {
  await openTrace(0);
  const first = await page.inputValue('#source');
  const open = await byName();
  const toPeak = await requestsOf(() => page.selectOption('#source', 'peak'));
  const back = await requestsOf(() => page.selectOption('#source', first));
  const again = await requestsOf(() => page.selectOption('#source', 'peak'));
  const stats = (l) => l.filter((q) => q.path === 'stats').length;
  check(stats(toPeak) === 1 && stats(back) === 0 && stats(again) === 0 &&
    back.some((q) => q.path === 'rows') && again.some((q) => q.path === 'rows'),
  'the first switch to peak asks /api/stats, the switches after it none',
  { toPeak: toPeak.map((q) => q.path), back: back.map((q) => q.path), again: again.map((q) => q.path) });

  // while the rows are on their way the box names the source shown
  const held = [];
  let heldOne = null;
  const holding = new Promise((r) => { heldOne = r; });
  await page.route('**/api/rows', async (route) => {
    await new Promise((r) => { held.push(r); heldOne(); setTimeout(r, 10000); });
    await route.continue().catch(() => {});
  });
  let during = null;
  await settled(async () => {
    await page.selectOption('#source', first);
    await holding;
    during = await page.inputValue('#source');
    await page.unroute('**/api/rows');
    for (const r of held) r();
  });
  check(during === 'peak', 'while its rows are on their way, the box names the source shown', during);
  check(await page.inputValue('#source') === first, 'after its rows came the box names the new source');
  const now = await byName();
  check(JSON.stringify(now) === JSON.stringify(open), 'back on the first source, ByName is as at the open',
    { open: open.slice(0, 3), now: now.slice(0, 3) });
  await shot('update-sources');
}

async function main() {
  const tmp = begin({ name: 'update', limitS: 240 });
  const heap = path.join(tmp, 'stress.heapscope');
  execFileSync(BIN, ['run', '-q', '--no-view', '-o', heap, '--',
    path.join(BUILD, 'tests/targets/stress'), '1', '200000'], { stdio: 'ignore' });
  const wide = ['main 1'];
  for (let i = 0; i < WIDE; i++) wide.push(`main;f${String(i).padStart(6, '0')} ${WIDE - i + 1}`);
  writeFileSync(path.join(tmp, 'wide.folded'), wide.join('\n') + '\n');
  const url = await startView([heap, path.join(tmp, 'wide.folded')]);
  ({ page } = await launchBrowser());
  await page.goto(url);
  await page.waitForSelector('body[data-ready="1"]');
  await paging();
  await order();
  await timelineDraws();
  await sources();
  check(errors.length === 0, 'no page errors', errors);
}

await runTest(main);
