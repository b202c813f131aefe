/*
 * The browser half of test_sim_dashboard.sh: drives Debian's chromium (headless, through
 * playwright-core from web/node_modules, started by browser.cjs) against the /ui of the manager
 * a running `koord sim` started, and checks what the page shows against what the API says at
 * that moment (kubectl, with $KUBECONFIG, is asked anew on every try). A simulation moves while
 * it is looked at, so every check is "page and API agree", tried every 250 ms until they do or
 * the deadline passes, never one comparison of figures taken at different times. Environment:
 *   UI_URL    https://host:port/ui/
 *   UI_TOKEN  a bearer token to log in with
 *   UI_SHOT   where to save the screenshot
 *   KUBECONFIG, CHROMIUM (default /usr/bin/chromium), KOORD_SOURCE_DIR
 * Exits 1 with a message naming what differed (the last disagreement seen).
 */
"use strict";
const { execFileSync } = require("child_process");
const { DASHBOARD_CONTEXT, fail, newPage, login, withBrowser, screenshot } = require("./browser.cjs");

const DEADLINE_MS = 60000;
const FLEET_LABEL = "sim.koordinator.sh/fleet";
const QOS_SOURCE = "koordlet-qosManager";

function kubectl(...args) {
  return JSON.parse(execFileSync("kubectl", ["--request-timeout=20s", ...args, "-o", "json"],
    { encoding: "utf8", maxBuffer: 64 << 20 })).items;
}

/* Kubernetes quantities: CPU in milli-cores, everything else in units (bytes). */
const SUFFIX = { m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4 };
function quantity(q) {
  if (q === undefined || q === null) return 0;
  const m = /^([0-9.]+)([a-zA-Z]*)$/.exec(String(q));
  if (!m || (m[2] && !(m[2] in SUFFIX))) fail(`cannot read the quantity "${q}"`);
  return Number(m[1]) * (m[2] ? SUFFIX[m[2]] : 1);
}
const milli = (q) => Math.round(quantity(q) * 1000);
const bytes = (q) => Math.round(quantity(q));
const isBE = (priority, qos) => priority === "koord-batch" || priority === "koord-free" || qos === "BE";

/* Tries check() (which returns a list of disagreements, empty when page and API agree) until
 * it passes or the deadline; then fails with the last disagreements. */
