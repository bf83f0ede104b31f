// main.js - heapscope's stack viewer: wires the text boxes, the tabs, the
// views, the timeline, the context menu, the keys, the selected cells and
// Export to the JSON API.
// The whole state is in the URL (history.js); every view asks the server
// for exactly the rows it shows.

import * as api from './api.js';
import * as H from './history.js';
import * as fmt from './format.js';
import { VTable, setMetricUnit, refitAll, tableHooks, COLUMNS, isColumnHidden,
  setColumnHidden, setUntimed, rowText } from './table.js';
import { TreeModel } from './tree.js';
import { Flame } from './flame.js';
import { Timeline } from './timeline.js';
import { CallerCallee } from './callercallee.js';
import { showMenu, literalPattern, appendPat, canUngroup, ungroupNamed } from './menu.js';
import { renderEvents, renderStats, renderOverweight, renderSource } from './events.js';
import { renderGc, fetchGc, isNetTrace } from './gc.js';
import * as X from './export.js';
import { fetchCharts, renderCharts, resizeCharts, isHeapTrace, exactPattern } from './charts.js';

const $ = (id) => document.getElementById(id);
const BOXES = { start: 'start', end: 'end', group: 'group', fold_pct: 'foldpct', fold: 'fold',
  inc: 'inc', exc: 'exc' };
const TREE_TABS = ['calltree', 'callers', 'callees'];
const EXPORT_TABS = ['byname', ...TREE_TABS, 'caller-callee', 'flame'];
// ByName's rows come in pages of PAGE, and a tree's first answer carries
// PAGE whole rows: about a screenful of a tall window, since the server
// makes each row for the answer (its When column scans the row's
// samples): 200 rows took it about 4x as long as 48 (a cached view),
// and the first screen waited for all of them.
const PAGE = 60;

let INFO = null;
let state = null;
let loaded = {};		// tab -> the key its content was loaded for
let selection = null;		// {row, tab, path}: the row the menu and keys act on
let whenSel = null;		// {start, end} from characters selected in a When cell
let cellSel = null;		// {info, table}: the cells selected in a table (several)
let summary = null;		// the summary line of the last answer
let settled = 0;		// counts finished loads (tests wait on body[data-settled])
let cancelled = false;		// Cancel was pressed during the current load
let afterBack = null;		// the status to show once Back (after a Cancel) has loaded
let shownSource = null;		// the source query of what is shown (JSON)
// the sources (INFO entries) a switch has read in this page: a switch to
// one of them or to a trace's first source needs no /api/stats first
const switchedTo = new Set();
const views = {};

// ---- status line ----

// Each error shown gets its own number (shownError: the one on the
// status line, 0 for none), so that a view that loads well replaces an
// error from before its load, never one raised while it loaded (the
// timeline's, say, in the same Update).
let errorSeq = 0, shownError = 0;

function status(msg, error = false) {
  const s = $('status');
  s.textContent = msg;
  s.classList.toggle('error', error);
  s.dataset.error = error ? '1' : '';
  shownError = error ? ++errorSeq : 0;
}

function fail(e) {
  if (api.isCancel(e)) {
    cancelled = true;
    status('cancelled: the view shows what was loaded before');
    return;
  }
  if (e instanceof api.ApiError) console.warn(e.message);
  else console.error(e);
  status(e.message || String(e), true);
  for (const [k, id] of Object.entries(BOXES)) {
    const names = { group: 'GroupPats', fold: 'FoldPats', inc: 'IncPats', exc: 'ExcPats',
      fold_pct: 'fold_pct', start: 'start', end: 'end' };
    $(id).classList.toggle('bad', (e.message || '').includes(names[k]));
  }
}

// A sign of work: body.busy shows the busy bar (after a moment, so quick
// answers do not flicker) and dims the views; @what says what is loading.
// A tab's own view (Stats of a big trace: seconds) is work on that tab
// only: the other tabs are neither dimmed nor busy while it computes.
function showBusy() {
  const n = api.pending(state?.tab);
  document.body.classList.toggle('busy', n > 0);
  if (!n) $('busytext').textContent = 'working\u2026';
}

api.onBusy(showBusy);

function working(what) {
  $('busytext').textContent = what;
}

// ---- the query of what is shown ----

function keyOf(extra = {}) {
  return JSON.stringify(H.query(state, extra));
}

function tabKey(tab) {
  const focus = ['callers', 'callees', 'caller-callee'].includes(tab) ? state.focus : null;
  const sort = state.sort[tab] || null;
  const of = tab === 'source' ? state.source_of : tab === 'events' ? state.events : null;
  if (tab === 'charts') return JSON.stringify({ tab, trace: state.trace });
  return keyOf({ tab, focus, sort, of });
}

// ---- summary line ----

// Whether the source shown has times (the timeline's answer says): one
// without (folded stacks, pprof, a heap snapshot) has no timeline, no
// When, First and Last columns, no time items on the summary line, and
// Start, End and Set Time Range are off, since no range can select in it.
let timed = true;

function showTimed(on) {
  const changed = timed !== on;
  timed = on;
  setUntimed(!on);
  for (const id of ['start', 'end']) {
    $(id).disabled = !on;
    $(id).title = on ? '' : 'this profile has no times: no time range applies';
  }
  if (changed) showSummary(summary);
}

function showSummary(s) {
  if (!s) return;
  // bytes in binary units as in the tables and Stats; other units named
  const unit = s.unit && s.unit !== 'bytes' ? ` ${s.unit}` : '';
  const el = $('summary');
  setMetricUnit(s.unit);
  const times = timed ? [`First: ${fmt.ms(s.first_ms)}`, `Last: ${fmt.ms(s.last_ms)}`,
    `Last-First: ${fmt.ms(s.interval_ms)}`,
    `Metric/Interval: ${fmt.metric(s.metric_per_interval, s.unit)}${unit}`,
    `TimeBucket: ${fmt.ms(s.bucket_ms)} ms`] : ['No times'];
  const items = [`Totals Metric: ${fmt.metric(s.metric, s.unit)}${unit}`, `Count: ${fmt.count(s.count)}`,
    `Samples: ${fmt.count(s.samples)}`, ...times, ...(s.fold_pct !== null ? [`Fold%: ${s.fold_pct}`] : [])];
  // one item a span: a narrow window wraps the line between items, never cuts one
  el.replaceChildren(...items.flatMap((t, i) => {
    const span = document.createElement('span');
    span.textContent = t;
    return i ? ['   ', span] : [span];
  }));
  el.title = `Totals Metric: ${fmt.exact(s.metric, s.unit)}`;
  el.dataset.metric = s.metric;
  el.dataset.count = s.count;
  el.dataset.samples = s.samples;
  summary = s;
}

// ---- ByName: a flat list loaded page by page ----

