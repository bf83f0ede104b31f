// table.js - a table with virtual rows: only the rows on screen exist in
// the DOM, so 100k rows scroll as smoothly as 10. Rows are fetched on
// demand (get(i) may return null while a page is loading; onNeed(first,
// last) asks for them). Trees put a twisty and an indent in the Name column.
// As in PerfView, columns are sized by dragging a header's edge and hidden
// from a header's context menu (in every table), and a block of cells is
// selected by dragging or Shift-click (cellInfo() sums it, copyText()
// gives it as displayed, with a header line).

import * as fmt from './format.js';

// The unit of the metric shown ("bytes", "ms", "samples" or null): the
// same for every table, since every view shows one source.
let unit = null;

export function setMetricUnit(u) {
  unit = u || null;
}

export function metricUnit() {
  return unit;
}

const metricText = (v) => fmt.metric(v, unit);
const metricTitle = (v) => fmt.exact(v, unit);
const countTitle = (v) => fmt.exact(v);

// The stack viewer's columns, as PerfView shows them. @px: the starting
// width; a column grows to fit the widest text it shows (up to @max), and
// dragging its header's right edge sizes it by hand.
export const COLUMNS = [
  { key: 'name', title: 'Name', px: 208, max: 3000, sort: 'name' },
  { key: 'exc_pct', title: 'Exc %', px: 64, num: true, sort: 'exc',
    text: (r) => fmt.pct(r.exc_pct), tip: (r) => fmt.exact(r.exc_pct, '%') },
  { key: 'exc', title: 'Exc', px: 90, num: true, sort: 'exc', text: (r) => metricText(r.exc),
    tip: (r) => metricTitle(r.exc) },
  { key: 'exc_count', title: 'Exc Ct', px: 70, num: true, sort: 'exc_count',
    text: (r) => fmt.count(r.exc_count), tip: (r) => countTitle(r.exc_count) },
  { key: 'inc_pct', title: 'Inc %', px: 64, num: true, sort: 'inc',
    text: (r) => fmt.pct(r.inc_pct), tip: (r) => fmt.exact(r.inc_pct, '%') },
  { key: 'inc', title: 'Inc', px: 90, num: true, sort: 'inc', text: (r) => metricText(r.inc),
    tip: (r) => metricTitle(r.inc) },
  { key: 'inc_count', title: 'Inc Ct', px: 70, num: true, sort: 'inc_count',
    text: (r) => fmt.count(r.inc_count), tip: (r) => countTitle(r.inc_count) },
  { key: 'fold', title: 'Fold', px: 78, num: true, sort: 'fold', text: (r) => metricText(r.fold),
    tip: (r) => metricTitle(r.fold) },
  { key: 'when', title: 'When', px: 312, text: (r) => r.when },
  { key: 'first_ms', title: 'First', px: 84, num: true, sort: 'first',
    text: (r) => fmt.ms(r.first_ms), tip: (r) => fmt.exact(r.first_ms, 'ms') },
  { key: 'last_ms', title: 'Last', px: 84, num: true, sort: 'last',
    text: (r) => fmt.ms(r.last_ms), tip: (r) => fmt.exact(r.last_ms, 'ms') },
  // a heap snapshot's heap view, ByName and CallTree: what freeing the
  // name's objects, or the node's own objects, frees (shown by
  // showRetained(); the server has no sort for it)
  { key: 'retained', title: 'Retained', px: 90, num: true, optional: true,
    text: (r) => (r.retained == null ? '' : metricText(r.retained)),
    tip: (r) => (r.retained == null ? r.retainedNote ?? '' : metricTitle(r.retained)) },
];
const MAX_PX = 480;	// a number column grows to at most this
const tables = new Set();	// every VTable, for refitAll()

// Columns hidden by the user (their keys): the same in every table, kept
// in the browser. Name is never hidden.
const HIDDEN_KEY = 'heapscope-hidden-columns';
const hiddenCols = new Set((() => {
  try {
    return JSON.parse(localStorage.getItem(HIDDEN_KEY) || '[]');
  } catch {
    return [];
  }
})().filter((k) => k !== 'name'));

export function isColumnHidden(key) {
  return hiddenCols.has(key);
}

