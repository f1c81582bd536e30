// A thread, its last run's output and its checkpoints (state and history) survive a restart
// of the server. Run it with the server
// on durable storage (Azurite); on the in-memory store it fails by design.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { ASSISTANT, SUITE, SDKS, user, freePort, startServer, stopServer, newClient, newRemoteGraph, collect } from "./harness.mjs";

let server;
after(async () => { await stopServer(server); });

test("a thread survives a server restart", async () => {
  const port = await freePort();
  server = await startServer(port);
  const thread = await newClient(port).threads.create({ metadata: { suite: SUITE, restart: true } });
  await newClient(port).runs.wait(thread.thread_id, ASSISTANT, { input: user("persist me") });
  const before = await newClient(port).threads.getState(thread.thread_id);
  await stopServer(server);
  server = await startServer(port);
  const c = newClient(port);
  const got = await c.threads.get(thread.thread_id);
  assert.equal(got.status, "idle");
  assert.equal(got.assistant_id, ASSISTANT);
  assert.deepEqual(got.values.messages.map((m) => m.content), ["persist me", "persist me"]);
  const state = await c.threads.getState(thread.thread_id);
  assert.deepEqual(state.values.messages.map((m) => m.content), ["persist me", "persist me"]);
  assert.equal(state.metadata.step, 1);
  assert.equal(state.checkpoint.checkpoint_id, before.checkpoint.checkpoint_id);
  const history = await c.threads.getHistory(thread.thread_id);
  assert.equal(history.length, 1);
  assert.equal(history[0].checkpoint.checkpoint_id, before.checkpoint.checkpoint_id);
  const found = await c.threads.search({ metadata: { suite: SUITE, restart: true } });
  assert.deepEqual(found.map((t) => t.thread_id), [thread.thread_id]);
  // The thread keeps running after the restart.
  const out = await c.runs.wait(thread.thread_id, ASSISTANT, { input: user("after restart") });
  assert.deepEqual(out.messages.map((m) => m.content), ["persist me", "persist me", "after restart", "after restart"]);
  const after2 = await c.threads.getHistory(thread.thread_id);
  assert.equal(after2.length, 2);
  assert.equal(after2[0].parent_checkpoint.checkpoint_id, before.checkpoint.checkpoint_id);
});

test("SDK 2.x and RemoteGraph: a caller's thread id survives a server restart", async () => {
  const port = await freePort();
  await stopServer(server);
  server = await startServer(port);
  const id = `${SUITE}-restart-${process.pid}`;
  const c2 = newClient(port, SDKS[1][1]);
  await c2.threads.create({ threadId: id, metadata: { suite: SUITE } });
  const config = { configurable: { thread_id: id } };
  const first = await newRemoteGraph(port).invoke(user("before"), config);
  assert.deepEqual(first.messages.map((m) => m.content), ["before", "before"]);
  await stopServer(server);
  server = await startServer(port);
  const g = newRemoteGraph(port);
  const state = await g.getState(config);
  assert.deepEqual(state.values.messages.map((m) => m.content), ["before", "before"]);
  const c = newClient(port, SDKS[1][1]);
  await assert.rejects(c.threads.create({ threadId: id }), (err) => err.status === 409);
  const one = await c.runs.create(id, ASSISTANT, { input: user("one"), config: { configurable: { delay_ms: 300 } }, multitaskStrategy: "enqueue" });
  const two = await c.runs.create(id, ASSISTANT, { input: user("two"), multitaskStrategy: "enqueue" });
  const values = await c.runs.join(id, two.run_id);
  assert.deepEqual(values.messages.map((m) => m.content), ["before", "before", "one", "one", "two", "two"]);
  assert.equal((await c.runs.get(id, one.run_id)).status, "success");
  const both = await collect(await g.stream(user("three"), { ...config, streamMode: ["values", "updates"] }));
  assert.deepEqual(both.map(([mode]) => mode), ["values", "updates"]);
  assert.equal(both[0][1].messages.length, 8);
});

test("a durable support_agent run interrupted before a server restart is resumed after it", async () => {
  const port = await freePort();
  await stopServer(server);
  server = await startServer(port);
  const thread = await newClient(port).threads.create({ metadata: { suite: SUITE } });
  const first = await newClient(port).runs.wait(thread.thread_id, "support_agent", { input: { user_message: "legal question" } });
  assert.equal(first.__interrupt__[0].value.event, "approval");
  await stopServer(server);
  server = await startServer(port);
  const c = newClient(port);
  assert.equal((await c.threads.get(thread.thread_id)).status, "interrupted");
  const state = await c.threads.getState(thread.thread_id);
  assert.equal(state.tasks[0].interrupts[0].value.event, "approval");
  const done = await c.runs.wait(thread.thread_id, "support_agent", { command: { resume: { approved: true, reviewer: "r" } } });
  assert.equal(done.final_response, "Thanks for reaching out. We have prepared a response for your request. Reviewer: r.");
  assert.equal((await c.threads.get(thread.thread_id)).status, "idle");
});