function makeByName() {
  // pending: page -> the request for it in flight
  const v = { pages: new Map(), total: 0, pending: new Map() };
  v.table = new VTable($('view-byname'), {
    onNeed: (a, b) => loadPages(v, a, b),
    onActivate: (i) => gotoCallerCallee(v.get(i)?.key),
    onContext: (i, ev) => openMenu(ev, v.get(i), null),
    onSelect: (i) => {
      v.selKey = v.get(i)?.key ?? null;
      select(v.get(i), 'byname', null);
    },
    onSort: (key) => setSort('byname', key),
  });
  v.get = (i) => v.pages.get(Math.floor(i / PAGE))?.[i % PAGE] ?? null;
  v.load = async () => {
    v.pages = new Map();
    v.pending = new Map();
    v.gen = (v.gen || 0) + 1;
    v.retained = null;
    // the first page is on its way before the table is laid out again
    const page0 = fetchPage(v, 0);
    page0.catch(() => {});
    const sort = state.sort.byname;
    v.table.setSort(sort?.key, sort?.asc);
    v.retained = await retainedByName();
    v.table.showRetained(!!v.retained);
    const r = await page0;
    // pages that came before the retained sizes get them now
    for (const rows of v.pages.values()) withRetainedByName(v, rows);
    v.total = r.total_rows;
    const sel = await locateName(v, r.rows);
    // the selected name stays selected (and in view); without one, the top
    v.table.set({ count: v.total, get: v.get, selected: sel, top: sel < 0 });
    if (state.tab === 'byname' && sel >= 0) select(v.get(sel), 'byname', null);
    return r;
  };
  return v;
}

// Whether the view is a heap snapshot's heap view as it is (no diff, no
// step): the views that have a Retained column.
function snapshotHeapView() {
  const t = INFO.traces[state.trace];
  if (state.diff || state.steps.length || !t?.sources.some((x) => x.name === 'retained'))
    return false;
  return (state.source || t.sources[0]?.name) === 'heap';
}

// A heap snapshot's heap view: the retained bytes of each ByName name under
// the same patterns (/api/retained), or null for any other view.
async function retainedByName() {
  if (!snapshotHeapView()) return null;
  return (await api.call('retained', H.query(state, { view: 'byname' }))).retained;
}

const RETAINED_MERGED = 'not shown: the patterns or Fold% put objects on this node ' +
  'together with objects they may hold, so their retained sizes do not add up';

// CallTree rows of a heap snapshot's heap view (answer @r of /api/tree or
// /api/rows for query @q) with their retained bytes (/api/retained), at
// most 10,000 ids a call.
async function withRetained(q, r) {
  const rows = r.rows || [];
  for (let k = 0; k < rows.length; k += 10000) {
    const part = rows.slice(k, k + 10000);
    const a = (await api.call('retained', { ...q, view: 'calltree',
      ids: part.map((x) => x.id) })).retained;
    part.forEach((x, i) => {
      x.retained = a?.[i] ?? null;
      x.retainedNote = a && a[i] === null ? RETAINED_MERGED : null;
    });
  }
  return r;
}

// Where ByName's selected name (v.selKey) is after an Update: its index
// (its page loaded), or -1 when it is gone.
async function locateName(v, firstPage) {
  if (!v.selKey) return -1;
  const k = firstPage.findIndex((x) => x.key === v.selKey);
  if (k >= 0) return k;
  const sort = state.sort.byname;
  const pattern = '^' + v.selKey.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&') + '$';
  const r = pattern.length > 1000 ? { id: null } : await api.call('find', H.query(state, {
    view: 'byname', pattern, from: null, backward: false, sort: sort?.key ?? null,
    order: sort ? (sort.asc ? 'asc' : 'desc') : null }));
  if (r.id === null || r.row.key !== v.selKey) {
    v.selKey = null;
    return -1;
  }
  await fetchPage(v, Math.floor(r.index / PAGE));
  return r.index;
}

// Page @page of ByName; a page already asked for (the table asks for the
// rows it draws, the load for its first page) is asked once.
function fetchPage(v, page) {
  const going = v.pending.get(page);
  if (going) return going;
  const pending = v.pending;
  const job = askPage(v, page).finally(() => {
    if (pending.get(page) === job) pending.delete(page);
  });
  pending.set(page, job);
  return job;
}

// ByName @rows with their retained bytes, once the view has them.
function withRetainedByName(v, rows) {
  if (v.retained) for (const x of rows) x.retained = v.retained[x.key] ?? null;
}

async function askPage(v, page) {
  const sort = state.sort.byname;
  const g = v.gen;
  const r = await api.call('rows', H.query(state, { view: 'byname', offset: page * PAGE,
    count: PAGE, sort: sort?.key ?? null, order: sort ? (sort.asc ? 'asc' : 'desc') : null }));
  if (g !== v.gen) return r;
  withRetainedByName(v, r.rows);
  v.pages.set(page, r.rows);
  showSummary(r.summary);
  return r;
}

async function loadPages(v, first, last) {
  const jobs = [];
  for (let p = Math.floor(first / PAGE); p <= Math.floor(last / PAGE); p++)
    if (!v.pages.has(p) && !v.pending.has(p)) jobs.push(fetchPage(v, p));
  if (!jobs.length) return;
  try {
    await Promise.all(jobs);
    v.table.render();
  } catch (e) {
    fail(e);
  }
}

// ---- CallTree, Callers, Callees ----

function makeTree(tab) {
  const v = { tab };
  const row = (i) => v.model?.node(i)?.row ?? null;
  v.table = new VTable($(`view-${tab}`), {
    tree: true,
    // render again only after rows arrived (rows being fetched are not asked again)
    onNeed: (a, b) => v.model?.fetchVisible(a, b).then((got) => got && v.table.render(), fail),
    onToggle: (i) => toggle(v, i),
    onExpandAll: (i) => expandAll(v, i),
    onActivate: (i) => gotoCallerCallee(row(i)?.key),
    onContext: async (i, ev) => {
      // a Callers or Callees node below the focus is drilled into by its path in that tree
      if (tab === 'calltree' || !(v.model?.node(i)?.depth > 0))
        return openMenu(ev, row(i), await treePath(v, i).catch(() => null));
      const keys = await v.model.keys(v.model.node(i).id).catch(() => null);
      return openMenu(ev, row(i), keys, keys ? tab : null);
    },
    onSelect: (i) => {
      v.selId = v.model?.node(i)?.id ?? null;
      select(row(i), tab, () => treePath(v, i));
    },
    onSort: (key) => setSort(tab, key),
  });
  // the selected node stays selected when nodes above it open or close
  v.show = () => v.table.set({ count: v.model.visible.length, get: row,
    info: (i) => v.model.info(i), selected: v.selId === null || v.selId === undefined ? -1
      : v.model.indexOf(v.selId) });
  v.load = async () => {
    const focus = tab === 'calltree' ? null : state.focus;
    const sort = state.sort[tab];
    // the selected node is found again by its path (the keys from the top)
    const old = v.model?.node(v.table.selected);
    const selPath = old ? await v.model.keys(old.id).catch(() => null) : null;
    const paths = v.model && v.model.q !== keyOf({ tab, focus, sort }) ? v.model.openPaths() : null;
    const q = H.query(state, { view: tab, focus, sort: sort?.key ?? null,
      order: sort ? (sort.asc ? 'asc' : 'desc') : null });
    const retained = tab === 'calltree' && snapshotHeapView();
    v.model = new TreeModel({
      tree: async (of, levels) => {
        const r = await api.call('tree', { ...q, of, levels, auto: true, skeleton: true,
          detail: PAGE, max_rows: 200000 });
        showSummary(r.summary);
        return retained ? withRetained(q, r) : r;
      },
      rows: async (ids) => {
        const r = await api.call('rows', { ...q, ids });
        return retained ? withRetained(q, r) : r;
      },
    });
    v.table.showRetained(retained);
    v.model.q = keyOf({ tab, focus, sort });
    v.table.setSort(sort?.key, sort?.asc);
    const r = await v.model.init();
    if (paths && paths.length) await v.model.restore(paths);
    const sel = selPath ? await v.model.locate(selPath) : -1;
    v.selId = sel >= 0 ? v.model.node(sel).id : null;
    v.table.set({ count: v.model.visible.length, get: row, info: (i) => v.model.info(i),
      selected: sel });
    if (state.tab === tab && sel >= 0) select(row(sel), tab, () => treePath(v, sel));
    return r;
  };
  return v;
}

