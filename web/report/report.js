/*
 * The charts of `koord sim`'s HTML report (src/sim/report_html.c inlines this file, uPlot and
 * the data, so the page works opened from disk, offline). The data is the JSON in the
 * script element "sim-data": one entry per run with its samples as columns, trace time in seconds.
 * Runs sample at their own instants, so each chart joins them on one time axis (uPlot.join);
 * a run without a sample at some instant has a gap there, drawn across (spanGaps).
 */
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("sim-data").textContent);
  var colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"];
  /* One colour per run, one dash pattern per quantity. */
  var dashes = [[], [6, 4], [2, 3]];

  function traceTime(s) {
    var d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600),
        m = Math.floor((s % 3600) / 60);
    if (d > 0) return d + "d " + h + "h";
    if (h > 0) return h + "h " + m + "m";
    return m + "m " + Math.floor(s % 60) + "s";
  }

  /* One chart: for every run, the columns named in cols (label, key, scale), joined on t. */
  function chart(id, title, unit, cols, scale) {
    var tables = [], series = [{label: "trace time", value: function (u, v) {
      return v == null ? "" : traceTime(v);
    }}];
    data.runs.forEach(function (run, ri) {
      var table = [run.t];
      cols.forEach(function (c, ci) {
        table.push(run[c.key].map(function (v) { return v == null ? null : v * scale; }));
        series.push({
          label: run.name + ": " + c.label,
          stroke: colours[ri % colours.length],
          dash: dashes[ci % dashes.length],
          width: 1.5,
          spanGaps: true,
          value: function (u, v) { return v == null ? "" : v.toFixed(2) + " " + unit; }
        });
      });
      tables.push(table);
    });
    var el = document.getElementById(id);
    var h = document.createElement("h2");
    h.textContent = title;
    el.appendChild(h);
    new uPlot({
      width: Math.min(1100, Math.max(480, document.body.clientWidth - 40)),
      height: 280,
      scales: {x: {time: false}},
      axes: [
        {values: function (u, vals) { return vals.map(traceTime); }},
        {label: unit, size: 70}
      ],
      series: series
    }, tables.length ? uPlot.join(tables) : [[]], el);
  }

  chart("chart-cpu", "CPU utilisation (usage / capacity)", "%",
        [{label: "cpu", key: "cpu_util"}], 100);
  chart("chart-mem", "Memory utilisation (usage / capacity)", "%",
        [{label: "memory", key: "mem_util"}], 100);
  chart("chart-batch-cpu", "Batch CPU: advertised, requested, used", "cores",
        [{label: "batch-cpu allocatable", key: "batch_cpu_allocatable"},
         {label: "requested by BE", key: "batch_cpu_requested"},
         {label: "used by BE", key: "be_cpu_used"}], 0.001);
  chart("chart-batch-mem", "Batch memory: advertised, requested, used", "GiB",
        [{label: "batch-memory allocatable", key: "batch_mem_allocatable"},
         {label: "requested by BE", key: "batch_mem_requested"},
         {label: "used by BE", key: "be_mem_used"}], 1 / 1073741824);
  chart("chart-be", "BE pods running and pending", "pods",
        [{label: "running", key: "be_running"}, {label: "pending", key: "be_pending"}], 1);
})();
