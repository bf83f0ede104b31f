// export.js - "export this view": the rows a table shows, in the order it
// shows them, as a file the browser saves. CSV has the columns and the
// numbers of `heapscope report --format csv` (a tree adds Depth first;
// the numbers as exact as the JSON API gives them, 15 digits), so an
// export holds what the CLI writes for the same boxes; Caller-Callee adds
// report's Section column (caller, focus, callee) and the Flame Graph is
// report's rectangles (Depth, Name, X, Width, Inc, Exc).
// JSON holds the query that makes the view again (its source, boxes,
// focus and sort), the summary line and the rows as the API gives them;
// the Flame Graph's JSON is its tree, each row with its children.

const CSV_HEAD = 'Name,Exc %,Exc,Exc Ct,Inc %,Inc,Inc Ct,Fold,Fold Ct,Inc Avg,When,First,Last';

// A name as report's CSV writes it: quoted when it holds a comma or a quote.
function csvName(s) {
  return /[,"]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

const exact = (v) => (v === null || v === undefined ? '0' : String(v));
const ms6 = (v) => (v === null || v === undefined ? '' : Number(v).toFixed(6));

// The cells of API row @r under CSV_HEAD.
function cells(r) {
  const avg = r.inc_avg ?? (r.inc_count ? r.inc / r.inc_count : 0);
  const times = r.first_ms === null || r.first_ms === undefined ? ',' :
    `${ms6(r.first_ms)},${ms6(r.last_ms)}`;
  return [csvName(r.name), exact(r.exc_pct), exact(r.exc), exact(r.exc_count), exact(r.inc_pct),
    exact(r.inc), exact(r.inc_count), exact(r.fold), exact(r.fold_count), exact(avg),
    r.when ?? ''].join(',') + ',' + times;
}

// @rows: [{row, depth}] (depth null outside a tree).
export function toCsv(rows, tree) {
  const lines = [(tree ? 'Depth,' : '') + CSV_HEAD];
  for (const { row: r, depth } of rows) lines.push((tree ? `${depth},` : '') + cells(r));
  return lines.join('\n') + '\n';
}

// Caller-Callee as `report --view caller-callee --format csv`: the callers,
// the focus, the callees, in the order shown. @lists: {callers, focus, callees}.
export function toCallerCalleeCsv(lists) {
  const lines = [`Section,${CSV_HEAD}`];
  for (const [section, rows] of [['caller', lists.callers], ['focus', lists.focus],
    ['callee', lists.callees]])
    for (const r of rows) lines.push(`${section},${cells(r)}`);
  return lines.join('\n') + '\n';
}

// The Flame Graph as `report --view flame --format csv`. @rows: the
// /api/flame rows, depth first from ROOT (each with depth, x, width).
export function toFlameCsv(rows) {
  const lines = ['Depth,Name,X,Width,Inc,Exc'];
  for (const r of rows)
    lines.push([r.depth, csvName(r.name), exact(r.x), exact(r.width), exact(r.inc), exact(r.exc)].join(','));
  return lines.join('\n') + '\n';
}

// The tree of depth-first @rows (each with depth): the first row, each row
// with a children array, as report's `tree` of a flame view.
export function flameTree(rows) {
  const stack = [];
  let root = null;
  for (const r of rows) {
    const node = { ...r, children: [] };
    stack.length = r.depth - (rows[0]?.depth ?? 0);
    if (stack.length) stack.at(-1).children.push(node);
    else root = node;
    stack.push(node);
  }
  return root;
}

// The JSON document: {exported_by, view, query, summary, total_rows, rows}.
export function toJson(view, query, summary, rows, tree) {
  return JSON.stringify({
    exported_by: 'heapscope view',
    view, query, summary, total_rows: rows.length,
    rows: rows.map(({ row, depth }) => (tree ? { depth, ...row } : row)),
  }, null, 1) + '\n';
}

// Caller-Callee's or the Flame Graph's JSON: {exported_by, view, query,
// summary, ...@body}.
export function toViewJson(view, query, summary, body) {
  return JSON.stringify({ exported_by: 'heapscope view', view, query, summary, ...body }, null, 1) + '\n';
}

// Hand @text to the browser as a file named @name.
export function download(name, text, type) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

// A file name for trace @trace's view @view ("app.data.txt-byname.csv").
export function fileName(trace, view, ext) {
  return `${String(trace || 'heapscope').replace(/[^\w.+-]+/g, '_')}-${view}.${ext}`;
}
