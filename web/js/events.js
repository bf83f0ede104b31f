// events.js - the plain panes: Events (the samples of the selected row,
// with their stacks), Stats (the source and what the filter made of it)
// and the Overweight report.

import * as fmt from './format.js';
import { metricUnit } from './table.js';

const esc = fmt.escapeHtml;

function table(head, rows) {
  const th = head.map((h) => `<th class="${h.num ? 'num' : ''}">${esc(h.title)}</th>`).join('');
  return `<table><thead><tr>${th}</tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

// "/usr/lib/libc.so.6!malloc" -> "libc.so.6!malloc"; other names unchanged.
function shortFrame(name) {
  const bang = name.indexOf('!');
  const slash = bang > 0 ? name.lastIndexOf('/', bang) : -1;
  return slash >= 0 ? name.slice(slash + 1) : name;
}

// @doc: a /api/samples answer for @what (a description of the row).
export function renderEvents(el, what, doc, onMore) {
  if (!doc) {
    el.innerHTML = '<p>Select a row in ByName, CallTree or another view, then open Events ' +
      '(or use <em>Show Events</em> in its context menu).</p>';
    return;
  }
  const rows = doc.rows.map((s, i) => {
    // modules by their file name, as every other view names them
    const leaf = s.stack.slice(-8).reverse().map(shortFrame).join('\n');
    return `<tr><td class="num">${doc.offset + i}</td><td class="num">${fmt.ms(s.time_ms)}</td>` +
      `<td class="num" title="${fmt.exact(s.metric, metricUnit())}">${fmt.metric(s.metric, metricUnit())}</td><td class="num">${fmt.count(s.count)}</td>` +
      `<td class="num">${s.depth}</td><td class="stack" title="${esc(s.stack.join('\n'))}">${esc(leaf)}</td></tr>`;
  });
  el.innerHTML = `<h3>${esc(what)}: ${fmt.count(doc.total)} samples</h3>` +
    table([{ title: '#', num: 1 }, { title: 'Time ms', num: 1 }, { title: 'Metric', num: 1 },
      { title: 'Count', num: 1 }, { title: 'Depth', num: 1 }, { title: 'Stack (leaf first)' }], rows);
  if (doc.offset + doc.rows.length < doc.total) {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = 'Next page';
    b.addEventListener('click', () => onMore(doc.offset + doc.rows.length));
    el.append(b);
  }
}

function kv(obj, labels) {
  return '<table>' + Object.entries(labels).map(([k, label]) => {
    let v = obj[k];
    if (typeof v === 'boolean') v = v ? 'yes' : 'no';
    if (typeof v === 'number') v = k.includes('bytes') ? fmt.bytes(v) : k.endsWith('_ms')
      ? fmt.ms(v) + ' ms' : Number.isInteger(v) ? fmt.count(v) : fmt.num(v);
    return `<tr><th>${esc(label)}</th><td class="num">${esc(v ?? '\u2013')}</td></tr>`;
  }).join('') + '</table>';
}

function topList(title, list) {
  if (!list || !list.length) return '';
  return `<h3>${esc(title)}</h3>` + table([{ title: 'Call site' }, { title: 'Bytes', num: 1 },
    { title: 'Blocks', num: 1 }], list.map((t) => `<tr><td>${esc(t.name)}</td>` +
    `<td class="num">${fmt.bytes(t.bytes)}</td><td class="num">${fmt.count(t.count)}</td></tr>`));
}

// A heap trace's numbers (`heapscope stats`).
function heapStats(h) {
  const hist = (h.size_histogram || []).map((b) => `<tr><td class="num">${fmt.bytes(b.min)}` +
    ` \u2013 ${fmt.bytes(b.max)}</td><td class="num">${fmt.count(b.count)}</td>` +
    `<td class="num">${fmt.bytes(b.bytes)}</td></tr>`);
  return '<h3>Heap</h3>' + kv(h, {
    duration_ms: 'Duration', total_allocations: 'Allocations', total_frees: 'Frees',
    total_reallocs: 'Reallocs', bytes_allocated: 'Bytes allocated',
    peak_heap_bytes: 'Peak heap in use', peak_heap_ms: 'Peak at', peak_rss_bytes: 'Peak RSS',
    leaked_bytes: 'Leaked', leaked_blocks: 'Leaked blocks',
    suppressed_leaked_bytes: 'Leaked, suppressed (libc, libstdc++ at exit)',
    temporary_allocations: 'Temporary allocations', temporary_bytes: 'Temporary bytes',
    unmatched_frees: 'Frees of unknown blocks', mmaps: 'Anonymous mappings', threads: 'Threads',
    sampled: 'Sampled',
  }) + topList('Top call sites by bytes', h.top_by_bytes) +
    topList('Top call sites by allocations', h.top_by_count) +
    topList('Top call sites by leaked bytes', h.top_by_leaked) +
    topList('Top call sites at the peak', h.top_at_peak) +
    (hist.length ? '<h3>Allocation sizes</h3>' + table([{ title: 'Size', num: 1 },
      { title: 'Blocks', num: 1 }, { title: 'Bytes', num: 1 }], hist) : '');
}

export function renderStats(el, s, trace) {
  el.innerHTML = (s.heap ? heapStats(s.heap) : '') +
    `<h3>Source${trace ? ': ' + esc(trace) : ''}</h3>` + kv(s.source, {
    samples: 'Samples', frames: 'Frames', stacks: 'Stacks', max_depth: 'Deepest stack',
    metric: 'Total metric', count: 'Total count', first_ms: 'First sample', last_ms: 'Last sample',
    unit: 'Unit', time_metric: 'Metric is time', memory_bytes: 'Memory',
  }) + '<h3>After the filter</h3>' + kv(s.filter, {
    samples: 'Samples kept', frames: 'Names', stacks: 'Call-tree nodes', groups: 'Groups',
    folded_nodes: 'Nodes folded by Fold%', fold_threshold: 'Fold% threshold', fold_pct: 'Fold%',
  }) + '<h3>Cache</h3>' + kv(s.cache, { entries: 'Entries', hits: 'Hits', misses: 'Misses' });
}

export function renderOverweight(el, doc, baseName, testName) {
  if (!doc) {
    el.innerHTML = '<p>Choose a baseline trace in <em>Overweight vs\u2026</em> at the top.</p>';
    return;
  }
  const rows = doc.rows.map((r) => `<tr><td>${esc(r.name)}</td><td class="num">${fmt.num(r.base)}</td>` +
    `<td class="num">${fmt.num(r.test)}</td><td class="num">${fmt.num(r.delta)}</td>` +
    `<td class="num">${fmt.pct(r.responsibility_pct)}</td><td class="num">${fmt.pct(r.overweight_pct)}</td>` +
    `<td class="num">${r.interest}</td></tr>`);
  el.innerHTML = `<h3>Overweight: ${esc(testName)} (test) against ${esc(baseName)} (base)</h3>` +
    kv(doc, { base_total: 'Base (old) total', test_total: 'Test (new) total', delta: 'Delta',
      delta_pct: 'Delta %' }) +
    '<p>Names that grew more than their share of the total growth; rows under 2% ' +
    'responsibility are left out.</p>' +
    table([{ title: 'Name' }, { title: 'Base', num: 1 }, { title: 'Test', num: 1 },
      { title: 'Delta', num: 1 }, { title: 'Responsibility %', num: 1 },
      { title: 'Overweight %', num: 1 }, { title: 'Interest', num: 1 }], rows);
}

// Goto Source: a function's cost per line (/api/source), beside the file's
// text when the server could read it. @doc null: nothing asked yet; a
// string: why there are no lines (the server's message).
export function renderSource(el, doc) {
  if (!doc || typeof doc === 'string') {
    el.innerHTML = doc ? `<p class="source-none">${esc(doc)}</p>` :
      '<p>Select a function and use <em>Goto Source</em> (Alt-D).</p>';
    return;
  }
  const top = Math.max(...doc.files.flatMap((f) => f.lines.map((l) => Math.abs(l.inc))), 0) || 1;
  const cells = (l) => l ? `<td class="num">${fmt.num(l.exc)}</td><td class="num">${fmt.pct(l.exc_pct)}</td>` +
    `<td class="num">${fmt.num(l.inc)}</td><td class="num">${fmt.pct(l.inc_pct)}</td>` +
    `<td><span class="bar" style="width:${(100 * Math.abs(l.inc) / top).toFixed(1)}%"></span></td>` :
    '<td></td><td></td><td></td><td></td><td></td>';
  const head = [{ title: 'Line', num: 1 }, { title: 'Exc', num: 1 }, { title: 'Exc %', num: 1 },
    { title: 'Inc', num: 1 }, { title: 'Inc %', num: 1 }, { title: '' }, { title: 'Source' }];
  const files = doc.files.map((f) => {
    const byLine = new Map(f.lines.map((l) => [l.line, l]));
    let rows;
    if (f.text) {
      // the whole file, each line with its cost if it has one
      rows = f.text.map((t, i) => `<tr class="${byLine.has(i + 1) ? 'costed' : ''}">` +
        `<td class="num">${i + 1}</td>${cells(byLine.get(i + 1))}<td class="src">${esc(t)}</td></tr>`);
      for (const l of f.lines.filter((x) => x.line < 1 || x.line > f.text.length))
        rows.push(`<tr class="costed"><td class="num">${l.line}</td>${cells(l)}<td></td></tr>`);
    } else {
      rows = f.lines.map((l) => `<tr class="costed"><td class="num">${f.path ? l.line : ''}</td>` +
        `${cells(l)}<td class="src">${esc(l.text ?? '')}</td></tr>`);
    }
    const title = f.path === null ? '(frames without line information)' :
      esc(f.path) + (f.found ? (f.read_from && f.read_from !== f.path ? ` (read from ${esc(f.read_from)})` : '') :
        ' <span class="note">(not read: only its lines with a cost)</span>');
    return `<h4>${title}</h4>` + table(head, rows);
  });
  el.innerHTML = `<h3>${esc(doc.name)}: ${fmt.num(doc.inc)} inclusive, ${fmt.num(doc.exc)} ` +
    'exclusive, by source line</h3>' +
    '<p>Inclusive cost counts each sample once per line it runs; exclusive cost is what ' +
    'the function itself costs after the filter (with what FoldPats folded into it), on ' +
    'the line of its innermost frame.</p>' + files.join('');
  el.querySelector('tr.costed')?.scrollIntoView({ block: 'center' });
}