// The call-tree path of visible row @i (CallTree only: keys below ROOT).
async function treePath(v, i) {
  if (v.tab !== 'calltree') return null;
  const n = v.model?.node(i);
  if (!n) return null;
  return (await v.model.keys(n.id)).slice(1);
}

async function toggle(v, i) {
  const n = v.model.node(i);
  if (!n) return;
  try {
    await v.model.toggle(n.id);
    v.show();
  } catch (e) {
    fail(e);
  }
  settle();
}

async function expandAll(v, i) {
  const n = v.model.node(Math.max(0, i));
  if (!n) return;
  status('expanding\u2026');
  try {
    const t0 = performance.now();
    const truncated = await v.model.expandAll(n.id);
    v.show();
    status(`${tabTitle(v.tab)}: ${fmt.count(v.model.visible.length)} rows in ` +
      `${Math.round(performance.now() - t0)} ms` + (truncated ? ' (the first 200,000 only)' : ''));
  } catch (e) {
    fail(e);
  }
  settle();
}

// ---- Caller-Callee, Flame Graph, panes ----

function makeCallerCallee() {
  const v = {};
  v.cc = new CallerCallee($('view-caller-callee'), {
    onFocus: (name) => gotoCallerCallee(name),
    onContext: (row, ev) => openMenu(ev, row, null),
    onSelect: (row) => select(row, 'caller-callee', null),
  });
  v.load = async () => {
    if (!state.focus) {
      v.cc.set({ callers: [], focus_row: null, callees: [] });
      status('Caller-Callee: double-click a name in another view to choose the focus');
      return null;
    }
    const r = await api.call('view', H.query(state, { view: 'caller-callee', focus: state.focus,
      limit: 20000 }));
    showSummary(r.summary);
    v.cc.set(r);
    return r;
  };
  return v;
}

function makeFlame() {
  const v = {};
  v.flame = new Flame($('view-flame'), {
    load: async (root, minWidth) => {
      const r = await api.call('flame', H.query(state, { view: 'flame', root,
        min_width: minWidth }));
      showSummary(r.summary);
      return r;
    },
    onContext: (row, path, ev) => {
      select(row, 'flame', path);
      openMenu(ev, row, path);
    },
    tip,
    onZoom: settle,
  });
  v.load = async () => {
    await v.flame.reset(!!state.diff);
    v.flame.setSearch(findRegex());
  };
  return v;
}

function makePane(tab, fn) {
  const el = document.createElement('div');
  el.className = 'pane';
  $(`view-${tab}`).append(el);
  return { el, load: () => fn(el) };
}

async function loadEvents(el, offset = 0) {
  const s = state.events;
  if (!s) return renderEvents(el, '', null);
  const q = H.query(state, { what: s.what, offset, count: 200,
    ...(s.path ? { path: s.path, tree: s.tree ?? null } : { name: s.name }) });
  const doc = await api.call('samples', q);
  // a Callers or Callees node stands for the stacks of its path from the focus
  const of = s.tree && s.path ? `${s.name} (${s.tree === 'callers' ? 'Callers' : 'Callees'} of ` +
    `${s.path.join(s.tree === 'callers' ? ' \u2190 ' : ' \u2192 ')})` : s.name;
  renderEvents(el, `${s.what === 'exc' ? 'Exclusive' : 'Inclusive'} samples of ${of}`, doc,
    (next) => loadEvents(el, next).catch(fail));
}

async function loadStats(el) {
  const s = await api.call('stats', H.query(state), 'stats');
  renderStats(el, s, INFO.traces[state.trace]?.name);
}

// the Charts describe the whole trace: loaded once per trace (tabKey)
async function loadCharts(el) {
  const t = INFO.traces[state.trace];
  if (!isHeapTrace(t)) return renderCharts(el, null);
  working('drawing the charts\u2026');
  renderCharts(el, await fetchCharts((name, q) => api.call(name, q, 'charts'), state.trace), t.name);
}

async function loadGc(el) {
  if (!isNetTrace(INFO.traces[state.trace])) return renderGc(el, null);
  renderGc(el, await fetchGc(state.trace));
}

async function loadOverweight(el) {
  if (state.overweight === null || state.overweight === undefined)
    return renderOverweight(el, null);
  const params = { ...state.params, start: '', end: '' };
  const doc = await api.call('overweight', H.query(state, {
    base: { trace: state.overweight }, base_params: params }), 'overweight');
  renderOverweight(el, doc, INFO.traces[state.overweight].name, describeSource());
}

// ---- loading what is shown ----

// The focus views need a name: the selected row's, else ByName's first.
async function ensureFocus(tab) {
  if (state.focus || !['callers', 'callees', 'caller-callee'].includes(tab)) return;
  let name = selection?.row?.key;
  if (!name) {
    const r = await api.call('rows', H.query(state, { view: 'byname', offset: 0, count: 1 }));
    name = r.rows[0]?.key;
  }
  if (!name) return;
  state.focus = name;
  $('focusname').textContent = `Focus: ${name}`;
  $('focusname').title = name;
  H.replace(state);
}

// The status line names the tab shown, never another one whose load ended
// later (issue 17 item 10): each tab keeps its own "TAB in N ms". An
// error shown since @since (the data-error when the load began) stays; an
// older one has been answered by this view.
const timing = {};

function tabStatus(tab, since = shownError) {
  if (state.tab === tab && shownError === since) status(timing[tab] ?? '');
}

// The loads under way, by tab: { key, done }. Back on a tab whose load of
// the same answer is still running (Stats of a big trace: seconds), the
// tab waits for that load instead of asking again: each extra request
// would hold a server worker and one of the browser's few connections
// until the first answer is computed, and an Update could queue behind.
const loading = {};

async function loadTab(tab, force = false) {
  const since = shownError;
  // without a name to find, the tab's first request leaves at once (an
  // await would let the page's style pass go first)
  if (!state.focus && ['callers', 'callees', 'caller-callee'].includes(tab)) {
    try {
      await ensureFocus(tab);
    } catch (e) {
      return fail(e);
    }
  }
  const key = tabKey(tab);
  const v = views[tab];
  if (!v || !v.load || (!force && loaded[tab] === key)) return tabStatus(tab, since);
  // the busy bar names what is being computed (unless it names more already)
  if (state.tab === tab && $('busytext').textContent === 'working\u2026')
    working(`computing ${tabTitle(tab)}\u2026`);
  const running = loading[tab];
  if (!force && running && running.key === key) return running.done;
  const done = runLoad(tab, v, key, since);
  loading[tab] = { key, done };
  try {
    await done;
  } finally {
    if (loading[tab]?.done === done) delete loading[tab];
  }
}

// One load of @tab's view for @key (loadTab); never rejects.
async function runLoad(tab, v, key, since) {
  const t0 = performance.now();
  try {
    await v.load();
    loaded[tab] = key;
    timing[tab] = `${tabTitle(tab)} in ${Math.round(performance.now() - t0)} ms`;
    tabStatus(tab, since);
  } catch (e) {
    loaded[tab] = null;
    fail(e);
  }
  // a view that asked the server nothing leaves no text for the next wait
  if (!document.body.classList.contains('busy')) working('working\u2026');
}

