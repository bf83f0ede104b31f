// gui.test.mjs - the web GUI in a real browser: playwright-core drives
// Debian's chromium (headless, no network, a fresh profile) against
// `heapscope view`. It opens traces, sets every text box, switches every
// tab, drills in, diffs two traces, sets ranges on the timeline and in a
// When cell, scrolls 100k rows, and checks the rows and numbers shown
// against `heapscope report --format json` for the same parameters.
// Screenshots of each view go to $HS_BUILD/browser-artifacts/.
//
// Environment: HS_BIN, HS_SRC, HS_BUILD (set by meson), HS_CHROMIUM
// (default /usr/bin/chromium). Output is TAP. Bounded: every wait has a
// timeout and the whole run stops after HS_BROWSER_TIMEOUT seconds.

import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { BIN, BUILD, SRC, WAIT, begin, errors, launchBrowser, ok, report, runTest, setBox, settled,
  shot, startView, stopView, tab } from './harness.mjs';

const PERF = path.join(SRC, 'tests/data/perf');
const TRACES = [path.join(PERF, 'workload.data.txt'), path.join(PERF, 'workload-cpu.data.txt')];
const BIG_NAMES = 100000;

let context = null, page = null;

// The numbers as the GUI prints them (web/js/format.js): whole numbers
// without a decimal, bytes in binary units with one decimal above 1 KiB.
const nf1 = new Intl.NumberFormat('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 });
const nf0 = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const num = (v) => (Number.isInteger(v) ? nf0.format(v) : nf1.format(v));
const count = num;
function human(v) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  for (; Math.abs(v) >= 1024 && i < units.length - 1; i++) v /= 1024;
  return `${i ? v.toFixed(1) : num(v)} ${units[i]}`;
}
const metric = (v, unit) => (unit === 'bytes' ? human(v) : num(v));

// The report options of the GUI's text boxes.
function cliArgs(p) {
  const a = [];
  const add = (opt, v) => { if (v !== '' && v !== undefined) a.push(opt, v); };
  add('--start', p.start);
  add('--end', p.end);
  add('--group', p.group);
  add('--fold-pct', p.fold_pct);
  add('--fold', p.fold);
  add('--inc', p.inc);
  add('--exc', p.exc);
  return a;
}

async function boxes() {
  return page.evaluate(() => ({
    start: document.getElementById('start').value,
    end: document.getElementById('end').value,
    group: document.getElementById('group').value,
    fold_pct: document.getElementById('foldpct').value,
    fold: document.getElementById('fold').value,
    inc: document.getElementById('inc').value,
    exc: document.getElementById('exc').value,
  }));
}

async function statusText() {
  return page.textContent('#status');
}

async function noError(what) {
  const e = await page.evaluate(() => document.getElementById('status').dataset.error);
  ok(!e, `${what}: no error shown`, await statusText());
}

// The rows a table shows: key, depth and cell texts.
async function shownRows(view) {
  return page.$$eval(`#view-${view} .row:not([hidden]):not(.pending)`, (rows) => rows.map((r) => ({
    key: r.dataset.key, depth: Number(r.dataset.depth || 0), index: Number(r.dataset.index),
    cells: [...r.children].map((c) => c.textContent), tips: [...r.children].map((c) => c.title),
  })));
}

// What the eye sees: the row elements of a table that are laid out (a
// row with the hidden attribute must not show, whatever its CSS says).
async function visibleRows(view) {
  return page.$$eval(`#view-${view} .row`, (rows) => rows.filter((r) =>
    getComputedStyle(r).display !== 'none' && r.getBoundingClientRect().height > 0).length);
}

// Issue 17 item 1: no row of a previous, longer view stays on screen.
async function noStaleRows(view, what) {
  const shown = (await shownRows(view)).length;
  const seen = await visibleRows(view);
  ok(seen === shown, `${what}: no stale rows on screen`, { shown, seen });
}

