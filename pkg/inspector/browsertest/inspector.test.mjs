// The run inspector in a real browser (headless Chromium) on the test app (testdata/testapp/: the
// example graphs and triage): a wrong key and an unknown run show the API's errors; a support_agent
// run started from the page waits for its approval, the approval is sent from the page and the run
// completes with its path highlighted; the history shows each step's state; cancel and purge act on
// a second run; the page fits a phone's width and is keyboard usable. The drawing of agent graphs
// is graph.test.mjs's.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { KEY, WAIT, openSuite, closeSuite, openPage, startRun, sendEvent, api, waitForText, setField } from "./harness.mjs";

let server, browser, page;
const pageErrors = [];
const suffix = `${process.pid}-${Date.now()}`;

before(async () => { ({ server, browser, page } = await openSuite(pageErrors)); });
after(() => closeSuite({ server, browser }));

const open = (hash) => openPage(page, server.base, hash);

test("the page needs the function key, as the runs API does", async () => {
  const res = await page.goto(`${server.base}/inspector?code=wrong`);
  assert.equal(res.status(), 401);
  await open();
  await waitForText(page, "#runs-summary", "shown");
  assert.equal(new URL(page.url()).search, "", "the key leaves the address bar");
});

test("a wrong key typed in the page shows the API's 401", async () => {
  await open();
  await setField(page, "#key-input", "not-the-key");
  await page.click("#key-form button");
  await waitForText(page, "#error", "HTTP 401");
  await setField(page, "#key-input", KEY);
  await page.click("#key-form button");
  await page.waitForFunction(() => document.querySelector("#error").hidden, { timeout: WAIT });
  await waitForText(page, "#runs-summary", "shown");
});

test("an unknown run shows the API's 404", async () => {
  await open(`#/run/no-such-run-${suffix}`);
  await waitForText(page, "#error", "HTTP 404: instance not found");
});

test("start a support_agent run, watch it wait, approve it from the page, see its path", async () => {
  const id = `insp-${suffix}`;
  await open();
  await waitForText(page, "#runs-summary", "shown");
  await page.click("details.panel > summary");
  await page.select("form.start select[name=graph]", "support_agent");
  await setField(page, "form.start input[name=instance_id]", id);
  await setField(page, "form.start textarea[name=input]", '{"user_message": "I want a refund for invoice 42"}');
  await page.click("form.start button[type=submit]");

  await waitForText(page, "#run-id", id);
  await waitForText(page, ".facts", "Waiting for approval");
  await waitForText(page, 'g.node[data-node="classify_request"]', "‖ waiting: approval");
  assert.equal(await page.$eval("#event-name", (n) => n.value), "approval");
  assert.match(await page.$eval("#payload-schema", (n) => n.textContent), /untyped handler/);

  await setField(page, "#event-payload", '{"approved": true, "reviewer": "ann"}');
  await page.click("#event-form button[type=submit]");
  await waitForText(page, ".facts .status", "Completed");

  for (const node of ["classify_request", "draft_reply", "finalize_reply"]) {
    await waitForText(page, `g.node[data-node="${node}"]`, "visited ×1");
    assert.ok(await page.$eval(`g.node[data-node="${node}"]`, (n) => n.classList.contains("visited")), `${node} highlighted`);
  }
  await waitForText(page, 'g.node[data-node="finalize_reply"]', "✓ completed here");
  const taken = await page.$$eval(".edge.taken .edge-label", (ns) => ns.map((n) => n.textContent));
  assert.ok(taken.includes("⚡ approval ×1"), `the approval edge is taken: ${taken}`);
  assert.ok(taken.includes("×1"), `the static edge is taken: ${taken}`);
  await waitForText(page, "#run-output", "Reviewer: ann.");

  // The timeline: choosing step 2 (classify_request) shows what it changed and the state after.
  await page.click('button.step[data-seq="2"]');
  await page.waitForSelector('button.step[data-seq="2"][aria-pressed="true"]', { timeout: WAIT });
  await waitForText(page, ".step-detail", "Step #2: node_completed");
  await waitForText(page, ".step-detail table.changes", "needs_human");

  // Keyboard: arrows move between steps, Enter chooses one.
  await page.focus('button.step[data-seq="2"]');
  await page.keyboard.press("ArrowDown");
  assert.equal(await page.evaluate(() => document.activeElement.dataset.seq), "3");
  await page.keyboard.press("Enter");
  await waitForText(page, ".step-detail", "Step #3: route_resolved");
  assert.equal(await page.evaluate(() => document.activeElement.dataset.seq), "3", "the chosen step keeps the focus");

  const listed = await api(server.base, "GET", `runs/${id}`);
  assert.equal(listed.body.runtime_status, "Completed");
});

