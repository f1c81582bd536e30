// A thread, its last run's output and its checkpoints (state and history) survive a restart
// of the server. Run it with the server
// on durable storage (Azurite); on the in-memory store it fails by design.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { ASSISTANT, SUITE, user, freePort, startServer, stopServer, newClient } from "./harness.mjs";

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
