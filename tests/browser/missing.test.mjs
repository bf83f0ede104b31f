// missing.test.mjs - the features issue 17 found missing, compared with
// PerfView, heaptrack_gui, speedscope and pprof, each checked in Debian's
// chromium (playwright-core, headless) against `heapscope view`:
// heaptrack's Charts (summary, memory of the top call sites, allocations
// over time, sizes), PerfView's hideable columns, several selected cells
// with their sum and First/Last to Set Time Range, the net and peak while
// dragging over When (a CallTree, Callers or Callees node's own), Drill
// Into a Callers node, Flatten, Clear all Folding
// and Fold Module, copying rows with a header; speedscope's icicle, module prefixes hidden, keys
// that zoom and pan, Find's match count; a view's URL after a restart of
// `heapscope view`, and Export as CSV or JSON. Each part runs on its own
// (a failure is reported and the next part starts from a fresh page);
// screenshots go to $HS_BUILD/browser-artifacts/ (missing-*.png).
//
// Environment: HS_BIN, HS_SRC, HS_BUILD (set by meson), HS_CHROMIUM
// (default /usr/bin/chromium), HS_RUN_BIN and HS_RUN_BUILD (the heapscope
// and build directory that record the heap trace, default HS_BIN and
// HS_BUILD: an ASan heapscope cannot trace a program built without ASan,
// so the ASan build's view is tested on a trace the plain build made),
// HS_ONLY (parts to run, comma separated). Output is TAP.

import { execFileSync } from 'node:child_process';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { BIN, BUILD, SRC, begin, cliJson, errors, launchBrowser, ok, openTrace, parts,
  runTest, setBox, settled, shot, sleep, startView, stopView, tab } from './harness.mjs';

const PERF = path.join(SRC, 'tests/data/perf/workload.data.txt');

let page = null, tmp = null, url = null;
let files = [];

async function rightClick(sel) {
  await page.click(sel, { button: 'right' });
  await page.waitForSelector('#menu:not([hidden])');
}

const state = () => page.evaluate(() => window.heapscope.state());

// ---- the parts ----

// heaptrack_gui's pages: the summary in human units, the top call sites'
// memory stacked, allocations over time, the sizes as a histogram.
async function charts(heap) {
  const st = cliJson(['stats', heap]);
  await openTrace(1);
  ok(await page.$eval('#tabs [data-tab="charts"]', (b) => b.hidden),
    'a perf profile has no Charts tab');
  await openTrace(0);
  await tab('charts');
  await page.waitForSelector('#chart-sizes .u-over');
  await shot('charts');
  // the legend gives each site's own bytes where the mouse is
  const over = await page.$eval('#chart-memory .u-over', (e) => {
    const r = e.getBoundingClientRect();
    return { x: r.x + r.width * 0.78, y: r.y + r.height / 2 };
  });
  await page.mouse.move(over.x, over.y);
  await sleep(100);
  await shot('charts-memory', '#chart-memory');
  const values = await page.$$eval('#chart-memory .u-legend .u-value', (v) => v.map((x) => x.textContent));
  ok(values.slice(1).some((v) => /[KM]iB$/.test(v)), 'the legend gives each layer\'s bytes at the mouse',
    values);
  await page.locator('#chart-sizes').scrollIntoViewIfNeeded();
  await shot('charts-alloc', '#chart-alloc');
  await shot('charts-sizes', '#chart-sizes');
  const cards = await page.$$eval('#view-charts .card', (cs) => cs.map((c) => ({
    v: c.querySelector('.card-v').textContent, l: c.querySelector('.card-l').textContent })));
  const card = (l) => cards.find((c) => c.l.startsWith(l))?.v;
  const fmtBytes = (v) => {
    const u = ['B', 'KiB', 'MiB', 'GiB'];
    let i = 0;
    while (v >= 1024 && i < 3) {
      v /= 1024;
      i++;
    }
    return i ? `${v.toFixed(1)} ${u[i]}` : `${v} B`;
  };
  ok(card('allocations') === st.total_allocations.toLocaleString('en-US') &&
    card('peak heap in use') === fmtBytes(st.peak_heap_bytes) &&
    card('leaked') === fmtBytes(st.leaked_bytes),
  'the summary gives `heapscope stats`\'s numbers in human units', { cards, st: {
    a: st.total_allocations, p: st.peak_heap_bytes, l: st.leaked_bytes } });

  const mem = await page.evaluate(() => {
    const u = window.heapscope.views.charts.el.plots[0];
    const top = u.data[1];	// the highest stack: every site and "other"
    return { labels: u.series.slice(1).map((s) => s.label), max: Math.max(...top), last: top.at(-1),
      legend: [...document.querySelectorAll('#chart-memory .u-legend th')].map((t) => t.textContent) };
  });
  ok(mem.labels.length >= 3 && mem.labels[0] === 'other' && mem.legend.length === mem.labels.length + 1,
    'the memory chart stacks the top call sites and "other", each in the legend', mem);
  ok(mem.max === st.peak_heap_bytes, 'the stack\'s highest point is the peak heap in use',
    { max: mem.max, peak: st.peak_heap_bytes });
  // a stack's scale starts at zero (from its lowest value it cut the
  // bottom layers off), and its ticks are binary steps ("4.0 KiB")
  const axis = await page.evaluate(() => {
    const u = window.heapscope.views.charts.el.plots[0];
    return { min: u.scales.y.min, max: u.scales.y.max, splits: u.axes[1]._splits, labels: u.axes[1]._values };
  });
  const step = axis.splits[1] - axis.splits[0];
  ok(axis.min === 0 && axis.max >= mem.max && axis.splits.length >= 2 && Number.isInteger(Math.log2(step)) &&
     axis.splits.every((v) => v % step === 0),
  'the memory chart\'s scale starts at zero, its ticks in binary steps', axis);
  const sites = await page.evaluate(() => {
    const u = window.heapscope.views.charts.el.plots[0];
    const i = u.data[0].length - 1;
    // each layer's own value at the end: the stack below it subtracted
    return u.series.slice(1).map((s, k) => ({ name: s.label,
      own: u.data[k + 1][i] - (u.data[k + 2]?.[i] ?? 0) }));
  });
  const leaks = cliJson(['report', heap, '--source', 'net']).rows;
  const site = sites.find((s) => s.name !== 'other' && s.own > 0);
  const want = leaks.find((r) => r.key === site?.name);
  ok(site && want && Math.abs(site.own - want.inc) <= 1,
    'a call site\'s memory at the end is what `report --source net` says it holds', { site, want });

  const alloc = await page.evaluate(() => {
    const u = window.heapscope.views.charts.el.plots[1];
    const c = window.heapscope.views.charts.el.data;
    const sum = (a) => a.reduce((x, y) => x + y, 0);
    return { labels: u.series.slice(1).map((s) => s.label), n: sum(u.data[1]), temp: sum(u.data[2]),
      bytes: sum(c.alloc), tempBytes: sum(c.temp) };
  });
  ok(alloc.labels.join() === 'allocations,temporary' && alloc.n === st.total_allocations &&
    alloc.temp === st.temporary_allocations && Math.abs(alloc.bytes - st.bytes_allocated) < 1 &&
    Math.abs(alloc.tempBytes - st.temporary_bytes) < 1,
  'allocations and temporary allocations over time add up to the totals (counts and bytes)', { alloc,
    st: [st.total_allocations, st.temporary_allocations, st.bytes_allocated, st.temporary_bytes] });
  const sizes = await page.evaluate(() => window.heapscope.views.charts.el.plots[2].data[1]);
  ok(JSON.stringify(sizes) === JSON.stringify(st.size_histogram.map((b) => b.count)),
    'the size histogram has a bar per size range of `heapscope stats`', { sizes,
      want: st.size_histogram });
}