// Hide or show column @key in every table.
export function setColumnHidden(key, hide) {
  if (key === 'name') return;
  if (hide) hiddenCols.add(key);
  else hiddenCols.delete(key);
  localStorage.setItem(HIDDEN_KEY, JSON.stringify([...hiddenCols]));
  for (const t of tables) {
    t.applyWidths();
    t.render();
  }
}

// A source without times (folded stacks, pprof, a heap snapshot): When,
// First and Last say nothing, so every table leaves them out.
const TIME_COLS = new Set(['when', 'first_ms', 'last_ms']);
let untimed = false;

export function setUntimed(on) {
  if (untimed === !!on) return;
  untimed = !!on;
  for (const t of tables) {
    t.applyWidths();
    t.render();
  }
}

// Handlers every table shares (main.js sets them): onCells(info, table)
// when the selected cells change, onHeaderMenu(ev, columnKey).
export const tableHooks = {};

// The text of a cell as the table shows it.
export function cellText(col, r) {
  if (!r) return '';
  if (col.key === 'name') return r.name;
  return col.text(r);
}

// Row @r as one line of tab-separated cells, as the tables show it: the
// columns on screen (none the user hid, no time column for a source
// without times, Retained only for a row that has it). Ctrl-C on a
// selected row copies this.
export function rowText(r) {
  return COLUMNS.filter((c) => !hiddenCols.has(c.key) && !(untimed && TIME_COLS.has(c.key)) &&
    !(c.optional && !(c.key in r))).map((c) => cellText(c, r)).join('\t');
}

// Another source is shown: the columns that grew to fit the last one's
// text start again from their own widths (those sized by hand stay).
export function refitAll() {
  for (const t of tables) {
    COLUMNS.forEach((c, k) => {
      if (!t.sized.has(k)) t.widths[k] = c.px;
    });
    t.applyWidths();
  }
}

export class VTable {
  // opts: { tree, onNeed(first, last), onToggle(i), onActivate(i), onContext(i, ev),
  //         onSort(sortKey), onSelect(i), onExpandAll(i), linked }
  // @linked: a table stacked above this one (Caller-Callee's parts) whose
  // columns this one shares: widths, fitting, sizing and sideways scroll,
  // so that every part's columns line up under one another.
  constructor(parent, opts = {}) {
    this.opts = opts;
    this.count = 0;
    this.get = () => null;
    this.info = () => ({});
    this.selected = -1;
    this.rowH = 20;
    this.headH = 22;
    this.sortKey = null;
    this.sortAsc = false;
    // shared with the linked tables (the same array and set)
    this.widths = opts.linked ? opts.linked.widths : COLUMNS.map((c) => c.px);
    this.sized = opts.linked ? opts.linked.sized : new Set();	// sized by hand: no longer fitted
    this.peers = opts.linked ? opts.linked.peers : [];
    this.peers.push(this);
    // the selected cells: rows r0..r1, columns c0..c1 (indexes in COLUMNS),
    // from an anchor cell; Shift-click extends it (null: none)
    this.cells = null;
    this.retained = false;	// the Retained column is shown
    this.el = document.createElement('div');
    this.el.className = 'vtable no-retained';
    this.el.tabIndex = 0;
    // the header scrolls sideways with the rows and stays on top (sticky)
    this.scroll = document.createElement('div');
    this.scroll.className = 'scroll';
    this.head = document.createElement('div');
    this.head.className = 'head';
    COLUMNS.forEach((c, k) => {
      const h = document.createElement('div');
      h.append(document.createTextNode(c.optional ? '' : c.title));
      h.dataset.col = c.key;
      if (c.num) h.style.textAlign = 'right';
      h.addEventListener('click', () => c.sort && this.opts.onSort?.(c.sort));
      h.addEventListener('contextmenu', (ev) => {
        ev.preventDefault();
        tableHooks.onHeaderMenu?.(ev, c.key);
      });
      h.append(this.grip(k));
      this.head.append(h);
    });
    this.spacer = document.createElement('div');
    this.spacer.className = 'spacer';
    this.rows = document.createElement('div');
    this.rows.className = 'rows';
    this.scroll.append(this.head, this.spacer, this.rows);
    this.el.append(this.scroll);
    parent.append(this.el);
    this.pool = [];
    this.applyWidths();
    tables.add(this);
    this.scroll.addEventListener('scroll', () => {
      for (const p of this.peers) if (p !== this && p.scroll.scrollLeft !== this.scroll.scrollLeft)
        p.scroll.scrollLeft = this.scroll.scrollLeft;
      this.render();
    });
    new ResizeObserver(() => this.render()).observe(this.scroll);
    this.rows.addEventListener('click', (ev) => this.click(ev));
    // dragging across number cells selects the block, as in PerfView
    this.rows.addEventListener('mousedown', (ev) => {
      this.drag = ev.button === 0 && !ev.shiftKey ? this.cellAt(ev) : null;
    });
    this.rows.addEventListener('mouseover', (ev) => {
      const at = this.drag && ev.buttons === 1 ? this.cellAt(ev) : null;
      if (!at || (at.r === this.drag.r && at.c === this.drag.c)) return;
      const a = this.drag;
      this.cells = { anchor: a, r0: Math.min(a.r, at.r), r1: Math.max(a.r, at.r),
        c0: Math.min(a.c, at.c), c1: Math.max(a.c, at.c) };
      this.dragged = true;
      this.render();
      tableHooks.onCells?.(this.cellInfo(), this);
    });
    document.addEventListener('mouseup', () => {
      this.drag = null;
    });
    this.rows.addEventListener('dblclick', (ev) => {
      const i = this.rowIndex(ev);
      if (i >= 0 && !ev.target.classList.contains('twist')) this.opts.onActivate?.(i);
    });
    this.rows.addEventListener('contextmenu', (ev) => {
      const i = this.rowIndex(ev);
      if (i < 0) return;
      ev.preventDefault();
      this.select(i);
      this.opts.onContext?.(i, ev);
    });
    this.el.addEventListener('keydown', (ev) => this.key(ev));
  }

