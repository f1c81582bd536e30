// Drives funcgraph's platform_compat routes with the official LangGraph JS SDK against the
// standalone server (see harness.mjs).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { ASSISTANT, SUITE, SDKS, user, freePort, startServer, stopServer, newClient, joinAll } from "./harness.mjs";
import { clientTests } from "./clients.mjs";
import { durableTests } from "./durable.mjs";
import { agentTests } from "./agent.mjs";

let server;
let port;
const client = () => newClient(port);

before(async () => {
  port = await freePort();
  server = await startServer(port);
});

after(async () => { await stopServer(server); });

test("assistants.search lists the hosted graphs", async () => {
  const found = await client().assistants.search({ graphId: ASSISTANT });
  assert.equal(found.length, 1);
  assert.equal(found[0].assistant_id, ASSISTANT);
  assert.equal(found[0].version, 1);
  const one = await client().assistants.get(ASSISTANT);
  assert.equal(one.graph_id, ASSISTANT);
});

test("threads.create, runs.wait, runs.stream, getState, getHistory, search", async () => {
  const c = client();
  const thread = await c.threads.create({ metadata: { suite: SUITE, kind: "chat" } });
  assert.equal(thread.status, "idle");
  let runId;
  const out = await c.runs.wait(thread.thread_id, ASSISTANT, {
    input: user("hi"), onRunCreated: (m) => { runId = m.run_id; },
  });
  assert.deepEqual(out.messages.map((m) => m.content), ["hi", "hi"]);
  assert.match(runId, /^[0-9a-f-]{36}$/);

  const events = [];
  for await (const part of c.runs.stream(thread.thread_id, ASSISTANT, { input: user("again"), streamMode: "values" })) {
    events.push(part);
  }
  assert.equal(events[0].event, "metadata");
  assert.match(events[0].data.run_id, /^[0-9a-f-]{36}$/);
  const values = events.filter((e) => e.event === "values");
  assert.deepEqual(values.map((e) => e.data.messages[0].content), ["again", "again"]);
  assert.ok(!events.some((e) => e.event === "error"), JSON.stringify(events));

  const state = await c.threads.getState(thread.thread_id);
  assert.deepEqual(state.values.messages.map((m) => m.role), ["user", "assistant", "user", "assistant"]);
  assert.equal(state.checkpoint.thread_id, thread.thread_id);
  assert.equal(typeof state.checkpoint.checkpoint_id, "string");

  const history = await c.threads.getHistory(thread.thread_id, { limit: 5 });
  assert.equal(history.length, 2);
  assert.equal(history[0].checkpoint.checkpoint_id, state.checkpoint.checkpoint_id);
  assert.equal(history[0].parent_checkpoint.checkpoint_id, history[1].checkpoint.checkpoint_id);
  const older = await c.threads.getHistory(thread.thread_id, { before: history[0].checkpoint });
  assert.equal(older.length, 1);

  const searched = await c.threads.search({ metadata: { suite: SUITE, kind: "chat" } });
  assert.deepEqual(searched.map((t) => t.thread_id), [thread.thread_id]);
  assert.equal(searched[0].assistant_id, ASSISTANT);
  const got = await c.threads.get(thread.thread_id);
  assert.equal(got.status, "idle");
});

test("a concurrent run on a busy thread is refused with 409", async () => {
  const c = client();
  const thread = await c.threads.create({ metadata: { suite: SUITE } });
  const slow = c.runs.wait(thread.thread_id, ASSISTANT, {
    input: user("slow"), config: { configurable: { delay_ms: 3000 } },
  });
  // Wait until the first run holds the thread (the SDK call is in flight).
  for (let i = 0; (await c.threads.get(thread.thread_id)).status !== "busy"; i++) {
    assert.ok(i < 300, "the slow run never took the thread");
    await new Promise((r) => setTimeout(r, 20));
  }
  await assert.rejects(
    c.runs.wait(thread.thread_id, ASSISTANT, { input: user("second") }),
    (err) => err.status === 409 && /already busy/.test(err.message),
  );
  const out = await slow;
  assert.equal(out.messages.at(-1).content, "slow");
});

