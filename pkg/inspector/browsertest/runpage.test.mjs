// A run's page in headless Chromium on the test app (testdata/testapp/): a failed run's Rewind
// button calls the rewind route with the page's key and shows the route's refusals word for
// word, a finished run that did not fail has none; a headless screenshot with a virtual time
// budget (docs/inspector.md's recipe) shows a live run, since the page draws the run before it
// opens its long poll.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { KEY, WAIT, openSuite, closeSuite, openPage, startRun, sendEvent, api, waitForText } from "./harness.mjs";

let server, browser, page;
const pageErrors = [];
const suffix = `${process.pid}-${Date.now()}`;

before(async () => { ({ server, browser, page } = await openSuite(pageErrors)); });
after(() => closeSuite({ server, browser }));

const open = (hash) => openPage(page, server.base, hash);

const start = (graph, id, input) => startRun(server.base, graph, id, input);

const send = (id, event, payload) => sendEvent(server.base, id, event, payload);

// waitUntilWaiting polls the run's status (bounded by WAIT) until it waits for an event.
async function waitUntilWaiting(id) {
  for (let deadline = Date.now() + WAIT; Date.now() < deadline;) {
    const st = (await api(server.base, "GET", `runs/${id}`)).body;
    if (st && st.custom_status && st.custom_status.waiting_for_event) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`run ${id} did not wait for an event within ${WAIT} ms`);
}

test("a failed run's Rewind button calls the rewind route with the key, and shows its refusals word for word", async () => {
  const id = `triage-failed-${suffix}`;
  await start("triage", id, { ticket: "Mail is down", fail_at_reply: true, sleep_seconds: 1 });
  await waitUntilWaiting(id);
  await send(id, "approval", { approved: true });
  await open(`#/run/${id}`);
  await waitForText(page, ".facts .status", "Failed");
  await waitForText(page, "#failure-message", "mail gateway is down");
  await page.waitForSelector("#rewind-form button", { timeout: WAIT });

  // The rewind route's answers are played by the test: the page is checked against the route's
  // shape, whatever the server it runs on.
  const calls = [];
  const answers = [
    { status: 409, body: { error: `run '${id}' is Completed; only a Failed run can be rewound`, instance_id: id, runtime_status: "Completed" } },
    { status: 404, body: { error: "instance not found" } },
    { status: 202, body: { instance_id: id, runtime_status: "Running", custom_status: {}, input: {}, output: null } },
  ];
  const onRequest = (req) => {
    const u = new URL(req.url());
    if (!u.pathname.endsWith("/rewind")) { req.continue(); return; }
    calls.push({ method: req.method(), path: u.pathname, key: req.headers()["x-functions-key"], body: req.postData() });
    const a = answers[calls.length - 1];
    req.respond({ status: a.status, contentType: "application/json", body: JSON.stringify(a.body) });
  };
  await page.setRequestInterception(true);
  page.on("request", onRequest);
  try {
    await page.type("#rewind-reason", "gateway back");
    await page.click("#rewind-form button[type=submit]");
    await waitForText(page, "#error", `HTTP 409: run '${id}' is Completed; only a Failed run can be rewound`);
    await page.waitForSelector("#rewind-form button:not([disabled])", { timeout: WAIT });
    await page.click("#rewind-form button[type=submit]");
    await waitForText(page, "#error", "HTTP 404: instance not found");
    await page.waitForSelector("#rewind-form button:not([disabled])", { timeout: WAIT });
    await page.click("#rewind-form button[type=submit]");
    await waitForText(page, "#notice", `Rewind accepted: run ${id} is Running`);
  } finally {
    page.off("request", onRequest);
    await page.setRequestInterception(false);
  }
  assert.equal(calls.length, 3);
  for (const c of calls) {
    assert.equal(c.method, "POST");
    assert.equal(c.path, `/api/runs/${encodeURIComponent(id)}/rewind`);
    assert.equal(c.key, KEY, "the page sends its function key");
    assert.deepEqual(JSON.parse(c.body), { reason: "gateway back" });
  }
  // Accepted, the page reads the run again (here still Failed: the answer was played).
  await waitForText(page, ".facts .status", "Failed");
});

test("a completed run has no Rewind button", async () => {
  const id = `triage-done-${suffix}`;
  await start("content_classifier", id, { text: "Thanks, all good" });
  await open(`#/run/${id}`);
  await waitForText(page, ".facts .status", "Completed");
  await page.waitForSelector("#purge-form", { timeout: WAIT });
  assert.equal(await page.$("#rewind-form"), null);
});

// headless runs Chromium as the docs' recipe does, and returns what it printed.
function headless(args) {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.env.CHROMIUM_BIN || "/usr/bin/chromium",
      ["--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=500", ...args], { stdio: ["ignore", "pipe", "ignore"], detached: true });
    let out = "";
    proc.stdout.on("data", (d) => { out += d; });
    const timer = setTimeout(() => { process.kill(-proc.pid, "SIGKILL"); reject(new Error(`chromium ${args.join(" ")} did not finish within ${WAIT} ms (an open request holds virtual time)`)); }, WAIT);
    proc.once("exit", () => { clearTimeout(timer); resolve(out); });
  });
}

test("a headless screenshot of a live run's page (docs/inspector.md's recipe) shows the run, and finishes", async () => {
  const id = `shot-${suffix}`;
  await start("support_agent", id, { user_message: "I want a refund for invoice 7" });
  await waitUntilWaiting(id);
  const url = `${server.base}/inspector?code=${KEY}#/run/${id}`;
  const dom = await headless(["--dump-dom", url]);
  assert.match(dom, new RegExp(`<code id="run-id">${id}</code>`), "the run's page is drawn");
  assert.match(dom, /class="status status-running status-waiting"[^>]*>.*Waiting for approval/, "with its status");
  assert.match(dom, /<g class="node visited current waiting/, "and its graph");
  assert.doesNotMatch(dom, /<p class="muted">Loading…<\/p>/);
});

test("no script error on any page", () => {
  assert.deepEqual(pageErrors, []);
});
