// The run inspector's drawing of agent graphs, in headless Chromium on the test app
// (testdata/testapp/): research_agent (a fan-out, a wait with a deadline, a review loop back to
// draft) and triage (a fan-out, a child run, a wait with a deadline, a sleep). On each drawing
// every edge runs from its source's box to its target's, the arrowhead at the target; no box
// overlaps another, no edge crosses a box, no label is cut or covered; the flow starts at the top
// with the entrypoint. A child run's box opens the child's page. The marks of waits, sleeps,
// retries and fan-outs are written (drawing.mjs measures).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { KEY, WAIT, openSuite, closeSuite, openPage, startRun, sendEvent, api, waitForText } from "./harness.mjs";
import { checkDrawing, box, edge } from "./drawing.mjs";

let server, browser, page;
const pageErrors = [];
const suffix = `${process.pid}-${Date.now()}`;

before(async () => { ({ server, browser, page } = await openSuite(pageErrors)); });
after(() => closeSuite({ server, browser }));

const open = (hash) => openPage(page, server.base, hash);

const start = (graph, id, input) => startRun(server.base, graph, id, input);

const send = (id, event, payload) => sendEvent(server.base, id, event, payload);

// clickLink clicks the link selector names, as a user does; the page re-renders its facts and
// drawing as the run moves, so an element found may be replaced before the click lands: then it
// clicks the new one (a few times at most).
const clickLink = async (selector) => {
  for (let attempt = 1; ; attempt++) {
    try {
      await page.click(selector);
      return;
    } catch (e) {
      if (attempt === 5 || !/detached|not clickable/i.test(String(e.message))) throw e;
    }
  }
};

const nodeText = (name) => page.$eval(`.graph-wrap g.node[data-node="${name}"]`, (n) => n.textContent);
const edgeLabel = (from, to) => page.$eval(`.graph-wrap g.edge[data-from="${from}"][data-to="${to}"] .edge-label`, (n) => n.textContent);

test("research_agent: a fan-out, a wait with a deadline, a rejected draft going back, drawn top to bottom with every edge pointing at its target", async () => {
  const id = `research-${suffix}`;
  await start("research_agent", id, { question: "Is the layout maintained?", sources: ["web", "papers", "forums"] });
  await open(`#/run/${id}`);
  await waitForText(page, 'g.node[data-node="draft"]', "‖ waiting: approval");
  let g = await checkDrawing(page, "research_agent waiting");
  assert.match(await nodeText("plan"), /⇉ fan-out ×3/);
  assert.match(await nodeText("search"), /visited ×3/);
  assert.match(await nodeText("draft"), /◷ until \d/);
  assert.match(await edgeLabel("draft", "escalate"), /◷ timeout at \d/);
  assert.match(await edgeLabel("draft", "review"), /⚡ approval ‖ waiting/);
  // The flow: plan above search above draft; the wait's two ways on (review, escalate) side by side below it.
  assert.ok(box(g, "plan").bottom < box(g, "search").top && box(g, "search").bottom < box(g, "draft").top, "plan → search → draft flows down");
  assert.ok(Math.abs(box(g, "review").top - box(g, "escalate").top) < 1 && box(g, "draft").bottom < box(g, "review").top, "review and escalate side by side below draft");

  // Rejected: review sends the run back to draft, an edge that points up.
  await send(id, "approval", { approved: false, reviewer: "ann" });
  await waitForText(page, 'g.node[data-node="draft"]', "visited ×2");
  await waitForText(page, 'g.node[data-node="draft"]', "‖ waiting: approval");
  g = await checkDrawing(page, "research_agent after a rejection");
  const back = edge(g, "review", "draft");
  assert.ok(back, "the edge back from review to draft is drawn");
  assert.ok(back.end.y < back.start.y, "the edge back to draft points up, at draft");

  await send(id, "approval", { approved: true, reviewer: "bo" });
  await waitForText(page, ".facts .status", "Completed");
  await waitForText(page, 'g.node[data-node="publish"]', "✓ completed here");
  g = await checkDrawing(page, "research_agent completed");
  assert.ok(edge(g, "review", "publish"), "the edge to publish is drawn");
});

