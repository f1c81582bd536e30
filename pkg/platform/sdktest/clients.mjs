// Tests of the second wave of LangGraph clients, run by sdk.test.mjs against its server with
// SDK 1.15, SDK 2.x and RemoteGraph: caller thread ids, several stream modes in one run,
// threadless runs on the checkpointed echo agent, enqueued runs applied in order.
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { ASSISTANT, SUITE, SDKS, user, newClient, newRemoteGraph, collect } from "./harness.mjs";

const contents = (v) => v.messages.map((m) => m.content);

// clientTests registers the tests; port() is the running server's port.
export function clientTests(port) {
  for (const [name, ClientClass] of SDKS) {
    const client = () => newClient(port(), ClientClass);

    test(`${name}: threads.create keeps the caller's thread id; if_exists decides on a clash`, async () => {
      const c = client();
      const id = `${SUITE}-${randomUUID()}`;
      const t = await c.threads.create({ threadId: id, metadata: { suite: SUITE, n: 1 } });
      assert.equal(t.thread_id, id);
      await assert.rejects(c.threads.create({ threadId: id }), (err) => err.status === 409);
      await assert.rejects(c.threads.create({ threadId: id, ifExists: "raise" }), (err) => err.status === 409);
      const same = await c.threads.create({ threadId: id, ifExists: "do_nothing", metadata: { n: 2 } });
      assert.equal(same.thread_id, id);
      assert.equal(same.metadata.n, 1);
      const out = await c.runs.wait(id, ASSISTANT, { input: user("mine") });
      assert.deepEqual(contents(out), ["mine", "mine"]);
    });

    test(`${name}: if_not_exists create runs on a new thread with the caller's id`, async () => {
      const c = client();
      const id = `${SUITE}-${randomUUID()}`;
      await assert.rejects(c.runs.wait(id, ASSISTANT, { input: user("x") }), (err) => err.status === 404);
      const out = await c.runs.wait(id, ASSISTANT, { input: user("created"), ifNotExists: "create" });
      assert.deepEqual(contents(out), ["created", "created"]);
      const t = await c.threads.get(id);
      assert.equal(t.assistant_id, ASSISTANT);
      const again = await c.runs.wait(id, ASSISTANT, { input: user("again"), ifNotExists: "create" });
      assert.deepEqual(contents(again), ["created", "created", "again", "again"]);
    });

    test(`${name}: two stream modes in one run`, async () => {
      const c = client();
      const t = await c.threads.create({ metadata: { suite: SUITE } });
      await c.runs.wait(t.thread_id, ASSISTANT, { input: user("first") });
      const events = await collect(c.runs.stream(t.thread_id, ASSISTANT, {
        input: user("second"), streamMode: ["values", "updates", "messages-tuple"],
      }));
      assert.deepEqual(events.map((e) => e.event).filter((e) => e !== "end"), ["metadata", "values", "updates", "messages", "messages"]);
      const values = events.find((e) => e.event === "values").data;
      assert.deepEqual(contents(values), ["first", "first", "second", "second"]);
      const updates = events.find((e) => e.event === "updates").data;
      assert.deepEqual(contents(updates.echo), ["second", "second"]);
      const [msg, meta] = events.find((e) => e.event === "messages").data;
      assert.equal(msg.content, "second");
      assert.equal(meta.langgraph_node, "echo");
    });

    test(`${name}: a thread-less run on echo_agent runs on a temporary thread`, async () => {
      const c = client();
      const out = await c.runs.wait(null, ASSISTANT, { input: user("stateless") });
      assert.deepEqual(contents(out), ["stateless", "stateless"]);
      const events = await collect(c.runs.stream(null, ASSISTANT, { input: user("streamed"), streamMode: ["values", "updates"] }));
      assert.ok(!events.some((e) => e.event === "error"), JSON.stringify(events));
      assert.deepEqual(contents(events.find((e) => e.event === "values").data), ["streamed", "streamed"]);
      let runId;
      const kept = await c.runs.wait(null, ASSISTANT, {
        input: user("kept"), onCompletion: "keep", metadata: { suite: SUITE, kept: name },
        onRunCreated: (m) => { runId = m.run_id; },
      });
      assert.deepEqual(contents(kept), ["kept", "kept"]);
      assert.match(runId, /^[0-9a-f-]{36}$/);
      const found = await c.threads.search({ metadata: { suite: SUITE, kept: name } });
      assert.equal(found.length, 1);
      assert.deepEqual(contents(found[0].values), ["kept", "kept"]);
    });

    test(`${name}: two enqueued runs are applied in order`, async () => {
      const c = client();
      const t = await c.threads.create({ metadata: { suite: SUITE } });
      const first = await c.runs.create(t.thread_id, ASSISTANT, {
        input: user("one"), config: { configurable: { delay_ms: 500 } }, multitaskStrategy: "enqueue",
      });
      const second = await c.runs.create(t.thread_id, ASSISTANT, { input: user("two"), multitaskStrategy: "enqueue" });
      const values = await c.runs.join(t.thread_id, second.run_id);
      assert.deepEqual(contents(values), ["one", "one", "two", "two"]);
      assert.equal((await c.runs.get(t.thread_id, first.run_id)).status, "success");
    });
  }

  test("RemoteGraph: invoke, stream with its stream modes, getState on a caller thread id", async () => {
    const g = newRemoteGraph(port());
    const config = { configurable: { thread_id: `${SUITE}-${randomUUID()}` } };
    const out = await g.invoke(user("remote"), config);
    assert.deepEqual(contents(out), ["remote", "remote"]);
    // RemoteGraph's default stream mode alone (updates): the echo agent's one-mode events.
    const updates = await collect(await g.stream(user("again"), config));
    assert.deepEqual(updates.map(contents), [["again"], ["again"]]);
    const both = await collect(await g.stream(user("both"), { ...config, streamMode: ["values", "updates"] }));
    assert.deepEqual(both.map(([mode]) => mode), ["values", "updates"]);
    assert.deepEqual(contents(both[0][1]).slice(-2), ["both", "both"]);
    const state = await g.getState(config);
    assert.deepEqual(contents(state.values), ["remote", "remote", "again", "again", "both", "both"]);
    assert.equal(state.config.configurable.thread_id, config.configurable.thread_id);
  });

  test("RemoteGraph: a thread-less invoke on echo_agent", async () => {
    const out = await newRemoteGraph(port()).invoke(user("no thread"));
    assert.deepEqual(contents(out), ["no thread", "no thread"]);
  });
}