test("cancel a waiting run, then purge it, from the page", async () => {
  const id = `insp-cancel-${suffix}`;
  assert.equal((await api(server.base, "POST", "graphs/support_agent/runs", { instance_id: id, input: { user_message: "legal question" } })).status, 202);
  await open(`#/run/${id}`);
  await waitForText(page, ".facts", "Waiting for approval");
  await setField(page, "#cancel-reason", "not needed");
  await page.click("#cancel-form button[type=submit]");
  await waitForText(page, ".facts .status", "Terminated");
  await waitForText(page, ".failure", "not needed");
  await page.click("#purge-form button[type=submit]");
  await waitForText(page, "#notice", `Run ${id} purged.`);
  assert.equal((await api(server.base, "GET", `runs/${id}`)).status, 404);
});

test("a run's page follows its feed: an approval sent elsewhere shows without polling the status", async () => {
  const id = `insp-feed-${suffix}`;
  assert.equal((await api(server.base, "POST", "graphs/support_agent/runs", { instance_id: id, input: { user_message: "refund please" } })).status, 202);
  const requests = [];
  const seen = (req) => { const u = new URL(req.url()); if (u.pathname.includes(`/runs/${id}`)) requests.push(u.pathname + u.search); };
  page.on("request", seen);
  try {
    await open(`#/run/${id}`);
    await waitForText(page, ".facts .status", "Waiting for approval");
    // The page waits on the feed, a long poll after the last item it has.
    const longPoll = () => requests.some((r) => r.includes("/feed?") && r.includes("wait=20"));
    for (const deadline = Date.now() + WAIT; !longPoll() && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 50));
    assert.ok(longPoll(), `no long poll of the feed among ${requests}`);
    assert.equal((await api(server.base, "POST", `runs/${id}/events/approval`, { approved: true, reviewer: "bo" })).status, 202);
    await waitForText(page, ".facts .status", "Completed");
    await waitForText(page, "#run-output", "Reviewer: bo.");
    const statusReads = requests.filter((r) => r.endsWith(`/runs/${id}`)).length;
    assert.ok(statusReads <= 4, `the status was read ${statusReads} times: once, then once per move of the feed (${requests})`);
    assert.ok(!requests.some((r) => r.includes("/history")), "the page read the history instead of the feed");
  } finally {
    page.off("request", seen);
  }
});

// overhang is how far the status pills matching selector, or their text, stick out of their
// cells (the nearest td or dd), in px, at most: 0 when every pill and its text fit.
const overhang = (selector) => page.$$eval(selector, (ns) => Math.max(0, ...ns.map((n) => {
  const cell = n.closest("td, dd").getBoundingClientRect();
  const pill = n.getBoundingClientRect();
  return Math.max(pill.right - cell.right, cell.left - pill.left, n.scrollWidth - n.clientWidth);
})));

test("a waiting run says what it waits for, in the runs list and on its page, in a pill that fits", async () => {
  const id = `insp-wait-${suffix}`;
  assert.equal((await api(server.base, "POST", "graphs/support_agent/runs", { instance_id: id, input: { user_message: "refund please" } })).status, 202);
  await open("#/?graph_name=support_agent");
  await waitForText(page, `tr[data-run="${id}"] .status`, "Waiting for approval");
  assert.ok(await page.$eval(`tr[data-run="${id}"] .status`, (n) => n.classList.contains("status-running")), "a waiting run is still Running");
  await waitForText(page, "#runs-summary", "in flight");
  assert.ok(await overhang("table.runs .status") <= 0.5, "a status pill sticks out of its cell in the runs list");

  await open(`#/run/${id}`);
  await waitForText(page, ".facts .status", "Waiting for approval");
  assert.ok(await overhang(".facts .status") <= 0.5, "the status pill sticks out of its cell on the run page");
  // An event name of any length wraps inside the pill rather than spill over the next fact.
  await page.evaluate(() => document.querySelector(".facts .status").replaceWith(statusBadge("Running", "manager_sign_off_from_the_finance_department")));
  assert.ok(await overhang(".facts .status") <= 0.5, "a long event name sticks out of the cell");
});

