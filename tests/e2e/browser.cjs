/*
 * What the browser halves of the e2e tests share (dashboard.cjs, dashboard_sim.cjs, report.cjs):
 * Debian's chromium, headless, driven through playwright-core from web/node_modules (found
 * through $KOORD_SOURCE_DIR, so a script runs from any working directory), and the dashboard's
 * login as a user does it. One copy, so that a change to how the browser is started or how the
 * login page works is made once. Environment: KOORD_SOURCE_DIR, CHROMIUM (default
 * /usr/bin/chromium).
 */
"use strict";
const path = require("path");
const { chromium } = require(path.join(process.env.KOORD_SOURCE_DIR, "web/node_modules/playwright-core"));

/* The context of a dashboard page: the manager's certificate is signed by the cluster's own CA,
 * which the browser does not know; wide enough that the node table is not cut in the shot. */
const DASHBOARD_CONTEXT = { ignoreHTTPSErrors: true, viewport: { width: 1400, height: 1100 } };

/* Reports a failure (exit status 1) and stops the check that found it. */
function fail(msg) {
  console.error("FAIL: " + msg);
  process.exitCode = 1;
  throw new Error(msg);
}

/* Starts the browser. No sandbox: chromium will not start its sandbox as root, which CTest may
 * well run as (a container, a CI runner). */
function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox"],
  });
}

/* A page in a new context with the options; the page's script errors are collected in errors,
 * for the test to check when it is done. Returns {context, page, errors}. */
async function newPage(browser, options) {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  return { context, page, errors };
}

/* Opens url without a session: the dashboard must send the browser to its login page. */
async function openLogin(page, url) {
  await page.goto(url);
  if (!page.url().endsWith("/ui/login")) fail(`not sent to the login page: at ${page.url()}`);
}

/* Sends token from the login page, as a user does, and waits for the page that answers. */
async function submitToken(page, token) {
  await page.fill("#token", token);
  await Promise.all([page.waitForNavigation(), page.click("#login")]);
}

/* Logs in to the dashboard at url with token: the login page, the token, then the dashboard. */
async function login(page, url, token) {
  await openLogin(page, url);
  await submitToken(page, token);
  if (!page.url().endsWith("/ui/")) fail(`after login at ${page.url()}`);
}

/* Runs check(browser) on a started browser and closes it whatever happens; what check throws
 * is a failure, said once (fail() has said it already). */
async function withBrowser(check) {
  const browser = await launch();
  try {
    await check(browser);
  } catch (e) {
    if (!process.exitCode) {
      console.error("FAIL: " + e.message);
      process.exitCode = 1;
    }
  } finally {
    await browser.close();
  }
}

/* Saves the whole page to file and says where. */
async function screenshot(page, file) {
  await page.screenshot({ path: file, fullPage: true });
  console.log("screenshot: " + file);
}

module.exports = { DASHBOARD_CONTEXT, fail, launch, newPage, openLogin, submitToken, login, withBrowser, screenshot };