  // The handle on column @k's right edge: drag to size it, double-click
  // to fit it to its content again.
  grip(k) {
    const g = document.createElement('span');
    g.className = 'grip';
    g.title = 'drag to resize; double-click to fit';
    g.addEventListener('click', (ev) => ev.stopPropagation());
    g.addEventListener('dblclick', (ev) => {
      ev.stopPropagation();
      this.sized.delete(k);
      this.widths[k] = COLUMNS[k].px;
      this.applyWidths();
      this.render();
    });
    g.addEventListener('pointerdown', (ev) => {
      ev.preventDefault();
      ev.stopPropagation();
      const x0 = ev.clientX, w0 = g.parentElement.offsetWidth;
      g.setPointerCapture(ev.pointerId);
      const move = (e) => {
        this.widths[k] = Math.max(28, Math.round(w0 + e.clientX - x0));
        this.sized.add(k);
        this.applyWidths();
      };
      const up = () => {
        g.removeEventListener('pointermove', move);
        g.removeEventListener('pointerup', up);
        this.render();
      };
      g.addEventListener('pointermove', move);
      g.addEventListener('pointerup', up);
    });
    return g;
  }

  // The Retained column: shown (@on) or taking no room.
  showRetained(on) {
    // the same columns: nothing to draw again (an Update asks this before
    // its rows came, and a draw now would lay out a screen of pending rows)
    if (this.retained === on) return;
    this.retained = on;
    this.el.classList.toggle('no-retained', !on);
    const h = this.head.querySelector('[data-col="retained"]');
    h.firstChild.textContent = on ? 'Retained' : '';
    this.applyWidths();
    this.render();
  }

  // Whether column @c is left out: hidden by the user, an optional column
  // this table has no data for, or a time column of a source without times.
  off(c) {
    return hiddenCols.has(c.key) || (c.optional && !this.retained) ||
      (untimed && TIME_COLS.has(c.key));
  }

  // Lay the columns out from this.widths (Name takes what is left over),
  // in this table and the ones linked to it.
  applyWidths() {
    for (const t of this.peers) t.layOut();
  }

