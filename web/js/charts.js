// charts.js - heaptrack_gui's pages for a heap trace, in the Charts tab:
// a summary in human units, the memory in use over time of the top call
// sites (stacked, with a legend), allocations and temporary allocations
// over time, and the allocation sizes as a histogram. Everything comes
// from the JSON API (/api/stats, /api/rows, /api/timeline, /api/counts) of the whole
// trace, with each memory view's own saved boxes: the charts describe the
// trace, the stack viewer's filter does not change them.
//
// The memory of a call site over time is the running sum of the `net`
// view (+bytes at each allocation, -bytes at its free) of the samples
// IncPats keeps for it; each site excludes the sites above it, so that
// the stacked areas never count a block twice, and "other" is the rest
// of the heap in use.

import uPlot from '/vendor/uPlot.esm.js';
import * as fmt from './format.js';
import { literalPattern, appendPat } from './menu.js';
import { resample } from './timeline.js';

export const TOP_SITES = 6;		// call sites drawn apiece in the memory chart
const BUCKETS = 300;
const COLORS = ['#2563eb', '#ea580c', '#16a34a', '#9333ea', '#dc2626', '#0891b2', '#ca8a04',
  '#db2777'];
const OTHER = '#9ca3af';

// isHeapTrace(trace): whether a trace of /api/info is one heapscope heap
// trace: it has the memory views, and is not "all N files" (--merge, an
// exec chain), which has no heap of its own for /api/stats to give.
export function isHeapTrace(t) {
  const names = (t?.sources || []).map((s) => s.name);
  return t?.format !== 'merged' && names.includes('net') && names.includes('alloc');
}

const esc = fmt.escapeHtml;

// The source's saved boxes (its stats also tell whether it is a heap trace).
async function sourceStats(call, trace, source) {
  return call('stats', { trace, source });
}

function paramsOf(stats) {
  const p = { start: '', end: '', group: '', fold: '', fold_pct: '', inc: '', exc: '' };
  for (const [k, v] of Object.entries(stats?.source?.defaults || {}))
    if (k in p && v !== null && v !== undefined) p[k] = String(v);
  return p;
}

// A pattern matching a frame whose short name is @name, and no other
// (patterns see full names: "/usr/lib/libc.so.6!malloc" for "libc.so.6!malloc").
export function exactPattern(name) {
  const lit = literalPattern(name);
  const re = lit.startsWith('@') ? lit.slice(1) : name.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&').replace(/\s/g, '\\s');
  return `@(^|/)${re}$`;
}

// The running sum of @perBucket (a timeline's per-bucket metric).
function running(perBucket) {
  const out = new Array(perBucket.length);
  let s = 0;
  for (let i = 0; i < perBucket.length; i++) {
    s += perBucket[i];
    out[i] = Math.max(0, s);
  }
  return out;
}

// Everything the page shows, from the server: { heap, sites: [{name,
// series}], other, total, xs, bucket_ms, alloc, temp (bytes per bucket),
// allocCount, tempCount (allocations per bucket) }.
export async function fetchCharts(call, trace) {
  const net = await sourceStats(call, trace, 'net');
  const heap = net.heap;
  if (!heap) throw new Error('the Charts need a heapscope heap trace');
  const netParams = paramsOf(net);
  const [peak, alloc, temp] = await Promise.all([
    sourceStats(call, trace, 'peak'), sourceStats(call, trace, 'alloc'),
    sourceStats(call, trace, 'temporary')]);
  // the top call sites: ByName of the blocks live at the peak
  const top = await call('rows', { trace, source: 'peak', params: paramsOf(peak), view: 'byname',
    offset: 0, count: TOP_SITES });
  const names = top.rows.filter((r) => r.exc > 0).map((r) => r.key);
  const timeline = (source, params) => call('timeline', { trace, source, params, buckets: BUCKETS });
  // the requests go out together (a server with several threads answers them at once)
  const pats = names.map(exactPattern);
  const [total, ...perSite] = await Promise.all([timeline('net', netParams),
    ...names.map((name, k) => timeline('net', { ...netParams, inc: appendPat(netParams.inc, pats[k]),
      exc: [netParams.exc, ...pats.slice(0, k)].filter((x) => x).join(';') }))]);
  const sites = names.map((name, k) => ({ name, series: running(perSite[k].filtered) }));
  const xs = total.all.map((_, i) => total.start_ms + i * total.bucket_ms);
  // the top line: the heap in use, its highest value in each bucket (a
  // block allocated and freed within the trace's clock tick is only there)
  const heapLine = total.heap?.length ? resample(total.heap, xs) : running(total.all);
  const all = heapLine.map((v, i) => Math.max(v ?? 0, sites.reduce((s, x) => s + x.series[i], 0)));
  const other = all.map((v, i) => v - sites.reduce((s, x) => s + x.series[i], 0));
  // how many allocations (the views count one each) on the same buckets
  const counts = (source, params) => call('counts', { trace, source, params, buckets: xs.length,
    start_ms: total.start_ms, bucket_ms: total.bucket_ms });
  const [a, t, na, nt] = await Promise.all([timeline('alloc', paramsOf(alloc)),
    timeline('temporary', paramsOf(temp)), counts('alloc', paramsOf(alloc)),
    counts('temporary', paramsOf(temp))]);
  return { heap, sites, other, total: all, xs, bucket_ms: total.bucket_ms,
    alloc: a.all, temp: t.all, allocCount: na.all, tempCount: nt.all };
}

