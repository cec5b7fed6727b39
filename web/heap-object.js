// SPDX-License-Identifier: Apache-2.0
// The heap view's object page: one object's class, sizes, fields (references as links), array
// elements and referrers (both paged), a class object's statics, and its paths from GC roots.
// Everything from the dump is set with textContent: class names and values are untrusted.
'use strict';
window.JvmprofHeapObject = (function () {
  var PAGE = 50;

  var el = JvmprofDom.el, api = JvmprofDom.api, bytes = JvmprofDom.bytes;

  // An object is often a root many times over (a JNI local reference per frame that holds it):
  // each kind once, with its count, in the order first met ("JNI local ×2387, thread").
  function rootKinds(kinds) {
    var counts = {}, order = [];
    kinds.forEach(function (k) {
      if (!counts[k]) { counts[k] = 0; order.push(k); }
      counts[k]++;
    });
    return order.map(function (k) { return counts[k] > 1 ? k + ' ×' + counts[k] : k; }).join(', ');
  }

  // One object page per container; `history` lets "back" return to the previous object.
  function Page(base, container) {
    this.base = base;
    this.container = container;
    this.history = [];
  }

  Page.prototype.link = function (text, id, cls) {
    var self = this;
    var a = el('a', 'object-link' + (cls ? ' ' + cls : ''), text);
    a.href = '#';
    a.setAttribute('data-object', id);
    a.addEventListener('click', function (e) {
      e.preventDefault();
      self.open(id, true);
    });
    return a;
  };

  Page.prototype.objectLink = function (o) {
    return this.link(o['class'] + ' ' + o.id, o.id);
  };

  Page.prototype.table = JvmprofDom.table;

  // A value cell: a reference to an object in the dump is a link to it.
  Page.prototype.value = function (s) {
    if (s.target) {
      var span = el('span');
      span.appendChild(this.link(s.target['class'] + ' ' + s.target.id, s.target.id));
      return span;
    }
    return s.ref ? s.value + ' (not in the dump)' : s.value;
  };

  Page.prototype.slots = function (cls, list, withDeclaring) {
    var self = this;
    return this.table(cls, withDeclaring ? ['field', 'type', 'declared by', 'value'] : ['name', 'type', 'value'],
      list.map(function (s) {
        return withDeclaring ? [s.name, s.type, s.declaredBy || '', self.value(s)]
                             : [s.name, s.type, self.value(s)];
      }));
  };

  // A pager: "first page / previous / next" around a box that `load(offset)` refills.
  Page.prototype.pager = function (box, total, offset, load) {
    var nav = el('div', 'pager');
    nav.appendChild(el('span', null, (total ? offset + 1 : 0) + '–' + Math.min(total, offset + PAGE) +
      ' of ' + total + ' '));
    if (offset > 0) nav.appendChild(this.button('previous', function () { load(Math.max(0, offset - PAGE)); }));
    if (offset + PAGE < total) nav.appendChild(this.button('next', function () { load(offset + PAGE); }));
    box.appendChild(nav);
  };

  Page.prototype.button = function (text, onClick) {
    var b = el('button', 'page-' + text, text);
    b.addEventListener('click', onClick);
    return b;
  };

  Page.prototype.open = function (id, remember) {
    var self = this;
    if (remember && this.current) this.history.push(this.current);
    this.current = id;
    var c = this.container;
    c.textContent = '';
    var box = el('div', 'heap-object');
    box.setAttribute('data-object', id);
    c.appendChild(box);
    var status = el('p', null, 'reading object ' + id + '…');
    box.appendChild(status);
    api(this.base + 'object?id=' + encodeURIComponent(id) + '&limit=' + PAGE).then(function (d) {
      if (self.current !== id) return;
      status.remove();
      var head = el('h4', 'object-title', d.object['class'] + ' ' + d.object.id);
      box.appendChild(head);
      // The page sits below a long histogram: bring it into view.
      if (box.scrollIntoView) box.scrollIntoView({ block: 'start' });
      if (self.history.length) {
        box.appendChild(self.button('back', function () { self.open(self.history.pop(), false); }));
      }
      // A class object is titled for the class it is ("class LeakApp"); its own class is java.lang.Class.
      var ownClass = d.kind === 'class' ? 'java.lang.Class' : d.object['class'];
      var facts = [['kind', d.kind], ['class', d.classId ? self.link(ownClass, d.classId) : ownClass],
        ['shallow size', bytes(d.object.shallow)], ['retained size', bytes(d.object.retained)],
        ['reachable', d.reachable ? 'yes' : 'no (garbage at the time of the dump)'],
        ['immediate dominator', d.dominator ? self.objectLink(d.dominator) : (d.reachable ? 'the GC roots' : '')]];
      if (d.gcRoots.length) facts.push(['GC root', rootKinds(d.gcRoots)]);
      if (d.kind === 'class') {
        facts.push(['class name', d.className], ['instance size', d.instanceSize]);
        if (d.superId) facts.push(['superclass', self.link(d.superId, d.superId)]);
        if (d.loaderId) facts.push(['class loader', self.link(d.loaderId, d.loaderId)]);
      }
      box.appendChild(self.table('object-facts', ['', ''], facts));
      if (d.textDump) {
        box.appendChild(el('p', 'hint', 'From a text (format=a) heap dump: it records references only, ' +
          'so primitive fields and array contents are not shown.'));
      }
      if (d.kind === 'instance') {
        box.appendChild(el('h5', null, 'Fields (' + d.fields.length + ')'));
        box.appendChild(self.slots('object-fields', d.fields, true));
      }
      if (d.elements) {
        box.appendChild(el('h5', null, 'Elements (' + d.length + ')'));
        var elements = el('div', 'object-elements');
        box.appendChild(elements);
        var showElements = function (offset, page) {
          elements.textContent = '';
          self.pager(elements, d.length, offset, function (o) {
            api(self.base + 'object?id=' + encodeURIComponent(id) + '&offset=' + o + '&limit=' + PAGE)
              .then(function (next) { if (self.current === id) showElements(o, next.elements); });
          });
          elements.appendChild(self.slots('object-element-list', page, false));
        };
        showElements(d.elementOffset, d.elements);
      }
      if (d.statics) {
        box.appendChild(el('h5', null, 'Static fields (' + d.statics.length + ')'));
        box.appendChild(self.slots('object-statics', d.statics, false));
      }
      box.appendChild(el('h5', null, 'Referrers'));
      var refs = el('div', 'object-referrers');
      box.appendChild(refs);
      var showReferrers = function (offset) {
        api(self.base + 'referrers?id=' + encodeURIComponent(id) + '&offset=' + offset + '&limit=' + PAGE)
          .then(function (r) {
            if (self.current !== id) return;
            refs.textContent = '';
            self.pager(refs, r.total, offset, showReferrers);
            refs.appendChild(self.table('referrer-list', ['object', 'through', 'retained'],
              r.referrers.map(function (x) {
                return [self.objectLink(x.object), x.via + (x.weak ? ' (weak)' : ''), x.object.retained];
              })));
          }, function (e) { refs.textContent = e.message; });
      };
      showReferrers(0);
      box.appendChild(el('h5', null, 'Paths from GC roots'));
      var paths = el('div', 'object-paths');
      box.appendChild(paths);
      api(self.base + 'path?id=' + encodeURIComponent(id)).then(function (list) {
        if (self.current !== id) return;
        if (!list.length) paths.appendChild(el('p', null, 'not reachable from a GC root'));
        // One block per path, a line per step ("via -> class id (retained N)"), ids as links.
        list.forEach(function (path) {
          var pre = el('pre', 'trace path');
          path.forEach(function (step, i) {
            pre.appendChild(document.createTextNode(new Array(i + 1).join('  ') +
              (step.via ? step.via + ' -> ' : '')));
            pre.appendChild(self.objectLink(step.object));
            pre.appendChild(document.createTextNode(' (retained ' + step.object.retained + ')\n'));
          });
          paths.appendChild(pre);
        });
      }, function (e) { paths.textContent = e.message; });
    }, function (e) {
      if (self.current === id) status.textContent = e.message;
    });
  };

  return {
    // Shows object `id` of the heap at `base` ('/api/profiles/N/heap/') in `container`.
    show: function (base, id, container) {
      if (!container.jvmprofObjectPage || container.jvmprofObjectPage.base !== base) {
        container.jvmprofObjectPage = new Page(base, container);
      }
      container.jvmprofObjectPage.open(id, true);
    }
  };
})();
