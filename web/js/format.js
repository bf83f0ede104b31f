// format.js - numbers and times as the viewer shows them.

const nf0 = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const nf1 = new Intl.NumberFormat('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 });
const nf3 = new Intl.NumberFormat('en-US', { maximumFractionDigits: 3 });

const nf6 = new Intl.NumberFormat('en-US', { maximumFractionDigits: 6 });

// A metric or count: thousands separated, one decimal unless whole
// ("1,234.5", "1,234").
export function num(v) {
  if (v === null || v === undefined) return '';
  if (Math.abs(v) >= 1e15) return v.toExponential(3);
  return Number.isInteger(v) ? nf0.format(v) : nf1.format(v);
}

// A metric as the tables show it: bytes in binary units ("525.0 MiB", as
// Stats shows them), other units as plain numbers.
export function metric(v, unit) {
  if (v === null || v === undefined) return '';
  return unit === 'bytes' ? bytes(v) : num(v);
}

// The exact value, for a tooltip ("550,550,000 bytes").
export function exact(v, unit) {
  if (v === null || v === undefined) return '';
  return nf6.format(v) + (unit ? ` ${unit}` : '');
}

// A count that is usually whole.
export function count(v) {
  if (v === null || v === undefined) return '';
  return Number.isInteger(v) ? nf0.format(v) : nf1.format(v);
}

// A percentage with one decimal.
export function pct(v) {
  if (v === null || v === undefined) return '';
  return nf1.format(v);
}

const nfc = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });

// A short number for an axis ("2.2M").
export function compact(v) {
  return nfc.format(v);
}

// A time in ms with up to three decimals ("" for none).
export function ms(v) {
  if (v === null || v === undefined) return '';
  return nf3.format(v);
}

// A time for a text box: plain digits, no separators, at most 6 decimals.
export function msBox(v) {
  return String(Math.round(v * 1e6) / 1e6);
}

// Bytes in binary units, one decimal above 1 KiB ("4.0 KiB", "512 B").
export function bytes(v) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i ? v.toFixed(1) : num(v)} ${units[i]}`;
}

// The ticks of a bytes axis from @min to @max: multiples of a power of
// two, about @most of them on each side of zero, so that they read "8.0
// MiB" and "16.0 MiB" (decimal steps would read "9.5 MiB" and "19.1 MiB").
export function bytesTicks(min, max, most = 2) {
  const span = Math.max(Math.abs(min), Math.abs(max));
  if (!(span > 0)) return [0];
  const step = 2 ** Math.max(0, Math.ceil(Math.log2(span / most)));
  const out = [];
  for (let v = Math.ceil(min / step) * step; v <= max; v += step) out.push(v);
  return out;
}

export function escapeHtml(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;',
    '"': '&quot;', "'": '&#39;' })[c]);
}