const HOT = 'hotloop!hot_function', COLD = 'hotloop!cold_function';
const row = (key) => `#view-byname .row[data-key="${key}"]`;

// PerfView's columns: hidden from a header's menu, in every table, still
// hidden after a reload, shown again from the same menu.
async function columns() {
  await openTrace(1);
  await rightClick('#view-byname .head [data-col="fold"]');
  await page.click('#menu [data-action="hide-column"]');
  const shown = () => page.evaluate(() => ({
    head: [...document.querySelectorAll('#view-byname .head > div')].filter((h) => !h.hidden)
      .map((h) => h.dataset.col),
    cells: document.querySelectorAll('#view-byname .row:not([hidden]) .c-fold:not([hidden])').length,
    tree: !document.querySelector('#view-calltree .head [data-col="fold"]').hidden }));
  let s = await shown();
  ok(!s.head.includes('fold') && !s.cells && !s.tree && s.head.includes('when'),
    'Hide Fold from its header\'s menu: no Fold header or cell, in CallTree either', s);
  await rightClick('#view-byname .head [data-col="when"]');
  await shot('columns-menu');
  await page.keyboard.press('Escape');
  await openTrace(1);
  s = await shown();
  ok(!s.head.includes('fold'), 'the column stays hidden after a reload', s);
  const align = await page.evaluate(() => {
    const h = document.querySelector('#view-byname .head [data-col="when"]').getBoundingClientRect();
    const c = document.querySelector('#view-byname .row:not([hidden]) .c-when').getBoundingClientRect();
    return { head: h.left, cell: c.left };
  });
  ok(Math.abs(align.head - align.cell) < 1, 'the columns after it stay under their headers', align);
  // Ctrl-C on one selected row copies its cells as displayed, Fold left out
  await page.click(`${row(HOT)} .c-name`);
  await page.evaluate(() => navigator.clipboard.writeText('sentinel'));
  await page.keyboard.press('Control+c');
  await page.waitForFunction(() => /copied/.test(document.getElementById('status').textContent));
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  const cells = await page.$$eval(`${row(HOT)} > div`, (cs) => cs.filter((c) => !c.hidden)
    .map((c) => c.textContent));
  ok(copied === cells.join('\t') && cells.length === 10,
    'Ctrl-C copies the selected row as displayed, without the hidden column', { copied, cells });
  await rightClick('#view-byname .head [data-col="name"]');
  await page.click('#menu [data-action="column-fold"]');
  s = await shown();
  ok(s.head.includes('fold') && s.cells > 0, 'the menu shows the column again', s);
}