// ---- rendering ----

function card(label, value, title = '') {
  return `<div class="card" title="${esc(title)}"><div class="card-v">${esc(value)}</div>` +
    `<div class="card-l">${esc(label)}</div></div>`;
}

// heaptrack's summary page: the numbers a reader wants first, in human units.
function summaryHtml(h) {
  const s = (h.duration_ms || 0) / 1000;
  const rate = (n) => (s > 0 ? `${fmt.compact(n / s)}/s` : '\u2013');
  const pct = (a, b) => (b > 0 ? `${fmt.pct((100 * a) / b)}%` : '\u2013');
  const b = (v, name) => card(name, fmt.bytes(v ?? 0), fmt.exact(v ?? 0, 'bytes'));
  return '<div class="cards">' +
    card('run time', s >= 1 ? `${fmt.num(Math.round(s * 10) / 10)} s` : `${fmt.ms(h.duration_ms)} ms`,
      fmt.exact(h.duration_ms, 'ms')) +
    card('allocations', fmt.count(h.total_allocations), `${rate(h.total_allocations)} on average`) +
    card('allocations per second', rate(h.total_allocations)) +
    card('temporary allocations', `${fmt.count(h.temporary_allocations)} (${pct(
      h.temporary_allocations, h.total_allocations)})`, 'freed before any other allocation was made') +
    b(h.bytes_allocated, 'bytes allocated in all') +
    b(h.peak_heap_bytes, `peak heap in use (at ${fmt.ms(h.peak_heap_ms)} ms)`) +
    b(h.peak_rss_bytes, 'peak RSS') +
    b(h.leaked_bytes, `leaked (${fmt.count(h.leaked_blocks)} blocks)`) +
    '</div>';
}

// A chart box with its title; returns the element the plot goes into.
function chartBox(el, id, title, note) {
  const box = document.createElement('section');
  box.className = 'chart';
  box.id = id;
  box.innerHTML = `<h3>${esc(title)}</h3>` + (note ? `<p class="note">${esc(note)}</p>` : '');
  const plot = document.createElement('div');
  plot.className = 'plot';
  box.append(plot);
  el.append(box);
  return plot;
}

function width(el) {
  return Math.max(300, el.clientWidth || el.parentElement.clientWidth || 800);
}

const AXIS_FONT = '11px system-ui';
const msAxis = { size: 22, font: AXIS_FONT, values: (u, ticks) => ticks.map((v) => fmt.ms(v)) };
const show = (f) => (u, v) => (v === null || v === undefined ? '\u2013' : f(v));

// The memory in use of the top call sites, stacked (each area drawn from
// the running sum of those below it), "other" on top.
function memoryChart(el, c) {
  const plot = chartBox(el, 'chart-memory', `Memory in use over time: the top ${c.sites.length} ` +
    'call sites (at the peak), stacked', 'each site\u2019s live blocks (by allocation stack) ' +
    'at the end of each time bucket; the top is the heap in use, its highest value in the ' +
    'bucket, and "other" the rest of it');
  const layers = [...c.sites.map((s, k) => ({ name: s.name, v: s.series, color: COLORS[k % COLORS.length] })),
    { name: 'other', v: c.other, color: OTHER }];
  // uPlot draws in series order: the highest stack first, each lower one over it
  const stacked = [];
  let acc = new Array(c.xs.length).fill(0);
  for (const l of layers) {
    acc = acc.map((a, i) => a + l.v[i]);
    stacked.push(acc);
  }
  const order = layers.map((_, k) => k).reverse();
  const series = [{ label: 'ms', value: show((v) => `${fmt.ms(v)} ms`) }, ...order.map((k) => ({
    label: layers[k].name, stroke: layers[k].color, fill: layers[k].color + 'cc', width: 1,
    paths: uPlot.paths.stepped({ align: 1 }),
    value: (u, v, si, di) => (di === null || di === undefined ? '\u2013' : fmt.bytes(layers[k].v[di])),
  }))];
  const u = new uPlot({
    width: width(plot), height: 240, legend: { show: true, live: true },
    // a stack starts at zero: a scale from its lowest value cut off the bottom layers
    scales: { x: { time: false }, y: { range: (uu, lo, hi) => [0, hi > 0 ? hi * 1.05 : 1] } },
    axes: [msAxis, { size: 70, font: AXIS_FONT, values: (uu, t) => t.map((v) => fmt.bytes(v)),
      splits: (uu, i, lo, hi) => fmt.bytesTicks(lo, hi, 4) }],
    cursor: { points: { show: false } },
    series,
  }, [c.xs, ...order.map((k) => stacked[k])], plot);
  plot.dataset.sites = JSON.stringify(c.sites.map((s) => s.name));
  return u;
}

