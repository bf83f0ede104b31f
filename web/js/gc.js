// gc.js - the GC tab: PerfView's GCStats of a .NET trace (GET /api/gc,
// docs/json-api.md; the numbers are `heapscope gcstats`'s, docs/dotnet.md).
// A chart puts each GC on the trace's timeline: its pause as a bar (height
// in ms) and the heap's peak and after sizes as lines (MB); then the
// summary, the rollup by generation and the GC events by time. Owns
// nothing outside the element it renders into.
import * as fmt from './format.js';

const esc = fmt.escapeHtml;

// isNetTrace(trace): whether a trace of /api/info is a .NET trace.
export function isNetTrace(t) {
  return !!t && (t.format === 'nettrace' || t.format === 'nettrace-zip');
}

// fetchGc(id) -> the GCStats document of trace id.
export async function fetchGc(id) {
  const r = await fetch(`/api/gc?trace=${encodeURIComponent(id)}`, { credentials: 'same-origin' });
  let body;
  try {
    body = await r.json();
  } catch {
    throw new Error(`gc: the server sent no JSON (HTTP ${r.status})`);
  }
  if (!r.ok) throw new Error(body.error || `HTTP ${r.status}`);
  return body;
}

function n(v, digits = 3) {
  return v === null || v === undefined ? '' : Number(v).toFixed(digits);
}

function table(head, rows) {
  return '<table><thead><tr>' + head.map(([t, num]) =>
    `<th${num ? ' class="num"' : ''}>${esc(t)}</th>`).join('') +
    '</tr></thead><tbody>' + rows.join('') + '</tbody></table>';
}

function cells(values) {
  return values.map(([v, num]) => `<td${num ? ' class="num"' : ''}>${esc(String(v))}</td>`).join('');
}

const W = 900, H = 220, PAD_L = 48, PAD_R = 48, PAD_T = 10, PAD_B = 24;

// The chart: pauses as bars on the left axis (ms), heap sizes as lines on the right (MB).
function chart(doc) {
  const gcs = doc.gcs;
  if (!gcs.length) return '<p>No GC in this trace.</p>';
  const t0 = 0;
  const t1 = Math.max(doc.summary.last_ms || 0,
    ...gcs.map((g) => g.pause_start_ms + (g.pause_ms || 0))) || 1;
  const maxPause = Math.max(...gcs.map((g) => g.pause_ms || 0)) || 1;
  const maxMb = Math.max(...gcs.map((g) => Math.max(g.peak_mb || 0, g.after_mb || 0))) || 1;
  const x = (ms) => PAD_L + (ms - t0) / (t1 - t0) * (W - PAD_L - PAD_R);
  const yP = (ms) => H - PAD_B - ms / maxPause * (H - PAD_T - PAD_B);
  const yM = (mb) => H - PAD_B - mb / maxMb * (H - PAD_T - PAD_B);
  const bars = gcs.filter((g) => g.pause_ms !== null).map((g) => {
    const bx = x(g.pause_start_ms), bw = Math.max(2, x(g.pause_start_ms + g.pause_ms) - bx);
    return `<rect class="gc-pause" x="${bx.toFixed(1)}" y="${yP(g.pause_ms).toFixed(1)}" ` +
      `width="${bw.toFixed(1)}" height="${(H - PAD_B - yP(g.pause_ms)).toFixed(1)}" fill="#f97316">` +
      `<title>GC ${g.index} (${esc(g.generation + g.kind[0])}, ${esc(g.reason)}): pause ` +
      `${n(g.pause_ms)} ms at ${n(g.pause_start_ms)} ms</title></rect>`;
  }).join('');
  const line = (key, color, cls) => {
    const pts = gcs.filter((g) => g[key] !== null)
      .map((g) => `${x(g.start_ms).toFixed(1)},${yM(g[key]).toFixed(1)}`);
    return pts.length ? `<polyline class="${cls}" fill="none" stroke="${color}" stroke-width="1.5" ` +
      `points="${pts.join(' ')}"/>` + gcs.filter((g) => g[key] !== null).map((g) =>
      `<circle cx="${x(g.start_ms).toFixed(1)}" cy="${yM(g[key]).toFixed(1)}" r="2.5" fill="${color}">` +
      `<title>GC ${g.index}: ${key === 'peak_mb' ? 'peak' : 'after'} ${n(g[key])} MB</title></circle>`)
      .join('') : '';
  };
  const axis = `<line x1="${PAD_L}" y1="${H - PAD_B}" x2="${W - PAD_R}" y2="${H - PAD_B}" stroke="#888"/>` +
    `<text x="${PAD_L}" y="${H - 6}" font-size="11">0 ms</text>` +
    `<text x="${W - PAD_R}" y="${H - 6}" font-size="11" text-anchor="end">${n(t1, 1)} ms</text>` +
    `<text x="4" y="${PAD_T + 10}" font-size="11" fill="#c2410c">${n(maxPause)} ms</text>` +
    `<text x="${W - 4}" y="${PAD_T + 10}" font-size="11" text-anchor="end" fill="#2563eb">` +
    `${n(maxMb)} MB</text>`;
  return `<svg class="gc-chart" viewBox="0 0 ${W} ${H}" width="100%" style="max-width:${W}px" ` +
    `role="img" aria-label="GC pauses and heap sizes over time">${axis}${bars}` +
    `${line('peak_mb', '#2563eb', 'gc-peak')}${line('after_mb', '#16a34a', 'gc-after')}</svg>` +
    '<p><span style="color:#f97316">\u25a0</span> pause (ms, left) ' +
    '<span style="color:#2563eb">\u25cf</span> peak MB ' +
    '<span style="color:#16a34a">\u25cf</span> after MB (right), at each GC\u2019s time</p>';
}

