// SPDX-License-Identifier: Apache-2.0
// jvmprof serve's UI: the list of profiles (live JVMs and files), HPROF's commands for a live JVM,
// and the views (CPU and allocation flame graphs, monitors, threads). It polls the server once a
// second and redraws the open view when the profile has new sections. Every string from a profile
// is set with textContent: nothing from a JVM is ever parsed as HTML.
'use strict';
(function () {
  var state = { profiles: [], jvms: [], agents: null, follow: null, selected: null, tab: 'cpu', measure: null, perThread: false,
                drawnKey: null, graph: null, paused: false, autoSent: {}, polledAt: 0,
                depthShown: null };
  var COMMANDS = [
    ['gc', 'GC'], ['dump-heap', 'dump heap'], ['sites', 'sites'], ['heap-summary', 'heap summary'],
    ['cpu-samples', 'CPU samples'], ['traces', 'traces'], ['cpu-on', 'CPU on'], ['cpu-off', 'CPU off'],
    ['alloc-on', 'alloc on'], ['alloc-off', 'alloc off'], ['reset-cpu', 'reset CPU'],
    ['reset-sites', 'reset sites'], ['monitor-dump', 'monitor dump']];
  // What a button does, where its name does not say it all.
  var TITLES = {
    'reset-sites': 'HPROF\'s reset: each site\'s allocated counts restart from its objects live now; ' +
      'live counts stay (those objects are still in the heap)',
    'monitor-dump': 'MONITOR TIME and MONITOR DUMP now (HPROF with monitor=y, format=a)' };
  // The live views refresh themselves by asking for their section; how old it is is shown.
  var AUTO = { cpu: 'cpu-samples', alloc: 'sites', monitors: 'monitor-dump' };
  var SECTIONS = { cpu: ['CPU SAMPLES', 'CPU TIME'], alloc: ['SITES'],
                   monitors: ['MONITOR TIME', 'MONITOR DUMP'], heap: ['HEAP DUMP'] };
  var TABS = [['cpu', 'CPU'], ['alloc', 'Allocation'], ['monitors', 'Monitors'], ['threads', 'Threads'],
              ['heap', 'Heap'], ['diff', 'Diff']];
  var MEASURES = { cpu: ['cpu-samples', 'cpu-time', 'cpu-calls'],
                   alloc: ['alloc-bytes', 'alloc-objects', 'live-bytes', 'live-objects'] };

  var el = JvmprofDom.el, api = JvmprofDom.api, bytes = JvmprofDom.bytes, table = JvmprofDom.table;
  function $(id) { return document.getElementById(id); }

  // Drop the token from the address bar (the cookie carries it now) so it is not shared by copying.
  if (location.search.indexOf('token=') >= 0) history.replaceState(null, '', location.pathname + location.hash);

  function current() {
    return state.profiles.filter(function (p) { return p.id === state.selected; })[0];
  }

  // A JVM by who it is (labels, main class, pid and host from its IDENTITY report) rather than by
  // the address it connected from; files and agents without one by their name.
  function displayName(p) {
    return p.identity && p.identity.pid ? p.identity.name : p.name;
  }

  // The list's filter box ("service=checkout", "env=prod web-3"): every word must be in the
  // JVM's name, labels or identity. Made here, above the list, once.
  function filterBox() {
    var box = $('profile-filter');
    if (box) return box;
    box = document.createElement('input');
    box.id = 'profile-filter';
    box.type = 'search';
    box.placeholder = 'filter: label=value, host, class';
    box.addEventListener('input', function () { state.listKey = null; drawList(); });
    var ul = $('profile-list');
    ul.parentNode.insertBefore(box, ul);
    return box;
  }

  function matches(p, words) {
    var id = p.identity || {};
    var labels = Object.keys(id.labels || {}).map(function (k) { return k + '=' + id.labels[k]; });
    var text = [p.name, id.host, id.main, id.vm, String(id.pid || '')].concat(labels).join(' ');
    return words.every(function (w) { return text.indexOf(w) >= 0; });
  }

  // One session's row: a profile, or one connection of a JVM.
  function sessionItem(p, label) {
    var li = el('li', p.id === state.selected ? 'selected' : '', label);
    li.setAttribute('data-id', p.id);
    var periods = p.periods && p.periods.received ? ', ' + p.periods.received + ' periods' : '';
    var dropped = p.droppedEvents ? ', ' + p.droppedEvents + ' dropped' : '';
    // A reconnect's session says which of the JVM's connections it is.
    var id = p.identity || {};
    if (id.connection > 1) periods += ', connection ' + id.connection;
    var ended = p.endCause ? ' (' + p.endCause + ')' : '';
    li.appendChild(el('span', 'state', (p.live ? 'live, ' : 'file, ') + p.state + ended + ', ' +
      bytes(p.bytes) + periods + dropped));
    li.addEventListener('click', function () { select(p.id); });
    return li;
  }

  // The JVM a session belongs to (/api/jvms), or null.
  function jvmOf(id) {
    return state.jvms.filter(function (j) {
      return j.connections.some(function (c) { return c.session === id; });
    })[0] || null;
  }

  // A connection from the profile store (to an earlier serve, or another collector sharing the
  // store): no session here to open, so a row of text only.
  function storedItem(c) {
    var li = el('li', 'stored', 'connection ' + c.connection);
    li.setAttribute('data-connection', c.connection);
    li.appendChild(el('span', 'state', 'earlier collector' +
      (c.collector ? ' (' + c.collector + ')' : '') + ', ended (' + c.endCause + ')' +
      (c.endKnown ? ', ' + bytes(c.bytes) + (c.periods ? ', ' + c.periods + ' periods' : '') : '')));
    return li;
  }

  // A JVM of several connections (it reconnected): one row for the JVM, its connections under
  // it. A click on the JVM's name opens its connection that is up (commands go there).
  function jvmItem(jvm, byId) {
    var li = el('li', 'jvm');
    li.setAttribute('data-key', jvm.key);
    var name = el('span', 'jvm-name', displayName(byId[jvm.current]));
    name.appendChild(el('span', 'state', jvm.connects + ' connections, ' + jvm.reconnects +
      ' reconnects, ' + jvm.drops + ' drops' + (jvm.droppedEvents ? ', ' + jvm.droppedEvents +
      ' events dropped' : '') + (jvm.connected ? ', connected' : ', not connected')));
    name.addEventListener('click', function () { select(jvm.current, jvm.key); });
    li.appendChild(name);
    var sub = el('ul', 'connections');
    jvm.connections.forEach(function (c) {
      var p = byId[c.session];
      if (p) sub.appendChild(sessionItem(p, 'connection ' + c.connection));
      else if (c.stored) sub.appendChild(storedItem(c));
    });
    li.appendChild(sub);
    return li;
  }

  function drawList() {
    var ul = $('profile-list');
    var words = filterBox().value.split(/\s+/).filter(function (w) { return w; });
    // Redrawn only when something shown changed, so clicks never land on a replaced element.
    var key = JSON.stringify([words, state.profiles.map(function (p) {
      return [p.id, displayName(p), p.live, p.state, p.bytes >> 10, p.id === state.selected,
        p.periods ? p.periods.received : 0, p.droppedEvents,
        p.identity ? p.identity.connection : 0, p.endCause];
    }), state.jvms.map(function (j) { return [j.key, j.current, j.connects, j.drops]; })]);
    if (key === state.listKey) return;
    state.listKey = key;
    ul.textContent = '';
    var byId = {}, grouped = {};
    state.profiles.forEach(function (p) { byId[p.id] = p; });
    state.jvms.forEach(function (j) {
      if (j.connections.length < 2 || !byId[j.current]) return;
      j.connections.forEach(function (c) { grouped[c.session] = j; });
    });
    var shown = {};
    state.profiles.forEach(function (p) {
      if (!matches(p, words)) return;
      var jvm = grouped[p.id];
      if (!jvm) return ul.appendChild(sessionItem(p, displayName(p)));
      // The JVM's row once, where its first matching connection would be.
      if (shown[jvm.key]) return;
      shown[jvm.key] = true;
      ul.appendChild(jvmItem(jvm, byId));
    });
  }

  // The selected JVM's connections (when it has more than one, or its one has ended).
  function drawConnections(p, box) {
    var jvm = jvmOf(p.id);
    if (!jvm || !p.live || (jvm.connections.length < 2 && !p.endCause)) return;
    function time(ms) { return ms ? new Date(ms).toISOString().substring(11, 19) : ''; }
    box.appendChild(el('div', 'connections-summary', 'connection history: ' + jvm.connects +
      ' connections, ' + jvm.reconnects + ' reconnects, ' + jvm.drops + ' drops'));
    // Stored connections (an earlier serve's) say which collector held them; one whose
    // collector stopped before writing its end has no end time, periods or bytes to show.
    var t = table('connection-history', ['connection', 'connected', 'ended', 'cause', 'gap',
      'periods', 'dropped events', 'dropped bytes', 'collector'], jvm.connections.map(function (c) {
      return [c.connection + (c.session === p.id ? ' (shown)' : ''), time(c.connectedMs),
        c.endKnown === false ? '?' : time(c.endedMs),
        c.endCause || (c.endedMs ? '' : 'connected'),
        c.gapMs ? (c.gapMs / 1000).toFixed(1) + ' s' : '', c.endKnown === false ? '?' : c.periods,
        c.droppedEventsAdded, bytes(c.droppedBytesAdded),
        c.stored ? 'earlier' + (c.collector ? ': ' + c.collector : '') : 'this serve'];
    }));
    t.id = 'connection-history';
    t.className += ' small';
    box.appendChild(t);
  }

  function select(id, follow) {
    JvmprofHistory.close();
    // Following a JVM: when its connection is replaced by a reconnect, the new one is shown.
    var jvm = jvmOf(id);
    state.follow = follow || (jvm && jvm.current === id ? jvm.key : null);
    state.selected = id;
    state.drawnKey = null;
    state.graph = null;
    drawList();
    drawProfile();
  }

  function drawProfile() {
    if (JvmprofHistory.shown()) return;  // the History view (history.js) has the main area
    var p = current();
    $('empty').hidden = !!p;
    $('profile').hidden = !p;
    if (!p) return;
    $('profile-name').textContent = displayName(p);
    var s = $('profile-state');
    s.textContent = 'state: ' + p.state + (p.format ? ', format=' + p.format : '') + ', ' +
      bytes(p.bytes) + ' received, ' + p.sections + ' sections, ' + p.traces + ' traces, ' +
      p.threads + ' threads, ' + p.heapDumps + ' heap dumps' +
      (p.sitesSampleBytes ? ', allocations sampled every ' + bytes(p.sitesSampleBytes) +
        ' (estimates)' : '') +
      (p.discarded ? ', ' + bytes(p.discarded) + ' read but not parsed after the error' : '');
    if (p.error) s.appendChild(el('div', 'state-error', p.error));
    var id = p.identity;
    if (id && id.pid) {
      // Who the JVM is (its IDENTITY report) and what its periods carried.
      s.appendChild(el('div', 'identity', 'JVM: pid ' + id.pid + ' on ' + id.host + ', ' +
        (id.main || 'unknown main class') + ', Java ' + (id.vm || '?') + ', started ' +
        new Date(id.startMs).toISOString() + ', from ' + id.address));
    }
    if (p.periods && p.periods.received) {
      var last = p.periods.latest[p.periods.latest.length - 1];
      s.appendChild(el('div', 'periods', p.periods.received + ' periods received (' +
        p.periods.kept + ' kept), the latest ' + new Date(last.startMs).toISOString() + ' to ' +
        new Date(last.endMs).toISOString() + ': ' + last.cpuSamples + ' CPU samples, ' +
        last.sites + ' allocation sites'));
    }
    drawConnections(p, s);
    if (p.droppedEvents) {
      s.appendChild(el('div', 'state-error', 'the agent dropped ' + p.droppedEvents +
        ' events (' + bytes(p.droppedBytes) + ') while this front end was not reading'));
    }
    var cs = p.cpuSampler;
    if (cs && cs.signals !== undefined) {
      // cpu=samples: what became of the sampler's signals (CPU SAMPLES header / sampler note).
      s.appendChild(el('div', cs.unattributable || cs.lost ? 'state-error' : '',
        'CPU sampler: ' + cs.signals + ' signals, ' + cs.taken + ' samples taken (' +
        cs.recovered + ' recovered from stubs), ' + cs.unattributable + ' unattributable' +
        (cs.lost ? ', ' + cs.lost + ' lost' : '')));
    }
    var reading = !p.live && p.state === 'reading' && p.size > 0;
    $('progress').hidden = !reading;
    if (reading) {
      $('progress-bar').value = Math.floor(100 * p.bytes / p.size);
      $('progress-text').textContent = 'reading ' + bytes(p.bytes) + ' of ' + bytes(p.size);
    }
    $('controls').hidden = !p.live;
    var canSend = p.live && (p.state === 'connected' || p.state === 'error');
    Array.prototype.forEach.call(document.querySelectorAll('#controls button'), function (b) {
      b.disabled = !canSend ||
        (b.getAttribute('data-command') === 'monitor-dump' && !offers(p, 'monitor-dump'));
    });
    drawSettings(p);
    autoRefresh(p);
    drawAge(p);
    drawLog(p);
    drawView(p);
    drawIndexing(p);
  }

  // Commands beyond JDK 8's protocol, which the agent announces in its settings.
  function offers(p, command) {
    var c = p.settings && p.settings.commands;
    return !!c && c.split(',').indexOf(command) >= 0;
  }

  // The agent's settings as HPROF last reported them (after each command), not as asked for.
  function drawSettings(p) {
    var box = $('agent-settings'), s = p.settings || {};
    var noThreads = s.thread === 'n';
    $('per-thread').disabled = noThreads;
    if (noThreads && state.perThread) { state.perThread = false; $('per-thread').checked = false; }
    $('per-thread-note').textContent = noThreads
      ? 'needs HPROF\'s thread=y: this JVM runs with thread=n, its traces name no thread' : '';
    if (!p.live) { box.textContent = ''; return; }
    if (!p.settingsReports) {
      box.removeAttribute('data-depth');
      box.textContent = 'This agent does not report its settings (JDK 8\'s HPROF does not): ' +
        'the depth box shows what was asked for, not what the agent uses.';
      return;
    }
    var parts = ['depth ' + s.depth, 'cpu=' + s.cpu +
      (s.cpu === 'samples' ? ' (sampling ' + s.sampling + ', every ' + s.interval + ' ms)' : ''),
      'heap=' + s.heap + (s.heap !== 'off' ? ' (tracking ' + s.tracking + ')' : ''),
      'monitor=' + s.monitor, 'thread=' + s.thread, 'format=' + s.format];
    box.textContent = 'the agent uses: ' + parts.join(', ') + ' (reported by HPROF ' +
      clock((p.sectionArrivedMs || {}).SETTINGS) + ')';
    box.setAttribute('data-depth', s.depth);
    // The depth box follows each new report, unless the user is typing in it.
    var seen = p.id + '/' + p.settingsReports;
    if (state.depthShown !== seen && document.activeElement !== $('depth')) {
      $('depth').value = s.depth;
      state.depthShown = seen;
    }
  }

  // Asks a live JVM for the open view's section every N seconds (one request at a time).
  function autoRefresh(p) {
    var every = parseInt($('refresh-every').value, 10);
    var cmd = AUTO[state.tab];
    if (!every || state.paused || !cmd || !p.live || p.state !== 'connected') return;
    if (cmd === 'monitor-dump' && !offers(p, cmd)) return;
    if (cmd === 'cpu-samples' && p.settings && p.settings.cpu === 'off') return;
    if (cmd === 'sites' && p.settings && p.settings.heap === 'off') return;
    var key = p.id + '/' + cmd, last = state.autoSent[key] || 0;
    if (Date.now() - last < every * 1000) return;
    if ((p.commands || []).some(function (c) { return c.command === cmd && c.state === 'waiting'; })) return;
    state.autoSent[key] = Date.now();
    send(cmd, { auto: true });
  }

  // How old the open view's data is: when its section last arrived.
  function drawAge(p) {
    var box = $('view-age'), names = SECTIONS[state.tab];
    $('refresh-controls').hidden = !names;
    if (!names) return;
    $('refresh-every').parentNode.hidden = !p.live;
    $('refresh-pause').hidden = !p.live;
    var at = 0;
    names.forEach(function (n) { at = Math.max(at, (p.sectionArrivedMs || {})[n] || 0); });
    if (!at) {
      box.textContent = 'no ' + names.join(' or ') + ' received yet';
      box.removeAttribute('data-arrived-ms');
      return;
    }
    // The server's clock for both ends: the browser's may differ.
    var age = Math.max(0, Math.round((p.serverNowMs - at + Date.now() - state.polledAt) / 1000));
    var every = parseInt($('refresh-every').value, 10);
    box.textContent = (p.live ? 'shown: ' + names.filter(function (n) {
      return (p.sectionArrivedMs || {})[n]; }).join(' and ') + ' received ' : 'read from the file ') +
      clock(at) + ', ' + age + ' s ago' +
      (p.live && p.state === 'connected' ? (state.paused || !every ? ' (refresh paused)' : '') : '');
    box.setAttribute('data-arrived-ms', at);
    box.className = p.live && p.state === 'connected' && every && !state.paused && age > 3 * every ? 'stale' : '';
  }

  // While the server indexes the heap dump, the heap view's bar shows the analysis library's
  // phase and percentage (the profile's status, polled once a second).
  function drawIndexing(p) {
    var bar = document.querySelector('#view .heap-status progress.heap-indexing');
    var ix = p.indexing;
    if (!bar || !ix || !ix.active || !ix.phase) return;
    bar.max = 100;
    bar.value = ix.percent;
    var label = bar.parentNode.querySelector('.heap-indexing-phase');
    if (label) label.textContent = ' indexing the heap dump: ' + ix.phase + ' ' + ix.percent + ' %';
  }

  function drawLog(p) {
    var t = $('command-log');
    t.textContent = '';
    (p.commands || []).slice(-8).reverse().forEach(function (c) {
      var tr = el('tr');
      var cls = c.state.replace(' ', '');
      tr.append(el('td', null, '#' + c.serial), el('td', null, c.command), el('td', cls, c.state),
                el('td', null, c.answeredMs >= 0 ? c.answeredMs + ' ms' : ''),
                el('td', null, c.detail));
      t.appendChild(tr);
    });
  }

  function send(command, extra) {
    var p = current();
    if (!p) return;
    var body = Object.assign({ command: command }, extra || {});
    api('/api/profiles/' + p.id + '/command', {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body)
    }).then(refresh, function (e) { $('status').textContent = command + ': ' + e.message; });
  }

  function buildControls() {
    var box = $('command-buttons');
    COMMANDS.forEach(function (c) {
      var b = el('button', null, c[1]);
      b.setAttribute('data-command', c[0]);
      if (TITLES[c[0]]) b.title = TITLES[c[0]];
      b.addEventListener('click', function () { send(c[0]); });
      box.appendChild(b);
    });
    $('set-depth').addEventListener('click', function () {
      send('depth', { depth: parseInt($('depth').value, 10) });
    });
    $('refresh-pause').addEventListener('click', function () {
      state.paused = !state.paused;
      $('refresh-pause').textContent = state.paused ? 'resume' : 'pause';
      var p = current();
      if (p) drawAge(p);
    });
    $('refresh-every').addEventListener('change', function () {
      state.autoSent = {};  // the new interval starts now
      var p = current();
      if (p) { autoRefresh(p); drawAge(p); }
    });
    $('exit').addEventListener('click', function () {
      if (window.confirm('End the JVM? HPROF calls exit(0) in the profiled program.')) {
        send('exit', { confirm: true });
      }
    });
    var tabs = $('tabs');
    TABS.forEach(function (t) {
      var b = el('button', null, t[1]);
      b.setAttribute('data-tab', t[0]);
      b.addEventListener('click', function () {
        state.tab = t[0];
        state.measure = null;
        state.drawnKey = null;
        state.graph = null;  // a new view starts unzoomed, unsearched
        drawProfile();
      });
      tabs.appendChild(b);
    });
    $('measure').addEventListener('change', function () {
      // The graph stays (its zoom, search and direction too) and redraws with the new measure's
      // values: what the user was looking at, weighed another way.
      state.measure = $('measure').value;
      state.drawnKey = null;
      drawProfile();
    });
    $('per-thread').addEventListener('change', function () {
      state.perThread = $('per-thread').checked;
      state.drawnKey = null;
      drawProfile();
    });
  }

  function drawView(p) {
    Array.prototype.forEach.call($('tabs').children, function (b) {
      b.className = b.getAttribute('data-tab') === state.tab ? 'on' : '';
    });
    // The heap view changes only with a new dump (indexing it is the slow part): the one the
    // server opens, so a redraw never follows the summary of the dump already shown.
    var key = state.tab === 'heap' ? [p.id, 'heap', p.heapDumpSerial].join('/')
      : [p.id, state.tab, state.measure, state.perThread, p.state, p.sections, p.traces, p.threads].join('/');
    if (key === state.drawnKey) {
      if (state.tab === 'heap' && window.JvmprofHeapDiff) JvmprofHeapDiff.update(state.profiles);
      return;
    }
    state.drawnKey = key;
    var graphTab = state.tab === 'cpu' || state.tab === 'alloc';
    $('view-options').hidden = !graphTab;
    var view = $('view');
    var exports = $('exports');
    exports.textContent = '';
    if (p.measures.length) {
      ['html', 'pprof', 'speedscope', 'collapsed'].forEach(function (f) {
        var a = el('a', null, f);
        a.href = '/api/profiles/' + p.id + '/export?to=' + f;
        exports.append(a, document.createTextNode(' '));
      });
      exports.insertBefore(document.createTextNode('export: '), exports.firstChild);
    }
    if (graphTab) {
      var have = MEASURES[state.tab].filter(function (m) { return p.measures.indexOf(m) >= 0; });
      var select = $('measure');
      select.textContent = '';
      have.forEach(function (m) { select.appendChild(el('option', null, m)); });
      if (!have.length) {
        state.graph = null;
        view.textContent = '';
        view.appendChild(el('p', null, state.tab === 'cpu'
          ? 'No CPU data yet (HPROF with cpu=samples or cpu=times; press "CPU samples" to ask a live JVM).'
          : 'No allocation sites yet (HPROF with heap=sites; press "sites" to ask a live JVM).'));
        return;
      }
      if (!state.measure || have.indexOf(state.measure) < 0) state.measure = have[0];
      select.value = state.measure;
      flameFor(p, have, state.measure).then(function (data) {
        if (state.drawnKey !== key) return;  // a late answer for a view no longer shown
        if (state.graph && state.graph.container === view && view.contains(state.graph.graph)) {
          state.graph.setData(data);  // live update keeps zoom, search and orientation
        } else {
          view.textContent = '';
          state.graph = new JvmprofFlame.FlameGraph(view, data, {});
        }
      });
      return;
    }
    state.graph = null;
    var stillShown = function () { return state.drawnKey === key; };
    if (state.tab === 'monitors') return drawMonitors(p, view, stillShown);
    if (state.tab === 'threads') return drawThreads(p, view, stillShown);
    if (state.tab === 'heap') return drawHeap(p, view, stillShown);
    if (state.tab === 'diff') {
      return JvmprofDiff.drawView(p, view, { profiles: state.profiles, api: api, state: state,
                                             stillShown: stillShown });
    }
  }

  // The view's flame data: one request brings every measure of the tab as one tree (a value per
  // measure at each node), kept until the profile changes. The tables under the graph are made
  // for every measure in one walk of it when it arrives; a switch of the measure then only takes
  // a view of the tree that makes nodes as the drawing asks for them (nothing is walked or
  // copied), and draws.
  function flameFor(p, have, measure) {
    var key = [p.id, state.tab, state.perThread, p.sections, p.traces, have.join(',')].join('/');
    var cache = state.flameCache;
    if (!cache || cache.key !== key) {
      cache = state.flameCache = { key: key, views: {}, data: api('/api/profiles/' + p.id +
        '/flame?measures=' + have.join(',') + (state.perThread ? '&threads=1' : ''))
        .then(function (multi) {
          multi.tables = JvmprofFlame.tablesOfMeasures(multi.root, multi.measures);
          return multi;
        })
        .catch(function (e) {
          if (state.flameCache && state.flameCache.key === key) state.flameCache = null;  // ask again
          throw e;
        }) };
    }
    return cache.data.then(function (multi) {
      var i = multi.measures.indexOf(measure);
      // One object per measure: the flame graph keeps what it derives (the bottom-up tree) by it.
      return cache.views[measure] || (cache.views[measure] = {
        measure: multi.measures[i], unit: multi.units[i], total: multi.totals[i],
        root: JvmprofFlame.projectTree(multi.root, i), tables: multi.tables[i] });
    });
  }

  function link(text, onClick) {
    var a = el('a', 'action', text);
    a.href = '#';
    a.addEventListener('click', function (e) { e.preventDefault(); onClick(); });
    return a;
  }

  // Heap: histogram (click a class for its instances, an instance for its paths to GC roots),
  // biggest objects by retained size, duplicate strings.
  function drawHeap(p, view, stillShown) {
    view.textContent = '';
    // Until the summary arrives the dump is being indexed (a big one takes a while): a bar,
    // indeterminate until drawIndexing() has the server's phase and percentage.
    var status = el('p', 'heap-status');
    status.append(el('progress', 'heap-indexing'), el('span', 'heap-indexing-phase', ' indexing the heap dump…'));
    view.appendChild(status);
    var base = '/api/profiles/' + p.id + '/heap/';
    api(base + 'summary').then(function (s) {
      if (!stillShown()) return;
      // The view shows this dump from now on, even if the last poll did not know of it yet: the
      // poll that does must not redraw it (and lose the object the user opened).
      state.drawnKey = [p.id, 'heap', s.dumpSerial].join('/');
      status.textContent = s.objects.toLocaleString('en-US') + ' objects, ' + bytes(s.shallowBytes) +
        ' (' + bytes(s.reachableBytes) + ' reachable), ' + s.classes + ' classes, ' + s.gcRoots + ' GC roots, ' +
        s.danglingReferences + ' dangling references' +
        (s.fillerObjects ? ', ' + s.fillerObjects + ' G1 filler arrays (' + bytes(s.fillerBytes) + ', not int[])' : '');
      if (s.damageWarning) view.appendChild(el('p', 'heap-warning', 'warning: ' + s.damageWarning));
      var detail = el('div', 'heap-detail');
      view.appendChild(el('h3', null, 'Class histogram'));
      var histogram = el('div', 'histogram-box');
      view.appendChild(histogram);
      drawHistogram(base, histogram, detail);
      view.appendChild(detail);
      view.appendChild(el('h3', null, 'Biggest objects (dominator tree)'));
      var dom = el('div');
      view.appendChild(dom);
      api(base + 'dominators').then(function (list) {
        dom.appendChild(table('dominators', ['object', 'retained', 'objects', 'retains'],
          list.map(function (b) {
            // The toggle opens the object's dominated children below it (the tree, downwards).
            var cell = el('div', 'domtree-cell');
            var children = el('div', 'domtree-children');
            cell.append(link(b.object['class'] + ' ' + b.object.id, function () { showObject(base, b.object.id, detail); }));
            // The chain of single-child dominators below it (the same bytes), as jvmprof dominators.
            b.chain.forEach(function (c) {
              cell.append(' \u2192 ', link(c['class'] + ' ' + c.id, function () { showObject(base, c.id, detail); }));
            });
            if (b.chainLength > b.chain.length) cell.append(' \u2192 \u2026 ' + (b.chainLength - b.chain.length) + ' more');
            cell.append(domToggle(base, b.object.id, children, 1, detail), children);
            return [cell, b.object.retained, b.retainedObjects,
                    b.retainedByClass.map(function (c) { return c.instances + ' ' + c.name; }).join(', ')];
          })));
      });
      view.appendChild(el('h3', null, 'Dominator tree'));
      var top = el('div', 'domtree');
      view.appendChild(top);
      domChildren(base, 'root', top, 0, 0, detail);
      view.appendChild(el('h3', null, 'Duplicate strings'));
      var dup = el('div');
      view.appendChild(dup);
      api(base + 'strings').then(function (r) {
        dup.appendChild(el('p', null, r.strings + ' strings (' + r.unreachable + ' of them unreachable), ' +
          bytes(r.wasted) + ' in duplicates'));
        dup.appendChild(table('strings', ['value', 'copies', 'wasted bytes'],
          r.top.map(function (d) {
            // The value opens one of the copies in the object view.
            return [d.example ? link(d.value === '' ? '(empty string)' : d.value, function () { showObject(base, d.example, detail); }) : d.value,
                    d.count, d.wasted];
          })));
      });
      if (window.JvmprofHeapDiff) {
        view.appendChild(el('h3', null, 'Compare with another dump'));
        JvmprofHeapDiff.render(view, p.id, state.profiles);
      }
    }, function (e) { status.textContent = e.message; });
  }

  // The class histogram, every class reachable: a filter on the name, a page at a time, sorted
  // by a column (a click on its heading; again: the other way round), all done by the server.
  var HISTOGRAM_PAGE = 100;
  function drawHistogram(base, box, detail) {
    var q = { filter: '', sort: 'shallow', order: 'desc', offset: 0 }, seq = 0;
    var filter = el('input', 'histogram-filter');
    filter.type = 'search';
    filter.placeholder = 'filter classes by name';
    var prev = el('button', 'histogram-prev', '‹ previous'), next = el('button', 'histogram-next', 'next ›');
    var info = el('span', 'histogram-info');
    var bar = el('div', 'histogram-bar'), holder = el('div');
    bar.append(filter, prev, next, info);
    box.append(bar, holder);
    var KEYS = ['name', 'instances', 'shallow', 'retained'];
    function load() {
      var mine = ++seq;
      api(base + 'classes?filter=' + encodeURIComponent(q.filter) + '&sort=' + q.sort + '&order=' + q.order +
          '&offset=' + q.offset + '&limit=' + HISTOGRAM_PAGE).then(function (r) {
        if (mine !== seq) return;  // a later filter or page is on its way
        var t = table('histogram', ['class', 'instances', 'shallow', 'retained'], r.classes.map(function (c) {
          return [link(c.name, function () { showInstances(base, c.name, detail); }),
                  c.instances, c.shallow, c.retained];
        }));
        Array.prototype.forEach.call(t.rows[0].cells, function (th, i) {
          th.setAttribute('data-sort', KEYS[i]);
          if (KEYS[i] === r.sort) {
            th.classList.add('sorted');
            th.setAttribute('data-order', r.order);
            th.textContent += r.order === 'desc' ? ' ▼' : ' ▲';
          }
          th.addEventListener('click', function () {
            if (q.sort === KEYS[i]) q.order = q.order === 'desc' ? 'asc' : 'desc';
            else { q.sort = KEYS[i]; q.order = KEYS[i] === 'name' ? 'asc' : 'desc'; }
            q.offset = 0;
            load();
          });
        });
        holder.textContent = '';
        holder.appendChild(t);
        var end = r.offset + r.classes.length;
        info.textContent = !r.matched ? 'no class matches (' + r.total + ' classes)'
          : 'classes ' + (r.offset + 1) + '–' + end + ' of ' + r.matched +
            (q.filter ? ' matching, ' + r.total + ' in all' : '');
        info.setAttribute('data-matched', r.matched);
        info.setAttribute('data-total', r.total);
        prev.disabled = r.offset === 0;
        next.disabled = end >= r.matched;
      }, function (e) { info.textContent = e.message; });
    }
    filter.addEventListener('input', function () { q.filter = filter.value; q.offset = 0; load(); });
    prev.addEventListener('click', function () { q.offset = Math.max(0, q.offset - HISTOGRAM_PAGE); load(); });
    next.addEventListener('click', function () { q.offset += HISTOGRAM_PAGE; load(); });
    load();
  }

  // The dominator tree, downwards: a page of the objects `id` ('root': the GC roots as a whole)
  // immediately dominates, biggest retained first, each a row that opens in the object view and
  // expands into its own children; "more…" fetches the next page.
  var DOMTREE_PAGE = 50;
  function domChildren(base, id, box, depth, offset, detail) {
    var loading = el('div', 'domtree-more', 'loading…');
    box.appendChild(loading);
    api(base + 'dominated?id=' + encodeURIComponent(id) + '&offset=' + offset + '&limit=' + DOMTREE_PAGE)
      .then(function (page) {
        loading.remove();
        if (!page.total) box.appendChild(el('div', 'domtree-more', 'dominates nothing'));
        page.children.forEach(function (o) {
          var row = el('div', 'domtree-row');
          row.style.paddingLeft = (depth * 18) + 'px';
          var children = el('div', 'domtree-children');
          // Retained = shallow: nothing below it, no toggle.
          var toggle = o.retained > o.shallow ? domToggle(base, o.id, children, depth + 1, detail)
            : el('span', 'domtree-leaf', '·');
          row.append(toggle, link(o['class'] + ' ' + o.id, function () { showObject(base, o.id, detail); }),
                     el('span', 'domtree-size', 'shallow ' + o.shallow + ', retained ' + o.retained));
          box.append(row, children);
        });
        var next = offset + page.children.length;
        if (next < page.total) {
          var more = el('div', 'domtree-more');
          more.style.paddingLeft = (depth * 18) + 'px';
          more.appendChild(link('more… (' + (page.total - next) + ' of ' + page.total + ' not shown)', function () {
            more.remove();
            domChildren(base, id, box, depth, next, detail);
          }));
          box.appendChild(more);
        }
      }, function (e) { loading.textContent = e.message; });
  }

  function domToggle(base, id, children, depth, detail) {
    var b = el('button', 'domtree-toggle', '+');
    b.title = 'objects it dominates';
    var loaded = false;
    b.addEventListener('click', function () {
      if (!loaded) { loaded = true; domChildren(base, id, children, depth, 0, detail); }
      else children.hidden = !children.hidden;
      b.textContent = children.hidden ? '+' : '−';
    });
    return b;
  }

  function showInstances(base, name, detail) {
    detail.textContent = '';
    detail.appendChild(el('h4', null, 'Instances of ' + name + ' (first 50)'));
    api(base + 'instances?class=' + encodeURIComponent(name)).then(function (list) {
      detail.appendChild(table('instances', ['object', 'shallow', 'retained'], list.map(function (o) {
        return [link(o.id, function () { showObject(base, o.id, detail); }), o.shallow, o.retained];
      })));
    });
  }

  // The object view (heap-object.js): fields, referrers, paths; else the paths alone.
  function showObject(base, id, detail) {
    if (window.JvmprofHeapObject) JvmprofHeapObject.show(base, id, detail);
    else showPaths(base, id, detail);
  }

  function showPaths(base, id, detail) {
    detail.textContent = '';
    detail.appendChild(el('h4', null, 'Paths from GC roots to ' + id));
    api(base + 'path?id=' + encodeURIComponent(id)).then(function (paths) {
      if (!paths.length) detail.appendChild(el('p', null, 'not reachable from a GC root'));
      paths.forEach(function (path) {
        detail.appendChild(el('pre', 'trace path', path.map(function (s, i) {
          return new Array(i + 1).join('  ') + (s.via ? s.via + ' -> ' : '') + s.object['class'] + ' ' +
            s.object.id + ' (retained ' + s.object.retained + ')';
        }).join('\n')));
      });
    });
  }

  function drawMonitors(p, view, stillShown) {
    api('/api/profiles/' + p.id + '/monitors').then(function (m) {
      if (!stillShown()) return;
      view.textContent = '';
      if (p.live && !offers(p, 'monitor-dump')) {
        view.appendChild(el('p', 'hint', 'This agent offers no "monitor dump" command (HPROF of this ' +
          'project with monitor=y and format=a does): the sections below come at exit or on SIGQUIT.'));
      }
      view.appendChild(el('h3', null, 'Monitor contention (' + m.totalMs + ' ms in total)'));
      if (!m.rows.length) view.appendChild(el('p', null, 'No MONITOR TIME section (HPROF with monitor=y).'));
      else {
        view.appendChild(table('monitors', ['monitor', 'ms blocked', '%', 'count', 'trace'],
          m.rows.map(function (r) {
            return [r.monitor, r.ms, r.percent.toFixed(2), r.count, el('pre', 'trace', r.frames.join('\n'))];
          })));
      }
      view.appendChild(el('h3', null, 'Deadlocks'));
      if (!m.deadlocks.length) view.appendChild(el('p', null, m.dump ? 'none in the monitor dump' : 'no MONITOR DUMP yet'));
      m.deadlocks.forEach(function (cycle) { view.appendChild(drawCycle(cycle)); });
      view.appendChild(el('h3', null, 'Monitors (owners and waiters)'));
      view.appendChild(table('monitor-dump', ['monitor', 'owner', 'entries', 'waiting to enter', 'waiting to be notified'],
        m.monitors.map(function (x) {
          return [x.monitor, x.owner || 'unowned', x.entryCount, x.waitingToEnter.join(', '),
                  x.waitingToBeNotified.join(', ')];
        })));
      view.appendChild(el('h3', null, 'Monitor dump (as HPROF wrote it)'));
      view.appendChild(el('pre', 'dump', m.dump || 'No MONITOR DUMP section.'));
    });
  }

  // A deadlock as a ring: threads and the monitors they wait for, alternating, arrows from each
  // thread to the monitor it wants and from the monitor to the thread that owns it.
  function drawCycle(cycle) {
    var NS = 'http://www.w3.org/2000/svg';
    var box = el('div', 'deadlock');
    var nodes = [];
    cycle.forEach(function (step) {
      nodes.push({ label: (step.thread.name || 'thread') + ' (' + step.thread.serial + ')', kind: 'thread' });
      nodes.push({ label: step.monitor, kind: 'monitor' });
    });
    var size = 900, r = 150, cx = size / 2, cy = 190;  // room for long labels left and right
    var svg = document.createElementNS(NS, 'svg');
    svg.setAttribute('width', size);
    svg.setAttribute('height', 380);
    svg.setAttribute('class', 'cycle');
    var defs = document.createElementNS(NS, 'defs');
    var marker = document.createElementNS(NS, 'marker');
    marker.setAttribute('id', 'arrow');
    marker.setAttribute('markerWidth', '10');
    marker.setAttribute('markerHeight', '8');
    marker.setAttribute('refX', '9');
    marker.setAttribute('refY', '4');
    marker.setAttribute('orient', 'auto');
    var tip = document.createElementNS(NS, 'path');
    tip.setAttribute('d', 'M0,0 L10,4 L0,8 z');
    tip.setAttribute('fill', '#c62828');
    marker.appendChild(tip);
    defs.appendChild(marker);
    svg.appendChild(defs);
    var pos = nodes.map(function (n, i) {
      var a = -Math.PI / 2 + 2 * Math.PI * i / nodes.length;
      return { x: cx + r * Math.cos(a), y: cy + r * Math.sin(a) };
    });
    nodes.forEach(function (n, i) {
      var a = pos[i], b = pos[(i + 1) % nodes.length];
      var dx = b.x - a.x, dy = b.y - a.y, len = Math.sqrt(dx * dx + dy * dy) || 1;
      var line = document.createElementNS(NS, 'line');
      line.setAttribute('x1', a.x + dx / len * 34);
      line.setAttribute('y1', a.y + dy / len * 20);
      line.setAttribute('x2', b.x - dx / len * 34);
      line.setAttribute('y2', b.y - dy / len * 20);
      line.setAttribute('stroke', '#c62828');
      line.setAttribute('stroke-width', '2');
      line.setAttribute('marker-end', 'url(#arrow)');
      svg.appendChild(line);
    });
    nodes.forEach(function (n, i) {
      var t = document.createElementNS(NS, 'text');
      t.setAttribute('x', pos[i].x);
      t.setAttribute('y', pos[i].y + 4);
      // Labels on the left and right of the ring grow outwards, so long names are not cut.
      var side = pos[i].x - cx;
      t.setAttribute('text-anchor', side < -1 ? 'end' : side > 1 ? 'start' : 'middle');
      t.setAttribute('class', n.kind === 'thread' ? 'cycle-thread' : 'cycle-monitor');
      t.textContent = n.label;
      svg.appendChild(t);
    });
    box.appendChild(svg);
    cycle.forEach(function (step) {
      box.appendChild(el('div', 'cycle-step', (step.thread.name || 'thread') + ' (' + step.thread.serial +
        ', ' + step.thread.status + ') waits to enter ' + step.monitor + ', owned by thread ' + step.owner));
      box.appendChild(el('pre', 'trace', step.thread.frames.join('\n')));
    });
    return box;
  }

  // A thread's start or end as the wall-clock time it was received (live streams only).
  function clock(ms) {
    if (!ms) return '';
    var d = new Date(ms);
    return d.toLocaleTimeString('en-GB', { hour12: false }) + '.' + String(d.getMilliseconds()).padStart(3, '0');
  }

  function drawThreads(p, view, stillShown) {
    api('/api/profiles/' + p.id + '/threads').then(function (list) {
      if (!stillShown()) return;
      view.textContent = '';
      var t = table('threads', ['serial', 'name', 'group', 'state', 'started', 'ended', 'ran for'],
        list.map(function (th) {
          var ran = th.startMs && th.endMs ? ((th.endMs - th.startMs) / 1000).toFixed(3) + ' s' : '';
          // No THREAD END once the JVM is gone (e.g. daemon threads at exit): not "running".
          var st = th.ended ? 'ended' : p.state === 'connected' ? 'running' : 'no end seen';
          return [th.serial, th.name, th.group, st, clock(th.startMs),
                  clock(th.endMs), ran];
        }));
      view.appendChild(t);
      if (!p.live) view.appendChild(el('p', 'hint', 'Start and end times are shown for live JVMs: ' +
        'they are when jvmprof received THREAD START / END (HPROF\'s text format carries no times).'));
    });
  }

  // The agent port's counters, live: who was let in and who was refused (and why).
  function drawAgents(c) {
    var box = $('agent-counters');
    if (!c || c.admitted === undefined) return;
    var refused = c.refusedTls + c.refusedToken + c.refusedBusy + c.refusedFull;
    box.className = refused ? 'refused' : '';
    box.textContent = 'agents: ' + c.admitted + ' admitted, ' + c.refusedTls +
      ' refused without TLS, ' + c.refusedToken + ' without the token, ' + c.refusedBusy +
      ' while busy' + (c.refusedFull ? ', ' + c.refusedFull + ' with the profiles full' : '');
    box.setAttribute('data-refused-token', c.refusedToken);
  }

  function refresh() {
    // One poll at a time: on a slow or loaded server, polls started every second regardless
    // would queue up behind each other (and behind the browser's few connections per host).
    if (state.polling) return Promise.resolve();
    state.polling = true;
    var done = function () { state.polling = false; };
    return Promise.all([api('/api/profiles'), api('/api/jvms'), api('/api/agents')]).then(
      function (r) {
        done();
        var list = r[0];
        state.profiles = list;
        state.jvms = r[1];
        state.polledAt = Date.now();
        $('status').textContent = list.length + ' profile(s)';
        drawAgents(r[2]);
        if (state.selected === null && list.length) {
          state.selected = list[list.length - 1].id;
          var first = jvmOf(state.selected);
          if (first && first.current === state.selected) state.follow = first.key;
        }
        // A followed JVM that reconnected: show (and send commands to) its new connection.
        var jvm = state.follow && state.jvms.filter(function (j) { return j.key === state.follow; })[0];
        if (jvm && jvm.current !== state.selected) select(jvm.current, jvm.key);
        drawList();
        drawProfile();
      }, function (e) { done(); $('status').textContent = 'server: ' + e.message; });
  }

  buildControls();
  refresh();
  setInterval(refresh, 1000);
})();