function tabTitle(tab) {
  return document.querySelector(`[data-tab="${tab}"]`)?.textContent ?? tab;
}

async function loadTimeline() {
  try {
    const t = await api.call('timeline', H.query(state, { buckets: 600 }));
    const num = (s) => (s === '' || s === null || isNaN(Number(s)) ? null : Number(s));
    views.timeline.set(t, { start: num(state.params.start), end: num(state.params.end) });
    showTimed(t.timed !== false);
  } catch (e) {
    fail(e);
  }
}

function describeSource() {
  const name = (i) => INFO.traces[i]?.name ?? `trace ${i}`;
  let s;
  if (state.diff) s = `diff: ${describeSide(state.diff.test, name)} \u2212 ${describeSide(state.diff.base, name)}`;
  else s = name(state.trace) + (state.source ? ` (${state.source})` : '');
  for (const st of state.steps) {
    s += st.kind === 'flatten' ? ' \u25B8 flatten'
      : ` \u25B8 drill ${st.what === 'exc' ? 'exc' : 'inc'} ${st.name ?? st.path.at(-1)}`;
  }
  return s;
}

function describeSide(side, name) {
  let s = side.diff ? '(diff)' : name(side.trace ?? 0) + (side.source ? ` (${side.source})` : '');
  for (const st of side.steps || []) s += st.kind === 'flatten' ? ' \u25B8 flatten' : ` \u25B8 ${st.name ?? st.path.at(-1)}`;
  return s;
}

// Show @s: fill the boxes and load the summary, the timeline and the tab.
async function show(s) {
  state = s;
  loaded = {};
  whenSel = null;
  const src = JSON.stringify(H.sourceQuery(s));
  if (src !== shownSource) refitAll();
  shownSource = src;
  // a row selected under other parameters is acted on only once found again
  selection = null;
  cancelled = false;
  const note = afterBack;
  afterBack = null;
  status(note ?? '');
  setActiveTab(state.tab);
  // the tab's and the timeline's requests leave first, the rows' first of
  // all (the slowest answer); the page is written while they are out
  const loads = Promise.all([loadTab(state.tab), loadTimeline()]);
  // what an Update leaves as it was is not written again: each write
  // makes the page's styles and layout be computed again before the rows
  // are drawn
  const put = (el, key, value) => {
    if (el[key] !== value) el[key] = value;
  };
  for (const [k, id] of Object.entries(BOXES)) {
    put($(id), 'value', state.params[k] ?? '');
    $(id).classList.remove('bad');
  }
  put($('trace'), 'value', state.diff ? '' : String(state.trace));
  const origin = describeSource();
  put($('origin'), 'textContent', state.steps.length || state.diff ? origin : '');
  put($('origin'), 'title', origin);
  put(document, 'title', `heapscope \u2013 ${origin}`);
  fillSources(true);
  put($('focusname'), 'textContent', state.focus ? `Focus: ${state.focus}` : '');
  put($('focusname'), 'title', state.focus ?? '');
  put($('notes'), 'value', localStorage.getItem(notesKey()) ??
    (INFO.traces[state.trace]?.defaults?.notes || ''));
  await loads;
  // a cancelled load leaves the box naming the source still shown
  if (!cancelled) fillSources();
  if (note && !$('status').dataset.error) status(note);
  settle();
  return !cancelled;
}

function settle() {
  document.body.dataset.settled = String(++settled);
}

function setActiveTab(tab) {
  if (!views[tab] && tab !== 'notes') tab = 'byname';
  state.tab = tab;
  for (const b of document.querySelectorAll('#tabs [data-tab]'))
    b.classList.toggle('active', b.dataset.tab === tab);
  for (const v of document.querySelectorAll('.view'))
    v.classList.toggle('active', v.dataset.view === tab);
  $('overweight').value = state.overweight ?? '';
  document.querySelector('[data-tab="overweight"]').hidden = state.overweight === null ||
    state.overweight === undefined;
  document.querySelector('[data-tab="source"]').hidden = !state.source_of;
  document.querySelector('[data-tab="gc"]').hidden = !isNetTrace(INFO.traces[state.trace]);
  document.querySelector('[data-tab="charts"]').hidden = !isHeapTrace(INFO.traces[state.trace]);
  $('expandall').hidden = !TREE_TABS.includes(tab);
  $('export').hidden = !EXPORT_TABS.includes(tab);
  showBusy();
}

// A new parameter set: record it, then show it. When Cancel stops it,
// Back shows the previous set again (its answers are in the server's cache).
async function go(s) {
  const pushed = H.push(s);
  if (!(await show(s)) && pushed) {
    afterBack = 'cancelled: back to the previous parameters';
    history.back();
  }
}

// The saved boxes of the source shown (null until it was read).
function shownDefaults() {
  const t = INFO.traces[state.trace] || {};
  const src = (t.sources || []).find((x) => x.name === state.source);
  const first = !state.source || src === (t.sources || [])[0];
  return (state.source && src?.defaults) || (first && t.defaults) || {};
}

// '+PATS' in GroupPats, FoldPats or ExcPats: the source's saved patterns
// and PATS, as `report --fold +PATS` has it (docs/patterns.md).
function extendDefault(key, text, defaults) {
  if (!['group', 'fold', 'exc'].includes(key) || !text.startsWith('+')) return text;
  const base = String(defaults[key] ?? '').replace(/[\s;]+$/, '');
  const add = text.slice(1).trim();
  return base.replace(/^[\s;]+/, '') ? `${base};${add}` : add;
}

function readBoxes() {
  const params = H.emptyParams(), defaults = state.diff ? {} : shownDefaults();
  for (const [k, id] of Object.entries(BOXES))
    params[k] = extendDefault(k, $(id).value.trim(), defaults);
  return params;
}

function update() {
  const s = H.clone(state);
  s.params = readBoxes();
  return go(s);
}

async function switchTab(tab) {
  setActiveTab(tab);
  H.replace(state);
  await loadTab(tab);
  if (views[tab]?.table) views[tab].table.focus();
  settle();
}

function setSort(tab, key) {
  // numbers largest first, names A-Z; again: reversed; a third time: the view's order
  const cur = state.sort[tab];
  let next;
  if (!key) next = null;
  else if (!cur || cur.key !== key) next = { key, asc: key === 'name' };
  else if (cur.asc === (key === 'name')) next = { key, asc: !cur.asc };
  else next = null;
  state.sort[tab] = next;
  H.replace(state);
  loadTab(tab, true).then(settle);
}

// ---- selection, focus, actions ----

// @path: a call-tree path, or a function that finds it (trees fetch names).
function select(row, tab, path) {
  if (!row) return;
  selection = { row, tab, path };
}

function gotoCallerCallee(name) {
  if (!name) return;
  const s = H.clone(state);
  s.focus = name;
  s.tab = 'caller-callee';
  return go(s);
}

function gotoFocus(tab, name) {
  const s = H.clone(state);
  s.focus = name;
  s.tab = tab;
  return go(s);
}

function notesKey() {
  return `heapscope-notes:${INFO.traces[state.trace]?.name ?? ''}`;
}

