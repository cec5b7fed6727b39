// SPDX-License-Identifier: Apache-2.0
// jvmprof's flame graph: draws the tree jvmprof sends ({n: name, v: value, c: [children]}) as
// positioned <div>s, with zoom (click), search, flame/icicle orientation, a top-down or bottom-up
// (inverted) tree, a hot-methods table and a call tree. Names are untrusted (they come from the
// profiled program): they are only ever set through textContent and title, never as HTML.
'use strict';
(function (global) {
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function selfOf(node) {
    var s = node.v;
    (node.c || []).forEach(function (c) { s -= c.v; });
    return s;
  }

  // Bottom-up tree: each node's self value charged to the path from it up to the root, reversed.
  function invert(root) {
    var out = { n: root.n, v: 0, c: [] };
    function add(path, value) {
      out.v += value;
      var node = out;
      for (var i = path.length - 1; i >= 0; i--) {
        var kids = node.c || (node.c = []);
        var next = null;
        for (var k = 0; k < kids.length; k++) if (kids[k].n === path[i]) { next = kids[k]; break; }
        if (!next) { next = { n: path[i], v: 0 }; kids.push(next); }
        next.v += value;
        node = next;
      }
    }
    (function walk(node, path) {
      var s = selfOf(node);
      if (s > 0 && path.length) add(path, s);
      (node.c || []).forEach(function (c) { walk(c, path.concat([c.n])); });
    })(root, []);
    return out;
  }

  function hue(name) {
    if (name.charAt(0) === '[') return 'hsl(0,0%,82%)';  // a marker such as "[truncated ...]"
    var h = 0;
    for (var i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
    var java = /^(java|javax|jdk|sun)\./.test(name);
    return java ? 'hsl(' + (190 + h % 30) + ',55%,' + (68 + h % 12) + '%)'
                : 'hsl(' + (10 + h % 40) + ',80%,' + (58 + h % 14) + '%)';
  }

  // "1 sample", "2 samples": units are plural nouns ("samples", "bytes", "objects", "calls") or
  // "ms", which has no singular.
  function count(v, unit) {
    var u = v === 1 && /[a-z]s$/.test(unit) && unit !== 'ms' ? unit.slice(0, -1) : unit;
    return v.toLocaleString('en-US') + ' ' + u;
  }

  function fmt(v, unit, total) {
    var pct = total > 0 ? (100 * v / total).toFixed(2) + '%' : '';
    return count(v, unit) + (pct ? ' (' + pct + ')' : '');
  }

  // What a measure's leaf frames are: allocation measures end each stack with the allocated
  // class, monitor time with the contended monitor's class; CPU measures end with a method.
  function leafKind(measure) {
    if (/^(alloc|live)-/.test(measure || '')) return 'class';
    if (measure === 'monitor-time') return 'monitor';
    return 'method';
  }

  // For stacks that end in a class (allocations) or a monitor: per site (the method directly
  // above the leaf) and per leaf name, the value there and the value under it.
  function sitesAndLeaves(root) {
    var sites = {}, leaves = {};
    function row(map, name) { return map[name] || (map[name] = { name: name, self: 0, total: 0 }); }
    (function walk(node, parent) {
      var kids = node.c || [];
      if (!kids.length && parent) {
        var site = row(sites, parent.n + ' \u2192 ' + node.n);
        site.self += node.v;
        site.total += node.v;
        var leaf = row(leaves, node.n);
        leaf.self += node.v;
        leaf.total += node.v;
        return;
      }
      kids.forEach(function (c) { walk(c, node === root ? null : node); });
    })(root, null);
    function sorted(map) {
      return Object.keys(map).map(function (k) { return map[k]; })
        .sort(function (a, b) { return b.self - a.self || (a.name < b.name ? -1 : 1); });
    }
    return { sites: sorted(sites), leaves: sorted(leaves) };
  }

  // Hot methods: per name, self and total (total counted once per stack even under recursion).
  function hotMethods(root) {
    var rows = {};
    (function walk(node, onPath) {
      var r = rows[node.n] || (rows[node.n] = { name: node.n, self: 0, total: 0 });
      r.self += selfOf(node);
      var first = !onPath[node.n];
      if (first) r.total += node.v;
      onPath[node.n] = (onPath[node.n] || 0) + 1;
      (node.c || []).forEach(function (c) { walk(c, onPath); });
      onPath[node.n]--;
    })(root, {});
    delete rows[root.n];
    return Object.keys(rows).map(function (k) { return rows[k]; })
      .sort(function (a, b) { return b.self - a.self || b.total - a.total; });
  }

  function FlameGraph(container, data, options) {
    this.container = container;
    this.options = options || {};
    this.orientation = this.options.orientation || 'icicle';
    this.inverted = false;
    this.query = '';
    this.setData(data);
  }

  // New data (a live update) keeps the zoom, search, orientation and direction.
  FlameGraph.prototype.setData = function (data) {
    var built = !!this.data;
    this.data = data;
    this.tree = this.inverted ? invert(data.root) : data.root;
    this.zoomPath = this.zoomPath || [];
    // The tables below the graph depend on what the stacks end in (methods, classes, monitors).
    if (!built || leafKind(data.measure) !== this.kind) return this.build();
    this.draw();
    if (this.options.table !== false) this.drawTable();
    if (this.options.tree !== false) this.drawTree();
  };

  FlameGraph.prototype.build = function () {
    var self = this;
    var c = this.container;
    c.textContent = '';
    c.classList.add('fg');
    var bar = el('div', 'fg-bar');
    var search = el('input');
    search.type = 'search';
    search.placeholder = 'search (substring)';
    search.value = this.query;
    search.className = 'fg-search';
    search.addEventListener('input', function () {
      self.query = search.value;
      self.draw();
      if (self.options.table !== false) self.drawTable();
    });
    var orient = el('button', 'fg-orient', this.orientation === 'icicle' ? 'flame' : 'icicle');
    orient.title = 'root at the top (icicle) or at the bottom (flame)';
    orient.addEventListener('click', function () {
      self.orientation = self.orientation === 'icicle' ? 'flame' : 'icicle';
      orient.textContent = self.orientation === 'icicle' ? 'flame' : 'icicle';
      self.draw();
    });
    var inv = el('button', 'fg-invert', this.inverted ? 'top-down' : 'bottom-up');
    inv.title = 'callers of the hottest methods (bottom-up) or callees from the root (top-down)';
    inv.addEventListener('click', function () {
      self.inverted = !self.inverted;
      self.zoomPath = [];
      self.tree = self.inverted ? invert(self.data.root) : self.data.root;
      inv.textContent = self.inverted ? 'top-down' : 'bottom-up';
      self.draw();
      self.drawTable();
      self.drawTree();
    });
    var reset = el('button', 'fg-reset', 'reset zoom');
    reset.addEventListener('click', function () { self.zoomPath = []; self.draw(); });
    this.matchInfo = el('span', 'fg-matches');
    bar.append(search, orient, inv, reset, this.matchInfo);
    this.info = el('div', 'fg-info', ' ');
    this.graph = el('div', 'fg-graph');
    this.graph.setAttribute('data-measure', this.data.measure || '');
    var kind = this.kind = leafKind(this.data.measure);
    var tableTitle = el('h4', null, kind === 'class' ? 'Allocation sites (method \u2192 class)'
                                  : kind === 'monitor' ? 'Contention sites (method \u2192 monitor)'
                                  : 'Hot methods (self)');
    this.table = el('table', 'fg-table');
    var leafTitle = el('h4', null, kind === 'class' ? 'Allocated classes' : 'Contended monitors');
    this.leafTable = kind === 'method' ? null : el('table', 'fg-table fg-leaves');
    var treeTitle = el('h4', null, 'Call tree');
    this.treeBox = el('div', 'fg-tree');
    c.append(bar, this.info, this.graph);
    if (this.options.table !== false) c.append(tableTitle, this.table);
    if (this.options.table !== false && this.leafTable) c.append(leafTitle, this.leafTable);
    if (this.options.tree !== false) c.append(treeTitle, this.treeBox);
    this.draw();
    if (this.options.table !== false) this.drawTable();
    if (this.options.tree !== false) this.drawTree();
  };

  // The zoomed node: follow zoomPath's names from the root as far as they still exist.
  FlameGraph.prototype.focus = function () {
    var node = this.tree, chain = [node];
    for (var i = 0; i < this.zoomPath.length; i++) {
      var next = (node.c || []).filter(function (k) { return k.n === this.zoomPath[i]; }, this)[0];
      if (!next) break;
      node = next;
      chain.push(node);
    }
    return chain;
  };

  FlameGraph.prototype.draw = function () {
    var self = this, g = this.graph, unit = this.data.unit || '', total = this.tree.v;
    g.textContent = '';
    var chain = this.focus(), focus = chain[chain.length - 1];
    var rowH = 18, frames = [], maxDepth = 0, q = this.query, matched = 0;
    var minFrac = 0.0005;
    // Ancestors of the focus take the full width.
    chain.forEach(function (node, depth) {
      frames.push({ node: node, depth: depth, x: 0, w: 1, ancestor: depth < chain.length - 1,
                    path: chain.slice(1, depth + 1).map(function (k) { return k.n; }) });
    });
    (function layout(node, depth, x, path) {
      var w = focus.v > 0 ? node.v / focus.v : 0;
      if (node !== focus) frames.push({ node: node, depth: depth, x: x, w: w, path: path });
      maxDepth = Math.max(maxDepth, depth);
      var cx = x;
      (node.c || []).forEach(function (c) {
        var cw = focus.v > 0 ? c.v / focus.v : 0;
        if (cw >= minFrac) layout(c, depth + 1, cx, path.concat([c.n]));
        cx += cw;
      });
    })(focus, chain.length - 1, 0, chain.slice(1).map(function (k) { return k.n; }));
    var height = (maxDepth + 1) * rowH;
    g.style.height = height + 'px';
    var matchedSet = [];
    frames.forEach(function (f) {
      var d = el('div', 'fg-frame', f.node.n);
      var top = self.orientation === 'icicle' ? f.depth * rowH : height - (f.depth + 1) * rowH;
      d.style.left = (100 * f.x) + '%';
      d.style.width = (100 * f.w) + '%';
      d.style.top = top + 'px';
      d.style.background = hue(f.node.n);
      d.title = f.node.n + '\n' + fmt(f.node.v, unit, total) + ', self ' +
                fmt(selfOf(f.node), unit, total);
      d.setAttribute('data-name', f.node.n);
      d.setAttribute('data-value', String(f.node.v));
      if (self.options.decorate) self.options.decorate(d, f.node);  // e.g. the diff's colours
      if (f.ancestor) d.classList.add('fg-dim');
      if (q && f.node.n.indexOf(q) >= 0) {
        d.classList.add('fg-match');
        // Count a match once: not again below a matching ancestor.
        if (!matchedSet.some(function (m) { return f.path.length > m.length &&
            m.every(function (n, i) { return f.path[i] === n; }); })) {
          matched += f.node.v;
          matchedSet.push(f.path);
        }
      }
      d.addEventListener('mouseenter', function () {
        self.info.textContent = f.node.n + '  —  ' + fmt(f.node.v, unit, total);
      });
      d.addEventListener('click', function () { self.zoomPath = f.path; self.draw(); });
      g.appendChild(d);
    });
    this.matchInfo.textContent = q ? 'matched ' + fmt(matched, unit, total) : '';
    if (this.options.onDraw) this.options.onDraw(this);
  };

  FlameGraph.prototype.drawTable = function () {
    var unit = this.data.unit || '', total = this.tree.v, limit = this.options.tableRows || 50;
    var kind = leafKind(this.data.measure);
    // A search narrows the table to the matching rows (so rare ones can be found at all).
    var q = this.query;
    function matching(r) { return !q || r.name.indexOf(q) >= 0; }
    function fill(t, rows, nameHead, selfHead, totalHead) {
      t.textContent = '';
      var head = el('tr');
      head.append(el('th', null, selfHead));
      if (totalHead) head.append(el('th', null, totalHead));
      head.append(el('th', 'fg-name', nameHead));
      t.appendChild(head);
      rows.filter(matching).slice(0, limit).forEach(function (r) {
        var tr = el('tr', 'fg-hot');
        tr.append(el('td', null, fmt(r.self, unit, total)));
        if (totalHead) tr.append(el('td', null, fmt(r.total, unit, total)));
        tr.append(el('td', 'fg-name', r.name));
        t.appendChild(tr);
      });
    }
    if (kind === 'method') {
      fill(this.table, hotMethods(this.tree), 'method', 'self', 'total');
      return;
    }
    // Sites and leaves are read from the top-down tree whichever direction is drawn.
    var split = sitesAndLeaves(this.data.root);
    fill(this.table, split.sites, kind === 'class' ? 'site \u2192 class' : 'site \u2192 monitor',
         unit, null);
    fill(this.leafTable, split.leaves, kind === 'class' ? 'class' : 'monitor', unit, null);
  };

  // Call tree as nested <details>, children largest first, opened along the heaviest path.
  FlameGraph.prototype.drawTree = function () {
    var box = this.treeBox, unit = this.data.unit || '', total = this.tree.v, budget = 3000;
    box.textContent = '';
    (function add(parent, node, open) {
      var kids = (node.c || []).slice().sort(function (a, b) { return b.v - a.v; });
      kids.forEach(function (k, i) {
        if (--budget < 0) return;
        var d = el('details');
        d.open = open && i === 0 && k.v * 20 > total;
        d.appendChild(el('summary', null, fmt(k.v, unit, total) + '  ' + k.n));
        parent.appendChild(d);
        add(d, k, d.open);
      });
    })(box, this.tree, true);
  };

  global.JvmprofFlame = { FlameGraph: FlameGraph, invert: invert, hotMethods: hotMethods,
                          sitesAndLeaves: sitesAndLeaves, count: count };
})(window);
