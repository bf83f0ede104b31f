// trust.test.mjs - the GUI defects of issue 17 that make a new user
// distrust it, each checked in Debian's chromium (playwright-core, headless)
// against `heapscope view`: numbers that fit their cells (bytes over
// 100 MB, counts over 1M, deep tree names, a name once the numbers beside
// it have grown), the first source's own queries again after a source
// switch and back, one request for a page of rows, the flame graph's first screen
// and its tooltip, a visible sign of work with a Cancel, the selection
// kept by key across an Update, the timeline's legend and axes, a dead
// server explained, Events without library paths, a diff's process names
// and the module presets' library names with a '-', Ungroup on such a
// module and exactly on each preset's groups, the default Fold%, headers
// over their columns (Caller-Callee's parts lined up), and no timeline
// nor time controls for a profile without times.
// Each part runs on its own (a failure is reported and the next part
// starts from a fresh page); screenshots go to $HS_BUILD/browser-artifacts/
// (trust-*.png).
//
// Environment: HS_BIN, HS_SRC, HS_BUILD (set by meson), HS_CHROMIUM
// (default /usr/bin/chromium), HS_ONLY (parts to run, comma separated).
// Output is TAP.

import { execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { BIN, BUILD, SRC, atCleanup, begin, errors, launchBrowser, ok, openTrace, parts, report,
  runTest, setBox, settled, shot, sleep, startView, stopView, tab } from './harness.mjs';

const PERF = path.join(SRC, 'tests/data/perf/workload.data.txt');
const DEEP = 90;		// levels of the deep folded stack
const DEEPEST = 250;		// levels of a python3 heap trace's deepest stacks (241)
const WIDE = 3000;		// names of the wide folded file
const FIT_NAME = 60;		// characters of the fit file's long name

let page = null, tmp = null;

// The cells on screen whose text is wider than the cell.
async function cutCells(view) {
  return page.$$eval(`#view-${view} .row:not([hidden]):not(.pending) > div, #view-${view} .head > div`,
    (cells) => cells.filter((c) => c.scrollWidth > c.clientWidth + 0.5 && c.getBoundingClientRect().width > 0)
      .map((c) => ({ cls: c.className, text: c.textContent, sw: c.scrollWidth, cw: c.clientWidth })));
}

// The header cells of the tables of @view that are not over their
// column: each against the first row's cell below it, and each of
// Caller-Callee's parts against the first part's header (they share
// their columns).
async function misaligned(view) {
  return page.evaluate((view) => {
    const bad = [];
    const tables = [...document.querySelectorAll(`#view-${view} .vtable`)];
    const top = tables[0]?.querySelector('.head');
    const off = (a, b) => Math.abs(a.left - b.left) > 0.5 || Math.abs(a.width - b.width) > 0.5;
    for (const t of tables) {
      const head = [...t.querySelector('.head').children];
      const row = t.querySelector('.row:not([hidden])');
      head.forEach((h, k) => {
        if (h.hidden) return;
        const a = h.getBoundingClientRect();
        if (row && off(a, row.children[k].getBoundingClientRect()))
          bad.push({ part: t.dataset.part, col: h.dataset.col, head: [a.left, a.width],
            cell: [row.children[k].getBoundingClientRect().left, row.children[k].getBoundingClientRect().width] });
        if (off(a, top.children[k].getBoundingClientRect()))
          bad.push({ part: t.dataset.part, col: h.dataset.col, head: [a.left, a.width],
            first: [top.children[k].getBoundingClientRect().left, top.children[k].getBoundingClientRect().width] });
      });
    }
    return bad;
  }, view);
}

async function cellOf(view, key, col) {
  return page.$eval(`#view-${view} .row[data-key="${key}"] .c-${col}`,
    (c) => ({ text: c.textContent, title: c.title }));
}

// ---- the parts ----

// Item 2: bytes over 100 MB, counts over 1M, no ".0", units and tooltips.
async function numbers(heap, wide) {
  await openTrace(0);
  const cut = await cutCells('byname');
  await shot('numbers-byname');
  ok(!cut.length, 'heap trace ByName: no cell\'s text is wider than its cell', cut.slice(0, 4));
  const exc = await cellOf('byname', 'stress!site_stress', 'exc');
  const ct = await cellOf('byname', 'stress!site_stress', 'exc-count');
  ok(exc.text === '525.0 MiB' && exc.title.startsWith('550,550,000 bytes'),
    'bytes in human units (as Stats shows them), the exact value in the tooltip', exc);
  ok(ct.text === '1,100,000', 'a count over 1M in full, without ".0"', ct);
  const summary = await page.textContent('#summary');
  ok(summary.includes('525.0 MiB'), 'the summary line says MiB too', summary);
  await tab('calltree');
  await page.click('#view-calltree .row[data-key="ROOT"]');
  await settled(() => page.click('#expandall'));
  const cutTree = await cutCells('calltree');
  await shot('numbers-calltree');
  ok(!cutTree.length, 'heap trace CallTree expanded: no cell\'s text is wider than its cell',
    cutTree.slice(0, 4));

  await openTrace(wide);
  const want = report(path.join(tmp, 'wide.folded')).rows.find((r) => r.key === 'main!big');
  const big = await cellOf('byname', 'main!big', 'exc');
  ok(big.text === '3,000,000' && want.exc === 3e6, 'a big sample count in full, without ".0"', big);
  ok(!(await cutCells('byname')).length, 'wide file: no cell cut off', await cutCells('byname'));
}

// What of the summary line and the tab bar does not fit: the summary
// line wraps between its items, never inside one, and each tab (the
// focus's name beside them too) stays on one line.
function linesCut() {
  return page.evaluate(() => {
    const bad = [];
    const sum = document.getElementById('summary');
    const box = sum.getBoundingClientRect();
    for (const s of sum.querySelectorAll('span')) {
      const r = s.getBoundingClientRect();
      if (r.right > box.right + 0.5 || s.getClientRects().length !== 1) bad.push(s.textContent);
    }
    if (sum.scrollWidth > sum.clientWidth) bad.push('the summary line scrolls');
    const tabs = [...document.querySelectorAll('#tabs button[data-tab]:not([hidden])')];
    const h = Math.min(...tabs.map((b) => b.offsetHeight));
    for (const b of tabs) {
      if (b.offsetHeight > h + 2 || b.scrollWidth > b.clientWidth)
        bad.push(`tab ${b.textContent}: ${b.offsetHeight} px high`);
    }
    return bad;
  });
}

// Item 2 at the window widths people use (1024 and 1920 px): no text is
// wider than its cell in ByName, the expanded CallTree, Callers and
// Caller-Callee of the heap trace (bytes over 500 MiB, counts over 1M)
// and of a perf script whose times pass 100 s (Exc, Inc, First, Last).
async function numbersAtWidths(long) {
  const want = report(path.join(tmp, 'long.data.txt')).rows[0];
  ok(want.inc > 100000 && want.last_ms > 100000, 'the long perf script has times over 100 s', want);
  const cut = {}, align = {};
  for (const width of [1024, 1920]) {
    await page.setViewportSize({ width, height: 900 });
    for (const [trace, focus] of [[0, 'stress!site_stress'], [long, want.key]]) {
      await openTrace(trace);
      await page.waitForSelector('#view-byname .row:not([hidden]):not(.pending)');
      cut[`${width} ${trace} byname`] = await cutCells('byname');
      cut[`${width} ${trace} byname: summary, tabs`] = await linesCut();
      align[`${width} ${trace} byname`] = await misaligned('byname');
      await shot(`widths-${width}-${trace}-byname`);
      await tab('calltree');
      await page.click('#view-calltree .row[data-key="ROOT"]');
      await settled(() => page.click('#expandall'));
      cut[`${width} ${trace} calltree`] = await cutCells('calltree');
      align[`${width} ${trace} calltree`] = await misaligned('calltree');
      await shot(`widths-${width}-${trace}-calltree`);
      await tab('byname');
      await settled(() => page.dblclick(`#view-byname .row[data-key="${focus}"] .c-name`));
      cut[`${width} ${trace} caller-callee`] = await cutCells('caller-callee');
      cut[`${width} ${trace} caller-callee: summary, tabs`] = await linesCut();
      align[`${width} ${trace} caller-callee`] = await misaligned('caller-callee');
      await shot(`widths-${width}-${trace}-caller-callee`);
      await tab('callers');
      await page.click('#view-callers .row[data-index="0"]');
      await settled(() => page.click('#expandall'));
      cut[`${width} ${trace} callers`] = await cutCells('callers');
      align[`${width} ${trace} callers`] = await misaligned('callers');
    }
  }
  const skew = Object.entries(align).filter(([, v]) => v.length);
  ok(!skew.length, 'at 1024 and 1920 px every header cell is over its column (4 views, 2 ' +
    'traces), and Caller-Callee\'s three parts line up', skew.map(([k, v]) => [k, v.slice(0, 3)]));
  await page.setViewportSize({ width: 1400, height: 900 });
  const bad = Object.entries(cut).filter(([, v]) => v.length);
  ok(!bad.length, 'at 1024 and 1920 px no cell\'s text is wider than its cell (4 views, 2 traces), ' +
    'nor the summary line\'s or a tab\'s',
    bad.map(([k, v]) => [k, v.slice(0, 3)]));
  await openTrace(long);
  const inc = await cellOf('byname', want.key, 'inc');
  const last = await cellOf('byname', want.key, 'last');
  const num = (t) => Number(t.replace(/,/g, '').replace(/ .*$/, ''));
  ok(/^[\d,]+(\.\d+)?$/.test(inc.text) && Math.abs(num(inc.text) - want.inc) <= 0.05 &&
    num(inc.title) === want.inc && num(last.text) === want.last_ms,
  'times over 100 s shown whole (Inc in ms to 0.1, exact in its tooltip; Last)', { inc, last, want });
}

// Item 2: a name that fits until the number columns grow. Name takes the
// width the other columns leave, so numbers too wide for their columns
// (fitted after Name) take room from it: at a window width where the
// name fits before they grow and not after, it must still be shown
// whole. The width is found from the file's own layout at 1400 px.
async function nameAfterNumbers(fit) {
  const key = `main!${'n'.repeat(FIT_NAME - 5)}`;
  await page.setViewportSize({ width: 1400, height: 900 });
  await openTrace(fit);
  await page.waitForSelector(`#view-byname .row[data-key="${key}"]:not(.pending)`);
  const m = await page.evaluate(async (key) => {
    const { COLUMNS } = await import('/js/table.js');
    const t = window.heapscope.views.byname.table;
    const cell = document.querySelector(`#view-byname .row[data-key="${key}"] .c-name`);
    const range = document.createRange();
    range.selectNodeContents(cell);
    const st = getComputedStyle(cell);
    const heads = [...document.querySelectorAll('#view-byname .head > div')];
    const shown = heads.map((h, k) => [h, COLUMNS[k]]).slice(1).filter(([h]) => !h.hidden);
    return {
      // the room the name needs in its cell, the other columns at the start and now
      need: Math.ceil(range.getBoundingClientRect().width + parseFloat(st.paddingLeft) +
        parseFloat(st.paddingRight)) + 1,
      start: shown.reduce((a, [, c]) => a + c.px, 0),
      grown: shown.reduce((a, [h]) => a + h.offsetWidth, 0),
      room: t.scroll.clientWidth,
    };
  }, key);
  const grew = m.grown - m.start;
  // a window where Name has room for the name before the numbers grow, not after
  const width = 1400 - m.room + m.start + m.need + Math.floor(grew / 2);
  ok(grew >= 20 && width > 600, 'the fit file\'s numbers widen their columns', { m, grew, width });
  // the first thing a fresh page shows (a trace switched to is laid out again)
  const link = page.url();
  await page.setViewportSize({ width, height: 900 });
  await page.goto('about:blank');
  await page.goto(link);
  await page.waitForSelector('body[data-ready="1"]');
  await page.waitForSelector(`#view-byname .row[data-key="${key}"]:not(.pending)`);
  const cut = await cutCells('byname');
  await shot('name-after-numbers');
  await page.setViewportSize({ width: 1400, height: 900 });
  ok(!cut.length, 'a name that fitted before the number columns grew is still shown whole',
    { width, m, cut });
}

// Item 5: back on a trace's first source after another, the GUI asks what
// it asked at the open (no source named: the server's default), so the
// server answers from what it computed then.
async function sourceBack() {
  await openTrace(0);
  const asked = [];
  const seen = (r) => {
    if (new URL(r.url()).pathname === '/api/rows') asked.push(r.postData());
  };
  page.on('request', seen);
  try {
    await settled(() => page.selectOption('#source', 'peak'));
    asked.length = 0;
    await settled(() => page.selectOption('#source', 'alloc'));
    const back = asked.map((b) => JSON.parse(b));
    ok(back.length > 0 && back.every((q) => !('source' in q)) &&
      (await page.inputValue('#source')) === 'alloc',
    'back on the first source, its queries name no source, as at the open', back);
  } finally {
    page.off('request', seen);
  }
}

// Item 5: an Update of ByName asks for each page of rows once (the table
// asks for the rows it draws while the load asks for its first page).
async function rowsOnce() {
  await openTrace(0);
  const asked = [];
  const seen = (r) => {
    if (new URL(r.url()).pathname === '/api/rows') asked.push(r.postData());
  };
  page.on('request', seen);
  try {
    await setBox('foldpct', '3');
    await setBox('inc', 'stress');
  } finally {
    page.off('request', seen);
  }
  await setBox('inc', '');
  await setBox('foldpct', '');
  ok(asked.length === 2 && new Set(asked).size === 2,
    'two Updates of ByName: one request for the rows of each', asked);
}

// Item 2: deep tree names scroll sideways; columns resize by dragging.
async function deepNames(deep) {
  await openTrace(deep);
  await tab('calltree');
  await page.click('#view-calltree .row[data-key="ROOT"]');
  await settled(() => page.click('#expandall'));
  const sc = '#view-calltree .scroll';
  await page.$eval(sc, (s) => { s.scrollTop = s.scrollHeight; });
  await page.waitForSelector(`#view-calltree .row[data-key="deep_function_number_${DEEP}"]:not(.pending)`);
  const leaf = await page.$eval(`#view-calltree .row[data-key="deep_function_number_${DEEP}"] .c-name`,
    (c) => ({ sw: c.scrollWidth, cw: c.clientWidth }));
  const wide = await page.$eval(sc, (s) => ({ sw: s.scrollWidth, cw: s.clientWidth }));
  ok(leaf.sw <= leaf.cw && wide.sw > wide.cw,
    'the deepest name fits its cell, and the tree scrolls sideways to it', { leaf, wide });
  await page.$eval(sc, (s) => { s.scrollLeft = 400; });
  await sleep(100);
  await shot('deep-calltree');
  const align = await page.evaluate(() => {
    const h = document.querySelector('#view-calltree .head [data-col="inc"]').getBoundingClientRect();
    const c = document.querySelector('#view-calltree .row:not([hidden]) .c-inc').getBoundingClientRect();
    return { head: h.left, cell: c.left };
  });
  ok(Math.abs(align.head - align.cell) < 1, 'scrolled sideways, the header stays over its column', align);

  // drag the Inc header's right edge 40 px to the left (scrolled to the right end)
  await page.$eval(sc, (s) => { s.scrollLeft = s.scrollWidth; });
  const grip = await page.$eval('#view-calltree .head [data-col="inc"] .grip', (g) => {
    const r = g.getBoundingClientRect();
    return { x: r.x + r.width / 2, y: r.y + r.height / 2 };
  });
  const w0 = await page.$eval('#view-calltree .row:not([hidden]) .c-inc', (c) => c.offsetWidth);
  await page.mouse.move(grip.x, grip.y);
  await page.mouse.down();
  await page.mouse.move(grip.x - 40, grip.y, { steps: 5 });
  await page.mouse.up();
  const w1 = await page.$eval('#view-calltree .row:not([hidden]) .c-inc', (c) => c.offsetWidth);
  const hw = await page.$eval('#view-calltree .head [data-col="inc"]', (c) => c.offsetWidth);
  ok(Math.abs(w0 - 40 - w1) <= 1 && hw === w1, 'dragging a header\'s edge resizes its column',
    { w0, w1, hw });
  const sortOf = await page.evaluate(() => JSON.stringify(window.heapscope.state().sort));
  ok(sortOf === '{}', 'resizing a column does not sort by it', sortOf);

  // another trace: the columns fitted to the deep names start again; the
  // one sized by hand keeps its width
  await settled(() => page.selectOption('#trace', '1'));
  await tab('calltree');
  const w = await page.evaluate(() => ({
    name: document.querySelector('#view-calltree .head [data-col="name"]').offsetWidth,
    inc: document.querySelector('#view-calltree .head [data-col="inc"]').offsetWidth,
    sw: document.querySelector('#view-calltree .scroll').scrollWidth,
    cw: document.querySelector('#view-calltree .scroll').clientWidth }));
  ok(w.name < 800 && w.inc === w1 && w.sw <= w.cw,
    'another trace starts from the usual widths, but for the one sized by hand', w);
}

// Item 2 on python3's deepest stacks (241 levels on issue 17's kind of
// trace): the indent of so deep a node (14 px a level) does not count
// against Name's greatest width, so the leaf's name is shown whole, and
// scrolled to the right end it is on screen.
async function deepestNames(idx) {
  await openTrace(idx);
  await tab('calltree');
  await page.click('#view-calltree .row[data-key="ROOT"]');
  await settled(() => page.click('#expandall'));
  const sc = '#view-calltree .scroll';
  const key = `libpython3.11.so.1.0!_PyEval_EvalFrameDefault_${DEEPEST}`;
  await page.$eval(sc, (s) => { s.scrollTop = s.scrollHeight; });
  await page.waitForSelector(`#view-calltree .row[data-key="${key}"]:not(.pending)`);
  await page.$eval(sc, (s) => { s.scrollLeft = s.scrollWidth; });
  await sleep(200);
  const leaf = await page.evaluate(({ sc, key }) => {
    const c = document.querySelector(`#view-calltree .row[data-key="${key}"] .c-name`);
    const text = [...c.childNodes].find((n) => n.nodeType === Node.TEXT_NODE);
    const range = document.createRange();
    range.selectNodeContents(text);
    const t = range.getBoundingClientRect(), v = document.querySelector(sc).getBoundingClientRect();
    return { sw: c.scrollWidth, cw: c.clientWidth, left: t.left, right: t.right, vleft: v.left,
      vright: v.right };
  }, { sc, key });
  await shot('deepest-calltree');
  ok(leaf.sw <= leaf.cw && leaf.left >= leaf.vleft && leaf.right <= leaf.vright,
    `a ${DEEPEST}-level node's name fits its cell, and is on screen scrolled to the right`, leaf);
}

// Item 3: the flame graph opens where ROOT is; its tooltip goes after a zoom.
async function flame(deep) {
  await openTrace(deep);
  await tab('flame');
  await page.waitForFunction(() => document.querySelector('#view-flame canvas').height > 100);
  await shot('flame-first-screen');
  const g = await page.$eval('#view-flame .flame', (b) => ({ top: b.scrollTop, ch: b.clientHeight,
    h: b.querySelector('canvas').offsetHeight }));
  ok(g.h > g.ch && g.top + g.ch >= g.h - 1, 'the flame graph opens scrolled to ROOT (the bottom)', g);
  const box = await page.$eval('#view-flame .flame', (b) => {
    const r = b.getBoundingClientRect();
    return { x: r.x, bottom: r.bottom };
  });
  await page.mouse.move(box.x + 40, box.bottom - 12);
  await page.waitForSelector('#tip:not([hidden])');
  ok((await page.textContent('#tip')).startsWith('ROOT'), 'ROOT is on the first screen',
    await page.textContent('#tip'));
  await page.mouse.move(box.x + 40, box.bottom - 12 - 18 * 3);
  await page.waitForSelector('#tip:not([hidden])');
  await settled(() => page.mouse.click(box.x + 40, box.bottom - 12 - 18 * 3));
  await shot('flame-zoomed');
  const tipShown = await page.$eval('#tip', (t) => !t.hidden);
  ok(!tipShown, 'the tooltip disappears after a zoom', await page.textContent('#tip'));
  const z = await page.$eval('#view-flame .flame', (b) => ({ top: b.scrollTop, ch: b.clientHeight,
    h: b.querySelector('canvas').offsetHeight }));
  ok(z.top + z.ch >= z.h - 1, 'a zoom shows its root at the bottom of the screen', z);
}

// Item 4: a slow source switch shows work, keeps the old source's name
// until its data arrived, and Cancel aborts it.
async function busy() {
  await openTrace(0);
  const before = await page.inputValue('#source');
  let release = null;
  await page.route('**/api/stats', async (route) => {
    await new Promise((r) => { release = r; setTimeout(r, 20000); });
    await route.continue().catch(() => {});
  });
  await page.selectOption('#source', 'peak');
  await page.waitForFunction(() => document.body.classList.contains('busy'));
  await sleep(600);
  const look = await page.evaluate(() => {
    const b = document.getElementById('busy');
    const cs = b && getComputedStyle(b);
    return { busy: !!b && cs.display !== 'none' && cs.visibility === 'visible' && Number(cs.opacity) > 0.5,
      text: b?.textContent,
      dim: Number(getComputedStyle(document.querySelector('#views')).opacity),
      source: document.getElementById('source').value };
  });
  await shot('busy');
  ok(look.busy && look.dim < 1, 'a slow request shows a busy bar and dims the view', look);
  ok(look.source === before && /peak/.test(look.text),
    'the Source box keeps the shown source; the bar names the one being read', look);
  await page.click('#cancel');
  await page.waitForFunction(() => !document.body.classList.contains('busy'), null, { timeout: 3000 });
  const after = await page.evaluate(() => ({ status: document.getElementById('status').textContent,
    source: document.getElementById('source').value, state: window.heapscope.state().source }));
  ok(/cancel/i.test(after.status) && after.source === before && (after.state ?? 'alloc') === before,
    'Cancel aborts the request and the old source stays', after);
  release?.();
  await page.unroute('**/api/stats');
  await settled(() => page.selectOption('#source', 'peak'));
  ok(await page.inputValue('#source') === 'peak', 'the switch works when it is not cancelled');

  // a cancelled Update goes back to the parameters on screen
  const fold0 = await page.inputValue('#fold');
  await page.route('**/api/rows', async (route) => {
    await sleep(3000);
    await route.continue().catch(() => {});
  });
  await page.fill('#fold', 'never_shown');
  await page.press('#fold', 'Enter');
  await page.waitForFunction(() => document.body.classList.contains('busy'));
  await sleep(400);
  await page.click('#cancel');
  await page.unroute('**/api/rows');
  await page.waitForFunction((f) => document.getElementById('fold').value === f &&
    !document.body.classList.contains('busy') &&
    /back to the previous/.test(document.getElementById('status').textContent), fold0,
  { timeout: 10000 }).catch(() => {});
  const back = await page.evaluate(() => ({ fold: document.getElementById('fold').value,
    status: document.getElementById('status').textContent,
    state: window.heapscope.state().params.fold }));
  ok(back.fold === fold0 && back.state === fold0 && /back to the previous/.test(back.status),
    'a cancelled Update goes back to the previous parameters', { fold0, back });

  // a slow Stats tab (26 s on issue 17's trace) says what it computes
  await page.route('**/api/stats', async (route) => {
    await sleep(3000);
    await route.continue().catch(() => {});
  });
  await page.click('#tabs [data-tab="stats"]');
  await page.waitForFunction(() => document.body.classList.contains('busy'));
  await sleep(400);
  const stats = await page.evaluate(() => ({ text: document.getElementById('busy').textContent,
    cancel: !document.getElementById('cancel').hidden &&
      getComputedStyle(document.getElementById('cancel')).display !== 'none' }));
  await shot('busy-stats');
  await page.click('#cancel');
  await page.unroute('**/api/stats');
  await page.waitForFunction(() => !document.body.classList.contains('busy'), null, { timeout: 3000 });
  ok(/computing Stats/.test(stats.text) && stats.cancel, 'a slow Stats tab shows "computing Stats" and Cancel',
    stats);
  await tab('byname');
}

// Item 5 and the targets: Stats must not block the other tabs. While a
// slow Stats computes (26 s on issue 17's trace; held here), ByName is
// shown undimmed, without the busy bar, and an Update of it arrives; back
// on Stats, its busy bar and Cancel are there, and its answer then shows.
async function statsApart() {
  await openTrace(0);
  const releases = [];
  await page.route('**/api/stats', async (route) => {
    await new Promise((r) => { releases.push(r); setTimeout(r, 20000); });
    await route.continue().catch(() => {});
  });
  await page.click('#tabs [data-tab="stats"]');
  await page.waitForFunction(() => document.body.classList.contains('busy'));
  await page.click('#tabs [data-tab="byname"]');
  await page.waitForFunction(() => !document.body.classList.contains('busy'), null, { timeout: 5000 })
    .catch(() => {});
  const look = () => page.evaluate(() => ({ busy: document.body.classList.contains('busy'),
    dim: Number(getComputedStyle(document.querySelector('#views')).opacity),
    bar: getComputedStyle(document.getElementById('busy')).display }));
  const onByName = await look();
  ok(!onByName.busy && onByName.bar === 'none', 'while Stats computes, ByName is not busy', onByName);
  // back and forth while it computes: the tab waits for the Stats under
  // way, it does not ask again (each extra request would hold a server
  // worker and one of the browser's connections)
  const asked = [];
  const seen = (r) => {
    if (new URL(r.url()).pathname === '/api/stats') asked.push(r.postData());
  };
  page.on('request', seen);
  try {
    for (const t of ['stats', 'byname', 'stats']) {
      await page.click(`#tabs [data-tab="${t}"]`);
      await sleep(150);
    }
    await page.waitForFunction(() => document.body.classList.contains('busy'));
    await sleep(300);
    const revisit = await page.evaluate(() => ({ text: document.getElementById('busytext').textContent,
      cancel: getComputedStyle(document.getElementById('cancel')).display !== 'none' }));
    ok(asked.length === 0 && releases.length === 1 && /computing Stats/.test(revisit.text) && revisit.cancel,
      'Stats -> ByName -> Stats -> ByName -> Stats while Stats computes: one /api/stats, busy bar and Cancel',
      { asked: asked.length, held: releases.length, revisit });
    await page.click('#tabs [data-tab="byname"]');
    await page.waitForFunction(() => !document.body.classList.contains('busy'), null, { timeout: 5000 })
      .catch(() => {});
  } finally {
    page.off('request', seen);
  }
  const first = await page.$eval('#view-byname .row:not([hidden])', (r) => r.dataset.key);
  await setBox('exc', first.replace(/[*%^|{}@;()]/g, '.'));
  await sleep(300);
  const after = await look();
  const rows = await page.$$eval('#view-byname .row:not([hidden])', (r) => r.map((x) => x.dataset.key));
  await shot('stats-apart');
  ok(!rows.includes(first) && rows.length && after.dim === 1 && !after.busy && releases.length,
    'and an Update of ByName shows its rows, undimmed, while Stats still waits',
    { first, rows, after, waiting: releases.length });
  await page.click('#tabs [data-tab="stats"]');
  await page.waitForFunction(() => document.body.classList.contains('busy'));
  await sleep(300);
  const onStats = await page.evaluate(() => ({ text: document.getElementById('busytext').textContent,
    cancel: getComputedStyle(document.getElementById('cancel')).display !== 'none' }));
  ok(/computing Stats/.test(onStats.text) && onStats.cancel,
    'back on Stats: its busy bar says what it computes, with Cancel', onStats);
  for (const r of releases) r();
  await page.unroute('**/api/stats');
  const answered = () => !document.body.classList.contains('busy') &&
    /Allocations/.test(document.getElementById('view-stats').textContent);
  await page.waitForFunction(answered, null, { timeout: 20000 }).catch(() => {});
  ok(await page.evaluate(answered), 'then Stats shows its answer',
    await page.evaluate(() => document.getElementById('view-stats').textContent.slice(0, 200)));
  await setBox('exc', '');
  await tab('byname');
}

// Item 7: the selection is kept by key across an Update; ByName's scroll.
async function selection(perfIdx, wide) {
  await openTrace(perfIdx);
  await setBox('foldpct', '');
  const keys = await page.$$eval('#view-byname .row:not([hidden])', (r) => r.map((x) => x.dataset.key));
  const pick = keys[3];
  await page.click(`#view-byname .row[data-key="${pick}"] .c-exc`);
  await setBox('exc', keys[0].replace(/[*%^|{}@;]/g, '.'));
  const sel = await page.$$eval('#view-byname .row.sel:not([hidden])', (r) => r.map((x) => x.dataset.key));
  ok(sel.length === 1 && sel[0] === pick, 'ByName: the selected row is the same name after an Update',
    { pick, sel });
  await page.evaluate(() => navigator.clipboard.writeText('sentinel'));
  await page.click('#view-byname .vtable');
  await page.keyboard.press('Control+c');
  await page.waitForFunction(() => /copied/.test(document.getElementById('status').textContent));
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  ok(copied.startsWith(pick + '\t'), 'Ctrl-C copies the highlighted row', copied);
  const shownCells = await page.$$eval(`#view-byname .row.sel[data-key="${pick}"] > div`, (cs) =>
    cs.filter((c) => !c.hidden).map((c) => c.textContent));
  ok(copied === shownCells.join('\t'), 'and copies it as displayed (units, no raw decimals)',
    { copied, shownCells });
  // Alt-R acts on that row too: its First and Last (exact in the tooltips)
  const ms = (col) => page.$eval(`#view-byname .row.sel[data-key="${pick}"] .${col}`,
    (c) => Number(c.title.replace(/[^\d.]/g, '')));
  const first = await ms('c-first'), last = await ms('c-last');
  await settled(() => page.keyboard.press('Alt+r'));
  const range = (await page.evaluate(() => window.heapscope.state())).params;
  ok(Math.abs(Number(range.start) - first) < 1e-6 && Math.abs(Number(range.end) - last) < 1e-6,
    'Alt-R sets the highlighted row\'s First and Last', { pick, first, last, range });
  await settled(() => page.click('#back'));
  const still = await page.$$eval('#view-byname .row.sel:not([hidden])', (r) => r.map((x) => x.dataset.key));
  ok(still.length === 1 && still[0] === pick, 'Back: the same row is still selected', { pick, still });
  await page.focus('#view-byname .vtable');
  // ExcPats removes the selected row: nothing is selected, Ctrl-C copies nothing
  await page.evaluate(() => navigator.clipboard.writeText('sentinel'));
  await setBox('exc', `${await page.inputValue('#exc')};${pick.replace(/[*%^|{}@;]/g, '.')}`);
  const gone = await page.$$eval('#view-byname .row.sel:not([hidden])', (r) => r.map((x) => x.dataset.key));
  await page.focus('#view-byname .vtable');
  await page.keyboard.press('Control+c');
  await sleep(300);
  ok(!gone.length && await page.evaluate(() => navigator.clipboard.readText()) === 'sentinel',
    'a selected row that ExcPats removed is no longer acted on', gone);

  // trees: the node is found again by its path
  await setBox('exc', '');
  await tab('calltree');
  await page.click('#view-calltree .row[data-key="ROOT"]');
  await settled(() => page.click('#expandall'));
  const rows = await page.$$eval('#view-calltree .row:not([hidden])', (r) => r.map((x) =>
    ({ key: x.dataset.key, depth: Number(x.dataset.depth) })));
  const target = rows.filter((r) => r.depth === 3)[1];
  const idx = rows.indexOf(target);
  await page.click(`#view-calltree .row[data-index="${idx}"] .c-exc`);
  const firstProc = rows.find((r) => r.depth === 1 && r !== rows[idx]);
  await setBox('exc', firstProc.key.replace(/[*%^|{}@;()]/g, '.'));
  const tsel = await page.$$eval('#view-calltree .row.sel:not([hidden])', (r) => r.map((x) =>
    ({ key: x.dataset.key, depth: Number(x.dataset.depth) })));
  ok(tsel.length === 1 && tsel[0].key === target.key && tsel[0].depth === target.depth,
    'CallTree: the selected node is the same path after an Update', { target, tsel, firstProc });

  // ByName's scroll position: top without a selection; the selection in view
  await openTrace(wide);
  await page.$eval('#view-byname .scroll', (s) => { s.scrollTop = s.scrollHeight / 2; });
  await sleep(300);
  await setBox('exc', 'no_such_name_at_all');
  const top = await page.$eval('#view-byname .scroll', (s) => s.scrollTop);
  ok(top === 0, 'ByName starts at the top after an Update when nothing is selected', top);
  await page.$eval('#view-byname .scroll', (s) => { s.scrollTop = 20 * 1500; });
  await page.waitForSelector('#view-byname .row[data-index="1502"]:not(.pending)');
  const mid = await page.$eval('#view-byname .row[data-index="1502"]', (r) => r.dataset.key);
  await page.click('#view-byname .row[data-index="1502"] .c-exc');
  await page.$eval('#view-byname .scroll', (s) => { s.scrollTop = 0; });
  await setBox('exc', 'main!w00000[0-4]');
  await page.waitForSelector(`#view-byname .row.sel[data-key="${mid}"]:not([hidden]):not(.pending)`,
    { timeout: 5000 }).catch(() => {});
  const vis = await page.evaluate((k) => {
    const r = document.querySelector(`#view-byname .row.sel[data-key="${k}"]:not([hidden])`);
    const s = document.querySelector('#view-byname .scroll').getBoundingClientRect();
    if (!r) return null;
    const b = r.getBoundingClientRect();
    return { top: b.top, bottom: b.bottom, stop: s.top, sbottom: s.bottom };
  }, mid);
  ok(vis && vis.top >= vis.stop && vis.bottom <= vis.sbottom,
    'a selected row further down is still selected and shown after an Update', { mid, vis });
}

// Item 9: the timeline's legend, hover values, axes.
async function timeline() {
  await openTrace(0);
  const t = await page.evaluate(() => {
    const u = window.heapscope.views.timeline.plot;
    const g = document.createElement('canvas').getContext('2d');
    const axes = u.axes.map((a, i) => {
      if (!a.show || !a._values) return null;
      g.font = a.font[0];
      const wide = Math.max(...a._values.map((v) => g.measureText(String(v)).width));
      return { i, side: a.side, size: a._size, wide, values: a._values, label: a.label ?? null };
    });
    return { axes, xmax: u.scales.x.max, xmin: u.scales.x.min,
      xdata: Math.max(...u.data[0]), legend: !!document.querySelector('#timeline .u-legend') };
  });
  const sum = await page.evaluate(async () => (await (await fetch('/api/rows', { method: 'POST',
    body: JSON.stringify({ trace: 0, count: 1 }) })).json()).summary);
  ok(t.legend, 'the timeline has a legend', t);
  const right = t.axes.find((a) => a && a.side === 1);
  ok(right && right.wide + 8 <= right.size, 'the right axis is wide enough for its labels', right);
  ok(right && (/bytes|B/.test(right.label || '') || right.values.every((v) => /B$/.test(v))) &&
     right.values.length > 0, 'the heap axis says its unit', right);
  const left = t.axes.find((a) => a && a.side === 3);
  ok(left && left.values.every((v) => /\d B$|iB$/.test(v)) && left.wide + 8 <= left.size,
    'the left axis of a heap trace counts bytes in binary units, and fits', left);
  // bytes axes tick at binary steps, two or more ("64.0 KiB", not a lone "0 B" or "97.7 KiB")
  const splits = await page.evaluate(() => window.heapscope.views.timeline.plot.axes.slice(1)
    .map((a) => ({ side: a.side, splits: a._splits, values: a._values })));
  ok(splits.length === 2 && splits.every((a) => a.splits.length >= 2 &&
    Number.isInteger(Math.log2(a.splits[1] - a.splits[0])) &&
    a.splits.every((v) => v % (a.splits[1] - a.splits[0]) === 0)),
  'both bytes axes have two or more ticks, in binary steps', splits);
  ok(t.xmax <= sum.last_ms + 1e-6 || t.xmax <= t.xdata,
    'the x axis ends where the data ends', { xmax: t.xmax, last: sum.last_ms, xdata: t.xdata });
  const over = await page.$eval('#timeline .u-over', (el) => {
    const r = el.getBoundingClientRect();
    return { x: r.x, y: r.y, w: r.width, h: r.height };
  });
  await page.mouse.move(over.x + over.w * 0.5, over.y + over.h / 2);
  await sleep(200);
  const legend = await page.$eval('#timeline .u-legend', (l) => l.textContent);
  await shot('timeline-hover');
  ok(/heap in use/.test(legend) && /\d(\.\d)? (B|KiB|MiB)/.test(legend) && /ms/.test(legend),
    'hovering the timeline shows the time and each series\' value', legend);
  // a CPU profile's axis counts busy CPUs: the legend says so
  await openTrace(1);
  const cpu = await page.$eval('#timeline .u-over', (el) => {
    const r = el.getBoundingClientRect();
    return { x: r.x, y: r.y, w: r.width, h: r.height };
  });
  await page.mouse.move(cpu.x + cpu.w * 0.5, cpu.y + cpu.h / 2);
  await sleep(200);
  const values = await page.$$eval('#timeline .u-legend .u-value', (v) => v.map((x) => x.textContent));
  await shot('timeline-cpu');
  ok(/ ms$/.test(values[0]) && values.slice(1, 3).every((v) => /^(1 CPU|[\d.]+ CPUs)$/.test(v) &&
    v !== '1 CPUs'),
    'a CPU profile\'s legend gives busy CPUs', values);
}

// Item 8: a diff's Ignore PID/TID names a process by its whole command,
// '-' and all: "demo-heap" and "demo-cache" stay apart (never "demo").
async function processNames(testIdx, baseIdx) {
  await openTrace(testIdx);
  await settled(() => page.selectOption('#diff', String(baseIdx)));
  ok((await page.inputValue('#group')).startsWith('^Process% {%}->$1;^Thread->Thread;'),
    'a diff starts GroupPats with Ignore PID/TID', await page.inputValue('#group'));
  const rows = await page.$$eval('#view-byname .row:not([hidden]):not(.pending)', (rs) =>
    rs.map((r) => ({ key: r.dataset.key, inc: r.querySelector('.c-inc').textContent })));
  const inc = (k) => rows.find((r) => r.key === k)?.inc;
  await shot('process-names');
  ok(inc('demo-heap') === '2' && inc('demo-cache') === '2' && !rows.some((r) => r.key === 'demo'),
    'the diff names processes "demo-heap" and "demo-cache", their PIDs gone', rows);
  // item 1: leaving the diff for its shorter test trace leaves no stale row
  await settled(() => page.click('#back'));
  const seen = await page.evaluate(() => {
    const all = [...document.querySelectorAll('#view-byname .row')];
    return { shown: all.filter((r) => !r.hidden && !r.classList.contains('pending')).length,
      laidOut: all.filter((r) => getComputedStyle(r).display !== 'none' &&
        r.getBoundingClientRect().height > 0).length,
      origin: document.getElementById('origin').textContent };
  });
  await shot('after-diff');
  ok(!seen.origin.startsWith('diff') && seen.shown < rows.length && seen.laidOut === seen.shown,
    'after leaving a longer diff no stale rows are on screen', { seen, diffRows: rows.length });
}

// Item 8 and 6: the module presets name a Linux library by its whole file
// name ('%' takes no '-' nor '+': "module gnu.so", "module 64.so.2"
// before), and Ungroup on such a group shows its frames again.
async function moduleNames(idx) {
  await openTrace(idx);
  await settled(() => page.selectOption('#presets', 'group modules'));
  const keys = () => page.$$eval('#view-byname .row:not([hidden]):not(.pending)', (rs) =>
    rs.map((r) => r.dataset.key));
  const json = 'module _json.cpython-311-x86_64-linux-gnu.so';
  const want = [json, 'module ld-linux-x86-64.so.2', 'module libstdc++.so.6', 'module python3.11'];
  const got = await keys();
  await shot('module-names');
  ok(want.every((k) => got.includes(k)) && !got.some((k) => /^module (gnu\.so|64\.so\.2|\.so\.6)$/.test(k)),
    'group modules names Linux libraries by their whole file names', got);
  await page.click(`#view-byname .row[data-key="${json}"] .c-name`, { button: 'right' });
  await page.waitForSelector('#menu:not([hidden])');
  ok(!await page.$eval('#menu [data-action="ungroup"]', (b) => b.disabled), 'Ungroup is offered on it');
  await settled(() => page.click('#menu [data-action="ungroup"]'));
  const after = await keys();
  ok((await page.inputValue('#group')) === '[group modules] _json.cpython-311-x86_64-linux-gnu.so!->;{%}!->module $1' &&
    after.includes('_json.cpython-311-x86_64-linux-gnu.so!scanstring') && !after.includes(json) &&
    after.includes('module ld-linux-x86-64.so.2'),
  'Ungroup shows that library\'s frames again, the other groups stay',
  { group: await page.inputValue('#group'), after });
}

// Item 6 on the other presets' groups: Ungroup on "AllThreads" (fold
// threads: a group the pattern names) drops that pattern, and on a class
// of group classes (a template's group) shows its frames again.
async function ungroupPresets(perfIdx, classIdx) {
  const keys = () => page.$$eval('#view-byname .row:not([hidden]):not(.pending)', (rs) =>
    rs.map((r) => r.dataset.key));
  const ungroup = async (key) => {
    await page.click(`#view-byname .row[data-key="${key}"] .c-name`, { button: 'right' });
    await page.waitForSelector('#menu:not([hidden])');
    const off = await page.$eval('#menu [data-action="ungroup"]', (b) => b.disabled);
    if (!off) await settled(() => page.click('#menu [data-action="ungroup"]'));
    else await page.keyboard.press('Escape');
    return !off;
  };
  await openTrace(perfIdx);
  await settled(() => page.selectOption('#presets', 'fold threads'));
  const folded = await keys();
  ok(folded.includes('AllThreads') && !folded.some((k) => k.startsWith('Thread (')),
    'fold threads makes one AllThreads', folded);
  ok(await ungroup('AllThreads'), 'Ungroup is offered on AllThreads');
  const threads = await keys();
  ok(!threads.includes('AllThreads') && threads.includes('Thread (11214)') &&
    (await page.inputValue('#group')).trim() === '[fold threads]',
  'Ungroup on AllThreads drops the pattern: the threads are back', { threads,
    group: await page.inputValue('#group') });

  await openTrace(classIdx);
  await settled(() => page.selectOption('#presets', 'group classes'));
  const classes = await keys();
  ok(classes.includes('class libfoo.so!Foo'), 'group classes makes "class libfoo.so!Foo"', classes);
  ok(await ungroup('class libfoo.so!Foo'), 'Ungroup is offered on it');
  const after = await keys();
  await shot('ungroup-class');
  ok(after.includes('libfoo.so!Foo::bar') && after.includes('libfoo.so!Foo::zap') &&
    !after.includes('class libfoo.so!Foo') && after.includes('class other.so!Foo'),
  'Ungroup on a class shows its frames again, the other module\'s class stays grouped',
  { after, group: await page.inputValue('#group') });
}

// Item 3 in a narrow window (800 px): each table's header over its
// columns, Caller-Callee's parts under one another (the callers and the
// focus widen Inc for times over 100 s; the callees part, empty, must
// too); sizing one part's column sizes them all.
async function alignNarrow(long) {
  const want = report(path.join(tmp, 'long.data.txt')).rows[0];
  await page.setViewportSize({ width: 800, height: 700 });
  const bad = {};
  try {
    await openTrace(long);
    for (const view of ['byname', 'calltree']) {
      await tab(view);
      bad[view] = await misaligned(view);
    }
    await tab('byname');
    await settled(() => page.dblclick(`#view-byname .row[data-key="${want.key}"] .c-name`));
    bad['caller-callee'] = await misaligned('caller-callee');
    await shot('align-narrow-caller-callee');
    for (const view of ['callers', 'callees']) {
      await tab(view);
      bad[view] = await misaligned(view);
    }
    // the tab bar wraps: the buttons at its end stay in the window (a tree's Expand All too)
    const bar = await page.evaluate(() => ['expandall', 'export'].map((id) => {
      const r = document.getElementById(id).getBoundingClientRect();
      return { id, left: r.left, right: r.right, width: innerWidth };
    }));
    await shot('align-narrow-callees');
    ok(bar.every((b) => b.right > b.left && b.right <= b.width),
      'at 800 px Expand All and Export are in the window', bar);
    await tab('caller-callee');
    const grip = await page.$eval('#view-caller-callee [data-part="callees"] .head [data-col="exc"] .grip',
      (g) => { const r = g.getBoundingClientRect(); return { x: r.x + r.width / 2, y: r.y + r.height / 2 }; });
    await page.mouse.move(grip.x, grip.y);
    await page.mouse.down();
    await page.mouse.move(grip.x + 30, grip.y, { steps: 3 });
    await page.mouse.up();
    bad['caller-callee, a column sized'] = await misaligned('caller-callee');
  } finally {
    await page.setViewportSize({ width: 1400, height: 900 });
  }
  const skew = Object.entries(bad).filter(([, v]) => v.length);
  ok(!skew.length, 'at 800 px every header cell is over its column, and Caller-Callee\'s parts ' +
    'line up (also after sizing a column of one)', skew.map(([k, v]) => [k, v.slice(0, 3)]));
}

// Item 2: a profile without times (folded stacks, pprof, speedscope's
// sampled profile, all converted from the perf script) shows no timeline
// from 0 to 1 ms but a note, and no time controls that cannot work; the
// perf script and its .perfView.xml (which keep times) show theirs.
async function untimed(files) {
  const look = () => page.evaluate(() => ({
    plot: !!window.heapscope.views.timeline.plot,
    canvas: !!document.querySelector('#timeline canvas'),
    note: document.querySelector('#timeline .notimes')?.textContent ?? null,
    start: document.getElementById('start').disabled,
    end: document.getElementById('end').disabled,
    summary: document.getElementById('summary').textContent,
    cols: [...document.querySelectorAll('#view-byname .head > div:not([hidden])')].map((h) => h.dataset.col),
  }));
  const menuOff = async () => {
    await page.click('#view-byname .row[data-index="0"] .c-name', { button: 'right' });
    await page.waitForSelector('#menu:not([hidden])');
    const off = await page.$eval('#menu [data-action="time-range"]', (b) => b.disabled);
    await page.keyboard.press('Escape');
    return off;
  };
  await openTrace(files[0][0]);
  for (const [idx, name, timed] of files) {
    // from trace to trace in one page, as a user switches: nothing of the last stays
    await settled(() => page.selectOption('#trace', String(idx)));
    const l = await look();
    const off = await menuOff();
    if (name === 'folded') await shot('untimed-folded');
    if (timed) {
      ok(l.plot && l.canvas && l.note === null && !l.start && !l.end && /First: /.test(l.summary) &&
         l.cols.includes('when') && !off,
      `${name} has times: its timeline, Start, End, When and Set Time Range`, { ...l, off });
    } else {
      ok(!l.plot && !l.canvas && /no times/.test(l.note ?? '') && l.start && l.end &&
         /No times/.test(l.summary) && !/First: |TimeBucket/.test(l.summary) &&
         !l.cols.some((c) => ['when', 'first_ms', 'last_ms'].includes(c)) && l.cols.includes('inc') && off,
      `${name} has no times: a note instead of a timeline, no Start, End, When, First, Last ` +
      'nor Set Time Range', { ...l, off });
    }
  }
}

// Item 6, exactly: Ungroup takes out the row's frames and no other's, on
// each preset's groups: a class whose module has another class and a
// nested class, a module whose name ends another module's name, and an
// entry group whose name starts another entry's (PerfView's heap preset);
// Ungroup Module takes out its module's frames and no other module's.
async function ungroupExact(idx) {
  const keys = () => page.$$eval('#view-byname .row:not([hidden]):not(.pending)', (rs) =>
    rs.map((r) => r.dataset.key));
  const ungroup = async (key, action = 'ungroup') => {
    await page.click(`#view-byname .row[data-key="${key}"] .c-name`, { button: 'right' });
    await page.waitForSelector('#menu:not([hidden])');
    await settled(() => page.click(`#menu [data-action="${action}"]`));
    return { keys: await keys(), group: await page.inputValue('#group') };
  };
  await openTrace(idx);
  await settled(() => page.selectOption('#presets', 'group classes'));
  const cls = await ungroup('class libfoo.so!Foo');
  await shot('ungroup-exact-class');
  ok(['libfoo.so!Foo::bar', 'libfoo.so!Foo::zap', 'class libfoo.so!Baz', 'class libfoo.so!Foo::Inner',
    'class other.so!Foo'].every((k) => cls.keys.includes(k)) && !cls.keys.includes('class libfoo.so!Foo'),
  'Ungroup on a class takes out its methods only: its module\'s other classes stay grouped', cls);
  await settled(() => page.selectOption('#presets', 'group modules'));
  const mod = await ungroup('module libc.so.6');
  ok(mod.keys.includes('libc.so.6!malloc') && mod.keys.includes('module xlibc.so.6') &&
     !mod.keys.includes('module libc.so.6'),
  'Ungroup on module libc.so.6 leaves module xlibc.so.6 grouped', mod);
  // Ungroup Module: the same, and on a class all the classes of its module
  await settled(() => page.selectOption('#presets', 'group modules'));
  const modOf = await ungroup('module libc.so.6', 'ungroup-module');
  ok(modOf.keys.includes('libc.so.6!malloc') && modOf.keys.includes('module xlibc.so.6'),
    'Ungroup Module on module libc.so.6 leaves module xlibc.so.6 grouped', modOf);
  await settled(() => page.selectOption('#presets', 'group classes'));
  const clsOf = await ungroup('class libfoo.so!Foo', 'ungroup-module');
  ok(['libfoo.so!Foo::bar', 'libfoo.so!Baz::qux', 'class other.so!Foo'].every((k) => clsOf.keys.includes(k)) &&
     !clsOf.keys.some((k) => k.startsWith('class libfoo.so!')),
  'Ungroup Module on a class takes out every class of its module, no other module\'s', clsOf);
  await setBox('group', 'mscorlib!=>LIB;System%!=>LIB;');
  const ent = await ungroup('LIB <<mscorlib!Foo>>');
  await shot('ungroup-exact-entry');
  ok(ent.keys.includes('mscorlib!Foo') && ent.keys.includes('LIB <<mscorlib!FooBar>>') &&
     !ent.keys.includes('mscorlib!FooBar') && !ent.keys.includes('LIB <<mscorlib!Foo>>'),
  'Ungroup on an entry group ungroups its entry frame, not another whose name starts the same', ent);
}

// Item 10: Events shows module names without their directories.
async function eventsNames() {
  await openTrace(0);
  await page.click('#view-byname .row[data-key="stress!site_stress"]', { button: 'right' });
  await settled(() => page.click('#menu button[data-action="events"]'));
  const stack = await page.$$eval('#view-events td.stack', (t) => t.map((x) => x.textContent).join('\n'));
  await shot('events');
  ok(stack.includes('libc.so.6!malloc') && !/\/[^\n]*!/.test(stack),
    'Show Events names modules by their file name, as the other views do', stack.slice(0, 400));
  const metrics = await page.$$eval('#view-events tbody tr td:nth-child(3)', (t) =>
    t.map((x) => ({ text: x.textContent, title: x.title })));
  ok(metrics.length > 0 && metrics.every((m) => /\d (B|KiB|MiB)$/.test(m.text) && / bytes$/.test(m.title)),
    'Events shows bytes in the tables\' units, exact in the tooltip', metrics.slice(0, 3));
}

// Item 11: one default Fold% for the GUI and `heapscope report`.
async function defaults(perfIdx) {
  await openTrace(perfIdx);
  const fp = await page.inputValue('#foldpct');
  const j = report(PERF);
  const total = await page.$eval('#view-byname .vtable .spacer', (s) => s.offsetHeight / 20);
  ok(fp === '' && j.summary.fold_pct === null && total === j.total_rows,
    'a trace opens with the Fold% of `heapscope report` (none): the same rows', { fp, total, report: j.total_rows });
}

// Item 10: `--bind 0.0.0.0` warns that the GUI is reachable from the
// network, naming the address and port it listens on, and prints a URL
// a browser on this machine opens.
async function bindAll(mainUrl) {
  const view = spawn(BIN, ['view', PERF, '--no-browser', '--port', '0', '--bind', '0.0.0.0'],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  atCleanup(() => view.kill('SIGKILL'));
  let out = '', err = '';
  view.stdout.on('data', (d) => { out += d; });
  view.stderr.on('data', (d) => { err += d; });
  for (let i = 0; i < 100 && !(/http:\/\/\S+/.test(out) && /warning/.test(err)); i++) await sleep(100);
  const url = /(http:\/\/\S+)/.exec(out)?.[1];
  const port = url && new URL(url).port;
  ok(url && new RegExp(`warning: listening on 0\\.0\\.0\\.0 port ${port}: the GUI is reachable ` +
    'from the network').test(err), '--bind 0.0.0.0 warns, naming the address and port', { out, err });
  await page.goto(url);
  await page.waitForSelector('body[data-ready="1"]');
  const shown = await page.evaluate(() => ({ trace: document.getElementById('trace').selectedOptions[0].text,
    rows: document.querySelectorAll('#view-byname .row:not([hidden]):not(.pending)').length }));
  await shot('bind');
  view.kill('SIGTERM');
  ok(shown.trace === 'workload.data.txt' && shown.rows > 0, 'and the URL it prints opens the GUI',
    { url, shown });
  // the token of the first view again (the cookie is per host, not port)
  await page.goto(mainUrl);
  await page.waitForSelector('body[data-ready="1"]');
}

// Item 10: a dead server is explained.
async function deadServer() {
  await openTrace(0);
  await stopView();
  await page.fill('#fold', 'x');
  await page.press('#fold', 'Enter');
  await page.waitForFunction(() => document.getElementById('status').dataset.error === '1');
  const msg = await page.textContent('#status');
  await shot('dead-server');
  ok(/heapscope view/.test(msg) && /(stopped|not running|gone)/.test(msg) && !/^Failed to fetch$/.test(msg),
    'a dead server: the status line says so and how to start it again', msg);
}

async function main() {
  tmp = begin({ name: 'trust', shotPrefix: 'trust-' });
  const heap = path.join(tmp, 'stress.heapscope');
  execFileSync(BIN, ['run', '-q', '--no-view', '-o', heap, '--',
    path.join(BUILD, 'tests/targets/stress'), '1', '1100000'], { stdio: 'ignore' });
  const chain = [];
  for (let d = 1; d <= DEEP; d++) chain.push(`deep_function_number_${d}`);
  const deepest = [];
  for (let d = 1; d <= DEEPEST; d++) deepest.push(`libpython3.11.so.1.0!_PyEval_EvalFrameDefault_${d}`);
  writeFileSync(path.join(tmp, 'deepest.folded'), `python3!main;${deepest.join(';')} 7\n`);
  writeFileSync(path.join(tmp, 'deep.folded'), `main;${chain.join(';')} 5\nmain;other 3\n`);
  const wide = [];
  for (let i = 0; i < WIDE; i++) wide.push(`main!w${String(i).padStart(6, '0')} ${WIDE - i}`);
  wide.push('main!big 3000000');
  writeFileSync(path.join(tmp, 'wide.folded'), wide.join('\n') + '\n');
  // two runs of processes whose names have a '-' (a diff of them)
  writeFileSync(path.join(tmp, 'test.folded'), 'Process demo-heap (1);Thread (1) demo-heap;' +
    '/bin/demo-heap!main 5\nProcess demo-cache (3);Thread (3) demo-cache;/bin/demo-cache!main 2\n');
  const others = [];
  for (let i = 0; i < 12; i++) others.push(`Process other-app (9);Thread (9) other-app;/bin/other-app!g${i} 1`);
  writeFileSync(path.join(tmp, 'base.folded'),
    'Process demo-heap (2);Thread (2) demo-heap;/bin/demo-heap!main 3\n' + others.join('\n') + '\n');
  // frames of Linux libraries whose file names have '-' and '+'
  writeFileSync(path.join(tmp, 'linux.folded'), [
    '/usr/bin/python3.11!main;/usr/lib/python3.11/lib-dynload/_json.cpython-311-x86_64-linux-gnu.so!scanstring 5',
    '/usr/bin/python3.11!main;/usr/lib/libstdc++.so.6!operator new(unsigned long) 3',
    '/lib64/ld-linux-x86-64.so.2!_dl_start;/lib64/ld-linux-x86-64.so.2!_dl_init 2', ''].join('\n'));
  // a perf script of 50 s samples over more than 100 s: times over 100 s
  const long = [];
  for (let i = 0; i < 6; i++) {
    long.push(`   longrun  4242/4242  [001] ${(1000 + i * 123.456789).toFixed(6)}:  1 cpu-clock:ppp: `,
      '\t            1234 very_long_running_function_name+0x10 (/usr/lib/x86_64-linux-gnu/libslow-1.2.so.0)',
      '\t            9eb1 main+0x2b1 (/usr/bin/longrun)', '');
  }
  writeFileSync(path.join(tmp, 'long.data.txt'), long.join('\n') + '\n');
  // C++ classes in two modules, for group classes
  writeFileSync(path.join(tmp, 'classes.folded'), 'app!main;libfoo.so!Foo::bar;libfoo.so!Baz::qux 5\n' +
    'app!main;libfoo.so!Foo::zap 3\napp!main;other.so!Foo::x 2\n');
  // Ungroup's cases: classes, modules and entry groups that share a start
  writeFileSync(path.join(tmp, 'ungroup.folded'), ['app!main;libfoo.so!Foo::bar;libfoo.so!Baz::qux 5',
    'app!main;libfoo.so!Foo::zap 3', 'app!main;libfoo.so!Foo::Inner::deep 4', 'app!main;other.so!Foo::x 2',
    'app!main;/usr/lib/libc.so.6!malloc 1', 'app!main;/opt/xlibc.so.6!malloc 1',
    'app!main;mscorlib!Foo;mscorlib!inner 3', 'app!main;mscorlib!FooBar 2', ''].join('\n'));
  // one name of FIT_NAME characters and numbers wider than their columns'
  // starting widths, with times (a source without them is laid out twice)
  writeFileSync(path.join(tmp, 'fit.perfView.xml'), `<?xml version="1.0" encoding="utf-8"?>
<StackWindow><StackSource>
<Frames Count="3"><Frame ID="0">main!main</Frame>
<Frame ID="1">main!${'n'.repeat(FIT_NAME - 5)}</Frame><Frame ID="2">main!other</Frame></Frames>
<Stacks Count="3"><Stack ID="0" CallerID="-1" FrameID="0"/><Stack ID="1" CallerID="0" FrameID="1"/>
<Stack ID="2" CallerID="-1" FrameID="2"/></Stacks>
<Samples Count="2"><Sample ID="0" Time="1.5" StackID="1" Metric="123456789012" Count="123456789012"/>
<Sample ID="1" Time="900.25" StackID="2"/></Samples>
</StackSource></StackWindow>
`);
  // the perf script in formats without times, and one with
  const conv = ['w.pb.gz', 'w.speedscope.json', 'w.perfView.xml'].map((f) => path.join(tmp, f));
  for (const f of conv) execFileSync(BIN, ['convert', PERF, '-o', f], { stdio: 'ignore' });
  const url = await startView([heap, PERF, path.join(tmp, 'deep.folded'), path.join(tmp, 'wide.folded'),
    path.join(tmp, 'test.folded'), path.join(tmp, 'base.folded'), path.join(tmp, 'linux.folded'),
    path.join(tmp, 'long.data.txt'), path.join(tmp, 'classes.folded'), path.join(tmp, 'ungroup.folded'),
    ...conv, path.join(tmp, 'fit.perfView.xml'), path.join(tmp, 'deepest.folded')]);

  ({ page } = await launchBrowser({ clipboard: true, ignoreConsole: /^Failed to load resource/ }));
  await page.goto(url);
  await page.waitForSelector('body[data-ready="1"]');

  await parts([
    ['numbers', () => numbers(heap, 3)],
    ['widths', () => numbersAtWidths(7)],
    ['name after numbers', () => nameAfterNumbers(13)],
    ['source back', () => sourceBack()],
    ['rows once', () => rowsOnce()],
    ['deep names', () => deepNames(2)],
    ['deepest names', () => deepestNames(14)],
    ['flame graph', () => flame(2)],
    ['busy', () => busy()],
    ['stats apart', () => statsApart()],
    ['selection', () => selection(1, 3)],
    ['timeline', () => timeline()],
    ['events', () => eventsNames()],
    ['process names', () => processNames(4, 5)],
    ['module names', () => moduleNames(6)],
    ['ungroup presets', () => ungroupPresets(1, 8)],
    ['ungroup exact', () => ungroupExact(9)],
    ['untimed', () => untimed([[0, 'heap trace', true], [9, 'folded', false], [1, 'perf script', true],
      [10, 'pprof', false], [11, 'speedscope', false], [12, 'perfView.xml', true]])],
    ['align narrow', () => alignNarrow(7)],
    ['defaults', () => defaults(1)],
    ['bind', () => bindAll(url)],
    ['dead server', () => deadServer()],
  ], process.env.HS_ONLY);
  ok(!errors.length, 'no JavaScript errors', errors);
}

await runTest(main);
