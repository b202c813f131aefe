/*
 * The browser half of test_sim_report_html.sh: opens a `koord sim` HTML report from disk in
 * Debian's chromium (headless, playwright-core from web/node_modules, started by browser.cjs),
 * offline, and checks that every chart is drawn, nothing is fetched, no script fails, and a run
 * name made to close the data's script element is shown as text. Environment: REPORT (the
 * file), SHOT (screenshot path), CHROMIUM (default /usr/bin/chromium). Exits 1 naming what
 * differed.
 */
"use strict";
const path = require("path");
const { launch, screenshot } = require("./browser.cjs");

(async () => {
  const problems = [];
  const browser = await launch();
  try {
    const context = await browser.newContext({ offline: true, viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    page.on("pageerror", (e) => problems.push("script error: " + e));
    page.on("request", (r) => { if (!r.url().startsWith("file:")) problems.push("fetched " + r.url()); });
    await page.goto("file://" + path.resolve(process.env.REPORT));
    await page.waitForLoadState("load");
    const ids = ["chart-cpu", "chart-mem", "chart-batch-cpu", "chart-batch-mem", "chart-be"];
    for (const id of ids) {
      if (!(await page.$(`#${id} canvas`))) problems.push(`no chart drawn in #${id}`);
    }
    /* The legend names both runs; the hostile name is text, not markup. */
    const legend = await page.textContent("#chart-cpu");
    if (!legend.includes("colocation off: cpu")) problems.push(`CPU legend: ${legend}`);
    if (!legend.includes("colocation on</script><b>: cpu")) problems.push(`CPU legend lacks the second run: ${legend}`);
    const heads = await page.$$eval("#summary th", (ths) => ths.map((t) => t.textContent));
    if (!heads.includes("colocation on</script><b>")) problems.push(`summary heads: ${heads}`);
    /* The data the charts drew: 3200 + 4800 of 16000 m is 50 %. */
    const util = await page.evaluate(() =>
      JSON.parse(document.getElementById("sim-data").textContent).runs[1].cpu_util[0]);
    if (util !== 0.5) problems.push(`second run's CPU utilisation ${util}, want 0.5`);
    await screenshot(page, process.env.SHOT);
  } catch (e) {
    problems.push(String(e));
  } finally {
    await browser.close();
  }
  if (problems.length) {
    problems.forEach((p) => console.error("FAIL: " + p));
    process.exitCode = 1;
  }
})();