// Drill Into: a new source of exactly the row's samples; the patterns and
// time stay, IncPats and ExcPats are cleared. @path: a CallTree node's, or
// with @tree ('callers', 'callees') a node's of that tree, from its focus.
function drill(row, path, what, newWindow, tree = null) {
  const s = H.clone(state);
  const step = { kind: 'drill', what, params: { ...state.params } };
  if (path && path.length) step.path = path;
  else step.name = row.key;
  if (tree && step.path) step.tree = tree;
  s.steps = [...state.steps, step];
  s.params = { ...state.params, inc: '', exc: '' };
  s.focus = null;
  if (newWindow) {
    window.open(H.urlOf(s), '_blank');
    return;
  }
  return go(s);
}

// Flatten: each sample becomes its one (grouped) leaf frame, a new source
// made with the current boxes (like a drill; Back undoes it); as with
// `report --flatten` the patterns and Fold% are cleared after it, the
// time range stays.
function flatten() {
  const s = H.clone(state);
  s.steps = [...state.steps, { kind: 'flatten', params: { ...state.params } }];
  s.params = { ...H.emptyParams(), start: state.params.start, end: state.params.end };
  s.focus = null;
  return go(s);
}

function editParams(fn) {
  const s = H.clone(state);
  s.params = readBoxes();
  fn(s.params);
  return go(s);
}

function setTimeRange(row) {
  if (!timed) return status('this profile has no times: no time range applies', true);
  const c = shownCells()?.info;
  const fromCells = c && c.first !== null && c.last > c.first ? { start: c.first, end: c.last } : null;
  const r = whenSel || fromCells ||
    (row && row.first_ms !== null ? { start: row.first_ms, end: row.last_ms } : null);
  if (!r) return status('select characters of a When cell first, or a row with samples', true);
  return editParams((p) => {
    p.start = fmt.msBox(r.start);
    p.end = fmt.msBox(r.end);
  });
}

// Goto Source: the row's cost per source line, in the Source tab.
async function gotoSource(row) {
  if (!row) return;
  state.source_of = row.key;
  setActiveTab('source');
  H.replace(state);
  await loadTab('source', true);
  settle();
}

async function loadSource(el) {
  if (!state.source_of) return renderSource(el, null);
  let doc;
  try {
    doc = await api.call('source', H.query(state, { name: state.source_of }));
  } catch (e) {
    // no lines to show (a trace without line information, a group): say why
    if (!(e instanceof api.ApiError) || (e.status !== 404 && e.status !== 501)) throw e;
    doc = `${state.source_of}: ${e.message}`;
  }
  renderSource(el, doc);
}

function copyRow(row) {
  const several = shownCells()?.table.copyText();
  if (several) {
    const n = several.split('\n').length - 2;
    navigator.clipboard?.writeText(several).then(() => status(`copied ${n} rows with their header`),
      () => status('the browser did not allow copying', true));
    return;
  }
  if (!row) return;
  const text = rowText(row);
  navigator.clipboard?.writeText(text).then(() => status(`copied ${row.name}`),
    () => status('the browser did not allow copying', true));
}

// Show Events: the samples of @row; @path and @tree as drill() takes them
// (a Callers or Callees node's are those under its path from the focus).
async function showEvents(row, path, what, tree = null) {
  const p = path && path.length ? path : null;
  state.events = { name: row.key, path: p, what, tree: p ? tree : null };
  setActiveTab('events');
  H.replace(state);
  await loadTab('events', true);
  settle();
}

function foldPctStep(up) {
  const cur = Number(state.params.fold_pct) || 0;
  let next = up ? (cur > 0 ? cur * 1.6 : 1) : cur / 1.6;
  next = Math.round(next * 1000) / 1000;
  return editParams((p) => {
    p.fold_pct = !up && next < 0.01 ? '' : String(next);
  });
}

// The context menu of @row; @path and @tree as drill() takes them.
function openMenu(ev, row, path, tree = null) {
  if (!row) return;
  const name = row.key;
  const mod = row.module; // from the API, which knows what the name stands for
  const inTree = views[state.tab]?.model;
  showMenu(ev.clientX, ev.clientY, [
    { id: 'drill-inc', label: 'Drill Into (inclusive)', action: () => drill(row, path, 'inc', false, tree) },
    // a Callers or Callees node's samples are all inclusive (the server drills no other way)
    { id: 'drill-exc', label: 'Drill Into (exclusive)', disabled: !!tree,
      action: () => drill(row, path, 'exc') },
    { id: 'drill-new', label: 'Drill Into in a New Window',
      action: () => drill(row, path, 'inc', true, tree) },
    '-',
    { id: 'fold', label: 'Fold Item', action: () => editParams((p) => { p.fold = appendPat(p.fold, literalPattern(name)); }) },
    { id: 'fold-module', label: 'Fold Module', disabled: !mod,
      action: () => editParams((p) => { p.fold = appendPat(p.fold, literalPattern(mod + '!')); }) },
    { id: 'clear-folding', label: 'Clear all Folding', disabled: !state.params.fold && !state.params.fold_pct,
      action: () => editParams((p) => { p.fold = ''; p.fold_pct = ''; }) },
    { id: 'flatten', label: 'Flatten', action: () => flatten() },
    { id: 'group-module', label: 'Group Module', disabled: !mod,
      action: () => editParams((p) => { p.group = appendPat(p.group, `${literalPattern(mod + '!')}->${mod}`); }) },
    { id: 'entry-group-module', label: 'Entry Group Module', disabled: !mod,
      action: () => editParams((p) => { p.group = appendPat(p.group, `${literalPattern(mod + '!')}=>${mod}`); }) },
    { id: 'ungroup', label: 'Ungroup', disabled: !canUngroup(row), action: () => ungroupRow(row) },
    { id: 'ungroup-module', label: 'Ungroup Module', disabled: !mod, action: () => ungroupModule(mod) },
    { id: 'include', label: 'Include Item', action: () => editParams((p) => { p.inc = appendPat(p.inc, literalPattern(name)); }) },
    { id: 'exclude', label: 'Exclude Item', action: () => editParams((p) => { p.exc = appendPat(p.exc, literalPattern(name)); }) },
    '-',
    { id: 'time-range', label: 'Set Time Range', key: 'Alt-R', disabled: !timed,
      action: () => setTimeRange(row) },
    { id: 'source', label: 'Goto Source', key: 'Alt-D', action: () => gotoSource(row) },
    { id: 'callers', label: 'Goto Callers', action: () => gotoFocus('callers', name) },
    { id: 'callees', label: 'Goto Callees', action: () => gotoFocus('callees', name) },
    { id: 'caller-callee', label: 'Goto Caller-Callee', key: 'dbl-click', action: () => gotoCallerCallee(name) },
    { id: 'events', label: 'Show Events', action: () => showEvents(row, path, 'inc', tree) },
    { id: 'expand-all', label: 'Expand All', key: '*', disabled: !inTree,
      action: () => expandAll(views[state.tab], views[state.tab].table.selected) },
    { id: 'copy', label: 'Copy', key: 'Ctrl-C', action: () => copyRow(row) },
  ]);
}

// Ungroup @row: a group that GroupPats entries name loses them; another
// (a template's, "class $1", or an entry group) gets the entries the
// server finds that take out exactly its frames, and no other.
async function ungroupRow(row) {
  const named = ungroupNamed(state.params.group || '', row);
  if (named !== null) return editParams((p) => { p.group = named; });
  return serverUngroup({ name: row.key });
}

