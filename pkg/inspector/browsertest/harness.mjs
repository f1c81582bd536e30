// Shared harness of the inspector browser test and the screenshot script: starts
// FUNCGRAPH_SERVER_BIN as `<bin> serve` on a free loopback port with a function key, and
// Debian's Chromium (CHROMIUM_BIN, default /usr/bin/chromium) headless through puppeteer-core,
// which downloads no browser.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import net from "node:net";
import puppeteer from "puppeteer-core";

export const KEY = "inspector-test-key";
// WAIT is the bound of every wait on a condition (never a fixed sleep): generous, for a loaded
// two-core machine.
export const WAIT = 60_000;

async function freePort() {
  const srv = net.createServer();
  srv.listen(0, "127.0.0.1");
  await once(srv, "listening");
  const { port } = srv.address();
  srv.close();
  await once(srv, "close");
  return port;
}

// startServer starts the example app and waits (up to WAIT) for GET /api/health.
export async function startServer() {
  const bin = process.env.FUNCGRAPH_SERVER_BIN;
  assert.ok(bin, "FUNCGRAPH_SERVER_BIN must name the server binary");
  const port = await freePort();
  const proc = spawn(bin, ["serve", "--addr", `127.0.0.1:${port}`], {
    env: { ...process.env, FUNCGRAPH_FUNCTION_KEY: KEY, FUNCGRAPH_MASTER_KEY: `${KEY}-master`, FUNCGRAPH_LOG_LEVEL: "warn" },
    stdio: ["ignore", "inherit", "inherit"],
  });
  let exited = false;
  proc.once("exit", () => { exited = true; });
  const deadline = Date.now() + WAIT;
  while (Date.now() < deadline) {
    if (exited) throw new Error("server exited during startup");
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/health`);
      if (res.ok) return { proc, base: `http://127.0.0.1:${port}/api` };
    } catch { /* not listening yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  proc.kill("SIGKILL");
  throw new Error(`server did not answer /api/health within ${WAIT} ms`);
}

export async function stopServer(server) {
  if (!server || server.proc.exitCode !== null) return;
  server.proc.kill("SIGTERM");
  await once(server.proc, "exit");
}

export async function launchBrowser() {
  return puppeteer.launch({
    executablePath: process.env.CHROMIUM_BIN || "/usr/bin/chromium",
    headless: true,
    // --no-sandbox: CI and fresh machines run as root, where Chromium's sandbox cannot start.
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check"],
    protocolTimeout: 180_000,
  });
}

// api calls the runs API directly (setting up runs for screenshots, checking outcomes).
export async function api(base, method, path, body) {
  const res = await fetch(`${base}/${path}`, {
    method, headers: { "x-functions-key": KEY, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

// waitForText waits until the element matching selector contains text.
export async function waitForText(page, selector, text) {
  await page.waitForFunction((sel, t) => {
    const n = document.querySelector(sel);
    return n && !n.hidden && n.textContent.includes(t);
  }, { timeout: WAIT, polling: 100 }, selector, text);
}

// setField replaces an input's or textarea's value as a user would (select all, type).
export async function setField(page, selector, value) {
  await page.waitForSelector(selector, { timeout: WAIT });
  await page.$eval(selector, (n) => { n.value = ""; });
  await page.type(selector, value);
}

// openSuite starts the test app and a browser page for a test file (its before hook): the page
// accepts dialogs, records its errors in pageErrors, waits up to WAIT, at a desktop's size.
export async function openSuite(pageErrors) {
  const server = await startServer();
  const browser = await launchBrowser();
  const page = await browser.newPage();
  page.setDefaultTimeout(WAIT);
  page.on("dialog", (d) => d.accept());
  page.on("pageerror", (e) => pageErrors.push(e.message));
  await page.setViewport({ width: 1280, height: 900 });
  return { server, browser, page };
}

// closeSuite closes what openSuite opened (its after hook).
export async function closeSuite({ server, browser }) {
  await browser?.close();
  await stopServer(server);
}

// openPage opens the inspector at hash ("#/run/<id>", or "" for the runs) with the key.
export async function openPage(page, base, hash = "") {
  const res = await page.goto(`${base}/inspector?code=${KEY}${hash}`, { waitUntil: "domcontentloaded" });
  assert.equal(res.status(), 200);
}

// startRun starts a run of graph with id and input through the runs API.
export async function startRun(base, graph, id, input) {
  const res = await api(base, "POST", `graphs/${graph}/runs`, { instance_id: id, input });
  assert.equal(res.status, 202, `start ${id}: ${JSON.stringify(res.body)}`);
}

// sendEvent sends event with payload to run id through the runs API.
export async function sendEvent(base, id, event, payload) {
  const res = await api(base, "POST", `runs/${id}/events/${event}`, payload);
  assert.equal(res.status, 202, `event ${event} to ${id}: ${JSON.stringify(res.body)}`);
}
