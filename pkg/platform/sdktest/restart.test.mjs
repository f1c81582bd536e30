// A thread and its last run's output survive a restart of the server. Run it with the server
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
  await stopServer(server);
  server = await startServer(port);
  const c = newClient(port);
  const got = await c.threads.get(thread.thread_id);
  assert.equal(got.status, "idle");
  assert.equal(got.assistant_id, ASSISTANT);
  assert.deepEqual(got.values.messages.map((m) => m.content), ["persist me", "persist me"]);
  const found = await c.threads.search({ metadata: { suite: SUITE, restart: true } });
  assert.deepEqual(found.map((t) => t.thread_id), [thread.thread_id]);
  // The thread keeps running after the restart.
  const out = await c.runs.wait(thread.thread_id, ASSISTANT, { input: user("after restart") });
  assert.equal(out.messages.at(-1).content, "after restart");
});
