// SPDX-License-Identifier: Apache-2.0
// The heap view's comparison of two dumps: pick the older and the newer of the loaded profiles
// with a heap dump, see each class's growth in instances, shallow and retained bytes; click a
// column heading to sort by it (again to reverse). Class names are set with textContent.
'use strict';
window.JvmprofHeapDiff = (function () {
  var el = JvmprofDom.el;
  function signed(n) { return (n > 0 ? '+' : '') + n.toLocaleString('en-US'); }

  var COLUMNS = [
    ['class', 'class', function (d) { return d['class']; }],
    ['instances', '+instances', function (d) { return d.instancesAfter - d.instancesBefore; }],
    ['instances-after', 'instances (old → new)', function (d) { return d.instancesAfter; }],
    ['shallow', '+shallow bytes', function (d) { return d.shallowAfter - d.shallowBefore; }],
    ['retained', '+retained bytes', function (d) { return d.retainedAfter - d.retainedBefore; }]];

  function drawTable(box, rows, sort) {
    box.textContent = '';
    var col = COLUMNS.filter(function (c) { return c[0] === sort.key; })[0];
    rows = rows.slice().sort(function (a, b) {
      var x = col[2](a), y = col[2](b);
      var r = typeof x === 'string' ? x.localeCompare(y) : y - x;
      return sort.reverse ? -r : r;
    });
    var t = el('table', 'data heap-diff-table');
    var h = el('tr');
    COLUMNS.forEach(function (c) {
      var th = el('th', 'sortable' + (c[0] === sort.key ? ' sorted' : ''),
                  c[1] + (c[0] === sort.key ? (sort.reverse ? ' ▲' : ' ▼') : ''));
      th.setAttribute('data-sort', c[0]);
      th.addEventListener('click', function () {
        sort.reverse = sort.key === c[0] ? !sort.reverse : false;
        sort.key = c[0];
        drawTable(box, rows, sort);
      });
      h.appendChild(th);
    });
    t.appendChild(h);
    rows.forEach(function (d) {
      var tr = el('tr');
      tr.append(el('td', null, d['class']),
                el('td', 'num', signed(d.instancesAfter - d.instancesBefore)),
                el('td', 'num', d.instancesBefore.toLocaleString('en-US') + ' → ' +
                                d.instancesAfter.toLocaleString('en-US')),
                el('td', 'num', signed(d.shallowAfter - d.shallowBefore)),
                el('td', 'num', signed(d.retainedAfter - d.retainedBefore)));
      t.appendChild(tr);
    });
    box.appendChild(t);
  }

  // The picker shown now (one heap view at a time): redrawn when the profiles with a heap change.
  var shown = null;

  function fill(profiles) {
    // The shown profile has a heap: its summary has arrived, whatever the last poll said.
    var withHeap = profiles.filter(function (p) { return p.heapDumpReady || p.id === shown.currentId; });
    var key = withHeap.map(function (p) { return p.id; }).join(',');
    if (key === shown.key) return;
    shown.key = key;
    var box = shown.box, currentId = shown.currentId;
    box.textContent = '';
    if (withHeap.length < 2) {
      box.appendChild(el('p', 'hint', 'Open or dump a second heap to compare (jvmprof serve OLD NEW, ' +
        'or "dump heap" twice in two JVMs).'));
      return;
    }
    function picker(id, chosen) {
      var s = el('select');
      s.id = id;
      withHeap.forEach(function (p) {
        var o = el('option', null, '#' + p.id + ' ' + p.name);
        o.value = String(p.id);
        s.appendChild(o);
      });
      s.value = String(chosen);
      return s;
    }
    var others = withHeap.filter(function (p) { return p.id !== currentId; });
    var before = picker('heap-diff-before', others.length ? others[0].id : currentId);
    var after = picker('heap-diff-after', currentId);
    var go = el('button', null, 'compare');
    go.id = 'heap-diff-compare';
    var form = el('div', 'heap-diff-form');
    form.append(el('label', null, 'old '), before, el('label', null, ' new '), after, go);
    box.appendChild(form);
    var result = el('div', 'heap-diff-result');
    box.appendChild(result);
    go.addEventListener('click', function () {
      result.textContent = 'comparing (indexing both dumps)…';
      JvmprofDom.api('/api/heap/diff?before=' + encodeURIComponent(before.value) + '&after=' +
                     encodeURIComponent(after.value)).then(function (d) {
        result.textContent = '';
        result.appendChild(el('p', null, d.classes.length + ' classes changed from #' + d.before +
          ' to #' + d.after));
        var table = el('div');
        result.appendChild(table);
        drawTable(table, d.classes, { key: 'shallow', reverse: false });
      }, function (e) { result.textContent = e.message; });
    });
  }

  return {
    // Draws the picker into `container`: `profiles` as /api/profiles lists them, `currentId` the
    // profile shown (the default "new" side).
    render: function (container, currentId, profiles) {
      var box = el('div', 'heap-diff');
      container.appendChild(box);
      shown = { box: box, currentId: currentId, key: null };
      fill(profiles);
    },
    // A newer list of profiles: the picker follows when another dump becomes ready (or goes).
    update: function (profiles) {
      if (shown && shown.box.isConnected) fill(profiles);
    }
  };
})();