// Several cells: their sum on the status line; First/Last cells set the
// time range (Alt-R); rows copied with a header, as displayed.
async function cells() {
  const want = cliJson(['report', PERF]).rows;
  const hot = want.find((r) => r.key === HOT), cold = want.find((r) => r.key === COLD);
  await openTrace(1);
  await page.click(`${row(HOT)} .c-exc`);
  await page.click(`${row(COLD)} .c-exc`, { modifiers: ['Shift'] });
  const st = await page.evaluate(() => ({ text: document.getElementById('status').textContent,
    sum: Number(document.getElementById('status').dataset.sum),
    sel: document.querySelectorAll('#view-byname .csel').length }));
  await shot('cells-sum');
  ok(st.sel === 2 && Math.abs(st.sum - (hot.exc + cold.exc)) < 1e-6 && st.text.includes('Sum of 2'),
    'Shift-click selects two Exc cells and the status line gives their sum', { st, hot: hot.exc,
      cold: cold.exc });

  // dragging from hot_function's Exc to cold_function's Inc Ct: a 2 x 5 block
  const centre = (sel) => page.$eval(sel, (c) => {
    const r = c.getBoundingClientRect();
    return { x: r.x + r.width / 2, y: r.y + r.height / 2 };
  });
  const a = await centre(`${row(HOT)} .c-exc`), b = await centre(`${row(COLD)} .c-inc-count`);
  await page.mouse.move(a.x, a.y);
  await page.mouse.down();
  await page.mouse.move((a.x + b.x) / 2, (a.y + b.y) / 2, { steps: 4 });
  await page.mouse.move(b.x, b.y, { steps: 4 });
  await page.mouse.up();
  const drag = await page.evaluate(() => ({ sum: Number(document.getElementById('status').dataset.sum),
    sel: document.querySelectorAll('#view-byname .csel').length,
    text: window.getSelection().toString() }));
  const dsum = [hot, cold].reduce((t, r) => t + r.exc + r.exc_count + r.inc_pct + r.inc + r.inc_count, 0);
  ok(drag.sel === 10 && Math.abs(drag.sum - dsum) < 1e-6 && !drag.text,
    'dragging across number cells selects the block (no text) and sums it', { drag, dsum });

  await page.click(`${row(HOT)} .c-first`);
  await page.click(`${row(COLD)} .c-last`, { modifiers: ['Shift'] });
  const lo = Math.min(hot.first_ms, cold.first_ms, hot.last_ms, cold.last_ms);
  const hi = Math.max(hot.first_ms, cold.first_ms, hot.last_ms, cold.last_ms);
  await settled(() => page.keyboard.press('Alt+r'));
  const p = (await state()).params;
  ok(Math.abs(Number(p.start) - lo) < 1e-6 && Math.abs(Number(p.end) - hi) < 1e-6,
    'First/Last cells, then Alt-R (Set Time Range): Start and End from them', { p, lo, hi });

  await settled(() => page.click('#back'));
  await page.click(`${row(HOT)} .c-name`);
  await page.click(`${row(COLD)} .c-exc-count`, { modifiers: ['Shift'] });
  await page.evaluate(() => navigator.clipboard.writeText('sentinel'));
  await page.keyboard.press('Control+c');
  await sleep(200);
  const text = await page.evaluate(() => navigator.clipboard.readText());
  const shown = await page.evaluate((keys) => keys.map((k) => [...document.querySelectorAll(
    `#view-byname .row[data-key="${k}"] > div`)].filter((c) => !c.hidden).map((c) => c.textContent)
    .join('\t')), [HOT, COLD]);
  const lines = text.trimEnd().split('\n');
  ok(lines.length === 3 && lines[0].startsWith('Name\tExc %\tExc\tExc Ct') &&
    lines[1] === shown[0] && lines[2] === shown[1],
  'Ctrl-C copies the selected rows with a header, as displayed', { lines, shown });
}

// PerfView's readout while dragging over When: the net and the peak.
async function whenReadout() {
  const want = cliJson(['report', files[0]]).rows.find((r) => r.key === 'demo-heap!cache_insert');
  await openTrace(0);
  const sel = async (a, b) => {
    await page.evaluate(({ key, a, b }) => {
      const t = document.querySelector(`#view-byname .row[data-key="${key}"] .c-when`).firstChild;
      window.getSelection().setBaseAndExtent(t, a, t, b ?? t.length);
    }, { key: 'demo-heap!cache_insert', a, b });
    await page.waitForFunction(() => /Net .* Peak/.test(document.getElementById('status').textContent));
    return page.evaluate(() => {
      const s = document.getElementById('status');
      return { text: s.textContent, net: Number(s.dataset.net), peak: Number(s.dataset.peak) };
    });
  };
  const all = await sel(0, null);
  await shot('when-readout');
  ok(all.net === want.inc && all.peak === want.inc,
    'the whole When cell of an alloc row: Net and Peak are its Inc', { all, inc: want.inc });
  const part = await sel(0, 5);
  ok(part.net > 0 && part.net < want.inc && part.text.includes('TimeRange'),
    'part of it: less, with the time range', { part, inc: want.inc });

  // with the mouse: the readout follows the drag before the button is up
  await page.evaluate(() => window.getSelection().removeAllRanges());
  await page.evaluate(() => { document.getElementById('status').textContent = ''; });
  const at = (k) => page.evaluate(({ key, k }) => {
    const t = document.querySelector(`#view-byname .row[data-key="${key}"] .c-when`).firstChild;
    const r = document.createRange();
    r.setStart(t, k);
    r.setEnd(t, k + 1);
    const b = r.getBoundingClientRect();
    return { x: b.left + 1, y: b.top + b.height / 2, n: t.length };
  }, { key: 'demo-heap!cache_insert', k });
  const a = await at(0);
  const b = await at(a.n - 1);
  await page.mouse.move(a.x, a.y);
  await page.mouse.down();
  await page.mouse.move(b.x + 4, b.y, { steps: 6 });
  await page.waitForFunction(() => /Net .* Peak/.test(document.getElementById('status').textContent),
    null, { timeout: 5000 }).catch(() => {});
  const dragging = await page.evaluate(() => {
    const s = document.getElementById('status');
    return { text: s.textContent, net: Number(s.dataset.net), cells: document.querySelectorAll('.csel').length };
  });
  await shot('when-dragging');
  await page.mouse.up();
  ok(/Net .* Peak/.test(dragging.text) && dragging.net === want.inc && !dragging.cells,
    'dragging the mouse over a When cell: Net and Peak while the button is still down', { dragging,
      inc: want.inc });
}