// Ungroup Module: the server's entries that take every grouped frame of
// module @mod out of its group ("mod!->"), and no frame of another module.
function ungroupModule(mod) {
  return serverUngroup({ module: mod });
}

// The GroupPats of /api/ungroup for @what ({name} or {module}), applied.
async function serverUngroup(what) {
  let a;
  try {
    a = await api.call('ungroup', H.query(state, what));
  } catch (e) {
    return fail(e);
  }
  return editParams((p) => { p.group = a.group; });
}

function tip(text, ev) {
  const t = $('tip');
  if (!text) {
    t.hidden = true;
    return;
  }
  t.textContent = text;
  t.hidden = false;
  t.style.left = `${Math.min(ev.clientX + 12, innerWidth - t.offsetWidth - 4)}px`;
  t.style.top = `${ev.clientY + 14}px`;
}

// ---- Find ----

function findRegex() {
  const p = $('find').value.trim();
  if (!p) return null;
  try {
    return new RegExp(p, 'i');
  } catch {
    return null;
  }
}

async function find(backward = false) {
  try {
    await findNext(backward);
  } finally {
    settle();
  }
}

async function findNext(backward) {
  const pattern = $('find').value.trim();
  if (!pattern) return status('type a pattern in Find first', true);
  const tab = state.tab;
  const v = views[tab];
  try {
    if (tab === 'flame') {
      v.flame.setSearch(findRegex());
      const k = v.flame.countMatches();
      return status(k ? `${k} boxes match ${pattern}` : `no box matches ${pattern}`, !k);
    }
    if (tab === 'byname') {
      const sort = state.sort.byname;
      const from = v.table.selected >= 0 ? v.get(v.table.selected)?.id ?? null : null;
      const r = await api.call('find', H.query(state, { view: 'byname', pattern, from, backward,
        sort: sort?.key ?? null, order: sort ? (sort.asc ? 'asc' : 'desc') : null }));
      if (r.id === null) return status(`no name matches ${pattern}`, true);
      await loadPages(v, r.index, r.index);
      v.table.select(r.index, true);
      status(`found ${r.row.name}`);
      return;
    }
    if (TREE_TABS.includes(tab)) {
      // depth first in the view's order (a sorted tree shows siblings in another order)
      const cur = v.model.node(v.table.selected);
      const r = await api.call('find', H.query(state, { view: tab, pattern, backward,
        focus: tab === 'calltree' ? null : state.focus, from: cur ? cur.id : null }));
      if (r.id === null) return status(`no name matches ${pattern}`, true);
      for (const id of r.path) await v.model.open(id);
      v.show();
      const i = v.model.indexOf(r.id);
      v.table.select(i, true);
      status(`found ${r.row.name}`);
      return;
    }
    status('Find works in ByName, the trees and the Flame Graph');
  } catch (e) {
    fail(e);
  }
}

// ---- Export: the rows of this view as a file ----

// The rows ByName or a tree shows, in its order: [{row, depth}].
async function shownRows(tab) {
  const v = views[tab];
  if (tab === 'byname') {
    const sort = state.sort.byname;
    const out = [];
    for (let off = 0; off < v.total || off === 0; off += 10000) {
      const r = await api.call('rows', H.query(state, { view: 'byname', offset: off, count: 10000,
        sort: sort?.key ?? null, order: sort ? (sort.asc ? 'asc' : 'desc') : null }));
      for (const row of r.rows) out.push({ row, depth: null });
      if (r.rows.length < 10000) break;
    }
    return out;
  }
  const n = v.model.visible.length;
  for (let a = 0; a < n; a += 5000) await v.model.fetchVisible(a, Math.min(n, a + 5000) - 1);
  const out = [];
  for (let i = 0; i < n; i++) out.push({ row: v.model.node(i).row, depth: v.model.info(i).depth });
  return out;
}

// Caller-Callee and the Flame Graph: their file's text, named @name.
async function exportOther(tab, kind, name) {
  if (tab === 'caller-callee') {
    if (!state.focus) throw new Error('Caller-Callee has no focus to export');
    const lists = views[tab].cc.lists;
    const query = H.query(state, { view: tab, focus: state.focus, limit: 20000 });
    const n = lists.callers.length + lists.focus.length + lists.callees.length;
    if (kind === 'csv') X.download(name, X.toCallerCalleeCsv(lists), 'text/csv');
    else X.download(name, X.toViewJson(tab, query, summary, { focus: state.focus,
      callers: lists.callers, focus_row: lists.focus[0] ?? null, callees: lists.callees }),
    'application/json');
    return n;
  }
  // the whole graph from ROOT, every box however narrow
  const query = H.query(state, { view: 'flame', root: 0, min_width: 0, max_rows: 200000 });
  const r = await api.call('flame', query);
  if (r.truncated) status('the flame graph has more than 200,000 boxes: the first ones only', true);
  if (kind === 'csv') X.download(name, X.toFlameCsv(r.rows), 'text/csv');
  else X.download(name, X.toViewJson('flame', query, r.summary, { tree: X.flameTree(r.rows) }),
    'application/json');
  return r.rows.length;
}

async function exportView(kind) {
  const tab = state.tab;
  if (!EXPORT_TABS.includes(tab))
    return status('Export works in ByName, the trees, Caller-Callee and the Flame Graph', true);
  try {
    working('exporting\u2026');
    const name = X.fileName(INFO.traces[state.trace]?.name, tab, kind);
    if (!['byname', ...TREE_TABS].includes(tab)) {
      const n = await exportOther(tab, kind, name);
      status(`exported ${n} rows to ${name}`);
      return;
    }
    const rows = await shownRows(tab);
    const tree = tab !== 'byname';
    const focus = ['callers', 'callees'].includes(tab) ? state.focus : null;
    const sort = state.sort[tab];
    // the query of the API's rows in this order (/api/view, /api/rows)
    const query = H.query(state, { view: tab, focus, sort: sort?.key ?? null,
      order: sort ? (sort.asc ? 'asc' : 'desc') : null });
    if (kind === 'csv') X.download(name, X.toCsv(rows, tree), 'text/csv');
    else X.download(name, X.toJson(tab, query, summary, rows, tree), 'application/json');
    status(`exported ${rows.length} rows to ${name}`);
  } catch (e) {
    fail(e);
  } finally {
    settle();
  }
}

// ---- several cells: their sum, a time range, copying ----

function onCells(info, table) {
  if (!info) {
    if (cellSel?.table === table) cellSel = null;
    return;
  }
  cellSel = { info, table };
  let msg = `${info.n} cells selected`;
  if (info.nums) {
    const unitOf = (k) => (['exc', 'inc', 'fold'].includes(k) ? summary?.unit : null);
    const units = new Set(info.cols.filter((k) => !['name', 'when', 'first_ms', 'last_ms'].includes(k))
      .map((k) => (k.endsWith('_pct') ? '%' : unitOf(k) || 'count')));
    const u = units.size === 1 ? [...units][0] : null;
    const text = u === 'bytes' ? fmt.bytes(info.sum) : u === '%' ? `${fmt.pct(info.sum)}%` : fmt.num(info.sum);
    msg += `   Sum of ${info.nums} numbers: ${text}` + (u === 'bytes' ? ` (${fmt.exact(info.sum, 'bytes')})` : '');
  }
  if (info.first !== null) msg += `   First/Last: ${fmt.ms(info.first)} - ${fmt.ms(info.last)} ms (Alt-R sets it)`;
  if (info.missing) msg += `   (${info.missing} cells not loaded yet)`;
  $('status').dataset.sum = String(info.sum);
  status(msg);
}

