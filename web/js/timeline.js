// timeline.js - the source's metric over time (uPlot), above the views:
// all samples and those the filter keeps, and for heap traces the heap in
// use and the RSS (bytes, right axis). Dragging across it sets Start and
// End; the current range is shown as the selection. The legend under it
// names each series and, while the mouse is over the plot, its value there.

import uPlot from '/vendor/uPlot.esm.js';
import * as fmt from './format.js';

export class Timeline {
  // opts: { onRange(startMs, endMs) }
  constructor(el, opts) {
    this.el = el;
    this.opts = opts;
    this.plot = null;
    this.range = null;
    this.quiet = false;
    new ResizeObserver(() => {
      if (this.plot) {
        this.plot.setSize(this.size());
        this.showRange();
      }
    }).observe(el);
  }

  size() {
    const legend = this.el.querySelector('.u-legend');
    const lh = legend ? legend.offsetHeight : 18;
    return { width: Math.max(200, this.el.clientWidth),
      height: Math.max(50, this.el.clientHeight - lh) };
  }

  // @t: the /api/timeline answer; @range: {start, end} in ms (null = all).
  // The same answer and range as drawn (an Update that kept the filter:
  // Fold%, FoldPats, a sort) leave the plot as it is.
  set(t, range) {
    if (this.plot && sameJson(this.shown, { t, range })) return;
    this.shown = { t, range };
    this.untimed(t.timed === false);
    if (t.timed === false) return;
    const heap = !!(t.heap && t.heap.length);
    // a metric in bytes gets binary ticks: the axes are made with the plot
    const bytesMetric = !t.time_metric && t.unit === 'bytes';
    if (this.plot && (this.heap !== heap || this.bytesMetric !== bytesMetric)) {
      this.plot.destroy();
      this.plot = null;
    }
    this.heap = heap;
    this.bytesMetric = bytesMetric;
    const n = t.all.length;
    const xs = new Float64Array(n + 1);
    const all = new Array(n + 1), kept = new Array(n + 1);
    // CPU time is shown as busy CPUs (ms of CPU per ms), other metrics per bucket
    const scale = t.time_metric && t.bucket_ms > 0 ? 1 / t.bucket_ms : 1;
    for (let i = 0; i <= n; i++) {
      xs[i] = t.start_ms + i * t.bucket_ms;
      all[i] = t.all[Math.min(i, n - 1)] * scale;
      kept[i] = t.filtered[Math.min(i, n - 1)] * scale;
    }
    const unit = t.unit ? ` ${t.unit}` : '';
    const label = (t.time_metric ? 'busy CPUs (all samples in grey, the filtered ones in blue)'
      : `metric${unit} per ${fmt.ms(t.bucket_ms)} ms (all in grey, filtered in blue)`) +
      (heap ? '; heap in use (orange) and RSS (green, dashed) in bytes on the right' : '');
    this.el.title = `${label}; drag to set Start and End`;
    const data = [xs, all, kept];
    if (heap) data.push(resample(t.heap, xs), resample(t.rss || [], xs));
    this.span = [t.start_ms, xs[n]];
    // the metric's values: busy CPUs, bytes in binary units, else numbers
    const metricValue = t.time_metric ? (v) => fmt.num(Math.round(v * 100) / 100)
      : t.unit === 'bytes' ? fmt.bytes : fmt.compact;
    this.metricValue = metricValue;
    // the legend names the unit the axis leaves out: "2.5 CPUs"
    this.legendValue = !t.time_metric ? metricValue : (v) => {
      const n = metricValue(v);
      return `${n} ${n === '1' ? 'CPU' : 'CPUs'}`;
    };
    if (!this.plot) {
      const stepped = uPlot.paths.stepped({ align: 1 });
      const font = '11px system-ui';
      const show = (f) => (u, v) => (v === null || v === undefined ? '\u2013' : f(v));
      this.plot = new uPlot({
        ...this.size(),
        legend: { show: true, live: true },
        // the x axis spans the trace's buckets exactly, never rounded past them
        scales: { x: { time: false, range: () => this.span } },
        axes: [
          { size: 22, values: (u, ticks) => ticks.map((v) => fmt.ms(v)), font },
          { size: fitLabels, values: (u, ticks) => ticks.map((v) => this.metricValue(v)), font,
            ...(bytesMetric ? { splits: binarySplits } : {}) },
          ...(heap ? [{ scale: 'bytes', side: 1, size: fitLabels, grid: { show: false },
            values: (u, ticks) => ticks.map((v) => fmt.bytes(v)), font, splits: binarySplits }] : []),
        ],
        cursor: { drag: { x: true, y: false, setScale: false }, points: { show: false } },
        series: [
          { label: 'ms', value: show((v) => `${fmt.ms(v)} ms`) },
          { label: 'all', stroke: '#9ca3af',
            fill: 'rgba(156,163,175,0.25)', paths: stepped, width: 1,
            value: show((v) => this.legendValue(v)) },
          { label: 'filtered', stroke: '#2563eb', fill: 'rgba(37,99,235,0.25)', paths: stepped,
            width: 1, value: show((v) => this.legendValue(v)) },
          ...(heap ? [
            { label: 'heap in use', scale: 'bytes', stroke: '#ea580c', width: 2, paths: stepped,
              value: show(fmt.bytes) },
            { label: 'RSS', scale: 'bytes', stroke: '#16a34a', width: 1, dash: [4, 3], paths: stepped,
              value: show(fmt.bytes) },
          ] : []),
        ],
        hooks: {
          setSelect: [(u) => {
            if (this.quiet || u.select.width < 3) return;
            const a = u.posToVal(u.select.left, 'x');
            const b = u.posToVal(u.select.left + u.select.width, 'x');
            this.opts.onRange(Math.max(a, t.start_ms), b);
          }],
        },
      }, data, this.el);
      this.plot.setSize(this.size());
    } else {
      this.plot.setData(data);
    }
    this.range = range;
    this.showRange();
  }