// Column order: name exc% exc excct inc% inc incct fold when first last.
// @unit: the source's (bytes are shown in binary units, exact in the tooltip).
function sameRow(shown, row, unit) {
  return shown.cells[0].endsWith(row.name) && shown.cells[2] === metric(row.exc, unit) &&
    shown.cells[3] === count(row.exc_count) && shown.cells[5] === metric(row.inc, unit) &&
    shown.cells[6] === count(row.inc_count) && shown.cells[8] === row.when &&
    (unit !== 'bytes' || (shown.tips[2] === `${num(row.exc)} bytes` &&
      shown.tips[5] === `${num(row.inc)} bytes`));
}

// ByName as shown equals the report's rows for the same text boxes.
async function checkByName(file, what, extra = []) {
  const p = await boxes();
  const j = report(file, [...cliArgs(p), ...extra]);
  const rows = await shownRows('byname');
  ok(rows.length > 0 && rows.length <= j.rows.length, `${what}: ByName shows rows`,
    { shown: rows.length, report: j.rows.length });
  const bad = rows.filter((r) => !sameRow(r, j.rows[r.index], j.summary.unit));
  ok(!bad.length, `${what}: ByName rows and numbers equal the report's`,
    { bad: bad.slice(0, 3), want: bad.slice(0, 3).map((r) => j.rows[r.index]) });
  const shownMetric = await page.getAttribute('#summary', 'data-metric');
  ok(Number(shownMetric) === j.summary.metric, `${what}: the summary's metric is the report's`,
    { shown: shownMetric, report: j.summary.metric });
  return j;
}

// The CallTree rows shown equal the report's nodes at the same paths.
async function checkCallTree(file, what, extra = []) {
  const p = await boxes();
  const j = report(file, [...cliArgs(p), '--view', 'calltree', ...extra]);
  const rows = await shownRows('calltree');
  const stack = [];
  const bad = [];
  for (const r of rows) {
    stack.length = r.depth;
    const parent = r.depth ? stack[r.depth - 1] : null;
    const node = parent ? parent.children.find((c) => c.key === r.key) : j.tree;
    if (!node || !sameRow(r, node, j.summary.unit)) bad.push({ shown: r, node: node && { ...node, children: undefined } });
    stack.push(node || { children: [] });
  }
  ok(rows.length > 1 && !bad.length, `${what}: CallTree rows equal the report's tree`,
    bad.slice(0, 3));
}

async function rightClickRow(view, key) {
  const sel = `#view-${view} .row[data-key="${key}"]`;
  await page.waitForSelector(sel, { timeout: WAIT });
  await page.click(sel, { button: 'right' });
  await page.waitForSelector('#menu:not([hidden])', { timeout: WAIT });
}

async function menu(action) {
  await settled(() => page.click(`#menu button[data-action="${action}"]`));
}