// The readout over a CallTree node's When cell is the node's: hot_function
// runs in two processes, so each node has part of the name's Inc.
async function whenNode() {
  await openTrace(1);
  await setBox('exc', '');
  await tab('calltree');
  await page.click('#view-calltree .row[data-key="ROOT"]');
  await settled(() => page.click('#expandall'));
  const tree = cliJson(['report', PERF, '--view', 'calltree']).tree;
  const nodes = [];
  const walk = (n, path) => {
    if (n.key === HOT) nodes.push({ path, inc: n.inc });
    for (const c of n.children || []) walk(c, [...path, c.key]);
  };
  walk(tree, []);
  const name = cliJson(['report', PERF]).rows.find((r) => r.key === HOT).inc;
  ok(nodes.length === 2 && nodes.every((n) => n.inc < name), 'hot_function is two CallTree nodes', nodes);
  const rows = await page.$$eval(`#view-calltree .row[data-key="${HOT}"]`, (rs) => rs.map((r) => r.dataset.index));
  const got = [];
  for (const index of rows) {
    await page.evaluate(() => { document.getElementById('status').dataset.net = ''; });
    await page.evaluate((i) => {
      const t = document.querySelector(`#view-calltree .row[data-index="${i}"] .c-when`).firstChild;
      window.getSelection().setBaseAndExtent(t, 0, t, t.length);
    }, index);
    await page.waitForFunction(() => document.getElementById('status').dataset.net !== '' &&
      /Net .* Peak/.test(document.getElementById('status').textContent));
    got.push(await page.evaluate(() => {
      const s = document.getElementById('status');
      return { text: s.textContent, net: Number(s.dataset.net), of: s.dataset.of };
    }));
  }
  await shot('when-node');
  const near = (a, b) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));
  ok(got.length === 2 && got.every((g) => g.of === 'node' && g.text.includes(' \u2192 ')) &&
    got.every((g) => nodes.some((n) => near(g.net, n.inc))) && !near(got[0].net, got[1].net),
  'the When readout of a CallTree node is the node\'s Net, not the name\'s',
  { got, nodes, name });
}

// The readout over the whole When cell of row @index of @tab: what the
// status line says, its Net and what it is of ('node' or 'name').
async function wholeWhen(tab, index) {
  await page.evaluate(() => { document.getElementById('status').dataset.net = ''; });
  await page.evaluate(({ tab, i }) => {
    const t = document.querySelector(`#view-${tab} .row[data-index="${i}"] .c-when`).firstChild;
    window.getSelection().setBaseAndExtent(t, 0, t, t.length);
  }, { tab, i: index });
  await page.waitForFunction(() => document.getElementById('status').dataset.net !== '' &&
    /Net .* Peak/.test(document.getElementById('status').textContent));
  return page.evaluate(() => {
    const s = document.getElementById('status');
    return { text: s.textContent, net: Number(s.dataset.net), peak: Number(s.dataset.peak),
      of: s.dataset.of };
  });
}

// The readout over a Callers or Callees node's When cell is that node's,
// as in CallTree: hot_function's callers end in two threads, each with
// part of its Inc; every node of both trees reads its own Inc (the
// callees on the heap trace: a CPU sample's time spreads past the When
// range's end, bytes do not).
async function whenFocusTrees() {
  const near = (a, b) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));
  for (const [t, focus, trace] of [['callers', HOT, 1], ['callees', 'demo-heap!main', 0]]) {
    await openTrace(trace);
    await setBox('exc', '');
    // a double-click makes the name the focus
    await settled(() => page.dblclick(`${row(focus)} .c-name`));
    ok((await state()).focus === focus, `${focus} is the focus`, await state());
    await tab(t);
    await page.click(`#view-${t} .row[data-index="0"]`);
    await settled(() => page.click('#expandall'));
    const want = [];
    const walk = (n, depth) => {
      want.push({ key: n.key, depth, inc: n.inc });
      for (const c of n.children || []) walk(c, depth + 1);
    };
    walk(cliJson(['report', files[trace], '--view', t, '--focus', focus]).tree, 0);
    const shown = await page.$$eval(`#view-${t} .row:not([hidden]):not(.pending)`, (rs) =>
      rs.map((r) => ({ key: r.dataset.key, index: r.dataset.index })));
    ok(shown.length === want.length && shown.every((r, i) => r.key === want[i].key),
      `${t} of ${focus}: every node shown`, { shown, want });
    const got = [];
    for (const r of shown) got.push(await wholeWhen(t, r.index));
    await shot(`when-${t}`);
    ok(got.every((g, i) => g.of === 'node' && near(g.net, want[i].inc)),
      `the When readout of each ${t} node is its own Inc`, { got, want });
    if (t === 'callers') {
      const threads = want.map((w, i) => ({ ...w, got: got[i] })).filter((w) => /^Thread /.test(w.key));
      ok(threads.length === 2 && !near(threads[0].got.net, threads[1].got.net) &&
        threads.every((w) => w.got.net < want[0].inc && w.got.text.includes(' \u2190 ')),
      'two callers nodes of one name read apart, each less than the name', threads);
    }
  }
}

