/*
 * The browser half of test_manager_dashboard.sh: drives Debian's chromium (headless, through
 * playwright-core from web/node_modules, started by browser.cjs) against koord manager's /ui
 * and checks what the page shows against what the shell side fed the cluster. Environment:
 *   UI_URL       https://host:port/ui/
 *   UI_TOKEN     a bearer token to log in with; UI_BAD_TOKEN one the API server refuses
 *   UI_EXPECT    JSON: {node, lsCpu, beCpu, lsMemory, beMemory, batchCpu, cpu, pendingPod,
 *                pendingClass, pendingReason, pendingMessage, evictedPod, liveLsCpu}
 *   UI_REPORT    JSON argv of the command that sends the next report (run once the page is up)
 *   UI_SHOT      where to save the screenshot
 *   CHROMIUM     the browser (default /usr/bin/chromium)
 * Exits 1 with a message naming what differed.
 */
"use strict";
const { execFileSync } = require("child_process");
const { DASHBOARD_CONTEXT, fail, newPage, openLogin, submitToken, withBrowser, screenshot } = require("./browser.cjs");

const want = JSON.parse(process.env.UI_EXPECT);
const TIMEOUT = 30000;

/* Waits until the cell's data-value equals v (numbers compared as numbers). */
async function cellValue(page, node, field, v, what) {
  const sel = `#nodes tr[data-node="${node}"] td[data-field="${field}"]`;
  try {
    await page.waitForFunction(([s, v]) => {
      const td = document.querySelector(s);
      return td && Number(td.dataset.value) === v;
    }, [sel, v], { timeout: TIMEOUT });
  } catch (e) {
    const got = await page.$eval(sel, (td) => td.dataset.value).catch(() => "(no such cell)");
    fail(`${what}: ${sel} is ${got}, want ${v}`);
  }
}

withBrowser(async (browser) => {
  const { context, page, errors } = await newPage(browser, DASHBOARD_CONTEXT);

  /* Without a session the dashboard sends the browser to the login page. */
  await openLogin(page, process.env.UI_URL);

  /* A token the API server refuses: an error on the page, no cookie. */
  await submitToken(page, process.env.UI_BAD_TOKEN);
  const err = await page.textContent("#login-error").catch(() => null);
  if (!err || !err.includes("did not accept")) fail(`refused token: error shown is ${err}`);
  if ((await context.cookies()).length) fail("a refused token got a cookie");

  /* The real token: a session cookie with the promised attributes, then the dashboard. */
  await submitToken(page, process.env.UI_TOKEN);
  if (!page.url().endsWith("/ui/")) fail(`after login at ${page.url()}`);
  const cookie = (await context.cookies()).find((c) => c.name === "koord_ui_session");
  if (!cookie) fail("no session cookie after login");
  if (!cookie.httpOnly || !cookie.secure || cookie.sameSite !== "Strict" || cookie.path !== "/ui")
    fail(`session cookie attributes: ${JSON.stringify(cookie)}`);
  if (!/^[0-9a-f]{64}$/.test(cookie.value)) fail(`session id ${cookie.value} is not 256 random bits in hex`);

  await page.waitForSelector("#status.live", { timeout: TIMEOUT }).catch(() => fail("the stream never went live"));

  /* Node row: the figures of the reports and of the Node. */
  await cellValue(page, want.node, "lsCpu", want.lsCpu, "LS CPU used");
  await cellValue(page, want.node, "beCpu", want.beCpu, "batch CPU used");
  await cellValue(page, want.node, "lsMemory", want.lsMemory, "LS memory used");
  await cellValue(page, want.node, "beMemory", want.beMemory, "batch memory used");
  await cellValue(page, want.node, "cpu", want.cpu, "CPU allocatable");
  await cellValue(page, want.node, "batchCpu", want.batchCpu, "batch CPU allocatable");

  /* The pending pod, its class and the scheduler's reason. */
  const row = `#pending tr[data-pod="${want.pendingPod}"]`;
  await page.waitForSelector(row, { timeout: TIMEOUT }).catch(() => fail(`no pending row ${want.pendingPod}`));
  await page.waitForFunction(([r, reason]) => {
    const td = document.querySelector(r + ' td[data-field="reason"]');
    return td && td.textContent === reason;
  }, [row, want.pendingReason], { timeout: TIMEOUT }).catch(async () =>
    fail(`pending reason: ${await page.textContent(row)}`));
  const cls = await page.textContent(row + ' td[data-field="class"]');
  if (cls !== want.pendingClass) fail(`pending class ${cls}, want ${want.pendingClass}`);
  const msg = await page.textContent(row + ' td[data-field="message"]');
  if (!msg.includes(want.pendingMessage)) fail(`pending message "${msg}" lacks "${want.pendingMessage}"`);

  /* The eviction. */
  await page.waitForSelector(`#events tr[data-kind="eviction"][data-object="${want.evictedPod}"]`,
    { timeout: TIMEOUT }).catch(() => fail(`no eviction row for ${want.evictedPod}`));

  /* Live: a new report shows up without a reload (the marker survives: same document). */
  await page.evaluate(() => { window.__sameDocument = true; });
  execFileSync(JSON.parse(process.env.UI_REPORT)[0], JSON.parse(process.env.UI_REPORT).slice(1), { stdio: "inherit" });
  await cellValue(page, want.node, "lsCpu", want.liveLsCpu, "LS CPU used after a new report");
  if (!(await page.evaluate(() => window.__sameDocument === true))) fail("the page reloaded");
  const total = await page.getAttribute('#totals div[data-total="LS CPU used"]', "data-value");
  if (Number(total) < want.liveLsCpu) fail(`total LS CPU ${total} below the node's ${want.liveLsCpu}`);
  if (!(await page.$("#chart-cpu canvas"))) fail("no CPU chart drawn");

  await screenshot(page, process.env.UI_SHOT);
  if (errors.length) fail("errors on the page: " + errors.join("; "));
});