// renderGc(el, doc): the tab; doc null with @why: why there is nothing.
export function renderGc(el, doc, why) {
  if (!doc) {
    el.innerHTML = `<p>${esc(why || 'GC statistics come from .NET traces (.nettrace).')}</p>`;
    return;
  }
  const s = doc.summary;
  const summary = table([['', 0], ['', 1]], [
    ['Total allocated', s.total_allocated_mb === null ? 'unknown (no AllocationTick events)' :
      `${n(s.total_allocated_mb)} MB`],
    ['GCs', `${s.gc_count} (${s.induced} induced${s.incomplete ? `, ${s.incomplete} incomplete` : ''})`],
    ['Total pause', `${n(s.total_pause_ms)} ms`],
    ['Longest pause', `${n(s.max_pause_ms)} ms`],
    ['Time paused', `${n(s.pause_percent, 2)} %`],
    ['Largest heap', `${n(s.max_heap_mb)} MB`],
  ].map(([k, v]) => `<tr>${cells([[k, 0], [v, 1]])}</tr>`));
  const rollup = table([['Gen', 0], ['Count', 1], ['Max Pause ms', 1], ['Mean Pause ms', 1],
    ['Total Pause ms', 1], ['Max Peak MB', 1], ['Mean Peak MB', 1], ['Mean After MB', 1],
    ['Total Alloc MB', 1], ['Total Promoted MB', 1], ['Induced', 1]],
  doc.rollup.map((u) => `<tr>${cells([[u.gen, 0], [u.count, 1], [n(u.max_pause_ms), 1],
    [n(u.mean_pause_ms), 1], [n(u.total_pause_ms), 1], [n(u.max_peak_mb), 1],
    [n(u.mean_peak_mb), 1], [n(u.mean_after_mb), 1], [n(u.total_alloc_mb), 1],
    [n(u.total_promoted_mb), 1], [u.induced, 1]])}</tr>`));
  const gens = ['gen0', 'gen1', 'gen2', 'loh'];
  const genTitle = { gen0: 'Gen0', gen1: 'Gen1', gen2: 'Gen2', loh: 'LOH' };
  const events = table([['Index', 1], ['Pause Start ms', 1], ['Reason', 0], ['Gen', 0], ['Kind', 0],
    ['Suspend ms', 1], ['Pause ms', 1], ['Gen0 Alloc MB', 1], ['Peak MB', 1], ['After MB', 1],
    ['Promoted MB', 1], ...gens.flatMap((g) => [[`${genTitle[g]} MB`, 1], [`${genTitle[g]} Surv %`, 1]]),
    ['POH MB', 1], ['Pinned Obj', 1]],
  doc.gcs.map((g) => `<tr${g.complete ? '' : ' class="gc-incomplete" title="incomplete"'}>` + cells([
    [g.index, 1], [n(g.pause_start_ms), 1], [g.reason, 0], [g.generation + g.kind[0], 0], [g.kind, 0],
    [n(g.suspend_ms), 1], [n(g.pause_ms), 1], [n(g.gen0_alloc_mb), 1], [n(g.peak_mb), 1],
    [n(g.after_mb), 1], [n(g.promoted_mb), 1],
    ...gens.flatMap((k) => [[n(g.generations[k].size_mb), 1], [n(g.generations[k].survival_percent, 1), 1]]),
    [n(g.generations.poh.size_mb), 1], [g.pinned_objects ?? '', 1]]) + '</tr>'));
  el.innerHTML = `<h3>GCStats: ${esc(s.trace)} (pid ${s.pid})${doc.cut_off ? ' \u2014 cut off' : ''}</h3>` +
    chart(doc) + summary + '<h3>GC Rollup By Generation</h3>' + rollup +
    '<h3>GC Events by Time</h3>' + events;
}