test("a background runs.create is joined with runs.join", async () => {
  const c = client();
  const thread = await c.threads.create({ metadata: { suite: SUITE } });
  const run = await c.runs.create(thread.thread_id, ASSISTANT, { input: user("bg") });
  assert.equal(run.thread_id, thread.thread_id);
  assert.ok(["pending", "running", "success"].includes(run.status));
  const values = await c.runs.join(thread.thread_id, run.run_id);
  assert.deepEqual(values.messages.map((m) => m.content), ["bg", "bg"]);
  const done = await c.runs.get(thread.thread_id, run.run_id);
  assert.equal(done.status, "success");
  const list = await c.runs.list(thread.thread_id);
  assert.deepEqual(list.map((r) => r.run_id), [run.run_id]);
});

clientTests(() => port);
durableTests(() => port);
agentTests(() => port);

// A server whose waits end after 1 s: a join of a longer run answers what is there, without
// the end event; SDK 1.15 joins again by itself after the last id it saw (Location names the
// stream), SDK 2.x when the caller does (joinAll): either way each event comes once.
test("joinStream past the wait bound resumes after the last event id (SDK 1.15 and 2.x)", async () => {
  const boundPort = await freePort();
  const bounded = await startServer(boundPort, { FUNCGRAPH_MAX_WAIT: "1s" });
  try {
    for (const [name, ClientClass] of SDKS) {
      const c = newClient(boundPort, ClientClass);
      const t = await c.threads.create({ metadata: { suite: SUITE } });
      const run = await c.runs.create(t.thread_id, ASSISTANT, {
        input: user("slow"), streamMode: "messages-tuple", config: { configurable: { delay_ms: 2500 } },
      });
      const { events } = await joinAll(c, t.thread_id, run.run_id);
      assert.deepEqual(events.map((e) => [e.event, e.id]), [["metadata", "1"], ["messages", "2"], ["messages", "3"], ["end", "3"]], name);
      assert.deepEqual(events[2].data[0], { role: "assistant", content: "slow" }, name);
    }
  } finally {
    await stopServer(bounded);
  }
});

test("a durable support_agent run is interrupted at its approval wait and resumed with command.resume", async () => {
  const c = client();
  const [found] = await c.assistants.search({ graphId: "support_agent" });
  assert.equal(found.assistant_id, "support_agent");
  const thread = await c.threads.create({ metadata: { suite: SUITE, kind: "durable" } });
  const first = await c.runs.wait(thread.thread_id, "support_agent", { input: { user_message: "I want a refund" } });
  assert.equal(first.__interrupt__[0].value.event, "approval");
  assert.equal((await c.threads.get(thread.thread_id)).status, "interrupted");
  const state = await c.threads.getState(thread.thread_id);
  assert.deepEqual(state.next, ["draft_reply"]);
  assert.deepEqual(state.tasks[0].interrupts[0].value, { event: "approval", resume_node: "draft_reply", note: "awaiting human approval" });
  const done = await c.runs.wait(thread.thread_id, "support_agent", { command: { resume: { approved: true, reviewer: "x" } } });
  assert.equal(done.final_response, "We have queued your refund review. A team member will validate the invoice and confirm next steps. Reviewer: x.");
  assert.equal((await c.threads.get(thread.thread_id)).status, "idle");
  await assert.rejects(c.runs.wait(thread.thread_id, "support_agent", { command: { resume: {} } }), (err) => err.status === 400);
  const parts = [];
  for await (const p of c.runs.stream(thread.thread_id, "support_agent", { input: { user_message: "legal" }, streamMode: ["values", "updates"] })) {
    parts.push(p);
  }
  assert.ok(parts.some((p) => p.event === "updates" && p.data.__interrupt__?.[0].value.event === "approval"), JSON.stringify(parts));
});
