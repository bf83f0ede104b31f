// history.js - the viewer's state and Back/Forward. Everything that
// decides what is shown is in one plain object kept in the URL's hash, so
// the browser's history holds every parameter set, a URL opens the same
// view in a new tab or window, and Drill Into can open one.

export const PARAM_KEYS = ['start', 'end', 'group', 'fold', 'fold_pct', 'inc', 'exc'];

export function emptyParams() {
  return { start: '', end: '', group: '', fold: '', fold_pct: '', inc: '', exc: '' };
}

// The state a trace (and one of its sources) opens with: the saved text
// boxes, else blank (no Fold%, as `heapscope report`: docs/gui.md says why).
// @defaults: the source's saved boxes when @info does not have them yet.
// The trace's first source is named by no source at all, as at the open:
// the server's default, so that switching back to it asks the queries of
// the open again and finds their answers in the server's cache.
export function initialState(info, trace = 0, source = null, defaults = null) {
  const t = info.traces[trace] || { defaults: {}, sources: [] };
  const src = (t.sources || []).find((x) => x.name === source);
  const d = defaults || (src ? src.defaults : t.defaults) || {};
  const params = emptyParams();
  for (const k of PARAM_KEYS) if (d[k] !== null && d[k] !== undefined) params[k] = String(d[k]);
  return {
    trace, source: src && src !== t.sources[0] ? source : null, diff: null, steps: [], params,
    tab: 'byname',
    focus: null, sort: {}, overweight: null,
  };
}

// The query keys that name the state's source: {trace, source, steps} or
// {diff, steps}.
export function sourceQuery(state) {
  const q = state.diff ? { diff: state.diff } : { trace: state.trace };
  if (!state.diff && state.source) q.source = state.source;
  if (state.steps.length) q.steps = state.steps;
  return q;
}

// The query of the state's view: its source and parameters, plus @extra.
export function query(state, extra = {}) {
  return { ...sourceQuery(state), params: { ...state.params }, ...extra };
}

export function clone(state) {
  return JSON.parse(JSON.stringify(state));
}

// The names of the loaded traces, in order: every URL carries them, so
// that after a restart of `heapscope view` (the same files, perhaps in
// another order) its trace numbers can be found again (rebase()).
let traceNames = null;

export function setTraceNames(names) {
  traceNames = names;
}

export function encode(state) {
  const s = traceNames ? { ...state, traces: traceNames } : state;
  return '#' + encodeURIComponent(JSON.stringify(s));
}

// @state (decoded from a URL) for the traces loaded now: its trace
// numbers (the trace, the Overweight baseline, a diff's sides) renumbered
// by file name. Returns {state} or, when a trace it names is not loaded,
// {state: null, missing: name}. Changes @state.
export function rebase(state, names) {
  const old = state.traces;
  delete state.traces;
  if (!Array.isArray(old)) return { state };
  let missing = null;
  const map = (i) => {
    if (typeof i !== 'number' || old[i] === undefined) return i;
    const k = names.indexOf(old[i]);
    if (k < 0) missing ??= old[i];
    return k < 0 ? i : k;
  };
  const side = (q) => {
    if (!q || typeof q !== 'object') return;
    if ('trace' in q) q.trace = map(q.trace);
    side(q.diff?.test);
    side(q.diff?.base);
  };
  state.trace = map(state.trace);
  if (state.overweight !== null && state.overweight !== undefined) state.overweight = map(state.overweight);
  if (state.diff) {
    side(state.diff.test);
    side(state.diff.base);
  }
  return missing ? { state: null, missing } : { state };
}

export function decode(hash) {
  if (!hash || hash.length < 2) return null;
  try {
    const s = JSON.parse(decodeURIComponent(hash.slice(1)));
    if (typeof s !== 'object' || !s || !s.params) return null;
    s.steps ??= [];
    s.sort ??= {};
    s.tab ??= 'byname';
    for (const k of PARAM_KEYS) s.params[k] ??= '';
    return s;
  } catch {
    return null;
  }
}

// Record @state as a new history entry (an Update, a drill, a tab change).
// Returns false when it is the current entry already (nothing recorded).
export function push(state) {
  const h = encode(state);
  if (h === location.hash) return false;
  history.pushState(null, '', h);
  return true;
}

// Replace the current entry (the first load).
export function replace(state) {
  history.replaceState(null, '', location.pathname + encode(state));
}

export function onPop(fn) {
  window.addEventListener('popstate', () => fn(decode(location.hash)));
}

// A URL of this page showing @state (for a new window).
export function urlOf(state) {
  return location.pathname + encode(state);
}
