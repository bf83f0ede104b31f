// tree.js - the tree views (CallTree, Callers, Callees) on top of a
// VTable. The server sends the shape of the tree (ids, parents, numbers
// of children: /api/tree with "skeleton") as nodes are opened, children
// already in the order shown, a node with one child opened with it; the
// rows themselves (names, numbers) come for the part on screen only
// (/api/rows with "ids"), so Expand All on 100k nodes stays quick. The
// visible rows are the open part of the tree, flattened.

const ROWS_PER_CALL = 2000;

export class TreeModel {
  // api.tree(of, levels) -> a skeleton answer; api.rows(ids) -> {rows}
  constructor(api) {
    this.api = api;
    this.nodes = new Map();	// id -> {id, row | null, parent, nrc, kids: [id] | null, open, depth}
    this.roots = [];
    this.visible = [];		// ids, in display order
    this.pending = new Set();	// ids whose rows are being fetched
    this.summary = null;
  }

  async init() {
    const r = await this.api.tree(null, 1);
    this.summary = r.summary;
    this.ingest(r);
    this.flatten();
    return r;
  }

  // Add the nodes of a skeleton answer; a parent whose children arrived is open.
  ingest(r) {
    const rows = new Map(r.rows.map((x) => [x.id, x]));
    for (let i = 0; i < r.id.length; i++) {
      const id = r.id[i], parent = r.parent[i];
      let n = this.nodes.get(id);
      if (n) {
        n.row ??= rows.get(id) ?? null;
        if (parent !== null) this.nodes.get(parent).open = true;
        continue;
      }
      const p = parent === null ? null : this.nodes.get(parent);
      n = { id, row: rows.get(id) ?? null, parent, nrc: r.nr_children[i],
        kids: r.nr_children[i] ? null : [], open: false, depth: p ? p.depth + 1 : 0 };
      this.nodes.set(id, n);
      if (!p) {
        this.roots.push(id);
      } else {
        (p.kids ??= []).push(id);
        p.open = true;
      }
    }
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
    this.index = null;
  }

  node(i) {
    return this.nodes.get(this.visible[i]);
  }

  indexOf(id) {
    if (!this.index) this.index = new Map(this.visible.map((x, i) => [x, i]));
    return this.index.get(id) ?? -1;
  }

  info(i) {
    const n = this.node(i);
    if (!n) return {};
    return { depth: n.depth, open: n.open, leaf: !n.nrc,
      parent: n.parent === null ? -1 : this.indexOf(n.parent) };
  }

  // Fetch the rows of @ids that are not here yet; true if any was asked for.
  async fetch(ids) {
    const want = ids.filter((id) => !this.nodes.get(id)?.row && !this.pending.has(id));
    if (!want.length) return false;
    for (let k = 0; k < want.length; k += ROWS_PER_CALL) {
      const part = want.slice(k, k + ROWS_PER_CALL);
      for (const id of part) this.pending.add(id);
      try {
        const r = await this.api.rows(part);
        for (const row of r.rows) {
          const n = this.nodes.get(row.id);
          if (n) n.row = row;
        }
      } finally {
        for (const id of part) this.pending.delete(id);
      }
    }
    return true;
  }

  // The rows of visible rows @first..@last; true if any was asked for.
  fetchVisible(first, last) {
    return this.fetch(this.visible.slice(first, last + 1));
  }

  async open(id) {
    const n = this.nodes.get(id);
    if (!n || !n.nrc) return;
    if (n.kids === null || n.kids.length < n.nrc) this.ingest(await this.api.tree([id], 1));
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
    const r = await this.api.tree([id], 0);
    this.ingest(r);
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

  // The keys from the tree's top down to @id (rows fetched as needed).
  async keys(id) {
    const chain = [];
    for (let n = this.nodes.get(id); n; n = n.parent === null ? null : this.nodes.get(n.parent))
      chain.unshift(n.id);
    await this.fetch(chain);
    return chain.map((x) => this.nodes.get(x).row.key);
  }

  // Paths (keys) of the open nodes whose rows are here, to open again
  // after an update.
  openPaths(max = 300) {
    const out = [];
    for (const n of this.nodes.values()) {
      if (!n.open || out.length >= max) continue;
      const keys = [];
      for (let x = n; x; x = x.parent === null ? null : this.nodes.get(x.parent)) {
        if (!x.row) break;
        keys.unshift(x.row.key);
        if (x.parent === null) out.push(keys);
      }
    }
    return out.sort((a, b) => a.length - b.length);
  }

  // The visible index of the node at @keys (from the top), opening its
  // ancestors; -1 when the tree has no such node.
  async locate(keys) {
    let level = this.roots, id;
    for (let d = 0; d < keys.length; d++) {
      await this.fetch(level);
      id = level.find((x) => this.nodes.get(x).row?.key === keys[d]);
      if (id === undefined) return -1;
      const n = this.nodes.get(id);
      if (d + 1 < keys.length) {
        if (!n.open) await this.open(id);
        level = n.kids || [];
      }
    }
    this.flatten();
    return this.indexOf(id);
  }

  async restore(paths) {
    for (const path of paths) {
      let level = this.roots;
      for (let d = 0; d < path.length; d++) {
        await this.fetch(level);
        const id = level.find((x) => this.nodes.get(x).row?.key === path[d]);
        if (id === undefined) break;
        const n = this.nodes.get(id);
        if (!n.open) await this.open(id);
        level = n.kids || [];
      }
    }
    this.flatten();
  }
}