async function agree(what, check) {
  const deadline = Date.now() + DEADLINE_MS;
  let last = [];
  for (;;) {
    last = await check();
    if (!last.length) {
      console.log("agrees: " + what);
      return;
    }
    if (Date.now() > deadline) fail(`${what}: page and API disagree: ${last.slice(0, 8).join("; ")}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/* The page's node rows: {name: {field: value}}. */
function pageNodes(page) {
  return page.$$eval("#nodes tr[data-node]", (trs) => Object.fromEntries(trs.map((tr) => [tr.dataset.node,
    Object.fromEntries(Array.from(tr.querySelectorAll("td[data-field]")).map((td) =>
      [td.dataset.field, Number(td.dataset.value)]))])));
}

function pageTotals(page) {
  return page.$$eval("#totals div[data-total]", (ds) =>
    Object.fromEntries(ds.map((d) => [d.dataset.total, Number(d.dataset.value)])));
}

/* What the Nodes of the fleet and their NodeMetrics say, per node, in the page's units. */
function apiNodes() {
  const rows = {};
  for (const n of kubectl("get", "nodes", "-l", FLEET_LABEL)) {
    const a = n.status.allocatable || {};
    rows[n.metadata.name] = {
      cpu: milli(a.cpu), memory: bytes(a.memory),
      batchCpu: Number(a["kubernetes.io/batch-cpu"] || 0), batchMemory: bytes(a["kubernetes.io/batch-memory"]),
    };
  }
  for (const m of kubectl("get", "nodemetrics.metrics.koordinator.sh")) {
    const row = rows[m.metadata.name];
    const st = m.status || {};
    if (!row || !st.nodeMetric) continue;
    const sys = (st.nodeMetric.systemUsage || {}).resources || {};
    Object.assign(row, { lsCpu: milli(sys.cpu), lsMemory: bytes(sys.memory), beCpu: 0, beMemory: 0 });
    for (const p of st.podsMetric || []) {
      const u = (p.podUsage || {}).resources || {};
      const be = isBE(p.priority, p.qos);
      row[be ? "beCpu" : "lsCpu"] += milli(u.cpu);
      row[be ? "beMemory" : "lsMemory"] += bytes(u.memory);
    }
  }
  return rows;
}

withBrowser(async (browser) => {
  const { page, errors } = await newPage(browser, DASHBOARD_CONTEXT);

  /* Log in as a user would: the login page, the token, the dashboard going live. */
  await login(page, process.env.UI_URL, process.env.UI_TOKEN);
  await page.waitForSelector("#status.live", { timeout: DEADLINE_MS }).catch(() => fail("the stream never went live"));

  /* Per node: a row for each of the sim's nodes (and no other), allocatable and batch
   * allocatable as on the Node (batch capacity advertised on every node: colocation is on),
   * LS and batch usage as in its NodeMetric. */
  let api = {};
  await agree("node rows", async () => {
    api = apiNodes();
    const got = await pageNodes(page), bad = [];
    const names = Object.keys(api).sort();
    if (!names.length) bad.push("the API lists no fleet node");
    if (JSON.stringify(Object.keys(got).sort()) !== JSON.stringify(names))
      bad.push(`rows ${Object.keys(got).sort()}, nodes ${names}`);
    for (const n of names) {
      if (!(api[n].batchCpu > 0)) bad.push(`${n}: no batch-cpu on the Node yet`);
      if (api[n].lsCpu === undefined) bad.push(`${n}: no NodeMetric report yet`);
      for (const f of ["cpu", "memory", "batchCpu", "batchMemory", "lsCpu", "lsMemory", "beCpu", "beMemory"])
        if (got[n] && got[n][f] !== api[n][f]) bad.push(`${n} ${f}: page ${got[n][f]}, API ${api[n][f]}`);
    }
    /* Awaited with the rest, not checked once after: the first reports may come before the
     * first BE pod runs. */
    if (names.length && !names.some((n) => api[n].beCpu > 0))
      bad.push("no batch usage reported on any node yet: no BE pod runs");
    return bad;
  });

  /* Cluster totals: the sums of what the Nodes and NodeMetrics say. */
  await agree("cluster totals", async () => {
    const a = apiNodes(), t = await pageTotals(page), bad = [];
    const sum = (f) => Object.values(a).reduce((s, r) => s + (r[f] || 0), 0);
    const want = {
      nodes: Object.keys(a).length, "CPU allocatable": sum("cpu"), "batch CPU allocatable": sum("batchCpu"),
      "LS CPU used": sum("lsCpu"), "batch CPU used": sum("beCpu"),
    };
    for (const [k, v] of Object.entries(want))
      if (t[k] !== v) bad.push(`${k}: page ${t[k]}, API ${v}`);
    return bad;
  });

  /* Pending pods by class: the counts, the rows, each row's class and the scheduler's reason
   * (the trace's ls-huge and be-huge fit no node, so both classes have some). */
  await agree("pending pods", async () => {
    const want = {}, count = { LS: 0, BE: 0 }, bad = [];
    for (const p of kubectl("get", "pods", "-A")) {
      if (p.spec.nodeName || p.metadata.deletionTimestamp || ["Succeeded", "Failed"].includes(p.status.phase))
        continue;
      const cls = isBE(p.spec.priorityClassName, (p.metadata.labels || {})["koordinator.sh/qosClass"]) ? "BE" : "LS";
      const cond = (p.status.conditions || []).find((c) => c.type === "PodScheduled" && c.status === "False");
      want[`${p.metadata.namespace}/${p.metadata.name}`] = { cls, reason: cond ? cond.reason : "" };
      count[cls]++;
    }
    if (!count.LS || !count.BE) bad.push(`the API has ${count.LS} LS and ${count.BE} BE pods pending, want some of each`);
    const shown = await page.textContent("#pending-count");
    if (shown !== `(LS ${count.LS}, BE ${count.BE})`) bad.push(`counts: page ${shown}, API LS ${count.LS}, BE ${count.BE}`);
    const rows = await page.$$eval("#pending tr[data-pod]", (trs) => Object.fromEntries(trs.map((tr) => [tr.dataset.pod, {
      cls: tr.querySelector('td[data-field="class"]').textContent,
      reason: tr.querySelector('td[data-field="reason"]').textContent,
    }])));
    if (JSON.stringify(Object.keys(rows).sort()) !== JSON.stringify(Object.keys(want).sort()))
      bad.push(`rows ${Object.keys(rows).sort()}, API ${Object.keys(want).sort()}`);
    for (const [k, w] of Object.entries(want)) {
      const r = rows[k];
      if (!r) continue;
      if (r.cls !== w.cls) bad.push(`${k}: class ${r.cls}, API ${w.cls}`);
      if (r.reason !== (w.reason || "waiting for the scheduler")) bad.push(`${k}: reason ${r.reason}, API ${w.reason}`);
    }
    for (const k of ["sim-ls/ls-huge", "sim-be/be-huge"])
      if (!want[k] || want[k].reason !== "Unschedulable") bad.push(`${k} not (yet) Unschedulable in the API`);
    return bad;
  });

  /* The agent stand-ins' evictions (evictPodSuccess Events on the BE pods, BECPUEvict under
   * the --surge) and suppressions (BECPUSuppress on the Nodes), as the API holds them. */
  await agree("evictions and suppressions", async () => {
    const want = { eviction: new Set(), suppression: new Set() }, bad = [];
    for (const e of kubectl("get", "events", "-A")) {
      if ((e.source || {}).component !== QOS_SOURCE) continue;
      const o = e.involvedObject, name = o.namespace ? `${o.namespace}/${o.name}` : o.name;
      if (e.reason === "evictPodSuccess") want.eviction.add(name);
      else if (e.reason === "BECPUSuppress") want.suppression.add(name);
    }
    if (!want.eviction.size) bad.push("no eviction in the API yet");
    const rows = await page.$$eval("#events tr[data-kind]", (trs) => trs.map((tr) => ({
      kind: tr.dataset.kind, object: tr.dataset.object, text: tr.textContent })));
    for (const kind of ["eviction", "suppression"]) {
      const got = [...new Set(rows.filter((r) => r.kind === kind).map((r) => r.object))].sort();
      const w = [...want[kind]].sort();
      if (JSON.stringify(got) !== JSON.stringify(w)) bad.push(`${kind}s: page ${got}, API ${w}`);
    }
    if (!rows.some((r) => r.kind === "eviction" && r.text.includes("BECPUEvict")))
      bad.push("no eviction row says BECPUEvict");
    return bad;
  });
  if (!(await page.$("#chart-cpu canvas"))) fail("no CPU chart drawn");

  await screenshot(page, process.env.UI_SHOT);
  if (errors.length) fail("errors on the page: " + errors.join("; "));
});