// Drill Into a Callers node (PerfView: exactly the selected node's
// samples): the samples that came through that thread, not the name's.
async function drillCallers() {
  await openTrace(1);
  await setBox('exc', '');
  await settled(() => page.dblclick(`${row(HOT)} .c-name`));
  await tab('callers');
  await page.click('#view-callers .row[data-index="0"]');
  await settled(() => page.click('#expandall'));
  const want = [];
  const walk = (n) => {
    if (n.key === 'Thread (11214)') want.push(n.inc);
    for (const c of n.children || []) walk(c);
  };
  walk(cliJson(['report', PERF, '--view', 'callers', '--focus', HOT]).tree);
  const name = cliJson(['report', PERF]).rows.find((r) => r.key === HOT).inc;
  await rightClick('#view-callers .row[data-key="Thread (11214)"]');
  ok(await page.$eval('#menu [data-action="drill-exc"]', (b) => b.disabled),
    'a Callers node below the focus has no exclusive drill');
  await settled(() => page.click('#menu [data-action="drill-inc"]'));
  const got = await page.evaluate(() => ({ metric: Number(document.getElementById('summary').dataset.metric),
    origin: document.getElementById('origin').textContent, steps: window.heapscope.state().steps }));
  await shot('drill-callers');
  const step = got.steps.at(-1);
  ok(want.length === 1 && Math.abs(got.metric - want[0]) <= 1e-9 * want[0] && want[0] < name &&
    step.tree === 'callers' && step.path[0] === HOT && step.path.at(-1) === 'Thread (11214)' &&
    /drill/.test(got.origin),
  'Drill Into a Callers node keeps that node\'s samples (its Inc), not the name\'s', { got, want, name });
}

// Show Events on a Callers or Callees node (PerfView: the node is a stack
// context): the samples under that node's path from the focus, not all
// those of its name. Each list is checked against Drill Into the same node
// (the same samples) and the node's Inc; each stack holds the path.
async function eventsFocusTrees(folded) {
  const cases = [
    // hot_function's callers end in two threads, 14 samples each of 28
    { trace: 1, file: PERF, tab: 'callers', focus: HOT, node: 'Thread (11214)' },
    // main -> a -> c and main -> b -> c: c under a is 5 of c's 4 stacks
    { trace: 2, file: folded, tab: 'callees', focus: 'main', node: 'c', under: 'a' },
  ];
  for (const c of cases) {
    await openTrace(c.trace);
    await settled(() => page.dblclick(`${row(c.focus)} .c-name`));
    await tab(c.tab);
    await page.click(`#view-${c.tab} .row[data-index="0"]`);
    await settled(() => page.click('#expandall'));
    // the node of the CLI's tree, and the name's samples for comparison
    let want = null;
    const walk = (n, up) => {
      if (n.key === c.node && (!c.under || up === c.under)) want = n;
      for (const k of n.children || []) walk(k, n.key);
    };
    walk(cliJson(['report', c.file, '--view', c.tab, '--focus', c.focus]).tree, null);
    const name = cliJson(['report', c.file]).rows.find((r) => r.key === c.node);
    const index = await page.$$eval(`#view-${c.tab} .row:not([hidden]):not(.pending)`, (rs, c) => {
      const i = rs.findIndex((r, k) => r.dataset.key === c.node &&
        (!c.under || rs.slice(0, k).reverse().find((p) => Number(p.dataset.depth) ===
          Number(r.dataset.depth) - 1)?.dataset.key === c.under));
      return rs[i]?.dataset.index;
    }, c);
    ok(index !== undefined && want && name && want.inc_count < name.inc_count,
      `${c.tab} of ${c.focus}: the node ${c.node} has fewer samples than its name`, { index, want, name });
    await rightClick(`#view-${c.tab} .row[data-index="${index}"]`);
    await settled(() => page.click('#menu [data-action="events"]'));
    const ev = await page.evaluate(() => ({
      head: document.querySelector('#view-events h3')?.textContent,
      stacks: [...document.querySelectorAll('#view-events td.stack')].map((t) => t.title.split('\n')),
      count: [...document.querySelectorAll('#view-events tbody tr')].reduce((t, r) =>
        t + Number(r.children[3].textContent.replace(/,/g, '')), 0) }));
    await shot(`events-${c.tab}`);
    const total = Number(/: ([\d,]+) samples$/.exec(ev.head || '')?.[1].replace(/,/g, ''));
    // Drill Into the same node: a source of exactly its samples
    await tab(c.tab);
    await rightClick(`#view-${c.tab} .row[data-index="${index}"]`);
    await settled(() => page.click('#menu [data-action="drill-inc"]'));
    const drilled = await page.evaluate(() => window.heapscope.state().steps.at(-1));
    const sum = await page.evaluate(() => ({ metric: Number(document.getElementById('summary').dataset.metric),
      text: document.getElementById('summary').textContent }));
    const samples = Number(/Samples: ([\d,]+)/.exec(sum.text)?.[1].replace(/,/g, ''));
    const inPath = (st) => {
      // the node's path from the focus, outermost first in the stack
      const path = c.tab === 'callers' ? [...drilled.path].reverse() : drilled.path;
      let k = 0;
      for (const f of st) if (k < path.length && f.endsWith(path[k])) k++;
      return k === path.length;
    };
    ok(total === samples && total === ev.stacks.length && ev.count === want.inc_count &&
      ev.stacks.every(inPath) && ev.head.includes(c.tab === 'callers' ? 'Callers of' : 'Callees of'),
    `Show Events on a ${c.tab} node: that node's samples (its path's), as Drill Into takes them`,
    { total, samples, count: ev.count, want: want.inc_count, head: ev.head, path: drilled.path,
      bad: ev.stacks.filter((st) => !inPath(st)).slice(0, 2) });
    ok(Math.abs(sum.metric - want.inc) <= 1e-9 * Math.max(1, want.inc),
      'and the drilled node\'s metric is its Inc', { metric: sum.metric, inc: want.inc });
  }
}

