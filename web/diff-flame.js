// SPDX-License-Identifier: Apache-2.0
// jvmprof's differential flame graph: two flame trees of one measure (a base, "before", and a
// target, "after"; the shape jvmprof's /flame API and flame_json give) merged into one tree drawn
// at the target's widths and coloured by the change of each frame's self share of its profile's
// total (red grew, blue shrank), so profiles with different sample counts compare fairly. Frames
// only the base has are listed in the table. Names are untrusted: set as text only.
'use strict';
(function (global) {
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // The union of two trees: v = target value, w = base value (both raw).
  function merge(base, target) {
    function copy(node, key) {
      var out = { n: node.n, v: 0, w: 0, c: [] };
      out[key] = node.v;
      return out;
    }
    function add(into, node, key) {
      into[key] += node.v;
      (node.c || []).forEach(function (k) {
        var next = null;
        for (var i = 0; i < into.c.length; i++) if (into.c[i].n === k.n) { next = into.c[i]; break; }
        if (!next) { next = { n: k.n, v: 0, w: 0, c: [] }; into.c.push(next); }
        add(next, k, key);
      });
    }
    var root = copy({ n: target.root.n, v: 0 }, 'v');
    add(root, base.root, 'w');
    add(root, target.root, 'v');
    return root;
  }

  function selfOf(node, key) {
    var s = node[key];
    (node.c || []).forEach(function (k) { s -= k[key]; });
    return s;
  }

  function share(v, total) { return total > 0 ? v / total : 0; }
  function pct(x) { return (100 * x).toFixed(2) + '%'; }
  function pp(x) { return (x >= 0 ? '+' : '') + (100 * x).toFixed(2) + ' pp'; }

  // Per method (by name): self and total shares before and after, largest change first. A
  // method's total is counted once per stack even under recursion.
  function methodChanges(root, baseTotal, total) {
    var rows = {};
    (function walk(node, onPath) {
      var r = rows[node.n] || (rows[node.n] = { name: node.n, selfW: 0, selfV: 0, totalW: 0, totalV: 0 });
      r.selfW += selfOf(node, 'w');
      r.selfV += selfOf(node, 'v');
      if (!onPath[node.n]) { r.totalW += node.w; r.totalV += node.v; }
      onPath[node.n] = (onPath[node.n] || 0) + 1;
      node.c.forEach(function (k) { walk(k, onPath); });
      onPath[node.n]--;
    })(root, {});
    delete rows[root.n];
    return Object.keys(rows).map(function (k) {
      var r = rows[k];
      r.before = share(r.selfW, baseTotal);
      r.after = share(r.selfV, total);
      r.delta = r.after - r.before;
      r.totalDelta = share(r.totalV, total) - share(r.totalW, baseTotal);
      return r;
    }).sort(function (a, b) {
      // Largest change first, of self or of total (a caller whose callees moved has no self).
      var ka = Math.max(Math.abs(a.delta), Math.abs(a.totalDelta));
      var kb = Math.max(Math.abs(b.delta), Math.abs(b.totalDelta));
      return kb - ka || Math.abs(b.delta) - Math.abs(a.delta);
    });
  }

  // Draws into `container`; options: baseName, targetName, tableRows.
  function DiffFlame(container, base, target, options) {
    options = options || {};
    var root = merge(base, target);
    var baseTotal = base.root.v, total = target.root.v, unit = target.unit || '';
    var maxDelta = 0;
    (function walk(node) {
      maxDelta = Math.max(maxDelta, Math.abs(share(selfOf(node, 'v'), total) -
                                             share(selfOf(node, 'w'), baseTotal)));
      node.c.forEach(walk);
    })(root);
    container.textContent = '';
    container.setAttribute('data-base', options.baseName || '');
    var legend = el('p', 'diff-legend',
      'after: ' + (options.targetName || 'target') + ' (' + global.JvmprofFlame.count(total, unit) +
      '), before: ' + (options.baseName || 'base') + ' (' +
      global.JvmprofFlame.count(baseTotal, unit) + '). Widths: after. Colour: change of the ' +
      "frame's self share of its profile's total — red grew, blue shrank.");
    var graphBox = el('div', 'diff-graph');
    container.append(legend, graphBox);
    this.graph = new global.JvmprofFlame.FlameGraph(graphBox,
      { measure: target.measure, unit: unit, total: total, root: root }, {
        table: false,
        tree: false,
        decorate: function (div, node) {
          var before = share(selfOf(node, 'w'), baseTotal), after = share(selfOf(node, 'v'), total);
          var d = after - before;
          var t = maxDelta > 0 ? Math.min(1, Math.abs(d) / maxDelta) : 0;
          var light = Math.round(96 - 46 * t);
          div.style.background = d >= 0 ? 'hsl(0,85%,' + light + '%)' : 'hsl(220,85%,' + light + '%)';
          div.setAttribute('data-delta', String(d));
          div.title = node.n + '\nafter: ' + pct(share(node.v, total)) + ' total, ' + pct(after) +
            ' self\nbefore: ' + pct(share(node.w, baseTotal)) + ' total, ' + pct(before) +
            ' self\nchange (self): ' + pp(d);
        }
      });
    container.appendChild(el('h4', null, 'Change by method (shares of each profile\'s total)'));
    var table = el('table', 'fg-table diff-table');
    var head = el('tr');
    ['before', 'after', 'change', 'change (total)', 'method'].forEach(function (h) {
      head.appendChild(el('th', h === 'method' ? 'fg-name' : null, h));
    });
    table.appendChild(head);
    methodChanges(root, baseTotal, total).slice(0, options.tableRows || 50).forEach(function (r) {
      var tr = el('tr', 'diff-row');
      tr.setAttribute('data-name', r.name);
      tr.setAttribute('data-delta', String(r.delta));
      tr.setAttribute('data-total-delta', String(r.totalDelta));
      tr.append(el('td', null, pct(r.before)), el('td', null, pct(r.after)),
                el('td', r.delta >= 0 ? 'diff-up' : 'diff-down', pp(r.delta)),
                el('td', null, pp(r.totalDelta)), el('td', 'fg-name', r.name));
      table.appendChild(tr);
    });
    container.appendChild(table);
  }

  // The web UI's "Diff" tab: the selected profile is "after"; the user picks the "before" profile
  // (any other loaded file or live JVM with the same measure) and the measure.
  function drawView(p, view, ctx) {
    view.textContent = '';
    var cpu = ['cpu-samples', 'cpu-time', 'cpu-calls'];
    var measures = cpu.filter(function (m) { return p.measures.indexOf(m) >= 0; });
    var others = ctx.profiles.filter(function (o) {
      return o.id !== p.id && o.measures && measures.some(function (m) { return o.measures.indexOf(m) >= 0; });
    });
    if (!measures.length || !others.length) {
      view.appendChild(el('p', null, 'A differential flame graph needs this profile and another ' +
        'one (a file or a live JVM) with CPU data of the same kind.'));
      return;
    }
    var bar = el('div', 'diff-pick');
    var baseSel = el('select');
    baseSel.id = 'diff-base';
    others.forEach(function (o) {
      var opt = el('option', null, o.name);
      opt.value = String(o.id);
      baseSel.appendChild(opt);
    });
    var measureSel = el('select');
    measureSel.id = 'diff-measure';
    measures.forEach(function (m) { measureSel.appendChild(el('option', null, m)); });
    var label1 = el('label', null, 'before ');
    label1.appendChild(baseSel);
    var label2 = el('label', null, ' measure ');
    label2.appendChild(measureSel);
    var box = el('div', 'diff-box');
    bar.append(label1, label2, el('span', null, '  after: ' + p.name));
    view.append(bar, box);
    if (ctx.state.diffBase && others.some(function (o) { return String(o.id) === ctx.state.diffBase; }))
      baseSel.value = ctx.state.diffBase;
    if (ctx.state.diffMeasure && measures.indexOf(ctx.state.diffMeasure) >= 0)
      measureSel.value = ctx.state.diffMeasure;
    var shown = 0;  // the latest request: an older answer arriving late never draws over it
    function show() {
      var request = ++shown;
      ctx.state.diffBase = baseSel.value;
      ctx.state.diffMeasure = measureSel.value;
      var m = encodeURIComponent(measureSel.value);
      var baseProfile = others.filter(function (o) { return String(o.id) === baseSel.value; })[0];
      Promise.all([ctx.api('/api/profiles/' + baseSel.value + '/flame?measure=' + m),
                   ctx.api('/api/profiles/' + p.id + '/flame?measure=' + m)]).then(function (r) {
        if (!ctx.stillShown() || request !== shown) return;
        new DiffFlame(box, r[0], r[1], { baseName: baseProfile.name, targetName: p.name });
      }, function (e) {
        if (request !== shown) return;
        box.textContent = '';
        box.appendChild(el('p', 'state-error', 'cannot draw the difference: ' + e.message));
      });
    }
    baseSel.addEventListener('change', show);
    measureSel.addEventListener('change', show);
    show();
  }

  global.JvmprofDiff = { merge: merge, methodChanges: methodChanges, DiffFlame: DiffFlame,
                         drawView: drawView };
})(window);