  layOut() {
    const [name, ...rest] = this.widths;
    const shown = rest.filter((_, k) => !this.off(COLUMNS[k + 1]));
    this.el.style.setProperty('--cols',
      `minmax(${name}px, 1fr) ${shown.map((w) => `${w}px`).join(' ')}`);
    const total = name + shown.reduce((a, b) => a + b, 0);
    this.head.style.minWidth = this.rows.style.minWidth = `${total}px`;
    COLUMNS.forEach((c, k) => {
      this.head.children[k].hidden = this.off(c);
    });
  }

  // Widen the columns whose text on screen is cut off (not those sized by
  // hand). Name takes what the others leave, so a number column that grew
  // may cut a name that fitted: the rows are checked again after a change.
  fit(nrows) {
    for (let pass = 0; pass < COLUMNS.length && this.fitOnce(nrows); pass++);
  }

  // One pass of fit(): whether it widened a column.
  fitOnce(nrows) {
    let changed = false;
    const check = (cells) => {
      for (let c = 0; c < COLUMNS.length; c++) {
        const cell = cells[c];
        if (this.sized.has(c) || cell.hidden || cell.scrollWidth <= cell.clientWidth) continue;
        // a tree's indent (14 px a level: 3,400 px for python3's deepest
        // stacks) does not count against Name's greatest width
        const indent = c === 0 ? parseFloat(cell.style.paddingLeft) || 0 : 0;
        const want = Math.min((COLUMNS[c].max ?? MAX_PX) + indent, Math.ceil(cell.scrollWidth) + 2);
        if (want > this.widths[c] && cell.offsetWidth < want) {
          this.widths[c] = want;
          changed = true;
        }
      }
    };
    check(this.head.children);
    for (let k = 0; k < nrows; k++) if (!this.pool[k].classList.contains('pending')) check(this.pool[k].children);
    if (changed) this.applyWidths();
    return changed;
  }

  // set({count, get(i) -> row|null, info(i) -> {depth, open, leaf}, selected, top})
  // and redraw. @selected: the row to select (-1: none; absent: the same
  // index); @top: true to scroll to the top.
  set(data) {
    this.count = data.count;
    this.get = data.get;
    // other rows now: the selected cells went with the old ones
    if (this.cells) {
      this.cells = null;
      tableHooks.onCells?.(null, this);
    }
    this.info = data.info || (() => ({}));
    if (data.selected !== undefined) this.selected = data.selected;
    if (this.selected >= this.count) this.selected = this.count - 1;
    this.spacer.style.height = `${this.count * this.rowH}px`;
    // the rows' offset keeps the old height scrollable: clamp the position first
    this.rows.style.transform = 'none';
    const max = Math.max(0, this.count * this.rowH + this.headH - this.scroll.clientHeight);
    if (data.top) this.scroll.scrollTop = 0;
    if (this.scroll.scrollTop > max) this.scroll.scrollTop = max;
    if (data.selected >= 0) this.reveal(data.selected);
    this.render();
  }

  setSort(key, asc) {
    this.sortKey = key;
    this.sortAsc = asc;
    for (const h of this.head.children) {
      const c = COLUMNS.find((x) => x.key === h.dataset.col);
      h.classList.toggle('sorted', !!key && c.sort === key && c.key !== 'exc_pct' &&
        c.key !== 'inc_pct');
      h.classList.toggle('asc', asc);
    }
  }

  rowIndex(ev) {
    const row = ev.target.closest('.row');
    return row ? Number(row.dataset.index) : -1;
  }

  click(ev) {
    const i = this.rowIndex(ev);
    if (i < 0) return;
    if (ev.target.classList.contains('twist')) this.opts.onToggle?.(i);
    const cell = ev.target.closest('.row > div');
    const c = cell ? [...cell.parentElement.children].indexOf(cell) : 0;
    if (this.dragged) {
      // the end of a drag across cells: the block stays
      this.dragged = false;
      this.select(i);
      return;
    }
    if (ev.shiftKey && this.cells) {
      const a = this.cells.anchor;
      this.cells = { anchor: a, r0: Math.min(a.r, i), r1: Math.max(a.r, i),
        c0: Math.min(a.c, c), c1: Math.max(a.c, c) };
      window.getSelection()?.removeAllRanges();
    } else {
      this.cells = { anchor: { r: i, c }, r0: i, r1: i, c0: c, c1: c };
    }
    this.render();
    tableHooks.onCells?.(this.cellInfo(), this);
    this.select(i);
    // keep keyboard focus, but do not steal a text selection in progress
    if (!window.getSelection()?.toString()) this.el.focus({ preventScroll: true });
  }

