// flame.js - the Flame Graph on a canvas: ROOT at the bottom, callees
// above their callers, width proportional to |Inc|; or, as an icicle,
// ROOT on top and callees below. Click zooms into a node (click ROOT's
// bar to zoom out), hovering shows its numbers, Find highlights matching
// names and counts them. The keys zoom (+, -, 0) and pan (arrows) the
// picture without asking the server. In a diff, growth is red and
// shrinkage (negative Inc) blue.

import * as fmt from './format.js';
import { metricUnit } from './table.js';

const BAR = 18;

function hash(s) {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

export class Flame {
  // opts: { load(root, minWidth) -> {rows, root}, onContext(row, path, ev), tip, onZoom() }
  constructor(parent, opts) {
    this.opts = opts;
    this.bar = document.createElement('div');
    this.bar.className = 'flame-bar';
    this.crumbs = document.createElement('span');
    const reset = document.createElement('button');
    reset.type = 'button';
    reset.textContent = 'Reset zoom';
    reset.addEventListener('click', () => this.zoom(0));
    const check = (label, key, title) => {
      const l = document.createElement('label');
      const c = document.createElement('input');
      c.type = 'checkbox';
      c.id = `flame-${key}`;
      c.checked = localStorage.getItem(`heapscope-flame-${key}`) === '1';
      this[key] = c.checked;
      c.addEventListener('change', () => {
        this[key] = c.checked;
        localStorage.setItem(`heapscope-flame-${key}`, c.checked ? '1' : '0');
        this.draw();
        this.showRoot();
      });
      l.title = title;
      l.append(c, ` ${label}`);
      return l;
    };
    this.matchesEl = document.createElement('span');
    this.matchesEl.className = 'matches';
    const keys = document.createElement('span');
    keys.className = 'keys';
    keys.textContent = 'keys: + \u2212 zoom, \u2190 \u2192 pan, 0 resets';
    this.bar.append(reset, check('Icicle', 'icicle', 'ROOT on top, callees below (top-down)'),
      check('Hide modules', 'hideModules', 'show "malloc" for "libc.so.6!malloc" in the boxes'),
      this.matchesEl, this.crumbs, keys);
    this.box = document.createElement('div');
    this.box.className = 'flame';
    this.box.tabIndex = 0;
    this.box.addEventListener('keydown', (ev) => this.key(ev));
    // the part of the graph's width on screen: from v0 (a fraction), vs times enlarged
    this.v0 = 0;
    this.vs = 1;
    this.canvas = document.createElement('canvas');
    this.box.append(this.canvas);
    parent.append(this.bar, this.box);
    this.rows = [];
    this.byId = new Map();
    this.root = 0;
    this.rootPath = [];
    this.search = null;
    this.diff = false;
    this.canvas.addEventListener('mousemove', (ev) => this.hover(ev));
    this.canvas.addEventListener('mouseleave', () => this.opts.tip(null));
    this.canvas.addEventListener('click', (ev) => {
      this.box.focus({ preventScroll: true });
      const r = this.hit(ev);
      // the tooltip named the box clicked: it is stale once the graph changes
      this.opts.tip(null);
      if (r) this.zoom(r.id === this.root ? (r.parent ?? 0) : r.id);
    });
    this.canvas.addEventListener('contextmenu', (ev) => {
      const r = this.hit(ev);
      if (!r) return;
      ev.preventDefault();
      this.opts.onContext?.(r, this.path(r), ev);
    });
    new ResizeObserver(() => this.draw()).observe(this.box);
  }

  // Show the graph from ROOT again (after an update).
  async reset(diff) {
    this.diff = diff;
    this.root = 0;
    this.rootPath = [];
    await this.fetch();
  }

  async zoom(id) {
    this.root = id;
    try {
      await this.fetch();
    } finally {
      this.opts.onZoom?.();
    }
  }

  async fetch() {
    const width = Math.max(200, this.box.clientWidth);
    const r = await this.opts.load(this.root, 0.5 / width);
    this.rows = r.rows;
    this.rootPath = r.root_path || [];
    this.byId = new Map(this.rows.map((x) => [x.id, x]));
    this.crumbs.textContent = this.rootPath.length ? 'zoomed to ' + this.rootPath.join(' \u25B8 ') : '';
    this.opts.tip(null);
    this.v0 = 0;
    this.vs = 1;
    this.draw();
    this.showRoot();
  }

  // ROOT (or the zoomed node) is at the bottom (the top of an icicle):
  // show it, not the empty end.
  showRoot() {
    this.box.scrollTop = this.icicle ? 0 : this.box.scrollHeight;
  }

  // +/- zoom around the middle, arrows pan, 0 shows the whole width.
  key(ev) {
    const span = 1 / this.vs;
    let v0 = this.v0, vs = this.vs;
    if (ev.key === '+' || ev.key === '=') {
      vs = Math.min(this.vs * 2, 1 << 16);
      v0 += span / 2 - 1 / vs / 2;
    } else if (ev.key === '-' || ev.key === '_') {
      vs = Math.max(1, this.vs / 2);
      v0 += span / 2 - 1 / vs / 2;
    } else if (ev.key === 'ArrowLeft') {
      v0 -= span / 8;
    } else if (ev.key === 'ArrowRight') {
      v0 += span / 8;
    } else if (ev.key === '0') {
      v0 = 0;
      vs = 1;
    } else if (ev.key === 'ArrowUp' || ev.key === 'ArrowDown') {
      this.box.scrollTop += (ev.key === 'ArrowUp' ? -1 : 1) * BAR * 3;
    } else {
      return;
    }
    ev.preventDefault();
    this.vs = vs;
    this.v0 = Math.max(0, Math.min(1 - 1 / vs, v0));
    this.opts.tip(null);
    this.draw();
  }

  // The name a box shows: without its module when Hide modules is on.
  label(r) {
    if (!this.hideModules) return r.name;
    if (r.module && r.name.startsWith(r.module + '!')) return r.name.slice(r.module.length + 1);
    return r.name;
  }

  // Keys from below ROOT to @r (a path for Drill Into).
  path(r) {
    const keys = [];
    for (let x = r; x && x.id !== this.root; x = this.byId.get(x.parent)) keys.unshift(x.key);
    return [...this.rootPath, ...keys];
  }

  setSearch(re) {
    this.search = re;
    this.draw();
  }

  // How many boxes of the graph (as loaded) Find matches.
  countMatches() {
    if (!this.search) return 0;
    let n = 0;
    for (const r of this.rows) if (this.search.test(r.name)) n++;
    return n;
  }

  layout() {
    const top = this.rows[0];
    if (!top) return { rects: [], depth: 0 };
    const w = Math.max(200, this.box.clientWidth);
    const scale = top.width > 0 ? (w * this.vs) / top.width : 0;
    const off = this.v0 * w * this.vs;
    let depth = 0;
    const rects = [];
    for (const r of this.rows) {
      const d = r.depth - top.depth;
      depth = Math.max(depth, d);
      const x = (r.x - top.x) * scale - off, bw = r.width * scale;
      if (x + bw < 0 || x > w) continue;	// off screen sideways
      rects.push({ r, x, w: bw, d });
    }
    return { rects, depth, w };
  }

  color(r) {
    if (this.search && this.search.test(r.name)) return '#d946ef';
    if (this.diff) {
      const total = Math.abs(this.rows[0]?.inc || 1);
      const a = Math.min(1, 0.25 + (4 * Math.abs(r.inc)) / total);
      return r.inc < 0 ? `rgba(37, 99, 235, ${a})` : `rgba(220, 38, 38, ${a})`;
    }
    const h = hash(r.name);
    return `hsl(${10 + (h % 40)}, ${70 + ((h >> 8) % 25)}%, ${52 + ((h >> 16) % 14)}%)`;
  }

  draw() {
    const { rects, depth, w } = this.layout();
    const dpr = window.devicePixelRatio || 1;
    const h = Math.max(this.box.clientHeight - 4, (depth + 1) * BAR);
    this.canvas.width = Math.round((w || 1) * dpr);
    this.canvas.height = Math.round(h * dpr);
    this.canvas.style.width = `${w || 1}px`;
    this.canvas.style.height = `${h}px`;
    this.height = h;
    const g = this.canvas.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, h);
    g.font = '12px system-ui, sans-serif';
    g.textBaseline = 'middle';
    this.rects = rects;
    const n = this.countMatches();
    this.matchesEl.textContent = this.search ? `${n} match${n === 1 ? '' : 'es'}` : '';
    this.matchesEl.dataset.count = this.search ? String(n) : '';
    for (const q of rects) {
      const y = this.rowY(q.d);
      g.fillStyle = this.color(q.r);
      g.fillRect(q.x, y, Math.max(q.w - 0.5, 0.5), BAR - 1);
      if (q.w > 30) {
        g.save();
        g.beginPath();
        g.rect(q.x, y, q.w - 2, BAR);
        g.clip();
        g.fillStyle = '#111';
        g.fillText(this.label(q.r), Math.max(q.x, 0) + 3, y + BAR / 2);
        g.restore();
      }
    }
  }

  // The top of the bar of depth @d.
  rowY(d) {
    return this.icicle ? d * BAR : this.height - (d + 1) * BAR;
  }

  hit(ev) {
    if (!this.rects) return null;
    const b = this.canvas.getBoundingClientRect();
    const x = ev.clientX - b.left, y = ev.clientY - b.top;
    const d = this.icicle ? Math.floor(y / BAR) : Math.floor((this.height - y) / BAR);
    for (const q of this.rects) if (q.d === d && x >= q.x && x < q.x + q.w) return q.r;
    return null;
  }

  hover(ev) {
    const r = this.hit(ev);
    if (!r) return this.opts.tip(null);
    const u = metricUnit();
    this.opts.tip(`${r.name}\nInc ${fmt.metric(r.inc, u)} (${fmt.pct(r.inc_pct)}%)  Inc Ct ` +
      `${fmt.count(r.inc_count)}\nExc ${fmt.metric(r.exc, u)} (${fmt.pct(r.exc_pct)}%)  ` +
      `First ${fmt.ms(r.first_ms)}  Last ${fmt.ms(r.last_ms)}`, ev);
  }
}