// Allocations and temporary allocations per time bucket (their bytes in
// the legend).
function allocChart(el, c) {
  const plot = chartBox(el, 'chart-alloc', 'Allocations and temporary allocations over time',
    `allocations per ${fmt.ms(c.bucket_ms)} ms bucket (the legend adds their bytes)`);
  const bars = uPlot.paths.stepped({ align: 1 });
  const both = (bytes) => (u, v, si, di) => (di === null || di === undefined ? '\u2013'
    : `${fmt.count(v)} (${fmt.bytes(bytes[di])})`);
  return new uPlot({
    width: width(plot), height: 200, legend: { show: true, live: true },
    scales: { x: { time: false } },
    axes: [msAxis, { size: 60, font: AXIS_FONT, values: (u, t) => t.map((v) => fmt.compact(v)) }],
    cursor: { points: { show: false } },
    series: [{ label: 'ms', value: show((v) => `${fmt.ms(v)} ms`) },
      { label: 'allocations', stroke: '#2563eb', fill: 'rgba(37,99,235,0.25)', paths: bars, width: 1,
        value: both(c.alloc) },
      { label: 'temporary', stroke: '#dc2626', fill: 'rgba(220,38,38,0.3)', paths: bars, width: 1,
        value: both(c.temp) }],
  }, [c.xs, c.allocCount, c.tempCount], plot);
}

// The allocation sizes of `heapscope stats`: blocks per size range.
function sizeChart(el, h) {
  const hist = h.size_histogram || [];
  const plot = chartBox(el, 'chart-sizes', 'Allocation sizes',
    'blocks allocated per size range, each labelled with its smallest size in bytes ' +
    '(hover for the range and the bytes)');
  const label = (b) => `${fmt.bytes(b.min)}\u2013${fmt.bytes(b.max)}`;
  // the axis: each range's lower end, short ("512", "1K", "64K", "1M")
  const short = (v) => (v >= 1 << 20 ? `${v / (1 << 20)}M` : v >= 1024 ? `${v / 1024}K` : String(v));
  const xs = hist.map((_, i) => i);
  return new uPlot({
    width: width(plot), height: 200, legend: { show: true, live: true },
    scales: { x: { time: false, range: () => [-0.5, Math.max(0.5, hist.length - 0.5)] } },
    axes: [{ size: 30, font: AXIS_FONT, space: 10, incrs: [1],
      values: (u, t) => t.map((v) => (Number.isInteger(v) && hist[v] ? short(hist[v].min) : '')) },
    { size: 60, font: AXIS_FONT, values: (u, t) => t.map((v) => fmt.compact(v)) }],
    cursor: { points: { show: false } },
    series: [{ label: 'size', value: (u, v) => (hist[v] ? label(hist[v]) : '\u2013') },
      { label: 'blocks', stroke: '#0891b2', fill: 'rgba(8,145,178,0.5)', width: 1,
        paths: uPlot.paths.bars({ size: [0.8, 60] }), points: { show: false },
        value: (u, v, si, di) => (hist[di] ? `${fmt.count(v)} (${fmt.bytes(hist[di].bytes)})` : '\u2013') }],
  }, [xs, hist.map((b) => b.count)], plot);
}

// Draw @c (fetchCharts) into @el; null: the trace has no memory views.
export function renderCharts(el, c, traceName) {
  for (const p of el.plots || []) p.destroy();
  el.plots = [];
  el.data = c;
  if (!c) {
    el.innerHTML = '<p>The Charts are for heapscope heap traces (<code>heapscope run</code>).</p>';
    return;
  }
  el.innerHTML = `<h3>Summary${traceName ? ': ' + esc(traceName) : ''}</h3>` + summaryHtml(c.heap);
  el.plots.push(memoryChart(el, c), allocChart(el, c), sizeChart(el, c.heap));
}

// Fit the plots to @el's width (the window was resized).
export function resizeCharts(el) {
  for (const p of el.plots || []) p.setSize({ width: width(p.root.parentElement), height: p.height });
}