  select(i, reveal = false) {
    if (i < 0 || i >= this.count) return;
    this.selected = i;
    if (reveal) this.reveal(i);
    this.render();
    this.opts.onSelect?.(i);
  }

  // The number cell under the mouse {r, c} (not Name or When, whose text
  // can be selected), or null.
  cellAt(ev) {
    const cell = ev.target.closest('.row > div');
    if (!cell) return null;
    const c = [...cell.parentElement.children].indexOf(cell);
    if (!COLUMNS[c]?.num) return null;
    return { r: Number(cell.parentElement.dataset.index), c };
  }

  // The selected cells' numbers: {n, cells, sum (of the number cells),
  // missing (rows not loaded), first, last (the smallest and largest
  // time among the First and Last cells, or null)}; null for one cell.
  cellInfo() {
    const s = this.cells;
    if (!s || (s.r0 === s.r1 && s.c0 === s.c1)) return null;
    let sum = 0, nums = 0, missing = 0, lo = null, hi = null, n = 0;
    for (let i = s.r0; i <= s.r1; i++) {
      const r = this.get(i);
      for (let c = s.c0; c <= s.c1; c++) {
        const col = COLUMNS[c];
        if (this.off(col)) continue;
        n++;
        if (!r) {
          missing++;
          continue;
        }
        const v = r[col.key];
        if (!col.num || typeof v !== 'number') continue;
        if (col.key === 'first_ms' || col.key === 'last_ms') {
          lo = lo === null ? v : Math.min(lo, v);
          hi = hi === null ? v : Math.max(hi, v);
        } else {
          sum += v;
          nums++;
        }
      }
    }
    return { n, nums, sum, missing, first: lo, last: hi,
      cols: COLUMNS.slice(s.c0, s.c1 + 1).filter((c) => !this.off(c)).map((c) => c.key) };
  }

  // The selected cells as text with a header line, as shown (tab
  // separated); a selection that takes in Name copies whole rows (every
  // column shown). null when at most one cell is selected.
  copyText() {
    const s = this.cells;
    if (!s || (s.r0 === s.r1 && s.c0 === s.c1)) return null;
    const [c0, c1] = s.c0 === 0 ? [0, COLUMNS.length - 1] : [s.c0, s.c1];
    const cols = COLUMNS.slice(c0, c1 + 1).filter((c) => !this.off(c));
    const lines = [cols.map((c) => c.title).join('\t')];
    for (let i = s.r0; i <= s.r1; i++) {
      const r = this.get(i);
      const depth = this.opts.tree && cols[0].key === 'name' ? ' '.repeat(this.info(i).depth || 0) : '';
      lines.push(cols.map((c, k) => (k === 0 ? depth : '') + cellText(c, r)).join('\t'));
    }
    return lines.join('\n') + '\n';
  }

  clearCells() {
    this.cells = null;
    this.render();
  }

  reveal(i) {
    const top = i * this.rowH;
    const h = this.scroll.clientHeight - this.headH - this.rowH;
    if (top < this.scroll.scrollTop) this.scroll.scrollTop = top;
    else if (top > this.scroll.scrollTop + h) this.scroll.scrollTop = top - h;
  }

  key(ev) {
    if (ev.target.closest('input, textarea')) return;
    const page = Math.max(1, Math.floor((this.scroll.clientHeight - this.headH) / this.rowH) - 1);
    let i = this.selected;
    switch (ev.key) {
      case 'ArrowDown': i++; break;
      case 'ArrowUp': i--; break;
      case 'PageDown': i += page; break;
      case 'PageUp': i -= page; break;
      case 'Home': i = 0; break;
      case 'End': i = this.count - 1; break;
      case 'ArrowRight':
        if (this.opts.tree && !this.info(i).open && !this.info(i).leaf) this.opts.onToggle?.(i);
        else i++;
        break;
      case 'ArrowLeft':
        if (this.opts.tree && this.info(i).open) this.opts.onToggle?.(i);
        else if (this.opts.tree && this.info(i).parent >= 0) i = this.info(i).parent;
        break;
      case ' ':
      case 'Enter':
        if (ev.key === 'Enter' && !this.opts.tree) this.opts.onActivate?.(i);
        else this.opts.onToggle?.(i);
        break;
      case '*':
        this.opts.onExpandAll?.(i);
        break;
      default:
        return;
    }
    ev.preventDefault();
    i = Math.max(0, Math.min(this.count - 1, i));
    if (i !== this.selected) this.select(i, true);
  }

