// callercallee.js - the Caller-Callee view: the callers of the focus name
// above it, the focus itself, its callees below (perfview-semantics.md §6).
// Double-click a caller or callee to make it the focus.

import { VTable } from './table.js';

function part(parent, title) {
  const div = document.createElement('div');
  div.className = 'part';
  const label = document.createElement('div');
  label.className = 'label';
  label.textContent = title;
  div.append(label);
  parent.append(div);
  return div;
}

export class CallerCallee {
  // opts: { onFocus(name), onContext(row, ev), onSelect(row) }
  constructor(parent, opts) {
    this.opts = opts;
    const box = document.createElement('div');
    box.className = 'cc';
    parent.append(box);
    this.lists = { callers: [], focus: [], callees: [] };
    this.sort = null;
    // the three tables share their columns, so that they line up
    let first = null;
    const mk = (name, el) => {
      const t = new VTable(el, {
        linked: first,
        onActivate: (i) => this.opts.onFocus(this.lists[name][i].key),
        onContext: (i, ev) => this.opts.onContext(this.lists[name][i], ev),
        onSelect: (i) => this.opts.onSelect?.(this.lists[name][i]),
        onSort: (key) => this.setSort(key),
      });
      t.el.dataset.part = name;
      first ??= t;
      return t;
    };
    this.tables = {
      callers: mk('callers', part(box, 'Callers (who calls the focus)')),
      focus: mk('focus', Object.assign(part(box, 'Focus'), { className: 'part focus-part' })),
      callees: mk('callees', part(box, 'Callees (what the focus calls)')),
    };
  }

  // @doc: the /api/view answer of a caller-callee view.
  set(doc) {
    this.lists = { callers: doc.callers, focus: doc.focus_row ? [doc.focus_row] : [],
      callees: doc.callees };
    this.server = { callers: [...doc.callers], callees: [...doc.callees] };
    this.apply();
  }

  setSort(key) {
    const cur = this.sort;
    if (!key) this.sort = null;
    else if (!cur || cur.key !== key) this.sort = { key, asc: key === 'name' };
    else if (cur.asc === (key === 'name')) this.sort = { key, asc: !cur.asc };
    else this.sort = null;
    this.apply();
  }

  apply() {
    for (const name of ['callers', 'callees']) {
      const rows = [...(this.server?.[name] || [])];
      if (this.sort) {
        const { key, asc } = this.sort;
        const v = (r) => (key === 'name' ? r.name : key === 'first' ? r.first_ms ?? Infinity
          : key === 'last' ? r.last_ms ?? -Infinity : r[key] ?? 0);
        rows.sort((a, b) => {
          const x = v(a), y = v(b);
          const c = x < y ? -1 : x > y ? 1 : 0;
          return asc ? c : -c;
        });
      }
      this.lists[name] = rows;
    }
    for (const [name, t] of Object.entries(this.tables)) {
      const list = this.lists[name];
      t.setSort(this.sort?.key, this.sort?.asc);
      t.set({ count: list.length, get: (i) => list[i] });
    }
  }
}