test("a run's page says what the run waits for and shows the live output of the step in flight, not what ended", async () => {
  await open("#/");
  await waitForText(page, "h1", "Runs");
  const got = await page.evaluate(() => {
    const at = "2026-03-04T05:06:07Z";
    const rec = (kind, writer, step, data, more) => ({ kind, writer, step, attempt: 1, node: "draft", branch: null, name: null, data, ...more });
    const live = newLive();
    addLive(live, [rec("chunk", "w0", 0, "committed "), rec("chunk", "w5", 0, "an attempt that died"), rec("chunk", "w1", 1, "Hel"), rec("chunk", "w2", 1, "dead attempt", { attempt: 2 }),
      rec("commit", "w0", 0), rec("chunk", "w1", 1, "lo"), rec("retract", "w2", 1), rec("chunk", "w3", 1, "branch", { branch: 2 })], 7);
    const run = { instance_id: "x", runtime_status: "Running", output: null,
      custom_status: { graph_name: "g", graph_version: "1", graph_hash: "h", current_node: "draft" },
      input: { graph_name: "g", graph_hash: "h", initial_state: {}, current_node: null, metadata: {} },
      sleeping_until: at, node_retry: { attempt: 2, retry_at: at },
      branches_retrying: [{ index: 1, attempt: 3, retry_at: at }, { index: 4, attempt: 2, retry_at: at }] };
    const main = document.getElementById("main");
    main.replaceChildren(...renderRun("x", run, [], null, {}, { live: () => true }, live));
    const text = (sel) => { const n = main.querySelector(sel); return n ? n.textContent : null; };
    return { next: live.next, sleeping: text("#sleeping-until"), retry: text("#node-retry"), branches: text("#branches-retrying"),
      writers: [...main.querySelectorAll("#live-panel .live-writer")].map((n) => n.textContent) };
  });
  assert.equal(got.next, 7);
  assert.ok(got.sleeping && got.sleeping.includes("2026"), `sleeping until: ${got.sleeping}`);
  assert.match(got.retry ?? "", /attempt 2 of draft/);
  assert.match(got.branches ?? "", /branch 1: attempt 3 .*; branch 4: attempt 2/);
  assert.equal(got.writers.length, 2, `writers in flight: ${JSON.stringify(got.writers)}`);
  assert.match(got.writers[0], /Step 2, node draft, attempt 1Hello$/);
  assert.match(got.writers[1], /branch 2.*branch$/);
});

test("the runs list filters and the graph versions page", async () => {
  await open("#/?graph_name=support_agent&status=Completed");
  await waitForText(page, "table.runs caption", "graph_name=support_agent");
  await page.waitForSelector(`tr[data-run="insp-${suffix}"]`, { timeout: WAIT });
  // Paging: 26 runs are more than a page of 25; the continuation token brings the rest.
  for (let i = 0; i < 26; i++) {
    const res = await api(server.base, "POST", "graphs/data_pipeline/runs", { instance_id: `page-${suffix}-${i}`, input: { source_url: "https://example.com/x" } });
    assert.equal(res.status, 202);
  }
  await open("#/?graph_name=data_pipeline");
  await page.waitForSelector("#load-more:not([hidden])", { timeout: WAIT });
  assert.equal(await page.$$eval("table.runs tbody tr", (rs) => rs.length), 25);
  await page.click("#load-more");
  await page.waitForFunction(() => document.querySelectorAll("table.runs tbody tr").length === 26, { timeout: WAIT, polling: 100 });
  // The created-time filters go to the API as they are; its 400 is shown word for word.
  await open("#/?created_after=2200-01-01T00:00:00Z");
  await waitForText(page, "table.runs tbody", "No runs match.");
  await open("#/?created_after=yesterday");
  await waitForText(page, "#error", "HTTP 400: invalid query parameter 'created_after'");
  await open("#/graphs");
  await waitForText(page, "main", "support_agent");
  await waitForText(page, "main", "0 unfinished");
});

test("a phone's width: nothing wider than the screen but the scrollable graph", async () => {
  await page.setViewport({ width: 390, height: 844, isMobile: true, hasTouch: true });
  try {
    await open(`#/run/insp-${suffix}`);
    await waitForText(page, ".facts .status", "Completed");
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 1, `the page is ${overflow}px wider than the screen`);
  } finally {
    await page.setViewport({ width: 1280, height: 900 });
  }
});

test("no script error on any page", () => {
  assert.deepEqual(pageErrors, []);
});
