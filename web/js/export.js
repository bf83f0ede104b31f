// export.js - "export this view": the rows a table shows, in the order it
// shows them, as a file the browser saves. CSV has the columns and the
// numbers of `heapscope report --format csv` (a tree adds Depth first;
// the numbers as exact as the JSON API gives them, 15 digits), so an
// export holds what the CLI writes for the same boxes;
// JSON holds the query that makes the view again (its source, boxes,
// focus and sort), the summary line and the rows as the API gives them.

const CSV_HEAD = 'Name,Exc %,Exc,Exc Ct,Inc %,Inc,Inc Ct,Fold,Fold Ct,Inc Avg,When,First,Last';

// A name as report's CSV writes it: quoted when it holds a comma or a quote.
function csvName(s) {
  return /[,"]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

const exact = (v) => (v === null || v === undefined ? '0' : String(v));
const ms6 = (v) => (v === null || v === undefined ? '' : Number(v).toFixed(6));

// @rows: [{row, depth}] (depth null outside a tree).
export function toCsv(rows, tree) {
  const lines = [(tree ? 'Depth,' : '') + CSV_HEAD];
  for (const { row: r, depth } of rows) {
    const avg = r.inc_avg ?? (r.inc_count ? r.inc / r.inc_count : 0);
    const times = r.first_ms === null || r.first_ms === undefined ? ',' :
      `${ms6(r.first_ms)},${ms6(r.last_ms)}`;
    lines.push((tree ? `${depth},` : '') + [csvName(r.name), exact(r.exc_pct), exact(r.exc),
      exact(r.exc_count), exact(r.inc_pct), exact(r.inc), exact(r.inc_count), exact(r.fold),
      exact(r.fold_count), exact(avg), r.when ?? ''].join(',') + ',' + times);
  }
  return lines.join('\n') + '\n';
}

// The JSON document: {exported_by, view, query, summary, total_rows, rows}.
export function toJson(view, query, summary, rows, tree) {
  return JSON.stringify({
    exported_by: 'heapscope view',
    view, query, summary, total_rows: rows.length,
    rows: rows.map(({ row, depth }) => (tree ? { depth, ...row } : row)),
  }, null, 1) + '\n';
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
