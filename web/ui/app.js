/*
 * The dashboard's page (src/manager/ui/ui.h): one Server-Sent Events stream from the manager
 * (api/stream) brings a snapshot, then deltas as the manager's informers and NodeMetric reports
 * change; nothing here polls. Rows carry their raw figures in data-value attributes (milli-cores,
 * bytes) next to the text shown (cores, GiB), for the browser test and for copy and paste.
 */
(function () {
  "use strict";
  var nodes = new Map();          /* name -> row from the manager */
  var history = null;             /* columns: t, cpu, memory, lsCpu, ... */
  var events = [];                /* newest first */
  var MAX_EVENTS = 100, MAX_POINTS = 2000;
  var charts = {};

  function $(id) { return document.getElementById(id); }
  function cores(m) { return (m / 1000).toFixed(2); }
  function gib(b) { return (b / 1073741824).toFixed(2); }
  function cell(tr, text, value, cls) {
    var td = document.createElement("td");
    td.textContent = text;
    if (value !== undefined) td.dataset.value = String(value);
    if (cls) td.className = cls;
    tr.appendChild(td);
    return td;
  }

  function status(text, cls) {
    var s = $("status");
    s.textContent = text;
    s.className = "status " + (cls || "");
  }

  /* ---- nodes and totals ---- */

  var NODE_FIELDS = [
    ["cpu", cores], ["lsCpu", cores], ["batchCpu", cores], ["beCpu", cores],
    ["memory", gib], ["lsMemory", gib], ["batchMemory", gib], ["beMemory", gib]
  ];

  function renderNodes(changed) {
    var tbody = $("nodes").tBodies[0];
    var names = Array.from(nodes.keys()).sort();
    var frag = document.createDocumentFragment();
    names.forEach(function (name) {
      var n = nodes.get(name), tr = document.createElement("tr");
      tr.dataset.node = name;
      cell(tr, name);
      NODE_FIELDS.forEach(function (f) {
        cell(tr, f[1](n[f[0]] || 0), n[f[0]] || 0).dataset.field = f[0];
      });
      cell(tr, n.reported ? new Date(n.reported).toLocaleTimeString() : "never",
           n.reported || "").dataset.field = "reported";
      if (changed && changed.has(name)) tr.className = "flash";
      frag.appendChild(tr);
    });
    tbody.replaceChildren(frag);
    $("node-count").textContent = "(" + names.length + ")";
  }

  function renderTotals(t) {
    var box = $("totals");
    var items = [
      ["nodes", String(t.nodes), t.nodes],
      ["CPU allocatable", cores(t.cpu) + " cores", t.cpu],
      ["LS CPU used", cores(t.lsCpu) + " cores", t.lsCpu],
      ["batch CPU allocatable", cores(t.batchCpu) + " cores", t.batchCpu],
      ["batch CPU used", cores(t.beCpu) + " cores", t.beCpu],
      ["CPU utilisation", t.cpu ? ((t.lsCpu + t.beCpu) / t.cpu * 100).toFixed(1) + " %" : "-",
       t.cpu ? (t.lsCpu + t.beCpu) / t.cpu : 0],
      ["memory utilisation",
       t.memory ? ((t.lsMemory + t.beMemory) / t.memory * 100).toFixed(1) + " %" : "-",
       t.memory ? (t.lsMemory + t.beMemory) / t.memory : 0]
    ];
    box.replaceChildren();
    items.forEach(function (it) {
      var d = document.createElement("div"), b = document.createElement("b");
      d.dataset.total = it[0];
      d.dataset.value = String(it[2]);
      b.textContent = it[1];
      d.appendChild(b);
      d.appendChild(document.createTextNode(it[0]));
      box.appendChild(d);
    });
  }

  /* ---- totals over time ---- */

  function makeChart(id, title, unit, scale, cols) {
    var series = [{}].concat(cols.map(function (c) {
      return {label: c[1], stroke: c[2], width: 1.5, spanGaps: true,
              value: function (u, v) { return v == null ? "" : v.toFixed(2) + " " + unit; }};
    }));
    return {
      cols: cols, scale: scale,
      plot: new uPlot({width: 560, height: 240, title: title, series: series,
                       axes: [{}, {label: unit, size: 60}]}, [[]].concat(cols.map(function () {
                         return [];
                       })), $(id))
    };
  }

  function chartData(c) {
    return [history.t].concat(c.cols.map(function (col) {
      return history[col[0]].map(function (v) { return v * c.scale; });
    }));
  }

  function renderCharts() {
    if (!history) return;
    if (!charts.cpu) {
      charts.cpu = makeChart("chart-cpu", "Cluster CPU", "cores", 0.001, [
        ["cpu", "allocatable", "#607d8b"], ["lsCpu", "LS used", "#1f77b4"],
        ["batchCpu", "batch allocatable", "#ff7f0e"], ["beCpu", "batch used", "#d62728"]]);
      charts.memory = makeChart("chart-memory", "Cluster memory", "GiB", 1 / 1073741824, [
        ["memory", "allocatable", "#607d8b"], ["lsMemory", "LS used", "#1f77b4"],
        ["batchMemory", "batch allocatable", "#ff7f0e"], ["beMemory", "batch used", "#d62728"]]);
    }
    charts.cpu.plot.setData(chartData(charts.cpu));
    charts.memory.plot.setData(chartData(charts.memory));
  }

  function addPoints(p) {
    Object.keys(history).forEach(function (k) {
      history[k] = history[k].concat(p[k] || []).slice(-MAX_POINTS);
    });
  }

  /* ---- pending pods and events ---- */

  function renderPending(p) {
    var tbody = $("pending").tBodies[0], frag = document.createDocumentFragment();
    p.pods.forEach(function (pod) {
      var tr = document.createElement("tr");
      tr.dataset.pod = pod.namespace + "/" + pod.name;
      cell(tr, pod.namespace + "/" + pod.name);
      cell(tr, pod.class).dataset.field = "class";
      cell(tr, pod.reason || "waiting for the scheduler", undefined, "text").dataset.field =
          "reason";
      cell(tr, pod.message, undefined, "text").dataset.field = "message";
      cell(tr, pod.created);
      frag.appendChild(tr);
    });
    tbody.replaceChildren(frag);
    $("pending-count").textContent = "(LS " + p.LS + ", BE " + p.BE + ")";
  }

  function renderEvents() {
    var tbody = $("events").tBodies[0], frag = document.createDocumentFragment();
    events.forEach(function (e) {
      var tr = document.createElement("tr");
      tr.dataset.kind = e.kind;
      tr.dataset.object = e.object;
      cell(tr, e.time ? new Date(e.time).toLocaleString() : "", e.time);
      cell(tr, e.kind + " (" + e.reason + ")");
      cell(tr, (e.objectKind ? e.objectKind + " " : "") + e.object);
      cell(tr, e.message, undefined, "text");
      frag.appendChild(tr);
    });
    tbody.replaceChildren(frag);
  }

  /* ---- the stream ---- */

  function onSnapshot(s) {
    nodes = new Map();
    s.nodes.forEach(function (n) { nodes.set(n.name, n); });
    history = s.history;
    events = s.events.slice(0, MAX_EVENTS);
    $("user").textContent = s.user;
    renderNodes(null);
    renderTotals(s.totals);
    renderCharts();
    renderPending(s.pending);
    renderEvents();
    document.body.dataset.seq = String(s.seq);
  }

  function onDelta(d) {
    var changed = new Set();
    (d.removed || []).forEach(function (name) { nodes.delete(name); });
    (d.nodes || []).forEach(function (n) { nodes.set(n.name, n); changed.add(n.name); });
    if (d.nodes || d.removed) renderNodes(changed);
    if (d.totals) renderTotals(d.totals);
    if (d.point && history) { addPoints(d.point); renderCharts(); }
    if (d.pending) renderPending(d.pending);
    if (d.events) { events = d.events.concat(events).slice(0, MAX_EVENTS); renderEvents(); }
    document.body.dataset.seq = String(d.seq);
  }

  function connect() {
    var es = new EventSource("api/stream");
    es.addEventListener("open", function () { status("live", "live"); });
    es.addEventListener("snapshot", function (m) { onSnapshot(JSON.parse(m.data)); });
    es.addEventListener("delta", function (m) { onDelta(JSON.parse(m.data)); });
    es.addEventListener("error", function () {
      if (es.readyState !== EventSource.CLOSED) {
        status("reconnecting", "down");
        return;
      }
      /* Refused outright: a lapsed session goes back to the login page; anything else (a
       * standby manager, a restart) is tried again in a few seconds. */
      status("disconnected", "down");
      fetch("api/state", {method: "HEAD", credentials: "same-origin"}).then(function (r) {
        if (r.status === 401 || r.status === 403) location.href = "login";
        else setTimeout(connect, 3000);
      }, function () { setTimeout(connect, 3000); });
    });
  }
  connect();
})();
