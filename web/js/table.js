// table.js - a table with virtual rows: only the rows on screen exist in
// the DOM, so 100k rows scroll as smoothly as 10. Rows are fetched on
// demand (get(i) may return null while a page is loading; onNeed(first,
// last) asks for them). Trees put a twisty and an indent in the Name column.

import * as fmt from './format.js';

// The stack viewer's columns, as PerfView shows them.
export const COLUMNS = [
  { key: 'name', title: 'Name', width: 'minmax(16em, 1fr)', sort: 'name' },
  { key: 'exc_pct', title: 'Exc %', width: '5.5em', num: true, sort: 'exc',
    text: (r) => fmt.pct(r.exc_pct) },
  { key: 'exc', title: 'Exc', width: '7.5em', num: true, sort: 'exc', text: (r) => fmt.num(r.exc) },
  { key: 'exc_count', title: 'Exc Ct', width: '6em', num: true, sort: 'exc_count',
    text: (r) => fmt.count(r.exc_count) },
  { key: 'inc_pct', title: 'Inc %', width: '5.5em', num: true, sort: 'inc',
    text: (r) => fmt.pct(r.inc_pct) },
  { key: 'inc', title: 'Inc', width: '7.5em', num: true, sort: 'inc', text: (r) => fmt.num(r.inc) },
  { key: 'inc_count', title: 'Inc Ct', width: '6em', num: true, sort: 'inc_count',
    text: (r) => fmt.count(r.inc_count) },
  { key: 'fold', title: 'Fold', width: '6em', num: true, sort: 'fold', text: (r) => fmt.num(r.fold) },
  { key: 'when', title: 'When', width: '24em', text: (r) => r.when },
  { key: 'first_ms', title: 'First', width: '7em', num: true, sort: 'first',
    text: (r) => fmt.ms(r.first_ms) },
  { key: 'last_ms', title: 'Last', width: '7em', num: true, sort: 'last',
    text: (r) => fmt.ms(r.last_ms) },
];

export class VTable {
  // opts: { tree, onNeed(first, last), onToggle(i), onActivate(i), onContext(i, ev),
  //         onSort(sortKey), onSelect(i), onExpandAll(i) }
  constructor(parent, opts = {}) {
    this.opts = opts;
    this.count = 0;
    this.get = () => null;
    this.info = () => ({});
    this.selected = -1;
    this.rowH = 20;
    this.sortKey = null;
    this.sortAsc = false;
    this.el = document.createElement('div');
    this.el.className = 'vtable';
    this.el.tabIndex = 0;
    this.el.style.setProperty('--cols', COLUMNS.map((c) => c.width).join(' '));
    this.head = document.createElement('div');
    this.head.className = 'head';
    for (const c of COLUMNS) {
      const h = document.createElement('div');
      h.textContent = c.title;
      h.dataset.col = c.key;
      if (c.num) h.style.textAlign = 'right';
      h.addEventListener('click', () => this.opts.onSort?.(c.sort));
      this.head.append(h);
    }
    this.scroll = document.createElement('div');
    this.scroll.className = 'scroll';
    this.spacer = document.createElement('div');
    this.spacer.className = 'spacer';
    this.rows = document.createElement('div');
    this.rows.className = 'rows';
    this.scroll.append(this.spacer, this.rows);
    this.el.append(this.head, this.scroll);
    parent.append(this.el);
    this.pool = [];
    this.scroll.addEventListener('scroll', () => this.render());
    new ResizeObserver(() => this.render()).observe(this.scroll);
    this.rows.addEventListener('click', (ev) => this.click(ev));
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

  // set({count, get(i) -> row|null, info(i) -> {depth, open, leaf}}) and redraw.
  set(data) {
    this.count = data.count;
    this.get = data.get;
    this.info = data.info || (() => ({}));
    if (this.selected >= this.count) this.selected = this.count - 1;
    this.spacer.style.height = `${this.count * this.rowH}px`;
    // the rows' offset keeps the old height scrollable: clamp the position first
    this.rows.style.transform = 'none';
    const max = Math.max(0, this.count * this.rowH - this.scroll.clientHeight);
    if (this.scroll.scrollTop > max) this.scroll.scrollTop = max;
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

  reveal(i) {
    const top = i * this.rowH;
    const h = this.scroll.clientHeight - this.rowH;
    if (top < this.scroll.scrollTop) this.scroll.scrollTop = top;
    else if (top > this.scroll.scrollTop + h) this.scroll.scrollTop = top - h;
  }

  key(ev) {
    if (ev.target.closest('input, textarea')) return;
    const page = Math.max(1, Math.floor(this.scroll.clientHeight / this.rowH) - 1);
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
        el.classList.add('pending');
        el.dataset.key = '';
        el.children[0].textContent = '\u2026';
        for (let c = 1; c < COLUMNS.length; c++) el.children[c].textContent = '';
        continue;
      }
      el.classList.remove('pending');
      el.dataset.key = r.key;
      el.dataset.id = r.id ?? '';
      el.classList.toggle('found', !!r.found);
      this.fillName(el.children[0], r, i);
      for (let c = 1; c < COLUMNS.length; c++) {
        const col = COLUMNS[c];
        const cell = el.children[c];
        cell.textContent = col.text(r);
        if (col.num) cell.classList.toggle('neg', (r[col.key] ?? 0) < 0);
      }
    }
    for (let k = Math.max(n, 0); k < this.pool.length; k++) this.pool[k].hidden = true;
    if (missing && n > 0) this.opts.onNeed?.(first, first + n - 1);
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