test("triage: a child run is a box that opens the child's page; waits and sleeps are marked; the drawing holds", async () => {
  const id = `triage-${suffix}`;
  await start("triage", id, { ticket: "The app crashes when I upload a file", sources: ["kb", "crm", "logs"], sleep_seconds: 3600 });
  await open(`#/run/${id}`);
  await waitForText(page, 'g.node[data-node="decide"]', "‖ waiting: approval");
  let g = await checkDrawing(page, "triage waiting");
  const child = g.edges.find((e) => e.toChild);
  assert.ok(child && child.from === "classify", "classify's child run is drawn, linked from classify");
  const childID = child.to;
  assert.ok(childID.startsWith("child~"), `a child run's id: ${childID}`);
  assert.match(await edgeLabel("classify", "decide"), /↳ after child run ×1/);
  assert.match(await page.$eval(`a[data-child="${childID}"]`, (n) => n.textContent), /child run: content_classifier.*Completed/);
  assert.deepEqual(await page.$$eval("#child-runs a", (ns) => ns.map((n) => n.textContent)), [childID], "the facts list the child run as a link");
  assert.match(await page.$eval("#child-runs", (n) => n.textContent), /content_classifier, Completed/);

  // The child's box opens the child's page, whose parent link leads back.
  await clickLink(`a[data-child="${childID}"]`);
  await waitForText(page, "#run-id", childID);
  assert.equal(decodeURIComponent(new URL(page.url()).hash), `#/run/${childID}`);
  await waitForText(page, ".facts", "Parent run");
  await clickLink(".facts a.run-link");
  await waitForText(page, "#run-id", id);
  await waitForText(page, 'g.node[data-node="decide"]', "‖ waiting: approval");
  // The facts' link opens it too.
  await clickLink("#child-runs a");
  await waitForText(page, "#run-id", childID);
  await page.goBack();
  await waitForText(page, "#run-id", id);

  // Approved, it sleeps before its reply: the sleep is marked on the edge and the node it leads to.
  await waitForText(page, 'g.node[data-node="decide"]', "‖ waiting: approval");
  await send(id, "approval", { approved: true });
  await waitForText(page, 'g.node[data-node="reply"]', "☾ sleeping until");
  assert.match(await edgeLabel("cool_down", "reply"), /☾ sleep until \d/);
  await waitForText(page, "#sleeping-until", "20");
  g = await checkDrawing(page, "triage sleeping");
  assert.ok(box(g, "intake").bottom < box(g, "lookup").top && box(g, "lookup").bottom < box(g, "classify").top, "intake → lookup → classify flows down");
});

