/* app.js - the HTML report's behaviour (inlined by report/fmt_html.c).
 * Reads the JSON report from #objscope-data ({report, why_empty, frame_kinds})
 * and builds the header, the sortable ranked tables (50 rows a page), the
 * search box, the selected object's details and the flame graphs
 * (d3-flame-graph, global `flamegraph`; frames coloured by kind, callers
 * view on demand) and the timeline of the top objects (d3; `timeline` in
 * the data, null for a profile without time slices). Text goes in with
 * textContent only: frame names are never parsed as HTML. */
(function () {
  'use strict';

  var data = JSON.parse(document.getElementById('objscope-data').textContent);
  var R = data.report;
  var M = R.meta;
  /* The page's report keeps frames and stacks once (json --tables): each
   * stack reference becomes its list of frame objects, shared, so the rest
   * of the page reads alloc_stack and stack as arrays. */
  (function resolveTables() {
    if (!R.stacks || !R.frames) return;
    var stacks = R.stacks.map(function (s) { return s.map(function (i) { return R.frames[i]; }); });
    function at(i) { return typeof i === 'number' ? stacks[i] || [] : i || []; }
    (R.objects || []).forEach(function (o) {
      o.alloc_stack = at(o.alloc_stack);
      (o.accesses || []).forEach(function (a) { a.stack = at(a.stack); });
    });
  })();
  var objects = R.objects || [];
  var kinds = data.frame_kinds || {};
  var PAGE = 50;
  var attributed = M.samples_attributed || 0;
  /* Horvitz-Thompson sample estimates (Java hybrid / sampled modes): objects
   * come ranked by them and share is of them; null without. */
  var hasEst = M.samples_attributed_estimated !== null && M.samples_attributed_estimated !== undefined;
  /* estimated allocation paths (Java, docs/JAVA.md): which figures are exact */
  var hasPaths = (R.objects || []).some(function (o) { return o.path; });
  function pathText(o) {
    var p = o.path;
    if (!p) return 'exact';
    if (p.kind === 'site')
      return p.samples_exact + ' exact + est. ' + Math.round(p.samples_path_estimated) +
        ' (class: ' + p.class_objects_seen + ' seen at ' + p.class_sites + ' sites)' +
        (p.split_by_volume ? '; split by allocation volume alone: cannot be told apart' : '');
    return 'class only, path not known (' + Math.round(-p.samples_path_estimated) + ' shared out)';
  }
  /* The estimate with its 90% interval (the estimator's own variance):
   * "385 ±230"; the row's title says when its neighbour's interval
   * overlaps, or when its class's split rests on allocation volume alone. */
  function estCol() {
    var c = numCol('est. samples', function (o) { return o.samples_estimated; }, null, '112px');
    c.cell = function (o) {
      var iv = o.interval, t = num(Math.round(o.samples_estimated)), td;
      if (iv) t += ' \u00b1' + num(Math.round(iv.samples_estimated_high - o.samples_estimated));
      td = el('td', 'num', t);
      if (iv && iv.overlaps_next) td.title = 'its 90% interval overlaps the next object\'s: the two cannot be told apart';
      if (o.path && o.path.split_by_volume) {
        td.title = 'the split between this class\'s allocation sites rests on allocation volume alone: ' +
          'the sites cannot be told apart; --java-objects exact, or a longer run, would settle it';
        td.classList.add('uncertain');
      }
      return td;
    };
    return c;
  }
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
  /* A frame is an object of the JSON report (version 2), shown as its
   * `text`, the text report's form (version 1 gave that string alone). */
  function frameName(f) {
    if (f === null || f === undefined) return '[unknown]';
    if (typeof f !== 'object') return String(f);
    return String(f.text || f.name || f.function || f.module || '[unknown]');
  }
  /* java, jvm, native, kernel, unknown or synthetic (fmt_html.c). */
  function frameKind(f) {
    if (f && typeof f === 'object' && f.kind) return String(f.kind);
    return kinds[frameName(f)] || 'native';
  }
  function names(stack) { return (stack || []).map(frameName); }
  function firstFrame(stack) { return stack && stack.length ? frameName(stack[0]) : '[unknown allocation path]'; }
  /* The frame that names an object: the first outside the allocator and
   * its wrappers (report/maker.h, JSON "maker"); the full path stays in the
   * details. */
  function makerFrame(o) {
    var st = o.alloc_stack || [];
    return st.length ? frameName(st[o.maker > 0 && o.maker < st.length ? o.maker : 0]) : '[unknown allocation path]';
  }
  function objName(o) { return '#' + o.id + ' ' + (o.type || makerFrame(o)); }
  /* A stack as a list, leaf first; long ones folded after `keep` frames. */
  function stackList(stack, keep) {
    var ol = el('ol', 'stack'), i, more;
    stack = stack && stack.length ? stack : ['[unknown path]'];
    for (i = 0; i < stack.length && (!keep || i < keep); i++) ol.appendChild(el('li', null, frameName(stack[i])));
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
    if (M.unfinished) fact('UNFINISHED', 'a checkpoint written while recording: objscope ended before its final profile; the run\u2019s last seconds are missing', true);
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
    var notes = M.notes || [];
    notes.forEach(function (n) { $('notes').appendChild(el('li', null, n)); });
    $('notes-box').hidden = !notes.length;
    $('notes-count').textContent = notes.length + ' note' + (notes.length === 1 ? '' : 's') +
      ' on how this profile was taken';
    $('foot').textContent = 'objscope report format ' + R.version + (M.hostname ? ' \u00b7 host ' + M.hostname : '') +
      (M.start_time ? ' \u00b7 started ' + new Date(M.start_time * 1000).toISOString().replace('T', ' ').slice(0, 19) + ' UTC' : '');
    if (!objects.length || !attributed) {
      $('empty').hidden = false;
      $('why').textContent = data.why_empty || 'the profile holds no attributed samples';
    }
  }

  /* ---- sortable, paginated tables ---- */
  /* cols: {label, num, width, value(row) for sorting, cell(row) -> td}.
   * Past PAGE rows, a pager below the table (.pager) pages through them.
   * Returns {setRows(rows)}: the search box filters through it. */
  function table(tableEl, cols, rows, onRow, initial) {
    var thead = el('thead'), tr = el('tr'), tbody = el('tbody');
    var state = { col: initial ? initial[0] : -1, dir: initial ? initial[1] : 1, page: 0 };
    var pager = tableEl.nextElementSibling && tableEl.nextElementSibling.classList.contains('pager') ?
      tableEl.nextElementSibling : null;
    if (!pager) {
      pager = el('div', 'pager');
      tableEl.parentNode.insertBefore(pager, tableEl.nextSibling);
    }
    tableEl.textContent = '';
    cols.forEach(function (c, i) {
      var th = el('th', (c.num ? 'num' : '') + (c.wide ? ' wide' : '') + (c.cls ? ' ' + c.cls : '') || null, c.label);
      th.title = c.title || c.label;
      if (c.width) th.style.width = c.width;
      if (tableEl.classList.contains('sortable')) {
        th.addEventListener('click', function () {
          state.dir = state.col === i ? -state.dir : (c.num ? -1 : 1);
          state.col = i;
          state.page = 0;
          render();
        });
      }
      tr.appendChild(th);
    });
    thead.appendChild(tr);
    tableEl.appendChild(thead);
    tableEl.appendChild(tbody);
    function button(label, page, enabled) {
      var b = el('button', null, label);
      b.disabled = !enabled;
      b.dataset.page = page;
      b.addEventListener('click', function () { state.page = page; render(); });
      return b;
    }
    function render() {
      var sorted = rows.slice(), pages = Math.max(1, Math.ceil(rows.length / PAGE));
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
      state.page = Math.min(state.page, pages - 1);
      sorted.slice(state.page * PAGE, (state.page + 1) * PAGE).forEach(function (r) {
        var row = el('tr');
        cols.forEach(function (c) {
          var td = c.cell(r);
          if (c.wide) td.classList.add('wide');
          row.appendChild(td);
        });
        if (onRow) onRow(row, r);
        tbody.appendChild(row);
      });
      pager.textContent = '';
      pager.hidden = rows.length <= PAGE;
      if (rows.length > PAGE) {
        pager.appendChild(button('\u2039 previous', state.page - 1, state.page > 0));
        pager.appendChild(el('span', 'range', 'rows ' + num(state.page * PAGE + 1) + '\u2013' +
          num(Math.min(rows.length, (state.page + 1) * PAGE)) + ' of ' + num(rows.length) +
          ' \u00b7 page ' + (state.page + 1) + ' of ' + pages));
        pager.appendChild(button('next \u203a', state.page + 1, state.page < pages - 1));
      }
    }
    render();
    return { setRows: function (r) { rows = r; state.page = 0; render(); } };
  }
  /* Text cells hold one line; what does not fit ends in an ellipsis and
   * the whole text is the cell's tooltip (and the selected object's
   * details show whole paths). */
  function textCol(label, f, cls, width, shorten) {
    return { label: label, value: f, width: width, cell: function (r) {
      var td = el('td', 'clip' + (cls ? ' ' + cls : ''), shorten ? shortName(f(r)) : f(r));
      td.title = f(r);
      return td;
    } };
  }
  /* Java package names abbreviated to their initials in table cells, so
   * that the class and method stay in view: com.example.Foo.bar(Foo.java:3)
   * reads c.e.Foo.bar(Foo.java:3). */
  function shortName(s) {
    return String(s).replace(/^((?:[a-z_][\w]*\.)+)(?=[A-Z_$][\w$]*(?:[.[$]|$))/, function (pkg) {
      return pkg.split('.').filter(Boolean).map(function (p) { return p[0]; }).join('.') + '.';
    });
  }
  function numCol(label, f, fmt, width) {
    /* narrower with the seven replica columns, so that the text columns keep room */
    return { label: label, num: true, value: f, width: width || (hasReplicas ? '84px' : '100px'),
             cell: function (r) { return el('td', 'num', (fmt || num)(f(r))); } };
  }
  function shareCol(label, f, whole) {
    return { label: label, value: f, width: hasReplicas ? '120px' : '160px', cls: 'sharecol',
             cell: function (r) { return shareCell(f(r), whole); } };
  }
  /* ---- replicas (--replicas, docs/REPLICAS.md) ---- */
  var hasReplicas = objects.some(function (o) { return o.replica !== null && o.replica !== undefined; });
  function fig(v) { return v === null || v === undefined ? '\u2014' : Number(v).toFixed(2); }
  function repVal(o, k) { return o.replica && o.replica[k] !== null && o.replica[k] !== undefined ? o.replica[k] : -1; }
  /* Replica cost: theta x samples (sortable; the table's default order stays by samples). */
  function replicaCols() {
    if (!hasReplicas) return [];
    function figCol(label, k, title) {
      var c = numCol(label, function (o) { return repVal(o, k); }, function (v) { return v < 0 ? '\u2014' : fig(v); }, '52px');
      c.title = title;
      return c;
    }
    return [
      numCol('replica cost', function (o) { var t = repVal(o, 'theta'); return t < 0 ? -1 : t * o.samples; },
             function (v) { return v < 0 ? '\u2014' : v.toFixed(1); }, '88px'),
      figCol('\u03b8', 'theta', 'replication factor: share of watchpoint comparisons that found equal values'),
      numCol('comparisons', function (o) { return o.replica ? o.replica.comparisons : 0; }, null, '92px'),
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

  /* ---- memory: PMU data sources and --numa (docs/PMU.md) ---- */
  var hasMemory = objects.some(function (o) { return o.memory !== null && o.memory !== undefined; });
  var hasNuma = objects.some(function (o) { return o.numa !== null && o.numa !== undefined; });
  var LEVELS = [['l1', 'L1'], ['lfb', 'LFB'], ['l2', 'L2'], ['l3', 'L3'], ['ram', 'RAM'],
                ['remote_ram', 'remote RAM'], ['remote_cache', 'remote cache'], ['other', 'other'],
                ['unknown', 'unknown']];
  function memoryCols() {
    var cols = [];
    if (hasMemory)
      cols.push(numCol('latency', function (o) {
        return o.memory && o.memory.latency_mean_cycles !== null ? o.memory.latency_mean_cycles : -1;
      }, function (v) { return v < 0 ? '\u2014' : v.toFixed(0) + ' cy'; }, '84px'));
    if (hasNuma)
      cols.push(numCol('NUMA remote', function (o) {
        var n = o.numa, all = n ? n.local + n.remote : 0;
        return all ? n.remote / all : -1;
      }, function (v) { return v < 0 ? '\u2014' : (100 * v).toFixed(1) + '%'; }, '116px'));
    return cols;
  }
  function memoryDetail(o) {
    var box = $('memory-detail');
    if (!box) return;
    box.textContent = '';
    box.hidden = !hasMemory && !hasNuma;
    if (box.hidden) return;
    var dl = el('dl', 'replica'), m = o.memory, n = o.numa, rows = [];
    box.appendChild(el('h3', null, 'Memory'));
    if (m) {
      var all = 0;
      LEVELS.forEach(function (l) { all += m.levels[l[0]]; });
      rows.push(['served by', LEVELS.filter(function (l) { return m.levels[l[0]]; }).map(function (l) {
        return l[1] + ' ' + pct(m.levels[l[0]], all);
      }).join(', ') || '\u2014']);
      if (m.tlb_known) rows.push(['data TLB misses', num(m.tlb_miss) + ' of ' + num(m.tlb_known)]);
      if (m.latency_mean_cycles !== null)
        rows.push(['latency', 'mean ' + m.latency_mean_cycles.toFixed(0) + ' cycles' +
          (m.latency_p99_max_cycles !== null ? ', p99 \u2264 ' + num(m.latency_p99_max_cycles) : '') +
          ' (' + num(m.latency_samples) + ' samples)']);
    }
    if (n)
      rows.push(['NUMA', n.machine_nodes === 1 ? '1 node: all local' :
        num(n.local) + ' local, ' + num(n.remote) + ' remote, ' + num(n.unknown) +
        ' unknown; pages on node ' + n.nodes.join(', ')]);
    rows.forEach(function (kv) { dl.appendChild(el('dt', null, kv[0])); dl.appendChild(el('dd', null, kv[1])); });
    box.appendChild(dl);
  }

  /* ---- lifetimes (--lifetimes, docs/LIFETIMES.md) ---- */
  var hasLifetimes = objects.some(function (o) { return o.lifetime !== null && o.lifetime !== undefined; });
  function nsLabel(ns) {
    if (ns < 1e6) return Math.round(ns / 1e3) + 'us';
    if (ns < 1e9) return Math.round(ns / 1e6) + 'ms';
    return (ns / 1e9).toPrecision(3) + 's';
  }
  function binLabel(l, h) {
    if (l.kind === 'managed') return 'age ' + h.age + (h.open_ended ? '+' : '');
    if (!h.lo_ns) return '<1us';
    if (h.hi_ns === null || h.hi_ns === undefined) return '>=' + nsLabel(h.lo_ns);
    return nsLabel(h.lo_ns) + '-' + nsLabel(h.hi_ns);
  }
  /* the median age (managed) or lifetime (native); '' when none */
  function lifetimeText(o) {
    var l = o.lifetime;
    if (!l) return '';
    if (l.kind === 'managed') return l.median_age === null ? '\u2014' : 'age ' + l.median_age;
    if (l.median_lo_ns === null) return '\u2014';
    return binLabel(l, { lo_ns: l.median_lo_ns, hi_ns: l.median_hi_ns });
  }
  function lifetimeCol() {
    if (!hasLifetimes) return null;
    var c = textCol('lifetime', lifetimeText, null, '96px');
    c.title = 'median age in collections survived (Java) or time from allocation to free (native)';
    return c;
  }
  function lifetimeDetail(o) {
    var box = $('lifetime-detail');
    if (!box) return;
    box.textContent = '';
    box.hidden = !hasLifetimes;
    if (!hasLifetimes) return;
    var l = o.lifetime;
    if (!l) { box.appendChild(el('p', 'hint', 'Lifetimes: not measured for this object.')); return; }
    var managed = l.kind === 'managed';
    box.appendChild(el('h3', null, managed ? 'Lifetime (ages in collections survived)' : 'Lifetime (time from allocation to free)'));
    var dl = el('dl', 'replica'), rows = [
      ['objects', num(Math.round(l.objects)) + ', ' + bytes(Math.round(l.bytes))],
      [managed ? 'median age' : 'median lifetime', lifetimeText(o)],
      [managed ? 'died before their first collection' : 'freed within 1,024 us',
        l.young_share === null ? '\u2014' : (100 * l.young_share).toFixed(1) + '%'],
      [managed ? 'live at the end' : 'never freed (leak candidates)',
        num(Math.round(l.live_at_end)) + ', ' + bytes(Math.round(l.live_at_end_bytes))]
    ];
    if (managed) rows.push(['promoted to the old generation', l.promoted === null ? 'not known for this collector' :
      num(Math.round(l.promoted)) + ', ' + bytes(Math.round(l.promoted_bytes))]);
    else rows.push(['peak live', bytes(Math.round(l.peak_bytes)) + ' at ' + Number(l.peak_s).toFixed(3) + ' s']);
    if (l.advice) rows.push(['advice', l.advice.why]);
    rows.forEach(function (kv) { dl.appendChild(el('dt', null, kv[0])); dl.appendChild(el('dd', null, kv[1])); });
    box.appendChild(dl);
    var max = 0;
    (l.histogram || []).forEach(function (h) { max = Math.max(max, h.ended + h.live_at_end); });
    var t = el('table', 'lifetime-hist');
    (l.histogram || []).forEach(function (h) {
      var tr = el('tr'), bar = el('td', 'bar'), d = el('div', 'ended'), v = el('div', 'live');
      tr.appendChild(el('td', null, binLabel(l, h)));
      d.style.width = (max ? 100 * h.ended / max : 0) + '%';
      v.style.width = (max ? 100 * h.live_at_end / max : 0) + '%';
      d.title = num(Math.round(h.ended)) + (managed ? ' died' : ' freed');
      v.title = num(Math.round(h.live_at_end)) + ' live at the end';
      bar.appendChild(d);
      bar.appendChild(v);
      tr.appendChild(bar);
      tr.appendChild(el('td', 'num', num(Math.round(h.ended))));
      tr.appendChild(el('td', 'num', num(Math.round(h.live_at_end))));
      t.appendChild(tr);
    });
    var head = el('tr');
    [managed ? 'age' : 'lifetime', '', managed ? 'died' : 'freed', 'live at the end'].forEach(function (s) {
      head.appendChild(el('th', null, s));
    });
    t.insertBefore(head, t.firstChild);
    box.appendChild(t);
  }

  /* ---- reuse distance (--reuse, docs/REUSE.md): estimates ---- */
  var hasReuse = objects.some(function (o) { return o.reuse !== null && o.reuse !== undefined; });
  function reuseBinLabel(b) {
    if (b === 39) return 'no reuse seen';
    if (b === 0) return '0';
    return bytes(Math.pow(2, b - 1)) + (b === 38 ? '+' : '\u2013' + bytes(Math.pow(2, b) - 1));
  }
  function reuseText(o) {
    var r = o.reuse;
    if (!r) return '';
    if (r.median_censored) return 'cold';
    return r.median_bytes === null ? '\u2014' : '~' + bytes(Math.round(r.median_bytes));
  }
  function reuseCol() {
    if (!hasReuse) return null;
    var c = textCol('reuse', reuseText, null, '80px');
    c.title = 'median reuse distance (estimated: footprint model over sampled reuse times)';
    return c;
  }
  function reuseDetail(o) {
    var box = $('reuse-detail');
    if (!box) return;
    box.textContent = '';
    box.hidden = !hasReuse;
    if (!hasReuse) return;
    var r = o.reuse;
    if (!r) { box.appendChild(el('p', 'hint', 'Reuse distance: not measured for this object.')); return; }
    box.appendChild(el('h3', null, 'Reuse distance (ESTIMATED: footprint model over sampled reuse times)'));
    var dl = el('dl', 'replica'), mr = r.miss_ratio || {};
    function ratio(v) { return v === null || v === undefined ? '\u2014' : (100 * v).toFixed(0) + '%'; }
    [['reuses', num(Math.round(r.reuses)) + ' (' + num(Math.round(r.censored)) + ' not seen within the watchpoints\' age)'],
     ['median distance', reuseText(o)],
     ['LRU miss ratio', 'L1d ' + ratio(mr.L1d) + ', L2 ' + ratio(mr.L2) + ', LLC ' + ratio(mr.LLC)]
    ].forEach(function (kv) { dl.appendChild(el('dt', null, kv[0])); dl.appendChild(el('dd', null, kv[1])); });
    box.appendChild(dl);
    var max = 0, t = el('table', 'reuse-hist'), head = el('tr');
    (r.bins || []).forEach(function (n) { max = Math.max(max, n); });
    ['distance', '', 'reuses'].forEach(function (s) { head.appendChild(el('th', null, s)); });
    t.appendChild(head);
    (r.bins || []).forEach(function (n, b) {
      if (!n) return;
      var tr = el('tr'), bar = el('td', 'bar'), d = el('div', b === 39 ? 'cold' : 'reuse');
      tr.appendChild(el('td', null, reuseBinLabel(b)));
      d.style.width = (max ? 100 * n / max : 0) + '%';
      d.title = num(Math.round(n)) + ' reuses';
      bar.appendChild(d);
      tr.appendChild(bar);
      tr.appendChild(el('td', 'num', num(Math.round(n))));
      t.appendChild(tr);
    });
    box.appendChild(t);
  }

  /* ---- flame graphs ---- */
  /* Frame colours by kind; the name varies the lightness a little so that
   * neighbours of one kind stay apart. Search matches are magenta. */
  var KIND_COLOURS = {
    java: [140, 55, 50], jvm: [45, 80, 52], native: [8, 70, 62], kernel: [28, 90, 55],
    unknown: [215, 12, 66], synthetic: [215, 12, 66], root: [215, 14, 78]
  };
  var KIND_LABELS = { java: 'Java', jvm: 'JVM (libjvm.so)', native: 'native', kernel: 'kernel',
                      unknown: 'unknown / synthetic' };
  var MATCH = '#E600E6';
  function kindColour(kind, name) {
    var c = KIND_COLOURS[kind] || KIND_COLOURS.native, h = 0, i;
    name = String(name || '');
    for (i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
    return 'hsl(' + c[0] + ',' + c[1] + '%,' + (c[2] + (h % 9) - 4) + '%)';
  }
  /* Tree from stacks (leaf first) weighted by value, root first; inverted:
   * leaf (allocation site or accessing function) first, its callers above. */
  /* Flame graphs of a JVM's 100-frame paths are towers nobody reads: by
   * default a path keeps its DEPTH frames nearest the allocation site (or
   * the access), its outer callers folded into one frame; "all frames"
   * shows them. "Java only" / "native only" keep the frames of that kind. */
  var DEPTH = 24, CUT = '[outer callers folded: tick “all frames”]';
  function viewStack(stack) {
    var which = $('frame-kinds') ? $('frame-kinds').value : 'all', kept;
    if (which !== 'all') {
      kept = stack.filter(function (f) {
        var k = frameKind(f);
        return which === 'java' ? k === 'java' : k !== 'java' && k !== 'synthetic' && k !== 'unknown';
      });
      stack = kept.length ? kept : [{ text: which === 'java' ? '[no Java frame]' : '[no native frame]', kind: 'synthetic' }];
    }
    if (!$('all-frames') || $('all-frames').checked || stack.length <= DEPTH) return stack;
    return stack.slice(0, DEPTH).concat([{ text: CUT, kind: 'synthetic' }]);
  }
  function tree(rootName, entries, inverted) {
    var root = { name: rootName, kind: 'root', value: 0, children: [] };
    entries.forEach(function (e) {
      var node = root, stack = viewStack(e.stack && e.stack.length ? e.stack : ['[unknown path]']);
      root.value += e.value;
      for (var k = 0; k < stack.length; k++) {
        var i = inverted ? k : stack.length - 1 - k, name = frameName(stack[i]), next = null;
        for (var j = 0; j < node.children.length; j++)
          if (node.children[j].name === name) { next = node.children[j]; break; }
        if (!next) {
          next = { name: name, kind: frameKind(stack[i]), value: 0, children: [] };
          node.children.push(next);
        }
        next.value += e.value;
        node = next;
      }
    });
    return root;
  }
  function matches(name, term) { return !!term && String(name).toLowerCase().indexOf(term) >= 0; }
  function drawFlame(container, root, inverted, onClick) {
    container.textContent = '';
    if (!root.value) {
      container.appendChild(el('div', 'none', 'No access samples to draw.'));
      return null;
    }
    var total = root.value;
    var tip = flamegraph.tooltip.defaultFlamegraphTooltip().text(function (d) {
      return d.data.name + ' \u2014 ' + (KIND_LABELS[d.data.kind] || 'all') + ', ' + num(d.data.value) +
        ' samples (' + pct(d.data.value, total) + ')';
    });
    var chart = flamegraph.default()
      .width(Math.max(300, container.clientWidth || 900))
      .cellHeight(18)
      .minFrameSize(2)
      .transitionDuration(300)
      .selfValue(false)
      .sort(true)
      .inverted(!!inverted)
      .title('')
      .tooltip(tip)
      .setSearchMatch(function (d, term) { return matches(d.data.name, term); })
      .setSearchHandler(function () {})
      .setColorMapper(function (d) {
        return d.highlight ? MATCH : kindColour(d.data.kind, d.data.name);
      });
    if (onClick) chart.onClick(onClick);
    d3.select(container).datum(root).call(chart);
    return chart;
  }
  /* The kinds present in a tree, as a legend under its flame graph. */
  function legend(container, root) {
    var seen = {}, box = el('div', 'legend');
    (function walk(n) { seen[n.kind === 'synthetic' ? 'unknown' : n.kind] = true; n.children.forEach(walk); })(root);
    ['java', 'jvm', 'native', 'kernel', 'unknown'].forEach(function (k) {
      if (!seen[k]) return;
      var item = el('span', null), sw = el('i');
      sw.style.background = kindColour(k, '');
      item.dataset.kind = k;
      item.appendChild(sw);
      item.appendChild(document.createTextNode(KIND_LABELS[k]));
      box.appendChild(item);
    });
    if (root.value) {
      var m = el('span', 'match'), sw2 = el('i');
      sw2.style.background = MATCH;
      m.appendChild(sw2);
      m.appendChild(document.createTextNode('search match'));
      box.appendChild(m);
    }
    container.appendChild(box);
  }

  /* ---- objects ---- */
  var selected = null, term = '', allocChart = null, accessChart = null;
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
    memoryDetail(o);
    lifetimeDetail(o);
    reuseDetail(o);
    var accounted = 0, rows = (o.accesses || []).map(function (a) { accounted += a.samples; return a; });
    if (o.samples > accounted) rows.push({ stack: ['[unknown access path]'], samples: o.samples - accounted });
    table($('access-paths'), [
      shareCol('share', function (a) { return a.samples; }, o.samples),
      numCol('samples', function (a) { return a.samples; }),
      { label: 'access path (leaf first)', value: function () { return 0; },
        cell: function (a) { var td = el('td'); td.appendChild(stackList(a.stack, 4)); return td; } }
    ], rows, null, null);
    $('detail-body').hidden = false;
    drawAccess();
  }
  function drawAccess() {
    if (!selected) return;
    var o = selected, accounted = 0, rows = (o.accesses || []).map(function (a) { accounted += a.samples; return a; });
    if (o.samples > accounted) rows.push({ stack: ['[unknown access path]'], samples: o.samples - accounted });
    var root = tree(objName(o), rows.map(function (a) { return { stack: a.stack, value: a.samples }; }), inverted());
    accessChart = drawFlame($('access-flame'), root, inverted());
    legend($('access-flame'), root);
    if (accessChart && term) accessChart.search(term);
  }
  function inverted() { return $('invert').checked; }
  /* An object matches the search when its type or a frame of its allocation
   * path or of one of its access paths holds the term (any case). */
  function objectMatches(o, t) {
    if (!t) return true;
    if (matches(o.type || '', t) || names(o.alloc_stack).some(function (n) { return matches(n, t); })) return true;
    return (o.accesses || []).some(function (a) { return names(a.stack).some(function (n) { return matches(n, t); }); });
  }
  var objectsTable = null, byLeaf = {};
  function drawAlloc() {
    var root = tree('all objects', objects.map(function (o) {
      /* estimated paths: each sample on the path its estimate gives it */
      return { stack: o.alloc_stack,
               value: o.path ? Math.max(0, Math.round(o.samples_estimated * 100) / 100) : o.samples };
    }), inverted());
    allocChart = drawFlame($('alloc-flame'), root, inverted(), function (d) {
      /* Clicking the allocating frame of an object selects it too. */
      var o = d && d.data && (inverted() ? d.depth === 1 : !d.children) ? byLeaf[d.data.name] : null;
      if (o) select(o, document.querySelector('#objects tbody tr[data-object="' + o.id + '"]'));
    });
    legend($('alloc-flame'), root);
    if (allocChart && term) allocChart.search(term);
  }
  /* Objects without a sample (a JVM's heap and code cache reservations,
   * buffers never read while sampled) are left out of the table unless
   * asked for, as in the text report: they would fill the ranks below the
   * few that matter. The toggle says how many there are. */
  function sampled(o) { return o.samples > 0 || (hasEst && o.samples_estimated > 0); }
  /* Program first: an object whose type is a runtime adapter's category
   * (a bracketed name, the runtime's own memory) is listed only on request,
   * as the text report lists it in a section of its own. */
  function category(o) { var t = o.type || ''; return t.length > 2 && t[0] === '[' && t[t.length - 1] === ']'; }
  var quiet = objects.filter(function (o) { return !sampled(o) && !category(o); }).length;
  var runtimeObjs = objects.filter(category);
  var runtimeShare = runtimeObjs.reduce(function (s, o) { return s + rankSamples(o); }, 0);
  function listed() {
    var pool = $('show-unsampled').checked ? objects : objects.filter(sampled);
    return $('show-runtime').checked ? pool : pool.filter(function (o) { return !category(o); });
  }
  function countObjects() {
    var out = R.objects_without_samples_left_out || 0;
    $('objects-count').textContent = num(listed().length) + ' of ' + num(R.objects_total) +
      ', ranked by access samples' + (hasPaths ? ' (exact plus estimated allocation paths)'
        : hasEst ? ' (Horvitz-Thompson estimates)' : '') +
      (out ? '; ' + num(out) + ' without samples left out of this page (report -v keeps them)' : '') +
      (runtimeObjs.length ? '; the program\u2019s objects took ' + pct(estAttributed - runtimeShare, estAttributed) +
        ', the runtime\u2019s own memory ' + pct(runtimeShare, estAttributed) : '');
  }
  function search() {
    var shown, pool = listed();
    countObjects();
    term = $('search').value.trim().toLowerCase();
    shown = pool.filter(function (o) { return objectMatches(o, term); });
    objectsTable.setRows(shown);
    $('search-count').textContent = term ? shown.length + ' of ' + pool.length + ' objects match' : '';
    [allocChart, accessChart].forEach(function (c) {
      if (!c) return;
      if (term) c.search(term); else c.clear();
    });
  }
  function objectsView() {
    countObjects();
    var cols = [
      numCol('#', function (o) { return o.id; }, String, '56px'),
      textCol('type', function (o) { return o.type || '\u2014'; }, null, hasReplicas ? null : '15%', true),
      textCol('allocated at', function (o) { return makerFrame(o); }, 'frame', null, true),
      shareCol('share', rankSamples, estAttributed),
      numCol('samples', function (o) { return o.samples; }),
      hasEst ? estCol() : null,
      hasPaths ? textCol('path', pathText, null, '14%') : null,
      numCol('allocations', function (o) { return o.allocations; }),
      numCol('bytes', function (o) { return o.bytes; }, bytes),
    ].concat(replicaCols(), [
      lifetimeCol(),
      reuseCol(),
    ], memoryCols()).filter(Boolean);
    /* a narrow window (style.css: .wide) keeps the rank, the type, the
     * allocating frame and the share; the other figures are in the details */
    cols.forEach(function (c) { c.wide = ['#', 'type', 'allocated at', 'share'].indexOf(c.label) < 0; });
    $('unsampled').hidden = !quiet;
    $('unsampled-label').textContent = 'show ' + num(quiet) + ' object' + (quiet === 1 ? '' : 's') +
      ' without samples';
    $('show-unsampled').addEventListener('change', search);
    $('runtime-toggle').hidden = !runtimeObjs.length;
    var cats = {};
    runtimeObjs.forEach(function (o) { cats[o.type] = (cats[o.type] || 0) + rankSamples(o); });
    $('runtime-label').textContent = 'show the runtime\u2019s own memory: ' + num(runtimeObjs.length) + ' object' +
      (runtimeObjs.length === 1 ? '' : 's') + ', ' + pct(runtimeShare, estAttributed) + ' of the samples (' +
      Object.keys(cats).sort(function (a, b) { return cats[b] - cats[a]; }).map(function (t) {
        return t + ' ' + pct(cats[t], estAttributed);
      }).join(', ') + ')';
    $('show-runtime').addEventListener('change', search);
    objectsTable = table($('objects'), cols, listed(), function (row, o) {
      row.dataset.object = o.id;
      if (selected === o) row.classList.add('selected');
      row.addEventListener('click', function () { select(o, row); });
    }, null);
    objects.forEach(function (o) { byLeaf[firstFrame(o.alloc_stack)] = o; });
    drawAlloc();
    /* the first object is the answer: its details are shown at load */
    var first = listed()[0];
    if (first) select(first, document.querySelector('#objects tbody tr[data-object="' + first.id + '"]'));
    $('search').addEventListener('input', search);
    $('invert').addEventListener('change', function () { drawAlloc(); drawAccess(); });
    $('all-frames').addEventListener('change', function () { drawAlloc(); drawAccess(); });
    $('frame-kinds').addEventListener('change', function () { drawAlloc(); drawAccess(); });
  }

  /* ---- timeline: samples per time bucket of the top objects ---- */
  var TIMELINE_COLOURS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c',
                          '#0891b2', '#db2777', '#65a30d', '#854d0e', '#475569'];
  function timelineView() {
    var T = data.timeline, box = $('timeline-chart'), leg = $('timeline-legend');
    var byId = {};
    objects.forEach(function (o) { byId[o.id] = o; });
    if (!T || !T.objects || !T.objects.length) {
      $('timeline-hint').textContent = 'no timeline: this profile was recorded by an older objscope' +
        ' (it has no per-sample times)';
      return;
    }
    var series = T.objects.filter(function (s) { return byId[s.id]; });
    var n = d3.max(series, function (s) { return s.samples.length; }) || 1;
    var step = T.bucket_s || 1;
    $('timeline-sub').textContent = 'top ' + series.length + ' object' + (series.length === 1 ? '' : 's') +
      ', samples per ' + (step < 1 ? Math.round(step * 1000) + ' ms' : step + ' s');
    var W = Math.max(300, box.clientWidth || 900), H = 220, m = { l: 52, r: 14, t: 8, b: 26 };
    var x = d3.scaleLinear().domain([0, n * step]).range([m.l, W - m.r]);
    var y = d3.scaleLinear().domain([0, d3.max(series, function (s) { return d3.max(s.samples); }) || 1])
      .nice().range([H - m.b, m.t]);
    var svg = d3.select(box).append('svg').attr('width', W).attr('height', H)
      .attr('viewBox', '0 0 ' + W + ' ' + H);
    svg.append('g').attr('class', 'axis').attr('transform', 'translate(0,' + (H - m.b) + ')')
      .call(d3.axisBottom(x).ticks(Math.min(10, Math.floor(W / 90))).tickFormat(function (v) { return v + ' s'; }));
    svg.append('g').attr('class', 'axis').attr('transform', 'translate(' + m.l + ',0)')
      .call(d3.axisLeft(y).ticks(5));
    /* each bucket's value drawn at its middle */
    var line = d3.line().x(function (v, i) { return x((i + 0.5) * step); }).y(function (v) { return y(v); });
    series.forEach(function (s, i) {
      var o = byId[s.id], colour = TIMELINE_COLOURS[i % TIMELINE_COLOURS.length];
      var path = svg.append('path').attr('class', 'series').attr('data-object', s.id)
        .attr('fill', 'none').attr('stroke', colour).attr('stroke-width', 2.5)
        .attr('d', line(s.samples));
      path.append('title').text(objName(o) + ' \u2014 ' + makerFrame(o));
      var item = el('span'), sw = el('i');
      sw.style.background = colour;
      item.dataset.object = s.id;
      item.title = 'select object #' + s.id;
      item.appendChild(sw);
      item.appendChild(document.createTextNode('#' + s.id + ' ' + (o.type || '') + (o.type ? ' at ' : '') +
        shortName(makerFrame(o))));
      item.addEventListener('click', function () {
        select(o, document.querySelector('#objects tbody tr[data-object="' + o.id + '"]'));
      });
      leg.appendChild(item);
    });
  }

  function typesView() {
    table($('types'), [
      textCol('type', function (t) { return t.type || '(unknown type)'; }, 'frame', null, true),
      shareCol('share', function (t) { return t.samples; }, attributed),
      numCol('samples', function (t) { return t.samples; })
    ], R.types || [], null, null);
  }
  function threadsView() {
    var all = (R.threads || []).reduce(function (s, t) { return s + t.samples; }, 0);
    table($('threads'), [
      textCol('name', function (t) { return t.name || '(unnamed)'; }),
      textCol('kind', function (t) { return t.kind; }, null, '80px'),
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
  timelineView();
  typesView();
  threadsView();
})();