// Flatten, Fold Module and Clear all Folding in the context menu.
async function menuItems() {
  await openTrace(1);
  await rightClick(row('libc.so.6!__libc_start_call_main'));
  await settled(() => page.click('#menu [data-action="fold-module"]'));
  let s = await state();
  const keys = await page.$$eval('#view-byname .row:not([hidden])', (rs) => rs.map((r) => r.dataset.key));
  ok(s.params.fold.includes('libc.so.6!') && !keys.some((k) => k.startsWith('libc.so.6!')),
    'Fold Module folds every libc.so.6 frame away', { fold: s.params.fold, keys });
  await setBox('foldpct', '2');
  await rightClick(row(HOT));
  await settled(() => page.click('#menu [data-action="clear-folding"]'));
  s = await state();
  ok(s.params.fold === '' && s.params.fold_pct === '', 'Clear all Folding empties FoldPats and Fold%',
    s.params);
  await rightClick(row(HOT));
  await settled(() => page.click('#menu [data-action="flatten"]'));
  s = await state();
  const want = cliJson(['report', PERF, '--flatten']).rows.filter((r) => r.key !== 'ROOT');
  await tab('calltree');
  await page.click('#view-calltree .row[data-key="ROOT"]');
  await settled(() => page.click('#expandall'));
  const tree = await page.$$eval('#view-calltree .row:not([hidden])', (rs) =>
    rs.map((r) => ({ key: r.dataset.key, depth: Number(r.dataset.depth) })));
  await shot('flatten');
  ok(s.steps.at(-1)?.kind === 'flatten' && tree.every((r) => r.depth <= 1) &&
    tree.length === want.length + 1,
  'Flatten: every name one level under ROOT, as `report --flatten`', { steps: s.steps, tree,
    want: want.map((r) => r.key) });
}

// speedscope's icicle (ROOT on top), names without their module, keys
// that zoom and pan, and Find's match count.
async function flameGraph() {
  await openTrace(1);
  await tab('flame');
  const geo = () => page.evaluate(() => {
    const f = window.heapscope.views.flame.flame;
    const root = f.rects.find((q) => q.d === 0);
    const hot = f.rects.find((q) => q.r.key === 'hotloop!hot_function');
    return { rootY: f.rowY(0), h: f.height, hot: hot && { x: hot.x, w: hot.w },
      label: hot && f.label(hot.r), root: root && { x: root.x, w: root.w }, n: f.rects.length };
  });
  const flame = await geo();
  ok(flame.rootY === flame.h - 18, 'the flame graph has ROOT at the bottom', flame);
  await page.check('#flame-icicle');
  await page.check('#flame-hideModules');
  const ice = await geo();
  await shot('icicle');
  ok(ice.rootY === 0 && await page.$eval('.flame', (b) => b.scrollTop) === 0,
    'Icicle puts ROOT on top, and shows the top', ice);
  ok(ice.label === 'hot_function', 'Hide modules: "hotloop!hot_function" shows as "hot_function"',
    ice.label);

  await page.focus('.flame');
  await page.keyboard.press('+');
  const z = await geo();
  ok(Math.abs(z.root.w - 2 * ice.root.w) < 1 && Math.abs(z.root.x + ice.root.w / 2) < 1,
    '+ zooms in twice about the middle', { before: ice.root, after: z.root });
  await page.keyboard.press('ArrowRight');
  const p = await geo();
  ok(p.root.x < z.root.x - 1, '\u2192 pans to the right', { before: z.root, after: p.root });
  await page.keyboard.press('0');
  const back = await geo();
  ok(Math.abs(back.root.w - ice.root.w) < 1 && back.root.x === 0, '0 shows the whole width again',
    back.root);

  await page.fill('#find', 'function');
  await settled(() => page.press('#find', 'Enter'));
  const want = await page.evaluate(() =>
    window.heapscope.views.flame.flame.rows.filter((r) => /function/i.test(r.name)).length);
  const shown = await page.$eval('.flame-bar .matches', (m) => ({ text: m.textContent,
    n: Number(m.dataset.count) }));
  const status = await page.textContent('#status');
  await shot('flame-find');
  ok(want >= 4 && shown.n === want && shown.text === `${want} matches` &&
    status.includes(`${want} boxes match`), 'Find counts the boxes it highlights', { want, shown, status });
  await page.uncheck('#flame-icicle');
  await page.uncheck('#flame-hideModules');
}