test("pending retries are marked on the node and on the branch node, with when; a wait for a child run on the node and the child", async () => {
  await open("#/");
  await waitForText(page, "h1", "Runs");
  const got = await page.evaluate(() => {
    const at = "2030-03-04T05:06:07Z";
    const ev = (sequence, type, node, data) => ({ sequence, type, node, name: null, timestamp: at, data });
    const events = [ev(1, "run_started", "plan", { initial_state: {} }), ev(2, "node_completed", "plan", { update: {} }),
      ev(3, "route_resolved", "plan", { action: "parallel", join_node: "draft", branches: [{ node: "search", item: "a" }, { node: "search", item: "b" }] }),
      ev(4, "branches_started", "plan", { join_node: "draft", count: 2 }), ev(5, "branch_completed", "search", { index: 0 })];
    const manifest = { entrypoint: "plan", nodes: { plan: { name: "plan", route_handler_name: "route:plan" }, search: { name: "search" }, draft: { name: "draft", terminal: true } } };
    const run = { runtime_status: "Running", custom_status: { current_node: "draft" }, node_retry: { attempt: 2, retry_at: at },
      branches_retrying: [{ index: 1, attempt: 3, retry_at: at }] };
    const svgEl = renderGraph(graphModel(manifest, events, run));
    const text = (sel) => svgEl.querySelector(sel).textContent;
    return { draft: text('g.node[data-node="draft"]'), search: text('g.node[data-node="search"]'), plan: text('g.node[data-node="plan"]'),
      retrying: [...svgEl.querySelectorAll("g.node.retrying")].map((n) => n.dataset.node).sort() };
  });
  assert.match(got.draft, /↻ attempt 2 at 2030-03-04 05:06Z/);
  assert.match(got.search, /↻ branch 1: attempt 3 at 2030-03-04 05:06Z/);
  assert.match(got.plan, /⇉ fan-out ×2/);
  assert.deepEqual(got.retrying, ["draft", "search"]);

  // A run waiting for its child run: the node says so, and the child's box too.
  const child = await page.evaluate(() => {
    const at = "2030-03-04T05:06:07Z";
    const ev = (sequence, type, node, data) => ({ sequence, type, node, name: null, timestamp: at, data });
    const events = [ev(1, "run_started", "bill", { initial_state: {} }), ev(2, "node_completed", "bill", { update: {} }),
      ev(3, "route_resolved", "bill", { action: "child", resume_node: "ship" }),
      ev(4, "child_started", "bill", { child_instance_id: "child~o~1", graph_name: "billing", resume_node: "ship" })];
    const manifest = { entrypoint: "bill", nodes: { bill: { name: "bill", route_handler_name: "route:bill" }, ship: { name: "ship", terminal: true } } };
    const run = { runtime_status: "Running", custom_status: { current_node: "bill", waiting_for_child: "child~o~1" } };
    const svgEl = renderGraph(graphModel(manifest, events, run));
    return { bill: svgEl.querySelector('g.node[data-node="bill"]').textContent, child: svgEl.querySelector('a[data-child="child~o~1"]').textContent,
      href: svgEl.querySelector('a[data-child="child~o~1"]').getAttribute("href") };
  });
  assert.match(child.bill, /↳ waiting for its child run/);
  assert.match(child.child, /child run: billing.*started.*‖ its parent waits for it/);
  assert.equal(child.href, "#/run/child~o~1");
});

test("a node that failed for good points at its failure route's node; a continued run shows its generation", async () => {
  await open("#/");
  await waitForText(page, "h1", "Runs");
  const got = await page.evaluate(() => {
    const at = "2030-03-04T05:06:07Z";
    const ev = (sequence, type, node, data) => ({ sequence, type, node, name: null, timestamp: at, data });
    const events = [ev(1, "run_started", "fetch", { initial_state: {} }), ev(2, "node_completed", "fetch", { update: {} }),
      ev(3, "node_failed", "charge", { failure_node: "refund", error: "card declined" }), ev(4, "node_completed", "refund", { update: {} })];
    const manifest = { entrypoint: "fetch", nodes: { fetch: { name: "fetch", next_node: "charge" }, charge: { name: "charge" }, refund: { name: "refund", terminal: true } } };
    const run = { instance_id: "x", runtime_status: "Completed", generation: 3, output: {}, custom_status: { current_node: "refund" },
      input: { graph_name: "g", graph_hash: "h", initial_state: {}, current_node: null, metadata: {} } };
    const main = document.getElementById("main");
    main.replaceChildren(...renderRun("x", run, events, { manifest, events: [] }, {}, { live: () => true }, null));
    const edges = [...main.querySelectorAll(".graph-wrap g.edge")].map((g) => `${g.dataset.from}>${g.dataset.to}:${g.textContent}`);
    return { edges, generation: main.querySelector("#generation")?.textContent, charge: main.querySelector('g.node[data-node="charge"]').textContent };
  });
  assert.ok(got.edges.includes("charge>refund:✗ on failure ×1"), `edges: ${got.edges}`);
  assert.ok(got.edges.includes("fetch>charge:×1"), `edges: ${got.edges}`);
  assert.match(got.charge, /visited ×1/);
  assert.equal(got.generation, "3");
  await checkDrawing(page, "a failure route");
});