// The cells selected in a table on screen (null: none, or in another tab).
function shownCells() {
  return cellSel && cellSel.table.el.closest('.view.active') ? cellSel : null;
}

// Right-click on a header: show or hide the columns.
function columnMenu(ev, key) {
  showMenu(ev.clientX, ev.clientY, [
    ...(key !== 'name' ? [{ id: 'hide-column', label: `Hide ${COLUMNS.find((c) => c.key === key).title}`,
      action: () => setColumnHidden(key, true) }, '-'] : []),
    ...COLUMNS.filter((c) => c.key !== 'name').map((c) => ({ id: `column-${c.key}`,
      label: `${isColumnHidden(c.key) ? '\u2610' : '\u2611'} ${c.title}`,
      action: () => setColumnHidden(c.key, !isColumnHidden(c.key)) })),
  ]);
}

// ---- When-cell selection: characters -> a time range ----

function onSelectionChange() {
  const sel = window.getSelection();
  if (!sel || sel.isCollapsed || !sel.anchorNode) {
    whenSel = null;
    return;
  }
  const cell = sel.anchorNode.parentElement?.closest('.c-when');
  if (!cell || !cell.contains(sel.focusNode)) return;
  const s = summary;
  if (!s) return;
  const a = Math.min(sel.anchorOffset, sel.focusOffset);
  const b = Math.max(sel.anchorOffset, sel.focusOffset);
  if (b <= a) return;
  whenSel = { start: s.start_ms + a * s.bucket_ms, end: s.start_ms + b * s.bucket_ms };
  const range = `TimeRange = ${fmt.ms(whenSel.start)} - ${fmt.ms(whenSel.end)}  Duration ` +
    `${fmt.ms(whenSel.end - whenSel.start)} ms`;
  status(`${range}  (Alt-R sets it)`);
  clearTimeout(whenTimer);
  const rowEl = cell.parentElement;
  const target = { key: rowEl.dataset.key, tab: rowEl.closest('.view')?.dataset.view,
    index: Number(rowEl.dataset.index) };
  const picked = whenSel;
  if (target.key) whenTimer = setTimeout(() => whenReadout(target, picked, range), 150);
}

let whenTimer = 0;
let whenGen = 0;

// The /api/timeline query of the samples a When cell stands for, and what
// they are (a name, or a tree node by its path): a CallTree, Callers or
// Callees node's are those a drill into it keeps (the node's own, those
// its When counts, not its name's elsewhere); a name's (ByName,
// Caller-Callee) those with the name on their stack.
async function whenQuery({ key, tab, index }) {
  const base = { buckets: 4000 };
  const v = views[tab];
  if (TREE_TABS.includes(tab)) {
    const n = v?.model?.node(index);
    if (!n) return null;
    const keys = await v.model.keys(n.id);
    // the CallTree's path starts below ROOT; a Callers or Callees tree's
    // at its root, the focus
    const path = tab === 'calltree' ? keys.slice(1) : keys;
    if (!path.length) return { q: H.query(state, base), of: 'ROOT', node: true };
    const drill = { kind: 'drill', what: 'inc', path, params: { ...state.params },
      ...(tab === 'calltree' ? {} : { tree: tab }) };
    // a long path by its ends: the status line is one line
    const shown = path.length > 3 ? [path[0], '\u2026', path[path.length - 1]] : path;
    const arrow = tab === 'callers' ? ' \u2190 ' : ' \u2192 ';
    return { q: H.query(state, { ...base, steps: [...state.steps, drill],
      params: { ...state.params, inc: '', exc: '' } }),
    of: (tab === 'calltree' ? '' : `${tab} `) + shown.join(arrow), node: true };
  }
  return { q: H.query(state, { ...base, params: { ...state.params,
    inc: appendPat(state.params.inc || '', exactPattern(key)) } }), of: key, node: false };
}

// PerfView's readout while dragging over When: the net (sum) and the peak
// (highest running sum) of the row's metric inside the range selected;
// from the timeline of the row's samples (whenQuery).
async function whenReadout(target, sel, range) {
  const gen = ++whenGen;
  let t, w;
  try {
    w = await whenQuery(target);
    if (!w) return;
    t = await api.call('timeline', w.q);
  } catch (e) {
    if (!api.isCancel(e)) console.warn(e.message);
    return;
  }
  if (gen !== whenGen || whenSel !== sel) return;
  const r = whenNetPeak(t, sel.start, sel.end);
  const u = summary?.unit;
  const value = (v) => fmt.metric(v, u) + (u && u !== 'bytes' ? ` ${u}` : '');
  const st = $('status');
  st.dataset.net = String(r.net);
  st.dataset.peak = String(r.peak);
  st.dataset.of = w.node ? 'node' : 'name';
  status(`${range}  Net ${value(r.net)}  Peak ${value(r.peak)}  of ${w.of}  (Alt-R sets it)`);
}

// The net and peak of a timeline's filtered metric over [a, b) ms (the
// buckets that start inside it).
function whenNetPeak(t, a, b) {
  let net = 0, peak = 0;
  t.filtered.forEach((v, i) => {
    const x = t.start_ms + i * t.bucket_ms;
    if (x + t.bucket_ms <= a || x >= b) return;
    net += v;
    if (net > peak) peak = net;
  });
  return { net, peak };
}

// ---- keys ----

function onKey(ev) {
  const row = selection?.row;
  if (ev.key === 'F7') {
    ev.preventDefault();
    foldPctStep(!ev.shiftKey);
  } else if (ev.key === 'F3') {
    ev.preventDefault();
    find(ev.shiftKey);
  } else if ((ev.ctrlKey || ev.metaKey) && ev.key === 'f') {
    ev.preventDefault();
    $('find').focus();
    $('find').select();
  } else if (ev.altKey && (ev.key === 'r' || ev.key === 'R')) {
    ev.preventDefault();
    setTimeRange(row);
  } else if (ev.altKey && (ev.key === 'd' || ev.key === 'D')) {
    ev.preventDefault();
    gotoSource(row);
  } else if ((ev.ctrlKey || ev.metaKey) && ev.key === 'c' && row && !window.getSelection()?.toString() &&
             !ev.target.closest('input, textarea')) {
    ev.preventDefault();
    copyRow(row);
  } else if (ev.altKey && ev.key === 'ArrowLeft') {
    history.back();
  } else if (ev.altKey && ev.key === 'ArrowRight') {
    history.forward();
  }
}

// ---- the page ----

// The Source box: the trace's sources, the shown one selected; with
// @keep, a box that has the trace's sources keeps the one it names (the
// source shown until the new one's answers came).
function fillSources(keep = false) {
  const t = INFO.traces[state.trace] || { sources: [] };
  const sel = $('source');
  // the same trace's sources stay the same options (every Update shows
  // them again; new options would lay the page out again)
  const same = sel.options.length === t.sources.length &&
    t.sources.every((src, i) => sel.options[i].value === src.name);
  if (!same) {
    sel.textContent = '';
    for (const src of t.sources) {
      const o = new Option(src.name, src.name);
      o.title = src.summary || '';
      sel.append(o);
    }
  }
  if (!same || !keep) sel.value = state.source || t.sources[0]?.name || '';
  sel.disabled = t.sources.length < 2 || !!state.diff;
}

