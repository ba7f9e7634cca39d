/* app.js - the HTML report's behaviour (inlined by report/fmt_html.c).
 * Reads the JSON report from #objscope-data ({report, why_empty}) and builds
 * the header, the sortable ranked tables, the selected object's details and
 * the flame graphs (d3-flame-graph, global `flamegraph`). Text goes in with
 * textContent only: frame names are never parsed as HTML. */
(function () {
  'use strict';

  var data = JSON.parse(document.getElementById('objscope-data').textContent);
  var R = data.report;
  var M = R.meta;
  var objects = R.objects || [];
  var attributed = M.samples_attributed || 0;
  /* Horvitz-Thompson sample estimates (Java hybrid / sampled modes): objects
   * come ranked by them and share is of them; null without. */
  var hasEst = M.samples_attributed_estimated !== null && M.samples_attributed_estimated !== undefined;
  var estAttributed = hasEst ? M.samples_attributed_estimated : attributed;
  function rankSamples(o) { return hasEst ? o.samples_estimated : o.samples; }

  function $(id) { return document.getElementById(id); }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function pct(part, whole) { return whole ? (100 * part / whole).toFixed(part === whole ? 0 : 1) + '%' : '0%'; }
  function num(n) { return Number(n || 0).toLocaleString('en-US'); }
  function bytes(n) {
    var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0;
    n = Number(n || 0);
    while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
    return (i ? n.toFixed(1) : String(n)) + ' ' + u[i];
  }
  function shareCell(part, whole) {
    var td = el('td'), box = el('div', 'share'), bar = el('div', 'bar'), fill = el('div');
    fill.style.width = (whole ? Math.min(100, 100 * part / whole) : 0) + '%';
    bar.appendChild(fill);
    box.appendChild(bar);
    box.appendChild(el('span', null, pct(part, whole)));
    td.appendChild(box);
    return td;
  }
  function firstFrame(stack) { return stack && stack.length ? stack[0] : '[unknown allocation path]'; }
  function objName(o) { return '#' + o.id + ' ' + (o.type || firstFrame(o.alloc_stack)); }
  /* A stack as a list, leaf first; long ones folded after `keep` frames. */
  function stackList(stack, keep) {
    var ol = el('ol', 'stack'), i, more;
    stack = stack && stack.length ? stack : ['[unknown path]'];
    for (i = 0; i < stack.length && (!keep || i < keep); i++) ol.appendChild(el('li', null, stack[i]));
    if (keep && stack.length > keep) {
      more = el('li', 'more', '\u2026 ' + (stack.length - keep) + ' more frame' + (stack.length - keep > 1 ? 's' : ''));
      more.addEventListener('click', function (ev) {
        ev.stopPropagation();
        ol.replaceWith(stackList(stack, 0));
      });
      ol.appendChild(more);
    }
    return ol;
  }

  /* ---- header ---- */
  function header() {
    var cmd = (M.command || []).join(' ') || '(unknown command)';
    var facts = $('facts'), c = M.counters || {};
    document.title = 'objscope \u2014 ' + cmd;
    $('command').textContent = cmd;
    function fact(label, value, warn) {
      var s = el('span', warn ? 'warn' : null, label + ' ');
      s.appendChild(el('b', null, value));
      facts.appendChild(s);
    }
    fact('duration', Number(M.duration_s || 0).toFixed(2) + ' s');
    fact('sampler', (M.sampler || 'unknown') + ' / ' + (M.event || 'unknown event'));
    fact('period', num(M.period) + (M.freq ? ' (' + num(M.freq) + ' Hz requested)' : ''));
    fact('objects', num(R.objects_total) + ' allocation contexts');
    fact('tracked', num(c.tracked_allocs) + ' allocations, ' + bytes(c.tracked_bytes));
    fact('lost samples', num(M.lost), M.lost > 0);
    fact('dropped events', num(M.dropped_events), M.dropped_events > 0);
    fact('GCs', num(M.gc_count));
    if (M.pids && M.pids.length) fact(M.pids.length > 1 ? 'pids' : 'pid', M.pids.join(', '));

    /* Coverage: attributed within heap within addressed within total. */
    var total = M.samples_total || 0, cov = $('coverage');
    var parts = [
      ['attributed to objects', attributed, '#f59e0b'],
      ['in a tracked heap, no object', (M.samples_heap || 0) - attributed, '#a16207'],
      ['with an address, not heap', (M.samples_addressed || 0) - (M.samples_heap || 0), '#64748b'],
      ['without an address', total - (M.samples_addressed || 0), '#3a4150']
    ];
    var bar = el('div', 'covbar'), legend = el('div', 'covlegend');
    parts.forEach(function (p) {
      var seg = el('div'), item = el('span'), sw = el('i');
      seg.style.width = (total ? 100 * Math.max(0, p[1]) / total : 0) + '%';
      seg.style.background = p[2];
      seg.title = p[0] + ': ' + num(p[1]);
      bar.appendChild(seg);
      sw.style.background = p[2];
      item.appendChild(sw);
      item.appendChild(document.createTextNode(p[0] + ' ' + num(Math.max(0, p[1])) + ' (' + pct(Math.max(0, p[1]), total) + ')'));
      legend.appendChild(item);
    });
    cov.appendChild(el('div', null, 'samples: ' + num(total) + ' taken, ' + num(M.samples_addressed) + ' with a data address, ' +
      num(M.samples_heap) + ' in a tracked heap, ' + num(attributed) + ' attributed to objects (' + pct(attributed, total) + ')'));
    cov.appendChild(bar);
    cov.appendChild(legend);
    (M.notes || []).forEach(function (n) { $('notes').appendChild(el('li', null, n)); });
    $('foot').textContent = 'objscope report format ' + R.version + (M.hostname ? ' \u00b7 host ' + M.hostname : '') +
      (M.start_time ? ' \u00b7 started ' + new Date(M.start_time * 1000).toISOString().replace('T', ' ').slice(0, 19) + ' UTC' : '');
    if (!objects.length || !attributed) {
      $('empty').hidden = false;
      $('why').textContent = data.why_empty || 'the profile holds no attributed samples';
    }
  }

  /* ---- sortable tables ---- */
  /* cols: {label, num, value(row) for sorting, cell(row) -> td} */
  function table(tableEl, cols, rows, onRow, initial) {
    var thead = el('thead'), tr = el('tr'), tbody = el('tbody');
    var state = { col: initial ? initial[0] : -1, dir: initial ? initial[1] : 1 };
    tableEl.textContent = '';
    cols.forEach(function (c, i) {
      var th = el('th', c.num ? 'num' : null, c.label);
      if (c.title) th.title = c.title;
      if (tableEl.classList.contains('sortable')) {
        th.addEventListener('click', function () {
          state.dir = state.col === i ? -state.dir : (c.num ? -1 : 1);
          state.col = i;
          render();
        });
      }
      tr.appendChild(th);
    });
    thead.appendChild(tr);
    tableEl.appendChild(thead);
    tableEl.appendChild(tbody);
    function render() {
      var sorted = rows.slice();
      if (state.col >= 0) {
        var v = cols[state.col].value;
        sorted.sort(function (a, b) {
          var x = v(a), y = v(b);
          return (x < y ? -1 : x > y ? 1 : 0) * state.dir;
        });
      }
      Array.prototype.forEach.call(thead.querySelectorAll('th'), function (th, i) {
        th.classList.toggle('sorted-asc', i === state.col && state.dir > 0);
        th.classList.toggle('sorted-desc', i === state.col && state.dir < 0);
      });
      tbody.textContent = '';
      if (!sorted.length) {
        var td = el('td', 'hint', 'none');
        td.colSpan = cols.length;
        tbody.appendChild(el('tr')).appendChild(td);
      }
      sorted.forEach(function (r) {
        var row = el('tr');
        cols.forEach(function (c) { row.appendChild(c.cell(r)); });
        if (onRow) onRow(row, r);
        tbody.appendChild(row);
      });
    }
    render();
  }
  function textCol(label, f, cls) {
    return { label: label, value: f, cell: function (r) { return el('td', cls, f(r)); } };
  }
  function numCol(label, f, fmt) {
    return { label: label, num: true, value: f, cell: function (r) { return el('td', 'num', (fmt || num)(f(r))); } };
  }
  function shareCol(label, f, whole) {
    return { label: label, value: f, cell: function (r) { return shareCell(f(r), whole); } };
  }
  function optionalCol(key, label) {
    if (!objects.some(function (o) { return o[key] !== null && o[key] !== undefined; })) return null;
    return textCol(label, function (o) {
      var v = o[key];
      if (v === null || v === undefined) return '';
      return typeof v === 'object' ? JSON.stringify(v) : String(v);
    });
  }

  /* ---- replicas (--replicas, docs/REPLICAS.md) ---- */
  var hasReplicas = objects.some(function (o) { return o.replica !== null && o.replica !== undefined; });
  function fig(v) { return v === null || v === undefined ? '\u2014' : Number(v).toFixed(2); }
  function repVal(o, k) { return o.replica && o.replica[k] !== null && o.replica[k] !== undefined ? o.replica[k] : -1; }
  /* Replica cost: theta x samples (sortable; the table's default order stays by samples). */
  function replicaCols() {
    if (!hasReplicas) return [];
    function figCol(label, k, title) {
      var c = numCol(label, function (o) { return repVal(o, k); }, function (v) { return v < 0 ? '\u2014' : fig(v); });
      c.title = title;
      return c;
    }
    return [
      numCol('replica cost', function (o) { var t = repVal(o, 'theta'); return t < 0 ? -1 : t * o.samples; },
             function (v) { return v < 0 ? '\u2014' : v.toFixed(1); }),
      figCol('\u03b8', 'theta', 'replication factor: share of watchpoint comparisons that found equal values'),
      numCol('comparisons', function (o) { return o.replica ? o.replica.comparisons : 0; }),
      figCol('\u03b1', 'alpha', 'share of whole-content checks of differing pairs whose compared offset matched'),
      figCol('\u03c9', 'omega', 'lower bound: theta - alpha'),
      figCol('\u03b3', 'gamma', 'upper bound'),
      figCol('exact', 'exact', 'share of hashed objects with an identical twin in the context')
    ];
  }
  function replicaDetail(o) {
    var box = $('replica-detail');
    if (!box) return;
    box.textContent = '';
    box.hidden = !hasReplicas;
    if (!hasReplicas) return;
    var r = o.replica;
    if (!r) { box.appendChild(el('p', 'hint', 'Replicas: no comparisons for this object.')); return; }
    box.appendChild(el('h3', null, 'Replicas'));
    var dl = el('dl', 'replica');
    [['\u03b8 (replication factor)', fig(r.theta) + ' from ' + num(r.comparisons) + ' watchpoint comparisons'],
     ['\u03b1 (false-match rate, measured)', fig(r.alpha) + ' from ' + num(r.alpha_checks) + ' differing pairs compared whole'],
     ['\u03c9 (lower bound \u03b8 \u2212 \u03b1)', fig(r.omega)],
     ['\u03b3 (upper bound)', fig(r.gamma)],
     ['exact (identical twin, whole content)', fig(r.exact) + ' of ' + num(r.exact_objects) + ' objects hashed'],
     ['replica cost', r.theta === null || r.theta === undefined ? '\u2014' :
       (r.theta * o.samples).toFixed(1) + ' samples, ' + bytes(Math.round(r.theta * o.bytes))]
    ].forEach(function (kv) { dl.appendChild(el('dt', null, kv[0])); dl.appendChild(el('dd', null, kv[1])); });
    box.appendChild(dl);
  }

  /* ---- flame graphs ---- */
  /* Tree from stacks (leaf first) weighted by value, root first. */
  function tree(rootName, entries) {
    var root = { name: rootName, value: 0, children: [] };
    entries.forEach(function (e) {
      var node = root, stack = e.stack && e.stack.length ? e.stack : ['[unknown path]'];
      root.value += e.value;
      for (var i = stack.length - 1; i >= 0; i--) {
        var next = null;
        for (var j = 0; j < node.children.length; j++)
          if (node.children[j].name === stack[i]) { next = node.children[j]; break; }
        if (!next) { next = { name: stack[i], value: 0, children: [] }; node.children.push(next); }
        next.value += e.value;
        node = next;
      }
    });
    return root;
  }
  function drawFlame(container, root, hue, onClick) {
    container.textContent = '';
    if (!root.value) {
      container.appendChild(el('div', 'none', 'No access samples to draw.'));
      return null;
    }
    var total = root.value;
    var tip = flamegraph.tooltip.defaultFlamegraphTooltip().text(function (d) {
      return d.data.name + ' \u2014 ' + num(d.data.value) + ' samples (' + pct(d.data.value, total) + ')';
    });
    var chart = flamegraph.default()
      .width(Math.max(300, container.clientWidth || 900))
      .cellHeight(18)
      .minFrameSize(2)
      .transitionDuration(300)
      .selfValue(false)
      .sort(true)
      .title('')
      .tooltip(tip)
      .setColorHue(hue);
    if (onClick) chart.onClick(onClick);
    d3.select(container).datum(root).call(chart);
    return chart;
  }

  /* ---- objects ---- */
  var selected = null;
  function select(o, row) {
    selected = o;
    Array.prototype.forEach.call(document.querySelectorAll('#objects tbody tr.selected'), function (r) {
      r.classList.remove('selected');
    });
    if (row) row.classList.add('selected');
    $('detail-title').textContent = 'Object ' + objName(o);
    $('detail-hint').textContent = num(o.samples) + ' access samples (' + pct(o.samples, attributed) + ' of attributed), ' +
      num(o.allocations) + ' allocation' + (o.allocations === 1 ? '' : 's') + ', ' + bytes(o.bytes) +
      (o.type ? ', type ' + o.type : '');
    var ap = $('alloc-path');
    ap.replaceWith(Object.assign(stackList(o.alloc_stack, 0), { id: 'alloc-path' }));
    replicaDetail(o);
    var accounted = 0, rows = (o.accesses || []).map(function (a) { accounted += a.samples; return a; });
    if (o.samples > accounted) rows.push({ stack: ['[unknown access path]'], samples: o.samples - accounted });
    table($('access-paths'), [
      shareCol('share', function (a) { return a.samples; }, o.samples),
      numCol('samples', function (a) { return a.samples; }),
      { label: 'access path (leaf first)', value: function () { return 0; },
        cell: function (a) { var td = el('td'); td.appendChild(stackList(a.stack, 4)); return td; } }
    ], rows, null, null);
    $('detail-body').hidden = false;
    drawFlame($('access-flame'), tree(objName(o), rows.map(function (a) {
      return { stack: a.stack, value: a.samples };
    })), 'aqua');
  }
  function objectsView() {
    $('objects-count').textContent = objects.length + ' of ' + num(R.objects_total) + ', ranked by access samples' +
      (hasEst ? ' (Horvitz-Thompson estimates)' : '');
    var cols = [
      numCol('#', function (o) { return o.id; }, String),
      textCol('type', function (o) { return o.type || '\u2014'; }),
      textCol('allocated at', function (o) { return firstFrame(o.alloc_stack); }, 'frame'),
      shareCol('share', rankSamples, estAttributed),
      numCol('samples', function (o) { return o.samples; }),
      hasEst ? numCol('est. samples', function (o) { return o.samples_estimated; },
        function (v) { return num(Math.round(v)); }) : null,
      numCol('allocations', function (o) { return o.allocations; }),
      numCol('bytes', function (o) { return o.bytes; }, bytes),
    ].concat(replicaCols(), [
      optionalCol('lifetime', 'lifetime'),
      optionalCol('reuse', 'reuse'),
      optionalCol('numa', 'NUMA')
    ]).filter(Boolean);
    table($('objects'), cols, objects, function (row, o) {
      row.dataset.object = o.id;
      if (selected === o) row.classList.add('selected');
      row.addEventListener('click', function () { select(o, row); });
    }, null);
    var byLeaf = {};
    objects.forEach(function (o) { byLeaf[firstFrame(o.alloc_stack)] = o; });
    drawFlame($('alloc-flame'), tree('all objects', objects.map(function (o) {
      return { stack: o.alloc_stack, value: o.samples };
    })), 'warm', function (d) {
      /* Clicking the allocating frame of an object selects it too. */
      var o = d && d.data && !d.children ? byLeaf[d.data.name] : null;
      if (o) select(o, document.querySelector('#objects tbody tr[data-object="' + o.id + '"]'));
    });
  }

  function typesView() {
    table($('types'), [
      textCol('type', function (t) { return t.type || '(unknown type)'; }, 'frame'),
      shareCol('share', function (t) { return t.samples; }, attributed),
      numCol('samples', function (t) { return t.samples; })
    ], R.types || [], null, null);
  }
  function threadsView() {
    var all = (R.threads || []).reduce(function (s, t) { return s + t.samples; }, 0);
    table($('threads'), [
      textCol('name', function (t) { return t.name || '(unnamed)'; }),
      textCol('kind', function (t) { return t.kind; }),
      numCol('pid', function (t) { return t.pid; }, String),
      numCol('tid', function (t) { return t.tid; }, String),
      shareCol('share', function (t) { return t.samples; }, all),
      numCol('samples', function (t) { return t.samples; })
    ], R.threads || [], null, null);
  }
  function tabs() {
    Array.prototype.forEach.call(document.querySelectorAll('#tabs button'), function (b) {
      b.addEventListener('click', function () {
        Array.prototype.forEach.call(document.querySelectorAll('#tabs button'), function (x) {
          x.classList.toggle('active', x === b);
        });
        Array.prototype.forEach.call(document.querySelectorAll('.tab'), function (t) {
          t.hidden = t.id !== 'tab-' + b.dataset.tab;
        });
      });
    });
  }

  header();
  tabs();
  objectsView();
  typesView();
  threadsView();
})();