test("a node that loops on itself, and a graph not registered here (drawn from its history alone), hold the drawing's rules", async () => {
  await open("#/");
  await waitForText(page, "h1", "Runs");
  await page.evaluate(() => {
    const at = "2030-03-04T05:06:07Z";
    const ev = (sequence, type, node, data) => ({ sequence, type, node, name: null, timestamp: at, data });
    const events = [ev(1, "run_started", "start", { initial_state: {} }), ev(2, "node_completed", "start", { update: {} }),
      ev(3, "node_completed", "poll", { update: {} }), ev(4, "node_completed", "poll", { update: {} }), ev(5, "node_completed", "poll", { update: {} }),
      ev(6, "node_completed", "done", { update: {} })];
    const run = { instance_id: "x", runtime_status: "Running", output: null, custom_status: { current_node: "done" },
      input: { graph_name: "g", graph_hash: "h", initial_state: {}, current_node: null, metadata: {} } };
    const main = document.getElementById("main");
    main.replaceChildren(...renderRun("x", run, events, null, {}, { live: () => true }, null));
  });
  const g = await checkDrawing(page, "a self loop");
  const loop = edge(g, "poll", "poll");
  assert.ok(loop && loop.label && loop.label.text === "◇ ×2", `the loop is drawn with its count: ${JSON.stringify(loop && loop.label)}`);
});

test("the branches of a fan-out over distinct nodes are side by side, between the node that fanned out and the join", async () => {
  await open("#/");
  await waitForText(page, "h1", "Runs");
  await page.evaluate(() => {
    const at = "2030-03-04T05:06:07Z";
    const ev = (sequence, type, node, data) => ({ sequence, type, node, name: null, timestamp: at, data });
    const events = [ev(1, "run_started", "split", { initial_state: {} }), ev(2, "node_completed", "split", { update: {} }),
      ev(3, "route_resolved", "split", { action: "parallel", join_node: "merge", branches: [{ node: "billing" }, { node: "shipping" }, { node: "support" }] }),
      ev(4, "branches_started", "split", { join_node: "merge", count: 3 }),
      ev(5, "branch_completed", "shipping", { index: 1 }), ev(6, "branch_completed", "billing", { index: 0 }), ev(7, "branch_completed", "support", { index: 2 }),
      ev(8, "branches_joined", "merge", { join_node: "merge", count: 3 }), ev(9, "node_completed", "merge", { update: {} })];
    const manifest = { entrypoint: "split", nodes: Object.fromEntries(["split", "billing", "shipping", "support", "merge"].map((n) => [n, { name: n, route_handler_name: n === "split" ? "route:split" : null, terminal: n === "merge" }])) };
    const run = { instance_id: "x", runtime_status: "Completed", output: {}, custom_status: { current_node: "merge" },
      input: { graph_name: "g", graph_hash: "h", initial_state: {}, current_node: null, metadata: {} } };
    document.getElementById("main").replaceChildren(...renderRun("x", run, events, { manifest, events: [] }, {}, { live: () => true }, null));
  });
  const g = await checkDrawing(page, "a fan-out over three nodes");
  const [a, b, c] = ["billing", "shipping", "support"].map((n) => box(g, n));
  assert.ok(Math.abs(a.top - b.top) < 1 && Math.abs(b.top - c.top) < 1, "the three branches are in one row");
  assert.ok(box(g, "split").bottom < a.top && a.bottom < box(g, "merge").top, "between split and merge");
  for (const n of ["billing", "shipping", "support"]) {
    assert.ok(edge(g, "split", n) && edge(g, n, "merge"), `split → ${n} → merge drawn`);
  }
});

test("no script error on any page", () => {
  assert.deepEqual(pageErrors, []);
});