function fillSelects() {
  const tr = $('trace');
  tr.textContent = '';
  INFO.traces.forEach((t, i) => tr.append(new Option(`${t.name}`, String(i))));
  tr.append(new Option('(diff)', ''));
  tr.lastChild.disabled = true;
  const diff = $('diff'), ow = $('overweight');
  INFO.traces.forEach((t, i) => {
    diff.append(new Option(t.name, String(i)));
    ow.append(new Option(t.name, String(i)));
  });
  diff.disabled = ow.disabled = INFO.traces.length < 2;
  const pr = $('presets');
  for (const p of INFO.presets) {
    const o = new Option(`[${p.name}]`, p.name);
    o.title = p.comment;
    o.disabled = p.needs_exe_dir;
    pr.append(o);
  }
}

function applyPreset(name) {
  const p = INFO.presets.find((x) => x.name === name);
  if (!p) return;
  editParams((params) => {
    params.group = p.group;
    if (p.fold) params.fold = p.fold;
    if (p.fold_pct) params.fold_pct = p.fold_pct;
    if (p.exc) params.exc = p.exc;
  });
}

// Diff: this view (test) minus trace @base with the same filter (Fold%
// cleared, and no time window on the base); the diff gets its own
// patterns, with PID/TID ignored so that the process and thread nodes of
// the two traces cancel, and no Fold%.
function diffWith(base) {
  const testParams = { ...state.params, fold_pct: '' };
  const s = H.clone(state);
  s.diff = {
    test: H.sourceQuery(state),
    test_params: testParams,
    base: { trace: base },
    base_params: { ...testParams, start: '', end: '' },
  };
  s.steps = [];
  s.params = { ...H.emptyParams(), group: INFO.ignore_pid_tid + state.params.group,
    fold: state.params.fold };
  s.focus = null;
  return go(s);
}

// The state a URL's hash names, for the traces loaded now (a link made
// before a restart of `heapscope view` still works; its token is never in
// it); else the first trace's opening state, with a note saying why.
function fromUrl(decoded) {
  if (!decoded) return { s: H.initialState(INFO) };
  const r = H.rebase(decoded, INFO.traces.map((t) => t.name));
  if (!r.state) return { s: H.initialState(INFO), note: `this link shows ${r.missing}, which ` +
    'heapscope view has not loaded: start it with that file to see the view' };
  if (!INFO.traces[r.state.trace]) return { s: H.initialState(INFO), note: 'this link names a trace ' +
    'heapscope view has not loaded' };
  return { s: r.state };
}

function wire() {
  $('filters').addEventListener('submit', (ev) => {
    ev.preventDefault();
    if (document.activeElement === $('find')) find();
    else update();
  });
  $('find').addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter') {
      ev.preventDefault();
      find(ev.shiftKey);
    }
  });
  $('find').addEventListener('input', () => views.flame.flame.setSearch(findRegex()));
  $('back').addEventListener('click', () => history.back());
  $('cancel').addEventListener('click', () => api.cancel());
  $('forward').addEventListener('click', () => history.forward());
  for (const b of document.querySelectorAll('#tabs [data-tab]'))
    b.addEventListener('click', () => switchTab(b.dataset.tab));
  $('expandall').addEventListener('click', () => {
    const v = views[state.tab];
    if (v?.model) expandAll(v, Math.max(0, v.table.selected));
  });
  $('export').addEventListener('click', (ev) => {
    const b = ev.target.getBoundingClientRect();
    showMenu(b.left, b.bottom, [
      { id: 'export-csv', label: 'Export as CSV', action: () => exportView('csv') },
      { id: 'export-json', label: 'Export as JSON', action: () => exportView('json') },
    ]);
  });
  $('presets').addEventListener('change', (ev) => {
    applyPreset(ev.target.value);
    ev.target.value = '';
  });
  // a source not read yet: its saved boxes come with its stats (which read
  // it); one this page switched to before, or the trace's first source
  // (whose boxes /api/info gave), is shown at once, as an Update is (its
  // answers are in the server's cache)
  $('source').addEventListener('change', async (ev) => {
    const name = ev.target.value;
    // the box names what is shown until the new source has arrived
    fillSources();
    working(`reading source ${name}\u2026`);
    try {
      const t = INFO.traces[state.trace];
      const entry = t?.sources?.find((x) => x.name === name);
      let defaults = entry && (entry === t.sources[0] || switchedTo.has(entry)) ? entry.defaults : null;
      if (!defaults) {
        // asked with the boxes the trace's own defaults give (the sources
        // of a heap trace mostly share them): the call tree it builds is
        // then the view's, which the rows and timeline take from the cache
        const guess = H.initialState(INFO, state.trace, name, INFO.traces[state.trace]?.defaults);
        const st = await api.call('stats', { ...H.query(guess), heap: false });
        defaults = st.source.defaults;
        if (entry) {
          entry.defaults ??= defaults;
          switchedTo.add(entry);
        }
      }
      await go(H.initialState(INFO, state.trace, name, defaults));
    } catch (e) {
      fail(e);
      fillSources();
      settle();
    }
  });
  $('trace').addEventListener('change', (ev) => {
    if (ev.target.value !== '') go(H.initialState(INFO, Number(ev.target.value)));
  });
  $('diff').addEventListener('change', (ev) => {
    if (ev.target.value !== '') diffWith(Number(ev.target.value));
    ev.target.value = '';
  });
  $('overweight').addEventListener('change', (ev) => {
    const s = H.clone(state);
    s.overweight = ev.target.value === '' ? null : Number(ev.target.value);
    s.tab = s.overweight === null ? 'byname' : 'overweight';
    go(s);
  });
  $('notes').addEventListener('input', () => localStorage.setItem(notesKey(), $('notes').value));
  document.addEventListener('keydown', onKey);
  document.addEventListener('selectionchange', onSelectionChange);
  H.onPop((s) => {
    const r = fromUrl(s);
    show(r.s).then(() => r.note && status(r.note, true));
  });
}

async function main() {
  try {
    INFO = await api.info();
  } catch (e) {
    status(`cannot reach heapscope: ${e.message}`, true);
    return;
  }
  // the token now lives in a cookie: keep it out of the address bar
  views.byname = makeByName();
  for (const t of TREE_TABS) views[t] = makeTree(t);
  views['caller-callee'] = makeCallerCallee();
  views.flame = makeFlame();
  views.events = makePane('events', (el) => loadEvents(el));
  views.stats = makePane('stats', loadStats);
  views.gc = makePane('gc', loadGc);
  views.charts = makePane('charts', loadCharts);
  new ResizeObserver(() => resizeCharts(views.charts.el)).observe(views.charts.el);
  views.overweight = makePane('overweight', loadOverweight);
  views.source = makePane('source', loadSource);
  views.timeline = new Timeline($('timeline'), {
    onRange: (a, b) => editParams((p) => {
      p.start = fmt.msBox(a);
      p.end = fmt.msBox(b);
    }),
  });
  tableHooks.onCells = onCells;
  tableHooks.onHeaderMenu = columnMenu;
  fillSelects();
  wire();
  H.setTraceNames(INFO.traces.map((t) => t.name));
  const { s, note } = fromUrl(H.decode(location.hash));
  H.replace(s);
  await show(s);
  if (note) status(note, true);
  document.body.dataset.ready = '1';
  // for debugging in the browser's console (and the tests' diagnostics)
  window.heapscope = { views, state: () => state };
}

main();