// Whether CSV texts @a and @b have the same cells, numbers equal to 12
// digits (the JSON API rounds reals to 15 digits, the CLI writes 17).
function sameCsv(a, b) {
  const rows = (t) => t.trimEnd().split('\n').map((l) => l.split(','));
  const ra = rows(a), rb = rows(b);
  return ra.length === rb.length && ra.every((r, i) => r.length === rb[i].length && r.every((c, k) => {
    const d = rb[i][k];
    if (c === d) return true;
    const x = Number(c), y = Number(d);
    return c !== '' && d !== '' && !isNaN(x) && !isNaN(y) && Math.abs(x - y) <= 1e-12 * Math.max(1, Math.abs(y));
  }));
}

// Export: the rows shown, as CSV equal to `report --format csv` of the
// same boxes, and as JSON with the query that makes the view again.
// Export this view as @kind (csv, json): the file's name and text.
async function save(kind) {
  await page.click('#export');
  const [dl] = await Promise.all([page.waitForEvent('download'),
    settled(() => page.click(`#menu [data-action="export-${kind}"]`))]);
  const file = path.join(tmp, `export.${kind}`);
  await dl.saveAs(file);
  return { name: dl.suggestedFilename(), text: readFileSync(file, 'utf8') };
}

async function exporting() {
  await openTrace(1);
  await setBox('exc', 'cold');
  const csv = await save('csv');
  const want = execFileSync(BIN, ['report', PERF, '--exc', 'cold', '--format', 'csv'], { encoding: 'utf8' });
  ok(csv.name === 'workload.data.txt-byname.csv' && sameCsv(csv.text, want),
    'Export as CSV: ByName is `report --format csv` with the same ExcPats', { got: csv.text, want });
  const json = await save('json');
  const doc = JSON.parse(json.text);
  ok(doc.query.params.exc === 'cold' && doc.query.trace === 1 && doc.rows.length === doc.total_rows &&
    doc.rows.map((r) => r.key).join() === want.trim().split('\n').slice(1).map((l) => l.split(',')[0]).join(),
  'Export as JSON: the query (source, boxes) and the same rows', { query: doc.query, n: doc.rows.length });
  const again = await page.evaluate(async (q) => {
    const r = await fetch('/api/rows', { method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ ...q, offset: 0, count: 10000 }) });
    return (await r.json()).rows.map((x) => x.key);
  }, doc.query);
  ok(again.join() === doc.rows.map((r) => r.key).join(), 'the exported query gives the API\'s same rows',
    { again, doc: doc.rows.map((r) => r.key) });

  await tab('calltree');
  await page.click('#view-calltree .row[data-key="ROOT"]');
  await settled(() => page.click('#expandall'));
  const tree = await save('csv');
  const wantTree = execFileSync(BIN, ['report', PERF, '--exc', 'cold', '--view', 'calltree',
    '--format', 'csv'], { encoding: 'utf8' });
  ok(sameCsv(tree.text, wantTree), 'Export as CSV: the expanded CallTree is `report --view calltree`',
    { got: tree.text, want: wantTree });
}

// Export of Caller-Callee (report's CSV with its Section column) and of
// the Flame Graph (report's rectangles; JSON: its tree and the query).
async function exportingMore() {
  await openTrace(1);
  await setBox('exc', '');
  await settled(() => page.dblclick(`${row(HOT)} .c-name`));
  ok((await state()).tab === 'caller-callee', 'double-click opens Caller-Callee', await state());
  const cc = await save('csv');
  const want = execFileSync(BIN, ['report', PERF, '--view', 'caller-callee', '--focus', HOT,
    '--format', 'csv'], { encoding: 'utf8' });
  ok(cc.name === 'workload.data.txt-caller-callee.csv' && sameCsv(cc.text, want) &&
    /^focus,/m.test(cc.text), 'Export as CSV: Caller-Callee is `report --view caller-callee`',
  { got: cc.text, want });
  const ccJson = JSON.parse((await save('json')).text);
  const wantJson = cliJson(['report', PERF, '--view', 'caller-callee', '--focus', HOT]);
  ok(ccJson.query.focus === HOT && ccJson.query.view === 'caller-callee' &&
    ccJson.focus_row.inc === wantJson.focus_row.inc &&
    ccJson.callers.map((r) => r.key).join() === wantJson.callers.map((r) => r.key).join() &&
    ccJson.callees.map((r) => r.key).join() === wantJson.callees.map((r) => r.key).join(),
  'Export as JSON: Caller-Callee\'s focus, callers, callees and query', { got: ccJson, want: wantJson });

  await setBox('inc', 'hotloop');
  await tab('flame');
  const fl = await save('csv');
  const wantFl = execFileSync(BIN, ['report', PERF, '--inc', 'hotloop', '--view', 'flame',
    '--format', 'csv'], { encoding: 'utf8' });
  ok(fl.name === 'workload.data.txt-flame.csv' && sameCsv(fl.text, wantFl),
    'Export as CSV: the Flame Graph is `report --view flame --format csv`', { got: fl.text, want: wantFl });
  const flJson = JSON.parse((await save('json')).text);
  const wantTree = cliJson(['report', PERF, '--inc', 'hotloop', '--view', 'flame']).tree;
  const walk = (n, d = 0) => [`${d}:${n.key}:${n.inc.toPrecision(12)}`,
    ...(n.children || []).flatMap((c) => walk(c, d + 1))];
  ok(flJson.query.params.inc === 'hotloop' && walk(flJson.tree).join('|') === walk(wantTree).join('|'),
    'Export as JSON: the Flame Graph\'s tree is report\'s, with the query',
    { got: walk(flJson.tree), want: walk(wantTree) });
  const again = await page.evaluate(async (q) => {
    const r = await fetch('/api/flame', { method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(q) });
    return (await r.json()).rows.length;
  }, flJson.query);
  ok(again === walk(flJson.tree).length, 'the exported query gives the same boxes', { again });
}

