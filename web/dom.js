// SPDX-License-Identifier: Apache-2.0
// DOM helpers shared by the UI's scripts (app.js, heap-object.js, heap-diff.js); loaded first.
// Text goes in through textContent only: names and values from a profile or dump are untrusted
// and are never parsed as HTML. (flamegraph.js and diff-flame.js keep their own `el`: they are
// also inlined alone into the self-contained HTML exports.)
'use strict';
window.JvmprofDom = (function () {
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  // JSON from the server; a non-2xx answer rejects with the server's one-line `error`.
  function api(path, options) {
    return fetch(path, options).then(function (r) {
      return r.json().then(function (j) {
        if (!r.ok) throw new Error(j.error || r.statusText);
        return j;
      });
    });
  }

  function bytes(n) {
    if (n < 1024) return n + ' B';
    if (n < 1048576) return (n / 1024).toFixed(1) + ' KiB';
    return (n / 1048576).toFixed(1) + ' MiB';
  }

  // A table with a heading row: each cell is a Node (put in as is) or a value (set as text;
  // numbers get the class `num`).
  function table(cls, headers, rows) {
    var t = el('table', 'data ' + cls);
    var h = el('tr');
    headers.forEach(function (c) { h.appendChild(el('th', null, c)); });
    t.appendChild(h);
    rows.forEach(function (cells) {
      var tr = el('tr');
      cells.forEach(function (c) {
        if (c instanceof Node) { var td = el('td'); td.appendChild(c); tr.appendChild(td); }
        else tr.appendChild(el('td', typeof c === 'number' ? 'num' : null, c));
      });
      t.appendChild(tr);
    });
    return t;
  }

  return { el: el, api: api, bytes: bytes, table: table };
})();