  // A source without times (@on) has no timeline: a note takes its place
  // (and little room), since its buckets would all fall at one instant.
  untimed(on) {
    this.el.classList.toggle('untimed', on);
    let note = this.el.querySelector('.notimes');
    if (!on) {
      note?.remove();
      return;
    }
    if (this.plot) {
      this.plot.destroy();
      this.plot = null;
    }
    if (!note) {
      note = document.createElement('div');
      note.className = 'notimes';
      note.textContent = 'No timeline: this profile has no times (all its samples have one ' +
        'time), so Start, End and Set Time Range do not apply.';
      this.el.append(note);
    }
    this.el.title = '';
  }

  // Draw the current Start-End as the plot's selection box.
  showRange() {
    const u = this.plot;
    if (!u) return;
    this.quiet = true;
    if (this.range && (this.range.start !== null || this.range.end !== null)) {
      const lo = u.scales.x.min, hi = u.scales.x.max;
      const a = u.valToPos(this.range.start ?? lo, 'x');
      const b = u.valToPos(this.range.end ?? hi, 'x');
      u.setSelect({ left: a, width: Math.max(1, b - a), top: 0, height: u.bbox.height / devicePixelRatio }, false);
    } else {
      u.setSelect({ left: 0, width: 0, top: 0, height: 0 }, false);
    }
    this.quiet = false;
  }
}

// Whether JSON values @a and @b are equal (the timeline's answers: a few
// arrays of 600 numbers, compared faster than drawn).
export function sameJson(a, b) {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null ||
    Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length &&
    ka.every((k) => Object.hasOwn(b, k) && sameJson(a[k], b[k]));
}

// uPlot's splits of a bytes axis: two binary steps up from zero (the
// timeline is short; uPlot's decimal steps left the heap axis a lone "0 B").
const binarySplits = (u, i, min, max) => fmt.bytesTicks(min, max, 2);

// An axis's width: its widest label, the tick and the gap (uPlot's
// size hook; @values null before the first layout).
const measure = document.createElement('canvas').getContext('2d');
function fitLabels(u, values, i) {
  if (!values) return 40;
  const axis = u.axes[i];
  measure.font = axis.font?.[0] ?? '11px system-ui';
  const widest = Math.max(0, ...values.map((v) => measure.measureText(String(v)).width));
  return Math.ceil(widest + (axis.ticks?.size ?? 10) + (axis.gap ?? 5) + 6);
}

// [[ms, bytes], ...] (each point the highest value from its time on) onto
// the times @xs: each x gets the highest point in [x, next x), else the
// value before it.
export function resample(points, xs) {
  const out = new Array(xs.length).fill(null);
  let k = 0, last = null;
  for (let i = 0; i < xs.length; i++) {
    const end = i + 1 < xs.length ? xs[i + 1] : Infinity;
    let best = null;
    while (k < points.length && points[k][0] < end) {
      if (points[k][0] >= xs[i] || i === 0) best = best === null ? points[k][1] : Math.max(best, points[k][1]);
      last = points[k][1];
      k++;
    }
    out[i] = best ?? last;
  }
  return out;
}