  // Draw the rows on screen (and ask for the ones not loaded yet).
  render() {
    const top = this.scroll.scrollTop;
    const first = Math.max(0, Math.min(this.count - 1, Math.floor(top / this.rowH) - 2));
    const n = Math.min(this.count - first, Math.ceil(this.scroll.clientHeight / this.rowH) + 5);
    this.rows.style.transform = `translateY(${first * this.rowH}px)`;
    let missing = false;
    for (let k = 0; k < Math.max(n, 0); k++) {
      const i = first + k;
      const el = this.rowEl(k);
      const r = this.get(i);
      el.dataset.index = i;
      el.classList.toggle('sel', i === this.selected);
      el.hidden = false;
      if (!r) {
        missing = true;
        this.markCells(el, i);
        el.classList.add('pending');
        el.dataset.key = '';
        el.children[0].textContent = '\u2026';
        for (let c = 1; c < COLUMNS.length; c++) {
          el.children[c].textContent = '';
          el.children[c].title = '';
        }
        continue;
      }
      el.classList.remove('pending');
      this.markCells(el, i);
      el.dataset.key = r.key;
      el.dataset.id = r.id ?? '';
      el.classList.toggle('found', !!r.found);
      this.fillName(el.children[0], r, i);
      for (let c = 1; c < COLUMNS.length; c++) {
        const col = COLUMNS[c];
        const cell = el.children[c];
        // the same text stays the same node: characters selected in it (When) stay selected
        const text = col.text(r);
        if (cell.textContent !== text) cell.textContent = text;
        if (col.tip) cell.title = col.tip(r);
        if (col.num) cell.classList.toggle('neg', (r[col.key] ?? 0) < 0);
      }
    }
    for (let k = Math.max(n, 0); k < this.pool.length; k++) this.pool[k].hidden = true;
    // ask for the missing rows first: fit() waits for a layout of the table
    if (missing && n > 0) this.opts.onNeed?.(first, first + n - 1);
    this.fit(Math.max(n, 0));
  }
  // Hide the hidden columns' cells of row element @el (row @i) and mark
  // its selected cells.
  markCells(el, i) {
    const s = this.cells;
    const inRows = s && i >= s.r0 && i <= s.r1 && !(s.r0 === s.r1 && s.c0 === s.c1);
    for (let c = 0; c < COLUMNS.length; c++) {
      const cell = el.children[c];
      cell.hidden = this.off(COLUMNS[c]);
      cell.classList.toggle('csel', !!inRows && c >= s.c0 && c <= s.c1);
    }
  }

  fillName(cell, r, i) {
    if (!this.opts.tree) {
      cell.textContent = r.name;
      cell.title = r.key;
      return;
    }
    const inf = this.info(i);
    cell.parentElement.dataset.depth = inf.depth;
    cell.textContent = '';
    cell.style.paddingLeft = `${4 + inf.depth * 14}px`;
    const tw = document.createElement('span');
    tw.className = 'twist';
    tw.textContent = inf.leaf ? '' : inf.open ? '\u25BE' : '\u25B8';
    cell.append(tw, document.createTextNode(r.name));
    cell.title = r.key;
  }

  rowEl(k) {
    while (this.pool.length <= k) {
      const el = document.createElement('div');
      el.className = 'row';
      for (const c of COLUMNS) {
        const cell = document.createElement('div');
        cell.className = `c-${c.key.replace('_ms', '').replace('_', '-')}${c.num ? ' num' : ''}`;
        el.append(cell);
      }
      this.rows.append(el);
      this.pool.push(el);
    }
    return this.pool[k];
  }

  focus() {
    this.el.focus({ preventScroll: true });
  }
}
