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
    return grouped(v) + ' ' + u;
  }

  // v.toLocaleString('en-US') ("1,234,567"), which costs tens of microseconds a call: thousands
  // of calls made a redraw slow. Integers are grouped here; other numbers go the slow way.
  function grouped(v) {
    if (!Number.isSafeInteger(v)) return v.toLocaleString('en-US');
    var digits = String(Math.abs(v)), head = digits.length % 3 || 3;
    var out = digits.slice(0, head);
    for (var i = head; i < digits.length; i += 3) out += ',' + digits.slice(i, i + 3);
    return (v < 0 ? '-' : '') + out;
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

  function byWeight(a, b) { return b.self - a.self || b.total - a.total || (a.name < b.name ? -1 : 1); }

  // The tables under the graph for every measure of a multi-measure tree (jvmprof's
  // /flame?measures=...: {n, v: [a value per measure], c}), made in one walk of it: per measure,
  // the hot methods (self, and total counted once per stack even under recursion) and, for stacks
  // that end in a class (allocations) or a monitor, the sites (the method directly above the
  // leaf -> the leaf) and the leaves. A measure's tree is the one where nodes of no weight in it
  // are left out (projectTree), so a leaf there is a node with no child of weight. The UI makes
  // these once per profile, so that switching the measure or redrawing walks nothing.
  function tablesOfMeasures(root, measures) {
    var m = measures.length, kinds = measures.map(leafKind);
    var wantHot = kinds.indexOf('method') >= 0, wantSites = kinds.some(function (k) { return k !== 'method'; });
    var hot = new Map(), sites = new Map(), leaves = new Map(), onPath = new Map();
    function row(map, key, name) {
      var r = map.get(key);
      if (!r) map.set(key, r = { name: name, self: new Float64Array(m), total: new Float64Array(m) });
      return r;
    }
    var childSum = new Float64Array(m), hasChild = new Uint8Array(m);
    function walk(node, parent) {
      var kids = node.c, v = node.v, i, k;
      var depth = onPath.get(node.n) || 0;
      if (wantHot && parent) {
        var r = row(hot, node.n, node.n);
        for (i = 0; i < m; i++) childSum[i] = 0;
        if (kids) for (k = 0; k < kids.length; k++) for (i = 0; i < m; i++) childSum[i] += kids[k].v[i];
        for (i = 0; i < m; i++) {
          r.self[i] += v[i] - childSum[i];
          if (!depth) r.total[i] += v[i];
        }
      }
      if (wantSites && parent && parent !== root) {
        for (i = 0; i < m; i++) hasChild[i] = 0;
        if (kids) for (k = 0; k < kids.length; k++) for (i = 0; i < m; i++) if (kids[k].v[i] > 0) hasChild[i] = 1;
        for (i = 0; i < m; i++) {
          if (hasChild[i] || !(v[i] > 0)) continue;
          var site = row(sites, parent.n + '\u0000' + node.n, parent.n + ' \u2192 ' + node.n);
          site.self[i] += v[i];
          site.total[i] += v[i];
          var leaf = row(leaves, node.n, node.n);
          leaf.self[i] += v[i];
          leaf.total[i] += v[i];
        }
      }
      if (!kids) return;
      onPath.set(node.n, depth + 1);
      for (k = 0; k < kids.length; k++) walk(kids[k], node);
      onPath.set(node.n, depth);
    }
    walk(root, null);
    function rowsOf(map, i) {
      var out = [];
      map.forEach(function (r) {
        if (r.total[i] > 0 || r.self[i] !== 0) out.push({ name: r.name, self: r.self[i], total: r.total[i] });
      });
      return out.sort(byWeight);
    }
    return measures.map(function (measure, i) {
      return kinds[i] === 'method' ? { hot: rowsOf(hot, i) }
                                   : { sites: rowsOf(sites, i), leaves: rowsOf(leaves, i) };
    });
  }

  // One measure of a multi-measure tree, in the shape the flame graph draws ({n, v, c}); stacks
  // of no weight in this measure (no live objects, say) are left out. A node's children are made
  // when first asked for: a switch of the measure then costs nothing here, and what is never
  // drawn or opened (most of a 100k-stack tree) is never made.
  function LazyNode(x, i) {
    this.n = x.n;
    this.v = x.v[i];
    this.src = x;
    this.i = i;
    this.kids = null;
  }
  Object.defineProperty(LazyNode.prototype, 'c', {
    get: function () {
      if (this.kids === null) {
        var c = this.src.c, i = this.i, kids = [];
        if (c) for (var k = 0; k < c.length; k++) if (c[k].v[i] > 0) kids.push(new LazyNode(c[k], i));
        this.kids = kids.length ? kids : undefined;
      }
      return this.kids;
    }
  });
  function projectTree(root, i) { return new LazyNode(root, i); }

  // For stacks that end in a class (allocations) or a monitor: per site (the method directly
  // above the leaf) and per leaf name, the value there and the value under it.
  function sitesAndLeaves(root) {
    var sites = new Map(), leaves = new Map();
    function add(map, key, name, v) {
      var r = map.get(key);
      if (!r) map.set(key, r = { name: name, self: 0, total: 0 });
      r.self += v;
      r.total += v;
    }
    var stack = [], top = root.c || [];
    for (var i = top.length - 1; i >= 0; i--) stack.push(top[i], null);
    while (stack.length) {
      var parent = stack.pop(), node = stack.pop(), kids = node.c;
      if (kids && kids.length) {
        for (var k = kids.length - 1; k >= 0; k--) stack.push(kids[k], node);
        continue;
      }
      if (!parent) continue;
      add(sites, parent.n + '\u0000' + node.n, parent.n + ' \u2192 ' + node.n, node.v);
      add(leaves, node.n, node.n, node.v);
    }
    function sorted(map) { return Array.from(map.values()).sort(byWeight); }
    return { sites: sorted(sites), leaves: sorted(leaves) };
  }

  // Hot methods: per name, self and total (total counted once per stack even under recursion).
  function hotMethods(root) {
    var rows = new Map(), onPath = new Map();
    (function walk(node, top) {
      var depth = onPath.get(node.n) || 0, kids = node.c;
      if (!top) {
        var r = rows.get(node.n);
        if (!r) rows.set(node.n, r = { name: node.n, self: 0, total: 0 });
        r.self += selfOf(node);
        if (!depth) r.total += node.v;
      }
      if (!kids) return;
      onPath.set(node.n, depth + 1);
      for (var k = 0; k < kids.length; k++) walk(kids[k], false);
      onPath.set(node.n, depth);
    })(root, true);
    return Array.from(rows.values()).sort(byWeight);
  }

  // A tree's tables, made once per tree (the UI hands over its own, made for every measure at
  // once, as data.tables). They are read from the top-down tree whichever direction is drawn:
  // a method's self and total do not depend on which way the graph is drawn.
  var tablesMade = new WeakMap();
  function tablesOf(data) {
    if (data.tables) return data.tables;
    var t = tablesMade.get(data.root);
    if (!t) {
      t = leafKind(data.measure) === 'method' ? { hot: hotMethods(data.root) }
                                              : sitesAndLeaves(data.root);
      tablesMade.set(data.root, t);
    }
    return t;
  }

  // The bottom-up tree of a top-down one, made once per tree.
  var invertedMade = new WeakMap();
  function invertedOf(root) {
    var t = invertedMade.get(root);
    if (!t) invertedMade.set(root, t = invert(root));
    return t;
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
    if (this.graph) this.graph.setAttribute('data-measure', data.measure || '');
    this.tree = this.inverted ? invertedOf(data.root) : data.root;
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
      self.tree = self.inverted ? invertedOf(self.data.root) : self.data.root;
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
    this.listen();
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

  // The frames are <div>s (what a test or a user's tools can read: data-name, data-value, style
  // left/width in percent, top in px), new ones built in one fragment; what is
  // narrower than a pixel is not drawn, a frame too narrow for a letter gets no text, and the
  // tooltip is written when the pointer first rests on a frame. Clicks and hovers are handled
  // once for the whole graph (build()). This keeps a redraw of a 100k-stack profile far below a
  // second: formatting numbers and attaching listeners per frame was most of it. A redraw (a new
  // measure, a live update, a zoom) reuses the <div>s already drawn, in drawing order, and
  // changes only what differs: the browser then lays out again what moved, but makes no new
  // elements and measures no text that stayed the same.
  FlameGraph.prototype.draw = function () {
    var g = this.graph, total = this.tree.v;
    // Read before anything below changes the page, so that it costs no layout of its own.
    var width = g.clientWidth || 1400;  // 0 until laid out (a page being built): a common width
    var chain = this.focus(), focus = chain[chain.length - 1];
    var rowH = 18, frames = [], maxDepth = 0, q = this.query, matched = 0;
    var minFrac = Math.max(0.0005, 1 / width), textFrac = 12 / width;
    // Ancestors of the focus take the full width.
    var parent = null;
    chain.forEach(function (node, depth) {
      var f = { node: node, depth: depth, x: 0, w: 1, ancestor: depth < chain.length - 1,
                parent: parent, match: false, underMatch: false };
      if (node !== focus) frames.push(f);
      parent = f;
    });
    var focusFrame = parent;
    frames.push(focusFrame);
    // A match counts once: not again below a matching frame.
    function mark(f) {
      f.underMatch = !!f.parent && (f.parent.match || f.parent.underMatch);
      f.match = !!q && f.node.n.indexOf(q) >= 0;
      if (f.match && !f.underMatch) matched += f.node.v;
    }
    frames.forEach(mark);
    (function layout(f) {
      var node = f.node, kids = node.c;
      if (f.depth > maxDepth) maxDepth = f.depth;
      if (!kids || !(focus.v > 0)) return;
      var cx = f.x;
      for (var i = 0; i < kids.length; i++) {
        var c = kids[i], cw = c.v / focus.v;
        if (cw >= minFrac) {
          var k = { node: c, depth: f.depth + 1, x: cx, w: cw, parent: f };
          mark(k);
          frames.push(k);
          layout(k);
        }
        cx += cw;
      }
    })(focusFrame);
    var height = (maxDepth + 1) * rowH;
    g.style.height = height + 'px';
    var icicle = this.orientation === 'icicle', decorate = this.options.decorate;
    var drawn = g.children, box = null;
    for (var i = 0; i < frames.length; i++) {
      var f = frames[i], name = f.node.n, d = drawn[i];
      if (!d) {
        d = document.createElement('div');
        (box || (box = document.createDocumentFragment())).appendChild(d);
      }
      var cls = 'fg-frame' + (f.ancestor ? ' fg-dim' : '') + (f.match ? ' fg-match' : '');
      if (d.className !== cls) d.className = cls;
      if (d.getAttribute('data-name') !== name) d.setAttribute('data-name', name);
      d.setAttribute('data-value', String(f.node.v));
      // Each property set only when it changed (one value parsed, not a whole style string).
      var st = d.style, left = (100 * f.x) + '%', w = (100 * f.w) + '%';
      var top = (icicle ? f.depth * rowH : height - (f.depth + 1) * rowH) + 'px';
      if (d.fgLeft !== left) st.left = d.fgLeft = left;
      if (d.fgWidth !== w) st.width = d.fgWidth = w;
      if (d.fgTop !== top) st.top = d.fgTop = top;
      if (d.fgHueOf !== name) { st.background = hue(name); d.fgHueOf = name; }
      var text = f.w >= textFrac ? name : '';
      if (d.textContent !== text) d.textContent = text;
      if (d.title) d.removeAttribute('title');  // written again on hover, for this frame
      d.fgFrame = f;
      if (decorate) { decorate(d, f.node); d.fgHueOf = null; }  // e.g. the diff's colours
    }
    while (drawn.length > frames.length) g.removeChild(g.lastChild);
    if (box) g.appendChild(box);
    this.matchInfo.textContent = q ? 'matched ' + fmt(matched, this.data.unit || '', total) : '';
    if (this.options.onDraw) this.options.onDraw(this);
  };

  // The names from the root to a drawn frame (what a click zooms to).
  function pathOf(f) {
    var path = [];
    for (; f && f.parent; f = f.parent) path.unshift(f.node.n);
    return path;
  }

  // One listener each for the whole graph: hovering a frame shows it in the info line (and
  // writes its tooltip the first time), clicking zooms to it.
  FlameGraph.prototype.listen = function () {
    var self = this, g = this.graph;
    function frameAt(e) {
      var t = e.target;
      while (t && t !== g && !t.fgFrame) t = t.parentNode;
      return t && t.fgFrame ? t : null;
    }
    g.addEventListener('mouseover', function (e) {
      var d = frameAt(e);
      if (!d) return;
      var node = d.fgFrame.node, unit = self.data.unit || '', total = self.tree.v;
      if (!d.title) {
        d.title = node.n + '\n' + fmt(node.v, unit, total) + ', self ' +
                  fmt(selfOf(node), unit, total);
      }
      self.info.textContent = node.n + '  \u2014  ' + fmt(node.v, unit, total);
    });
    g.addEventListener('click', function (e) {
      var d = frameAt(e);
      if (!d) return;
      self.zoomPath = pathOf(d.fgFrame);
      self.draw();
    });
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
    var tables = tablesOf(this.data);
    if (kind === 'method') {
      fill(this.table, tables.hot, 'method', 'self', 'total');
      return;
    }
    fill(this.table, tables.sites, kind === 'class' ? 'site \u2192 class' : 'site \u2192 monitor',
         unit, null);
    fill(this.leafTable, tables.leaves, kind === 'class' ? 'class' : 'monitor', unit, null);
  };

  // Call tree as nested <details>, children largest first, opened along the heaviest path. A
  // node's children are made when it is first opened (a 100k-stack tree would otherwise be
  // thousands of elements no one sees); at most `budget` per level.
  FlameGraph.prototype.drawTree = function () {
    var box = this.treeBox, unit = this.data.unit || '', total = this.tree.v, budget = 3000;
    box.textContent = '';
    function add(parent, node, open) {
      var kids = (node.c || []).slice().sort(function (a, b) { return b.v - a.v; });
      kids.slice(0, budget).forEach(function (k, i) {
        var d = el('details');
        d.appendChild(el('summary', null, fmt(k.v, unit, total) + '  ' + k.n));
        parent.appendChild(d);
        if (!k.c || !k.c.length) return;
        if (open && i === 0 && k.v * 20 > total) {
          d.open = true;
          add(d, k, true);
          return;
        }
        d.addEventListener('toggle', function made() {
          d.removeEventListener('toggle', made);
          if (d.open) add(d, k, false);
        });
      });
    }
    add(box, this.tree, true);
  };

  global.JvmprofFlame = { FlameGraph: FlameGraph, invert: invert, hotMethods: hotMethods,
                          sitesAndLeaves: sitesAndLeaves, tablesOfMeasures: tablesOfMeasures,
                          projectTree: projectTree, count: count };
})(window);
