// tree.js - the tree views (CallTree, Callers, Callees) on top of a
// VTable: nodes are loaded lazily from /api/tree when opened, a node with
// one child opens with it (the server does that), Expand All loads a whole
// subtree, and the visible rows are the open part of the tree, flattened.

export class TreeModel {
  // load(of, levels) -> {rows, summary, truncated}: of = null for the roots.
  constructor(load) {
    this.load = load;
    this.nodes = new Map();	// id -> {row, kids: [id] | null, open, depth}
    this.roots = [];
    this.visible = [];		// ids, in display order
    this.sort = null;		// {key, asc} or null for the server's order
    this.summary = null;
  }

  async init() {
    const r = await this.load(null, 1);
    this.summary = r.summary;
    this.ingest(r.rows);
    this.flatten();
    return r;
  }

  // Add rows (each names its parent) to the tree; a parent whose children
  // arrived is open.
  ingest(rows) {
    for (const row of rows) {
      if (this.nodes.has(row.id)) {
        if (row.parent !== null) this.nodes.get(row.parent).open = true;
        continue;
      }
      const parent = row.parent === null ? null : this.nodes.get(row.parent);
      const node = { row, kids: row.nr_children ? null : [], open: false,
        depth: parent ? parent.depth + 1 : 0 };
      this.nodes.set(row.id, node);
      if (!parent) {
        this.roots.push(row.id);
      } else {
        (parent.kids ??= []).push(row.id);
        parent.open = true;
      }
    }
    if (this.sort) this.sortAll();
  }

  flatten() {
    const out = [];
    const stack = [...this.roots].reverse();
    while (stack.length) {
      const id = stack.pop();
      out.push(id);
      const n = this.nodes.get(id);
      if (n.open && n.kids) for (let k = n.kids.length - 1; k >= 0; k--) stack.push(n.kids[k]);
    }
    this.visible = out;
  }

  node(i) {
    return this.nodes.get(this.visible[i]);
  }

  indexOf(id) {
    return this.visible.indexOf(id);
  }

  info(i) {
    const n = this.node(i);
    if (!n) return {};
    const p = n.row.parent;
    return { depth: n.depth, open: n.open, leaf: !n.row.nr_children,
      parent: p === null ? -1 : this.indexOf(p) };
  }

  async open(id) {
    const n = this.nodes.get(id);
    if (!n || !n.row.nr_children) return;
    if (n.kids === null || n.kids.length < n.row.nr_children) {
      const r = await this.load([id], 1);
      this.ingest(r.rows);
    }
    n.open = true;
    this.flatten();
  }

  async toggle(id) {
    const n = this.nodes.get(id);
    if (!n) return;
    if (n.open) {
      n.open = false;
      this.flatten();
    } else {
      await this.open(id);
    }
  }

  // Open everything under @id (at most what the server sends at once).
  async expandAll(id) {
    const r = await this.load([id], 0);
    this.ingest(r.rows);
    const stack = [id];
    while (stack.length) {
      const n = this.nodes.get(stack.pop());
      if (n.kids && n.kids.length) {
        n.open = true;
        stack.push(...n.kids);
      }
    }
    this.flatten();
    return r.truncated;
  }

  // The keys from the tree's top down to @id.
  keys(id) {
    const out = [];
    for (let n = this.nodes.get(id); n; n = n.row.parent === null ? null : this.nodes.get(n.row.parent))
      out.unshift(n.row.key);
    return out;
  }

  // Paths (keys) of the open nodes, to open again after an update.
  openPaths(max = 300) {
    const out = [];
    for (const [id, n] of this.nodes) {
      if (n.open && out.length < max) out.push(this.keys(id));
    }
    return out.sort((a, b) => a.length - b.length);
  }

  async restore(paths) {
    for (const path of paths) {
      let level = this.roots;
      let node = null;
      for (const key of path) {
        const id = level.find((x) => this.nodes.get(x).row.key === key);
        if (id === undefined) {
          node = null;
          break;
        }
        node = id;
        const n = this.nodes.get(id);
        if (path[path.length - 1] !== key && !n.open) await this.open(id);
        level = n.kids || [];
      }
      if (node !== null && !this.nodes.get(node).open) await this.open(node);
    }
    this.flatten();
  }

  setSort(key, asc) {
    this.sort = key ? { key, asc } : null;
    if (this.sort) this.sortAll();
    else this.unsort();
    this.flatten();
  }

  sortAll() {
    const { key, asc } = this.sort;
    const val = (id) => {
      const r = this.nodes.get(id).row;
      switch (key) {
        case 'name': return r.name;
        case 'first': return r.first_ms ?? Infinity;
        case 'last': return r.last_ms ?? -Infinity;
        default: return r[key] ?? 0;
      }
    };
    const cmp = (a, b) => {
      const x = val(a), y = val(b);
      const c = x < y ? -1 : x > y ? 1 : a - b;
      return asc ? c : -c;
    };
    this.roots.sort(cmp);
    for (const n of this.nodes.values()) if (n.kids) n.kids.sort(cmp);
  }

  // The server's order: ids are depth-first in display order.
  unsort() {
    this.roots.sort((a, b) => a - b);
    for (const n of this.nodes.values()) if (n.kids) n.kids.sort((a, b) => a - b);
  }
}