// A view's URL still works after `heapscope view` restarts (here with its
// files in the other order): its state is in the URL, the token is not.
async function restart() {
  await openTrace(1);
  await setBox('inc', 'hot_function');
  await tab('calltree');
  const link = page.url();
  ok(!/token/.test(link) && /#/.test(link), 'the address bar holds the view, not the token', link);
  const port = new URL(url).port;
  await stopView();
  url = await startView([PERF, files[0]], port);
  files = [PERF, files[0]];
  // the URL it prints gives the browser the new token; then the old link
  await page.goto(url);
  await page.waitForSelector('body[data-ready="1"]');
  await page.goto('about:blank');
  await page.goto(link);
  await page.waitForSelector('body[data-ready="1"]');
  await page.waitForSelector('#view-calltree.active .row[data-key="ROOT"]');
  const got = await page.evaluate(() => ({ trace: document.getElementById('trace').selectedOptions[0].text,
    inc: document.getElementById('inc').value, tab: window.heapscope.state().tab,
    summary: Number(document.getElementById('summary').dataset.metric),
    error: document.getElementById('status').dataset.error }));
  await shot('restart');
  const want = cliJson(['report', PERF, '--inc', 'hot_function']).summary.metric;
  ok(got.trace === 'workload.data.txt' && got.inc === 'hot_function' && got.tab === 'calltree' &&
    Math.abs(got.summary - want) < 1e-9 && !got.error,
  'after the restart the old link shows the same trace (now the first), boxes and tab', { got, want });
  // a link to a file not loaded says so
  const other = link.replace(encodeURIComponent('workload.data.txt'), encodeURIComponent('gone.txt'));
  await page.goto('about:blank');
  await page.goto(other);
  await page.waitForSelector('body[data-ready="1"]');
  const st = await page.evaluate(() => ({ text: document.getElementById('status').textContent,
    error: document.getElementById('status').dataset.error }));
  ok(st.error === '1' && st.text.includes('gone.txt'), 'a link to a trace not loaded says which', st);
}

// "all N files" (--merge, or a program's exec chain) has no heap trace of
// its own for the Charts: their tab is not offered there (it could only
// fail), and each heap trace of it still has one.
async function chartsMerged(heap) {
  const copy = path.join(tmp, 'demo-copy.heapscope');
  copyFileSync(heap, copy);
  await stopView();
  url = await startView([heap, copy], 0, ['--merge']);
  await page.goto(url);
  await page.waitForSelector('body[data-ready="1"]');
  const traces = await page.$$eval('#trace option', (os) => os.map((o) => o.textContent));
  ok(traces[0] === 'all 2 files', 'the merged trace comes first', traces);
  ok(await page.$eval('#tabs [data-tab="charts"]', (b) => b.hidden), 'all 2 files: no Charts tab');
  await shot('charts-merged');
  await settled(() => page.selectOption('#trace', '1'));
  ok(!await page.$eval('#tabs [data-tab="charts"]', (b) => b.hidden), 'one of its heap traces has Charts');
  await tab('charts');
  await page.waitForSelector('#chart-sizes .u-over');
}

async function main() {
  tmp = begin({ name: 'missing', shotPrefix: 'missing-' });
  const heap = path.join(tmp, 'demo.heapscope');
  execFileSync(process.env.HS_RUN_BIN || BIN, ['run', '-q', '--no-view', '-o', heap, '--',
    path.join(process.env.HS_RUN_BUILD || BUILD, 'examples/demo-heap')], { stdio: 'ignore' });
  // c is called from a (5) and b (3) under main, and from x (2)
  const folded = path.join(tmp, 'callees.folded');
  writeFileSync(folded, 'main;a;c 5\nmain;b;c 3\nx;c 2\nmain;a 1\n');
  files = [heap, PERF, folded];
  url = await startView(files);

  ({ page } = await launchBrowser({ clipboard: true, ignoreConsole: /^Failed to load resource/ }));
  await page.goto(url);
  await page.waitForSelector('body[data-ready="1"]');

  await parts([
    ['charts', () => charts(heap)],
    ['columns', () => columns()],
    ['cells', () => cells()],
    ['when', () => whenReadout()],
    ['when-node', () => whenNode()],
    ['when-callers', () => whenFocusTrees()],
    ['drill-callers', () => drillCallers()],
    ['events-callers', () => eventsFocusTrees(files[2])],
    ['menu', () => menuItems()],
    ['flame', () => flameGraph()],
    ['export', () => exporting()],
    ['export-more', () => exportingMore()],
    ['restart', () => restart()],
    ['charts-merged', () => chartsMerged(heap)],
  ], process.env.HS_ONLY);
  ok(!errors.length, 'no JavaScript errors', errors);
}

await runTest(main);