async function main() {
  const tmp = begin({ name: 'gui' });
  const big = path.join(tmp, 'big.folded');
  const lines = [];
  for (let i = 0; i < BIG_NAMES; i++) lines.push(`main;f${String(i).padStart(6, '0')} ${1 + (i % 7)}`);
  writeFileSync(big, lines.join('\n') + '\n');
  // a heap trace of a program whose allocations are known (tests/targets/memtest.c)
  const heap = path.join(tmp, 'm.heapscope');
  execFileSync(BIN, ['run', '-q', '--no-view', '-o', heap, '--',
    path.join(BUILD, 'tests/targets/memtest')], { stdio: 'ignore' });
  const url = await startView([...TRACES, big, heap]);
  ok(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{32}$/.test(url), 'heapscope view prints its URL');

  // 4xx answers (a bad pattern) and 501 (Goto Source) are expected; the
  // GUI shows them itself
  ({ context, page } = await launchBrowser({
    ignoreConsole: /^Failed to load resource: .* status of (4\d\d|501)/,
  }));

  // ---- open a trace ----
  await page.goto(url);
  await page.waitForSelector('body[data-ready="1"]');
  ok(!(await page.url()).includes('token='), 'the token leaves the address bar (a cookie keeps it)');
  const file = TRACES[0];
  await checkByName(file, 'first view');
  await shot('byname');

  // ---- every text box ----
  await setBox('foldpct', '');
  await checkByName(file, 'Fold% cleared');
  await setBox('group', '{%}!->module $1');
  await checkByName(file, 'GroupPats');
  await setBox('group', '');
  await setBox('fold', 'cold');
  await checkByName(file, 'FoldPats');
  await setBox('inc', 'hotloop!main');
  await setBox('exc', '11214');
  await checkByName(file, 'IncPats and ExcPats');
  await setBox('start', '20');
  await setBox('end', '100.5');
  await checkByName(file, 'Start and End');
  await setBox('foldpct', '30');
  await checkByName(file, 'Fold% 30');
  await noError('after every text box');

  // a bad pattern: a message, no crash; the next good one works
  await setBox('inc', '@(');
  ok((await statusText()).includes('IncPats'), 'a bad IncPats is reported', await statusText());
  await setBox('inc', '');

  // ---- Back and Forward through the parameter sets ----
  await settled(() => page.click('#back'));
  ok((await boxes()).inc === '@(', 'Back restores the previous text boxes', await boxes());
  await settled(() => page.click('#back'));
  ok((await boxes()).fold_pct === '30', 'Back again', await boxes());
  await settled(() => page.click('#forward'));
  await settled(() => page.click('#forward'));
  ok((await boxes()).inc === '' && (await boxes()).fold_pct === '30', 'Forward', await boxes());
  await checkByName(file, 'after Back and Forward');

  // ---- presets, F7 / Shift-F7 ----
  for (const id of ['start', 'end', 'fold', 'exc']) await setBox(id, '');
  await setBox('foldpct', '');
  const longer = (await shownRows('byname')).length;
  await settled(() => page.selectOption('#presets', 'group modules'));
  ok((await boxes()).group.startsWith('[group modules]'), 'a preset fills GroupPats');
  await checkByName(file, 'preset group modules');
  ok((await shownRows('byname')).length < longer, 'group modules makes ByName shorter',
    { longer, now: (await shownRows('byname')).length });
  await noStaleRows('byname', 'a shorter view');
  await shot('preset-shorter');
  await setBox('group', '');
  await setBox('foldpct', '1');
  await page.click('#view-byname .vtable');
  await settled(() => page.keyboard.press('F7'));
  ok((await boxes()).fold_pct === '1.6', 'F7 raises Fold% 1.6 times', await boxes());
  await settled(() => page.keyboard.press('Shift+F7'));
  ok((await boxes()).fold_pct === '1', 'Shift-F7 lowers it', await boxes());

  // ---- context menu: Fold Item, Exclude Item, Include Item ----
  await rightClickRow('byname', 'hotloop!cold_function');
  await menu('fold');
  ok((await boxes()).fold === 'hotloop!cold_function', 'Fold Item adds the name to FoldPats');
  await checkByName(file, 'Fold Item');
  await setBox('fold', '');
  await rightClickRow('byname', 'Process hotloop (11214)');
  await menu('exclude');
  ok((await boxes()).exc === 'Process hotloop (11214)', 'Exclude Item adds it to ExcPats');
  await checkByName(file, 'Exclude Item');
  await setBox('exc', '');
  await rightClickRow('byname', 'libc.so.6!__libc_start_call_main');
  await menu('group-module');
  ok((await boxes()).group === 'libc.so.6!->libc.so.6', 'Group Module', await boxes());
  await checkByName(file, 'Group Module');
  await setBox('group', '');
  await rightClickRow('byname', 'libc.so.6!__libc_start_call_main');
  await menu('entry-group-module');
  ok((await boxes()).group === 'libc.so.6!=>libc.so.6', 'Entry Group Module', await boxes());
  const entry = 'libc.so.6 <<libc.so.6!__libc_start_call_main>>';
  await checkByName(file, 'Entry Group Module');
  await rightClickRow('byname', entry);
  await menu('ungroup');
  ok((await boxes()).group === 'libc.so.6!__libc_start_call_main->;libc.so.6!=>libc.so.6',
    'Ungroup puts the entry first, ungrouped', await boxes());
  await checkByName(file, 'Ungroup');
  await rightClickRow('byname', 'hotloop!main');
  await menu('ungroup-module');
  ok((await boxes()).group.startsWith('hotloop!->;'), 'Ungroup Module', await boxes());
  await checkByName(file, 'Ungroup Module');
  // the presets' groups: their names come from a template ("module $1"),
  // so Ungroup asks the API which module a group's frames are from
  await settled(() => page.selectOption('#presets', 'group modules'));
  const keys = async () => (await shownRows('byname')).map((r) => r.key);
  ok((await keys()).includes('module hotloop'), 'group modules makes "module hotloop"', await keys());
  await rightClickRow('byname', 'module hotloop');
  await menu('ungroup');
  ok((await boxes()).group === '[group modules] hotloop!->;{%}!->module $1',
    'Ungroup of a preset\'s plain group ungroups its module first', await boxes());
  await checkByName(file, 'Ungroup of a preset group');
  ok((await keys()).includes('hotloop!hot_function') && !(await keys()).includes('module hotloop') &&
     (await keys()).includes('module libc.so.6'),
  'the module\'s frames are shown again, the other groups stay', await keys());
  await shot('ungroup-preset');
  await settled(() => page.selectOption('#presets', 'group module entries'));
  const libcEntry = 'module libc.so.6 <<libc.so.6!__libc_start_call_main>>';
  await rightClickRow('byname', libcEntry);
  await menu('ungroup-module');
  ok((await boxes()).group === '[group module entries] libc.so.6!->;{%}!=>module $1',
    'Ungroup Module of a preset\'s entry group takes the entry\'s module', await boxes());
  await checkByName(file, 'Ungroup Module of a preset entry group');
  ok((await keys()).includes('libc.so.6!__libc_start_call_main') && !(await keys()).includes(libcEntry),
    'the module\'s frames are shown again', await keys());
  await settled(() => page.selectOption('#presets', 'group module entries'));
  await rightClickRow('byname', libcEntry);
  await menu('ungroup');
  ok((await boxes()).group === '[group module entries] libc.so.6!__libc_start_call_main->;{%}!=>module $1',
    'Ungroup of a preset\'s entry group ungroups its entry frame', await boxes());
  await checkByName(file, 'Ungroup of a preset entry group');
  await rightClickRow('byname', 'Process hotloop (11215)');
  ok(await page.$eval('#menu button[data-action="ungroup"]', (b) => b.disabled) &&
     await page.$eval('#menu button[data-action="ungroup-module"]', (b) => b.disabled),
  'Ungroup and Ungroup Module are disabled on a frame without group or module');
  await page.keyboard.press('Escape');
  await setBox('group', '');
  await rightClickRow('byname', 'Thread (11215)');
  await menu('include');
  ok((await boxes()).inc === 'Thread (11215)', 'Include Item adds it to IncPats', await boxes());
  await checkByName(file, 'Include Item');
  await setBox('inc', '');

  // ---- Find and Ctrl-F ----
  await page.click('#view-byname .vtable');
  await page.keyboard.press('Control+f');
  ok(await page.evaluate(() => document.activeElement.id === 'find'), 'Ctrl-F goes to Find');
  await page.fill('#find', 'COLD');
  await settled(() => page.press('#find', 'Enter'));
  const found = await page.$eval('#view-byname .row.sel', (r) => r.dataset.key);
  ok(found === 'hotloop!cold_function', 'Find selects the matching row', found);

  // ---- every tab ----
  await tab('calltree');
  await checkCallTree(file, 'CallTree');
  // the status line names the tab shown (issue 17 item 10), also when
  // the tab was loaded already
  ok(/^CallTree in \d+ ms$/.test(await statusText()), 'the status line names CallTree',
    await statusText());
  await tab('byname');
  ok(/^ByName in \d+ ms$/.test(await statusText()), 'back on ByName, it names ByName',
    await statusText());
  await tab('calltree');
  ok(/^CallTree in \d+ ms$/.test(await statusText()), 'and CallTree again', await statusText());
  // an error from before a view is shown does not stay under it
  await page.fill('#find', '');
  await settled(() => page.press('#find', 'Enter'));
  ok(/Find first/.test(await statusText()), 'Find without a pattern says so', await statusText());
  await tab('byname');
  ok(/^ByName in \d+ ms$/.test(await statusText()) &&
    !await page.$eval('#status', (s) => s.classList.contains('error')),
  'the next view shown replaces that error on the status line', await statusText());
  await tab('calltree');
  // open the first process and check the rows again
  await settled(() => page.click('#view-calltree .row[data-key^="Process"] .twist'));
  await checkCallTree(file, 'CallTree after opening a node');
  await shot('calltree');
  const rowsBefore = (await shownRows('calltree')).length;
  await page.click('#view-calltree .row[data-key="ROOT"]');
  await settled(() => page.click('#expandall'));
  const rowsAfter = (await shownRows('calltree')).length;
  ok(rowsAfter > rowsBefore, 'Expand All opens the tree', { rowsBefore, rowsAfter });
  ok(new RegExp(`^CallTree: ${rowsAfter} rows in \\d+ ms$`).test(await statusText()),
    'Expand All\'s status line names the tab and its rows', await statusText());
  await checkCallTree(file, 'CallTree expanded');
  // sorted by name (the server orders the children), then back
  const order = async () => (await shownRows('calltree')).filter((r) => r.depth === 1).map((r) => r.key);
  const before = await order();
  await settled(() => page.click('#view-calltree .head [data-col="name"]'));
  const byName = await order();
  ok(JSON.stringify(byName) === JSON.stringify([...before].sort()), 'CallTree sorted by Name',
    { before, byName });
  await settled(() => page.click('#view-calltree .head [data-col="name"]'));
  ok(JSON.stringify(await order()) === JSON.stringify([...before].sort().reverse()),
    'CallTree sorted by Name, reversed');
  await settled(() => page.click('#view-calltree .head [data-col="name"]'));
  ok(JSON.stringify(await order()) === JSON.stringify(before), 'CallTree in its own order again');
  await checkCallTree(file, 'CallTree after sorting');
  // a click on a twisty closes, Space opens again
  await settled(() => page.click('#view-calltree .row[data-key="ROOT"] .twist'));
  ok((await shownRows('calltree')).length === 1, 'closing ROOT leaves one row');
  await noStaleRows('calltree', 'a collapsed tree');
  await settled(() => page.keyboard.press(' '));
  ok((await shownRows('calltree')).length > 1, 'Space opens it again');

  // double-click: Caller-Callee of that name
  await tab('byname');
  await settled(() => page.dblclick('#view-byname .row[data-key="hotloop!hot_function"] .c-exc'));
  await page.waitForSelector('#view-caller-callee.active');
  const cc = report(file, [...cliArgs(await boxes()), '--view', 'caller-callee', '--focus', 'hotloop!hot_function']);
  const ccRows = await page.$$eval('#view-caller-callee .vtable', (ts) => ts.map((t) =>
    [...t.querySelectorAll('.row:not([hidden]):not(.pending)')].map((r) => ({ key: r.dataset.key,
      cells: [...r.children].map((c) => c.textContent) }))));
  ok(ccRows[1].length === 1 && sameRow(ccRows[1][0], cc.focus_row) &&
     ccRows[0].length === cc.callers.length && ccRows[0].every((r, i) => sameRow(r, cc.callers[i])) &&
     ccRows[2].length === cc.callees.length,
     'double-click shows Caller-Callee, equal to the report', { ccRows, cc });
  await shot('caller-callee');

  for (const t of ['callers', 'callees']) {
    await tab(t);
    const j = report(file, [...cliArgs(await boxes()), '--view', t, '--focus', 'hotloop!hot_function']);
    const rows = await shownRows(t);
    ok(rows.length >= 1 && sameRow(rows[0], j.tree), `${t} of the focus, equal to the report`,
      { rows, tree: j.tree });
    await shot(t);
  }

  await tab('flame');
  await page.waitForFunction(() => document.querySelector('#view-flame canvas').width > 100);
  await shot('flame');
  // hover shows the numbers, click zooms in
  const cv = await page.$eval('#view-flame canvas', (el) => {
    const r = el.getBoundingClientRect();
    return { x: r.x, bottom: r.bottom };
  });
  await page.mouse.move(cv.x + 40, cv.bottom - 9);
  await page.waitForSelector('#tip:not([hidden])');
  ok((await page.textContent('#tip')).startsWith('ROOT'), 'hovering the bottom bar shows ROOT',
    await page.textContent('#tip'));
  await page.mouse.move(cv.x + 40, cv.bottom - 9 - 18);
  await settled(() => page.mouse.click(cv.x + 40, cv.bottom - 9 - 18));
  ok((await page.textContent('#view-flame .flame-bar')).includes('zoomed to'), 'a click zooms in');
  await settled(() => page.click('#view-flame .flame-bar button'));

  await tab('stats');
  ok((await page.textContent('#view-stats')).includes('Samples'), 'Stats shows the source');
  await shot('stats');
  await tab('notes');
  ok(!/ in \d+ ms$/.test(await statusText()), 'Notes names no other tab in the status line',
    await statusText());
  await page.fill('#notes', 'hot_function is the one');
  await shot('notes');

  // ---- Events of a row ----
  await tab('byname');
  await rightClickRow('byname', 'hotloop!hot_function');
  await menu('events');
  const ev = await page.textContent('#view-events h3');
  const hot = report(file, cliArgs(await boxes())).rows.find((r) => r.key === 'hotloop!hot_function');
  ok(ev.includes(`${count(hot.inc_count)} samples`), 'Show Events lists the samples', { ev, hot });
  await shot('events');

  // ---- Goto Source, Set Time Range from a When selection (Alt-R) ----
  await tab('byname');
  await page.click('#view-byname .row[data-key="hotloop!hot_function"] .c-name');
  await settled(() => page.keyboard.press('Alt+d'));
  await page.waitForSelector('#view-source.active');
  ok((await page.textContent('#view-source')).includes('no line information'),
    'Goto Source (Alt-D): a perf trace has no lines');
  await tab('byname');
  const sum = await page.evaluate(async () => (await (await fetch('/api/rows', { method: 'POST',
    body: JSON.stringify({ count: 1 }) })).json()).summary);
  await page.evaluate(() => {
    const cell = document.querySelector('#view-byname .row[data-key="hotloop!hot_function"] .c-when');
    const r = document.createRange();
    r.setStart(cell.firstChild, 8);
    r.setEnd(cell.firstChild, 16);
    getSelection().removeAllRanges();
    getSelection().addRange(r);
  });
  await page.waitForFunction(() => document.getElementById('status').textContent.startsWith('TimeRange'));
  await settled(() => page.keyboard.press('Alt+r'));
  const b = await boxes();
  const want = (v) => String(Math.round(v * 1e6) / 1e6);
  ok(b.start === want(sum.start_ms + 8 * sum.bucket_ms) && b.end === want(sum.start_ms + 16 * sum.bucket_ms),
    'Alt-R sets Start and End from the selected When characters', { b, sum });
  await checkByName(file, 'the When range');

  // ---- the timeline: a drag sets Start and End ----
  await setBox('start', '');
  await setBox('end', '');
  const over = await page.$eval('#timeline .u-over', (el) => {
    const r = el.getBoundingClientRect();
    return { x: r.x, y: r.y, w: r.width, h: r.height };
  });
  await page.mouse.move(over.x + over.w * 0.2, over.y + over.h / 2);
  await page.mouse.down();
  await page.mouse.move(over.x + over.w * 0.6, over.y + over.h / 2, { steps: 8 });
  await settled(() => page.mouse.up());
  const tb = await boxes();
  ok(Number(tb.start) > 0 && Number(tb.end) > Number(tb.start), 'a drag on the timeline sets Start and End', tb);
  await checkByName(file, 'the timeline range');
  await shot('timeline-range');
  await setBox('start', '');
  await setBox('end', '');

  // ---- Drill Into (here and in a new window) ----
  await rightClickRow('byname', 'Process hotloop (11215)');
  await menu('drill-inc');
  ok((await page.textContent('#origin')).includes('drill'), 'Drill Into says where the view comes from');
  await checkByName(file, 'Drill Into', ['--drill', 'Process hotloop (11215)']);
  await tab('calltree');
  await shot('drill-calltree');
  await settled(() => page.click('#back'));
  await tab('byname');
  await rightClickRow('byname', 'hotloop!cold_function');
  const [popup] = await Promise.all([context.waitForEvent('page'),
    page.click('#menu button[data-action="drill-new"]')]);
  await popup.waitForSelector('body[data-ready="1"]');
  const popMetric = await popup.getAttribute('#summary', 'data-metric');
  const drilled = report(file, [...cliArgs(await boxes()), '--drill', 'hotloop!cold_function']);
  ok(Number(popMetric) === drilled.summary.metric, 'Drill Into in a new window', { popMetric });
  await popup.close();

  // ---- Diff: this trace minus the second ----
  await settled(() => page.selectOption('#diff', '1'));
  ok((await page.textContent('#origin')).startsWith('diff:'), 'the diff view says so');
  const t0 = report(TRACES[0]).rows, t1 = report(TRACES[1]).rows;
  const rowsD = await shownRows('byname');
  for (const name of ['hotloop!hot_function', 'hotloop!cold_function']) {
    const a = t0.find((r) => r.key === name), c = t1.find((r) => r.key === name);
    const r = rowsD.find((x) => x.key === name);
    ok(r && r.cells[2] === num(a.exc - c.exc) && r.cells[5] === num(a.inc - c.inc),
      `the diff of ${name} is test minus base`, { r, a: a.exc, c: c.exc });
  }
  const m0 = report(TRACES[0]).summary.metric, m1 = report(TRACES[1]).summary.metric;
  ok(Math.abs(Number(await page.getAttribute('#summary', 'data-metric')) - (m0 - m1)) < 1e-9,
    'the diff total is the difference of the totals');
  await shot('diff-byname');
  await tab('flame');
  await page.waitForFunction(() => document.querySelector('#view-flame canvas').width > 100);
  const reds = await page.$eval('#view-flame canvas', (c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let red = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i] > 180 && d[i + 1] < 120 && d[i + 2] < 120) red++;
    return red;
  });
  ok(reds > 100, 'the diff flame graph shows growth in red', reds);
  await shot('diff-flame');

  // ---- 100k rows: a big trace, virtual rows ----
  await settled(() => page.selectOption('#trace', '2'));
  await setBox('foldpct', '');
  const total = await page.$eval('#view-byname .vtable .spacer', (s) => s.offsetHeight / 20);
  ok(total === BIG_NAMES + 2, 'ByName has a row per name', total);
  await page.$eval('#view-byname .scroll', (s) => { s.scrollTop = s.scrollHeight; });
  await page.waitForSelector(`#view-byname .row[data-index="${BIG_NAMES + 1}"]:not(.pending)`);
  const domRows = await page.$$eval('#view-byname .row', (r) => r.length);
  ok(domRows < 200, 'only the rows on screen are in the page', domRows);
  await checkByName(big, '100k names, scrolled to the end');
  await tab('calltree');
  await page.click('#view-calltree .row[data-key="ROOT"]');
  await settled(() => page.click('#expandall'));
  const treeRows = await page.$eval('#view-calltree .vtable .spacer', (s) => s.offsetHeight / 20);
  ok(treeRows === BIG_NAMES + 2, 'Expand All shows 100k rows', treeRows);
  const perStep = await page.$eval('#view-calltree .scroll', async (s) => {
    const t0 = performance.now();
    for (let i = 0; i < 60; i++) {
      s.scrollTop += s.scrollHeight / 61;
      await new Promise((r) => requestAnimationFrame(r));
    }
    return (performance.now() - t0) / 60;
  });
  console.log(`# scrolling 100k tree rows: ${perStep.toFixed(1)} ms per frame`);
  ok(perStep < 100, '100k rows scroll smoothly', perStep);
  await shot('big-calltree');

  // ---- a heap trace: its memory views, heap and RSS, its stats ----
  await settled(() => page.selectOption('#trace', '3'));
  const srcNames = await page.$$eval('#source option', (o) => o.map((x) => x.value));
  ok(JSON.stringify(srcNames) === '["alloc","net","leaks","peak","temporary","mmap"]',
    'the Source selector offers the memory views', srcNames);
  ok((await boxes()).fold !== '', 'a heap view starts with its FoldPats (the allocator)');
  await checkByName(heap, 'heap trace: alloc');
  ok((await page.getAttribute('#timeline', 'title')).includes('heap in use'),
    'the timeline shows the heap in use and the RSS');
  await shot('heap-byname');
  await settled(() => page.selectOption('#source', 'leaks'));
  ok((await boxes()).exc !== '', 'leaks start with the suppressions in ExcPats');
  await checkByName(heap, 'heap trace: leaks', ['--source', 'leaks']);
  await settled(() => page.selectOption('#source', 'net'));
  await tab('calltree');
  await checkCallTree(heap, 'heap trace: net', ['--source', 'net']);
  await tab('stats');
  ok((await page.textContent('#view-stats')).includes('Peak heap in use'), 'Stats of a heap trace');
  await tab('byname');
  await rightClickRow('byname', 'memtest!site_leak');
  await menu('source');
  const src = await page.textContent('#view-source');
  const blk = report(heap, [...cliArgs(await boxes()), '--source', 'net']).rows
    .find((r) => r.key === 'memtest!site_leak');
  ok(src.includes('memtest.c') && src.includes(`${num(blk.inc)} inclusive`),
    'Goto Source: the lines of memtest.c, adding up to the name\'s Inc', { src: src.slice(0, 300), blk });
  // the file's text, each line beside its cost: the costed line is site_leak's malloc
  const costed = await page.$$eval('#view-source tr.costed td.src', (t) => t.map((x) => x.textContent));
  const srcLines = await page.$$eval('#view-source td.src', (t) => t.length);
  ok(costed.length === 1 && costed[0].includes('LINE:site_leak') && srcLines > 100,
    'Goto Source shows the source file\'s text, the costed line marked', { costed, srcLines });
  await shot('heap-source');
  await shot('heap-stats');
  await tab('byname');

  // ---- the notes were kept ----
  await settled(() => page.selectOption('#trace', '0'));
  ok((await page.inputValue('#notes')) === 'hot_function is the one', 'notes are kept per trace');

  ok(!errors.length, 'no JavaScript errors', errors);
  await stopView();
}

// The state of ByName's table, after a failure.
async function dumpByName() {
  if (!page) return;
  const d = await page.evaluate(() => {
    const v = window.heapscope?.views?.byname;
    const sc = document.querySelector('#view-byname .scroll');
    return v && { top: sc.scrollTop, h: sc.clientHeight, sh: sc.scrollHeight,
      tr: document.querySelector('#view-byname .rows').style.transform,
      shown: [...document.querySelectorAll('#view-byname .row:not([hidden])')].map((r) => r.dataset.index + (r.classList.contains('pending') ? 'p' : '')).join(','),
      total: v.total, count: v.table.count, pages: [...v.pages.keys()],
      page0: v.pages.get(0)?.length, gen: v.gen, state: window.heapscope.state() };
  }).catch((x) => String(x));
  console.log(`# byname: ${JSON.stringify(d).slice(0, 1500)}`);
}

await runTest(main, { onFailure: dumpByName });
