// SPDX-License-Identifier: Apache-2.0
// "Local JVMs": the JVMs on this machine, as `jvmprof jps` lists them, each with "profile"
// (HPROF attached with net= to this serve: its live profile then appears under Profiles) and
// "stop" (HPROF's final report, then it detaches and the JVM runs on). Redrawn every 2 s; names
// go in as text only.
'use strict';
window.JvmprofLocalJvms = (function () {
  var el = JvmprofDom.el, api = JvmprofDom.api;
  var busy = {};     // pid -> what is being done to it ("attaching…", "stopping…")
  var message = '';  // the last action's outcome or error, one line

  function draw(box, jvms) {
    var ul = el('ul', 'local-jvm-list');
    if (!jvms.length) ul.appendChild(el('li', 'hint', 'no JVM runs on this machine'));
    jvms.forEach(function (j) {
      var li = el('li', 'local-jvm' + (j.profiling ? ' profiling' : ''));
      li.setAttribute('data-pid', String(j.pid));
      li.appendChild(el('span', 'local-jvm-name', j.pid + ' ' + (j.main || '<unknown main>')));
      var state = el('span', 'state', (j.javaVersion ? 'Java ' + j.javaVersion : 'Java ?') +
                     (j.profiling ? ' · profiled by this serve' : ''));
      li.appendChild(state);
      if (busy[j.pid]) {
        li.appendChild(el('span', 'state', busy[j.pid]));
      } else if (!j.attachable) {
        li.appendChild(el('span', 'state', 'cannot attach: ' + j.whyNot));
      } else {
        var action = j.profiling ? 'stop' : 'profile';
        var b = el('button', 'local-jvm-action', action);
        b.setAttribute('data-action', action);
        b.addEventListener('click', function (e) {
          e.stopPropagation();
          act(box, j.pid, action);
        });
        li.appendChild(b);
      }
      ul.appendChild(li);
    });
    box.textContent = '';
    box.appendChild(ul);
    if (message) box.appendChild(el('p', 'hint local-jvm-message', message));
  }

  function act(box, pid, action) {
    busy[pid] = action === 'profile' ? 'attaching…' : 'stopping…';
    refresh(box);
    api('/api/local-jvms/' + pid + '/' + action, { method: 'POST' }).then(function () {
      message = action === 'profile' ? 'JVM ' + pid + ' is profiled: see Profiles'
                                     : 'JVM ' + pid + ': profiling stopped';
    }, function (err) {
      message = 'JVM ' + pid + ': ' + err.message;
    }).then(function () {
      delete busy[pid];
      refresh(box);
    });
  }

  function refresh(box) {
    return api('/api/local-jvms').then(function (jvms) { draw(box, jvms); }, function (err) {
      box.textContent = '';
      box.appendChild(el('p', 'hint', 'local JVMs: ' + err.message));
    });
  }

  function start() {
    var box = document.getElementById('local-jvms');
    if (!box) return;
    refresh(box);
    setInterval(function () { refresh(box); }, 2000);
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
  return { refresh: refresh };
})();
