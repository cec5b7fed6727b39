// SPDX-License-Identifier: Apache-2.0
// The History view of jvmprof serve --store: one timeline per measure stored in a time window
// (its total per bucket, stacked by the value of a chosen label), all on one time axis, above the
// flame graph of the selected range and measure, every stored period of every JVM that matches
// the label filter merged. Dragging on any timeline selects the range for all of them and shows
// that timeline's measure; "compare" keeps the selection as the "before" range and shows the next
// one as a differential flame graph or as the two flame graphs side by side. The query lives in
// the address's hash (#history?from=..&to=..&measure=..&match=k=v&group=k&selFrom=..&selTo=..
// &baseFrom=..&baseTo=..&compare=side), so a copied address reopens the same view. Names and
// label values come from profiled JVMs: they are set as text only.
'use strict';
(function (global) {
  var el = JvmprofDom.el, api = JvmprofDom.api;
  var SVG = 'http://www.w3.org/2000/svg';
  // A timeline's plot height: one measure alone gets the tall one.
  var WIDTH_FALLBACK = 900, HEIGHT_ONE = 140, HEIGHT_MANY = 64, AXIS = 18;
  var COLOURS = ['#1e88e5', '#e53935', '#43a047', '#fb8c00', '#8e24aa', '#00897b', '#6d4c41',
                 '#3949ab', '#c0ca33', '#d81b60'];

  // What is asked for (kept in the hash) and what was last drawn.
  var q = { from: '-1h', to: 'now', measure: 'cpu-samples', match: [], group: '',
            sel: null, base: null, compare: 'diff' };
  var view = { shown: false, built: false, timeline: null, request: 0, awaitingAfter: false,
               labels: {}, measures: [] };

  function $(id) { return document.getElementById(id); }

  function readHash() {
    var h = location.hash;
    if (h.indexOf('#history') !== 0) return false;
    var p = new URLSearchParams(h.slice(h.indexOf('?') + 1 || h.length));
    q.from = p.get('from') || '-1h';
    q.to = p.get('to') || 'now';
    q.measure = p.get('measure') || 'cpu-samples';
    q.match = p.getAll('match').filter(function (m) { return m.indexOf('=') > 0; });
    q.group = p.get('group') || '';
    var range = function (a, b) {
      var x = Number(p.get(a)), y = Number(p.get(b));
      return p.get(a) && p.get(b) && x < y ? [x, y] : null;
    };
    q.sel = range('selFrom', 'selTo');
    q.base = q.sel ? range('baseFrom', 'baseTo') : null;
    q.compare = p.get('compare') === 'side' ? 'side' : 'diff';
    return true;
  }

  function queryParams(withSelection) {
    var p = new URLSearchParams();
    if (withSelection && q.sel) {
      p.set('from', String(q.sel[0]));
      p.set('to', String(q.sel[1]));
    } else {
      p.set('from', q.from);
      p.set('to', q.to);
    }
    p.set('measure', q.measure);
    q.match.forEach(function (m) { p.append('match', m); });
    return p;
  }

  function writeHash() {
    var p = queryParams(false);
    if (q.group) p.set('group', q.group);
    if (q.sel) { p.set('selFrom', String(q.sel[0])); p.set('selTo', String(q.sel[1])); }
    if (q.base) { p.set('baseFrom', String(q.base[0])); p.set('baseTo', String(q.base[1])); }
    if (q.base && q.compare === 'side') p.set('compare', 'side');
    global.history.replaceState(null, '', location.pathname + '#history?' + p.toString());
  }

  function iso(ms) { return new Date(ms).toISOString().replace('.000Z', 'Z'); }
  function clock(ms) { return new Date(ms).toISOString().slice(11, 19); }
  function span(r) { return iso(r[0]) + ' .. ' + iso(r[1]); }

  function build(section) {
    section.textContent = '';
    var head = el('h2', null, 'Profile history');
    var store = el('span', 'hint');
    store.id = 'history-store';
    head.appendChild(document.createTextNode(' '));
    head.appendChild(store);
    var form = el('div', 'history-query');
    function field(label, input) {
      var l = el('label', null, label + ' ');
      l.appendChild(input);
      form.appendChild(l);
      return input;
    }
    var from = field('from', el('input'));
    from.id = 'history-from';
    from.title = 'RFC 3339, relative ("-1h", "-30m", "now") or ms since the epoch';
    var to = field('to', el('input'));
    to.id = 'history-to';
    to.title = from.title;
    var measure = field('measure', el('select'));
    measure.id = 'history-measure';
    var filter = field('filter', el('input'));
    filter.id = 'history-filter';
    filter.type = 'search';
    filter.placeholder = 'label=value ...';
    filter.title = 'only JVMs with every one of these labels';
    var group = field('stack by', el('select'));
    group.id = 'history-group';
    var apply = el('button', null, 'show');
    apply.id = 'history-apply';
    form.appendChild(apply);
    var labels = el('div', 'history-labels hint');
    labels.id = 'history-labels';
    var status = el('div', 'history-status');
    status.id = 'history-status';
    var timeline = el('div', 'history-timeline');
    timeline.id = 'history-timeline';
    var bar = el('div', 'history-selection');
    var selText = el('span');
    selText.id = 'history-selected';
    var compare = el('button', null, 'compare…');
    compare.id = 'history-compare';
    compare.title = 'keep the selected range as "before", then drag the range to compare with it';
    var mode = el('select');
    mode.id = 'history-compare-mode';
    mode.title = 'how two ranges are compared';
    options(mode, [['diff', 'as a diff'], ['side', 'side by side']]);
    var whole = el('button', null, 'whole window');
    whole.id = 'history-whole';
    var exportLink = el('a', null, 'collapsed stacks');
    exportLink.id = 'history-export';
    bar.append(selText, ' ', compare, ' ', mode, ' ', whole, ' export: ', exportLink);
    var graph = el('div', 'history-graph');
    graph.id = 'history-graph';
    section.append(head, form, labels, status, timeline, bar, graph);

    function applyForm() {
      q.from = from.value.trim() || '-1h';
      q.to = to.value.trim() || 'now';
      q.measure = measure.value || 'cpu-samples';
      q.match = filter.value.split(/\s+/).filter(function (w) { return w.indexOf('=') > 0; });
      q.group = group.value;
      redraw();
    }
    [from, to, filter].forEach(function (i) { i.addEventListener('change', applyForm); });
    group.addEventListener('change', applyForm);
    // Another measure: the timelines (every measure's) stay, the graph changes.
    measure.addEventListener('change', function () {
      q.measure = measure.value || 'cpu-samples';
      redraw(true);
    });
    apply.addEventListener('click', applyForm);
    compare.addEventListener('click', function () {
      if (q.base || view.awaitingAfter) {
        q.base = null;
        view.awaitingAfter = false;
      } else {
        if (!q.sel) return;
        view.awaitingAfter = true;  // the next drag is the "after" range
      }
      redraw(true);
    });
    mode.addEventListener('change', function () {
      q.compare = mode.value === 'side' ? 'side' : 'diff';
      redraw(true);
    });
    whole.addEventListener('click', function () {
      q.sel = null;
      q.base = null;
      view.awaitingAfter = false;
      redraw(true);
    });
    view.built = true;
  }

  // The form shows q; labels and measures from the store fill the pickers.
  function fillForm() {
    // Not the box being typed in: a change event of another would overwrite what is half typed.
    var put = function (id, value) { if (document.activeElement !== $(id)) $(id).value = value; };
    put('history-from', q.from);
    put('history-to', q.to);
    put('history-filter', q.match.join(' '));
    // The pickers' options are made again only when they change: a select being used keeps
    // its elements.
    var measure = $('history-measure');
    var measures = view.measures.length ? view.measures : [q.measure];
    options(measure, measures.map(function (m) { return [m, m]; }));
    measure.value = q.measure;
    var group = $('history-group');
    var keys = [['', '(nothing)']].concat(Object.keys(view.labels).map(function (k) { return [k, k]; }));
    if (q.group && !view.labels[q.group]) keys.push([q.group, q.group]);
    options(group, keys);
    group.value = q.group;
    var box = $('history-labels');
    box.textContent = '';
    keys = Object.keys(view.labels);
    box.appendChild(document.createTextNode(keys.length ? 'labels (click to filter): '
      : 'no labels stored (agents add them with label=KEY=VALUE)'));
    keys.forEach(function (k) {
      view.labels[k].forEach(function (v) {
        var word = k + '=' + v;
        var b = el('button', 'history-label' + (q.match.indexOf(word) >= 0 ? ' on' : ''), word);
        b.setAttribute('data-label', word);
        b.addEventListener('click', function () {
          var at = q.match.indexOf(word);
          if (at >= 0) q.match.splice(at, 1);
          else q.match.push(word);
          redraw();
        });
        box.appendChild(b);
      });
    });
  }

  // Sets a select's options to [value, text] pairs unless it has them already.
  function options(select, pairs) {
    var key = JSON.stringify(pairs);
    if (select.getAttribute('data-options') === key) return;
    select.setAttribute('data-options', key);
    select.textContent = '';
    pairs.forEach(function (p) {
      var o = el('option', null, p[1]);
      o.value = p[0];
      select.appendChild(o);
    });
  }

  function setStatus(text, error) {
    var s = $('history-status');
    s.textContent = text;
    s.className = 'history-status' + (error ? ' state-error' : '');
  }

  // A new query: the timeline and the graph. `keepTimeline`: only the selection changed.
  function redraw(keepTimeline) {
    writeHash();
    fillForm();
    var request = ++view.request;
    var current = function () { return request === view.request && view.shown; };
    if (!keepTimeline || !view.timeline) {
      var p = queryParams(false);
      p.set('measure', 'all');
      if (q.group) p.set('group', q.group);
      setStatus('loading the timelines…');
      api('/api/history/timeline?' + p.toString()).then(function (t) {
        if (!current()) return;
        view.timeline = t;
        drawTimeline();
        setStatus('');
      }, function (e) { if (current()) setStatus('cannot draw the timelines: ' + e.message, true); });
    } else {
      drawTimeline();
    }
    drawSelection();
    drawGraph(current);
  }

  function drawSelection() {
    var text = $('history-selected');
    var range = q.sel ? span(q.sel) : q.from + ' .. ' + q.to + ' (the whole window)';
    if (view.awaitingAfter) {
      text.textContent = 'before: ' + span(q.sel) + ' — now drag the range to compare with it';
    } else if (q.base) {
      text.textContent = 'before: ' + span(q.base) + ', after: ' + range;
    } else {
      text.textContent = 'selected: ' + range + (q.sel ? '' : ' — drag on the timeline to select');
    }
    $('history-compare').textContent = q.base || view.awaitingAfter ? 'stop comparing' : 'compare…';
    $('history-compare').disabled = !q.sel && !q.base;
    $('history-compare-mode').value = q.compare;
    $('history-export').href = '/api/history/flame?' + queryParams(true).toString() +
      '&format=collapsed';
  }

  function drawGraph(current) {
    var box = $('history-graph');
    if (view.awaitingAfter) return;  // the "before" graph stays until the second range is dragged
    box.setAttribute('data-state', 'loading');
    if (q.base) {
      var p = queryParams(true);
      p.set('baseFrom', String(q.base[0]));
      p.set('baseTo', String(q.base[1]));
      // Both ways of comparing draw the one answer of /diff: the two ranges' flame trees.
      api('/api/history/diff?' + p.toString()).then(function (d) {
        if (!current()) return;
        box.textContent = '';
        if (q.compare === 'side') {
          sideBySide(box, d);
          box.setAttribute('data-state', 'side');
          return;
        }
        new JvmprofDiff.DiffFlame(box, d.base, d.target,
                                  { baseName: span(q.base), targetName: q.sel ? span(q.sel) : 'window' });
        box.setAttribute('data-state', 'diff');
      }, function (e) { failed(box, current, e); });
      return;
    }
    api('/api/history/flame?' + queryParams(true).toString()).then(function (data) {
      if (!current()) return;
      box.textContent = '';
      if (!data.total) {
        box.appendChild(el('p', 'history-none', 'No ' + q.measure + ' stored in this range' +
          (q.match.length ? ' for ' + q.match.join(', ') : '') + '.'));
        box.setAttribute('data-state', 'empty');
        return;
      }
      new JvmprofFlame.FlameGraph(box, data, {});
      box.setAttribute('data-state', 'flame');
    }, function (e) { failed(box, current, e); });
  }

  // The two ranges' flame graphs next to each other, each under its range and total.
  function sideBySide(box, d) {
    var row = el('div', 'history-side'), graphs = [];
    [['before', q.base, d.base], ['after', q.sel, d.target]].forEach(function (s) {
      var col = el('div', 'history-side-col');
      col.id = 'history-side-' + s[0];
      var head = el('h3', 'history-side-head', s[0] + ': ' + span(s[1]) + ' — ' +
                    JvmprofFlame.count(s[2].total || 0, s[2].unit || ''));
      head.setAttribute('data-from-ms', s[1][0]);
      head.setAttribute('data-to-ms', s[1][1]);
      head.setAttribute('data-total', s[2].total || 0);
      var graph = el('div', 'history-side-graph');
      col.append(head, graph);
      row.appendChild(col);
      if (!s[2].total) {
        graph.appendChild(el('p', 'history-none', 'No ' + q.measure + ' stored in this range.'));
        return;
      }
      graphs.push([graph, s[2]]);
    });
    // Drawn once the columns are in the page, so that each graph takes its column's width.
    box.appendChild(row);
    graphs.forEach(function (g) { new JvmprofFlame.FlameGraph(g[0], g[1], {}); });
  }

  function failed(box, current, e) {
    if (!current()) return;
    box.textContent = '';
    box.appendChild(el('p', 'state-error', 'cannot draw the flame graph: ' + e.message));
    box.setAttribute('data-state', 'error');
  }

  function svgEl(tag, attrs) {
    var e = document.createElementNS(SVG, tag);
    Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    return e;
  }

  // One timeline per measure with data in the window (the picked measure's empty one when none
  // has), on one time axis drawn under the last; the picked measure's is marked.
  function drawTimeline() {
    var t = view.timeline, box = $('history-timeline');
    box.textContent = '';
    // Less the SVG's border, so that the page does not scroll sideways.
    var width = Math.max(300, (box.clientWidth || WIDTH_FALLBACK) - 2);
    var lines = t.timelines.length ? t.timelines
      : [{ measure: q.measure, unit: '', total: 0, points: [] }];
    var height = lines.length > 1 ? HEIGHT_MANY : HEIGHT_ONE;
    lines.forEach(function (line, i) {
      var row = el('div', 'history-row' + (line.measure === q.measure ? ' current' : ''));
      row.setAttribute('data-measure', line.measure);
      var name = el('button', 'history-measure', line.measure);
      name.title = 'show the flame graph of ' + line.measure;
      name.setAttribute('data-measure', line.measure);
      name.addEventListener('click', function () {
        q.measure = line.measure;
        redraw(true);
      });
      var total = el('span', 'hint', line.points.length ? ' ' + JvmprofFlame.count(line.total, line.unit)
        + ' in the window' : ' nothing stored in this window');
      row.append(name, total, timelineSvg(t, line, width, height, i === lines.length - 1));
      box.appendChild(row);
    });
    if (t.group) {
      var legend = el('div', 'history-legend');
      t.values.forEach(function (v) {
        var item = el('span', 'history-legend-item', t.group + '=' + (v || '(none)'));
        item.setAttribute('data-value', v);
        item.style.borderLeftColor = colourOf(t, v);
        legend.appendChild(item);
      });
      box.appendChild(legend);
    }
  }

  function colourOf(t, value) {
    var i = t.values.indexOf(value);
    return COLOURS[(i < 0 ? 0 : i) % COLOURS.length];
  }

  // Stacked bars, one per bucket; the plot spans the SVG's whole width, so that x maps to time
  // as (t - fromMs) / (toMs - fromMs) * width (the attributes say so, for tools and tests).
  function timelineSvg(t, line, width, height, withAxis) {
    var svg = svgEl('svg', { width: width, height: height + (withAxis ? AXIS : 1),
                             class: 'history-svg', 'data-measure': line.measure,
                             'data-from-ms': t.fromMs, 'data-to-ms': t.toMs,
                             'data-bucket-ms': t.bucketMs });
    var x = function (ms) { return (ms - t.fromMs) / (t.toMs - t.fromMs) * width; };
    var stacks = {}, max = 0;
    line.points.forEach(function (p) {
      var s = stacks[p.t] || (stacks[p.t] = { sum: 0, parts: [] });
      s.parts.push(p);
      s.sum += p.total;
      max = Math.max(max, s.sum);
    });
    Object.keys(stacks).forEach(function (key) {
      var s = stacks[key], y = height;
      var x0 = Math.max(0, x(Number(key))), x1 = Math.min(width, x(Number(key) + t.bucketMs));
      s.parts.forEach(function (p) {
        var h = max ? p.total / max * (height - 4) : 0;
        y -= h;
        var r = svgEl('rect', { x: x0, y: y, width: Math.max(1, x1 - x0 - 1), height: h,
                                fill: colourOf(t, p.value), class: 'history-bar', 'data-t': p.t,
                                'data-value': p.value, 'data-total': p.total });
        var tip = svgEl('title', {});
        tip.textContent = clock(p.t) + (t.group ? ' ' + t.group + '=' + (p.value || '(none)') : '') +
          ': ' + JvmprofFlame.count(p.total, line.unit);
        r.appendChild(tip);
        svg.appendChild(r);
      });
    });
    if (withAxis) {
      // Time ticks: about one per 120 px, at whole buckets.
      var ticks = Math.max(2, Math.floor(width / 120));
      for (var i = 0; i <= ticks; i++) {
        var ms = t.fromMs + (t.toMs - t.fromMs) * i / ticks;
        var label = svgEl('text', { x: Math.min(width - 2, Math.max(2, x(ms))), y: height + AXIS - 4,
                                    'text-anchor': i === 0 ? 'start' : i === ticks ? 'end' : 'middle',
                                    class: 'history-tick' });
        label.textContent = clock(ms);
        svg.appendChild(label);
      }
    }
    svg.appendChild(svgEl('line', { x1: 0, x2: width, y1: height, y2: height, class: 'history-axis' }));
    var scale = svgEl('text', { x: 4, y: 12, class: 'history-scale' });
    scale.textContent = line.points.length ? 'max ' + JvmprofFlame.count(max, line.unit) + ' per ' +
      (t.bucketMs >= 60000 ? t.bucketMs / 60000 + ' min' : t.bucketMs / 1000 + ' s')
      : 'no ' + line.measure + ' stored in this window';
    svg.appendChild(scale);
    var shade = function (r, cls) {
      if (!r) return null;
      var s = svgEl('rect', { x: Math.max(0, x(r[0])), y: 0, height: height, class: cls,
                              width: Math.max(1, Math.min(width, x(r[1])) - Math.max(0, x(r[0]))) });
      svg.appendChild(s);
      return s;
    };
    shade(q.base, 'history-base');
    var sel = shade(q.sel, 'history-sel');
    listen(svg, sel, width, height, t, line.measure);
    return svg;
  }

  // Drag to select: the range snaps outwards to whole buckets (a period counts by its start).
  // The range is every timeline's; the measure becomes this one's.
  function listen(svg, sel, width, height, t, measure) {
    var time = function (px) { return t.fromMs + Math.max(0, Math.min(width, px)) / width * (t.toMs - t.fromMs); };
    var px = function (e) { return e.clientX - svg.getBoundingClientRect().left; };
    svg.addEventListener('mousedown', function (down) {
      down.preventDefault();
      var start = px(down);
      var live = sel || svgEl('rect', { y: 0, height: height, class: 'history-sel' });
      if (!sel) svg.appendChild(live);
      function move(e) {
        var a = Math.max(0, Math.min(start, px(e))), b = Math.min(width, Math.max(start, px(e)));
        live.setAttribute('x', a);
        live.setAttribute('width', Math.max(1, b - a));
      }
      function up(e) {
        document.removeEventListener('mousemove', move);
        document.removeEventListener('mouseup', up);
        var a = time(Math.min(start, px(e))), b = time(Math.max(start, px(e)));
        var lo = Math.floor(a / t.bucketMs) * t.bucketMs;
        var hi = Math.ceil(b / t.bucketMs) * t.bucketMs;
        if (hi <= lo) hi = lo + t.bucketMs;  // a click: the bucket under the pointer
        if (view.awaitingAfter) {
          q.base = q.sel;
          view.awaitingAfter = false;
        }
        q.sel = [lo, hi];
        q.measure = measure;
        redraw(true);
      }
      document.addEventListener('mousemove', move);
      document.addEventListener('mouseup', up);
    });
  }

  function open() {
    view.shown = true;
    $('history').hidden = false;
    $('empty').hidden = true;
    $('profile').hidden = true;
    if (!view.built) build($('history'));
    if (location.hash.indexOf('#history') !== 0) writeHash();
    Promise.all([api('/api/history'), api('/api/history/labels')]).then(function (r) {
      $('history-store').textContent = 'store: ' + r[0].store;
      view.measures = r[0].measures;
      view.labels = r[1];
      view.timeline = null;
      redraw();
    }, function (e) {
      setStatus(e.message, true);
    });
  }

  function close() {
    if (!view.shown) return;
    view.shown = false;
    view.request++;
    $('history').hidden = true;
    if (location.hash.indexOf('#history') === 0) global.history.replaceState(null, '', location.pathname);
  }

  // Read before app.js drops the token from the address (it keeps the hash).
  var opening = readHash();
  document.addEventListener('DOMContentLoaded', function () {
    $('history-open').addEventListener('click', function () { readHash(); open(); });
    if (opening) open();
  });

  global.JvmprofHistory = { open: open, close: close, shown: function () { return view.shown; } };
})(window);
