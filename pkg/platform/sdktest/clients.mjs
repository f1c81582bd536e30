// Tests of the second wave of LangGraph clients, run by sdk.test.mjs against its server with
// SDK 1.15, SDK 2.x and RemoteGraph: caller thread ids, several stream modes in one run, one
// messages-tuple mode, threadless runs on the checkpointed echo agent, enqueued runs applied
// in order, a background run's stream joined from the start and after a lastEventId.
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { ASSISTANT, SUITE, SDKS, user, newClient, newRemoteGraph, collect, joinAll } from "./harness.mjs";

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

    test(`${name}: one messages-tuple stream mode on echo_agent`, async () => {
      const c = client();
      const t = await c.threads.create({ metadata: { suite: SUITE } });
      const events = await collect(c.runs.stream(t.thread_id, ASSISTANT, { input: user("tuple"), streamMode: "messages-tuple" }));
      assert.deepEqual(events.map((e) => e.event).filter((e) => e !== "end"), ["metadata", "messages", "messages"]);
      const pairs = events.filter((e) => e.event === "messages").map((e) => e.data);
      assert.deepEqual(pairs.map(([m]) => [m.role, m.content]), [["user", "tuple"], ["assistant", "tuple"]]);
      assert.ok(pairs.every(([, meta]) => meta.langgraph_node === "echo"), JSON.stringify(pairs));
    });

    test(`${name}: joinStream of a background run, from the start and after a lastEventId`, async () => {
      const c = client();
      const t = await c.threads.create({ metadata: { suite: SUITE } });
      await c.runs.wait(t.thread_id, ASSISTANT, { input: user("first") });
      const run = await c.runs.create(t.thread_id, ASSISTANT, {
        input: user("joined"), streamMode: ["values", "messages-tuple"], config: { configurable: { delay_ms: 300 } },
      });
      // Joined while the run waits or runs: its events to the end.
      const events = await collect(c.runs.joinStream(t.thread_id, run.run_id));
      assert.deepEqual(events.map((e) => e.event), ["metadata", "values", "messages", "messages", "end"]);
      assert.deepEqual(events.slice(0, 4).map((e) => e.id), ["1", "2", "3", "4"]);
      assert.equal(events[0].data.run_id, run.run_id);
      assert.deepEqual(contents(events[1].data), ["first", "first", "joined", "joined"]);
      assert.deepEqual(events.slice(2, 4).map((e) => e.data[0].content), ["joined", "joined"]);
      // Joined again after the values event: the rest only (the end event has no id of its
      // own: the SDK gives it the last one).
      const rest = await collect(c.runs.joinStream(t.thread_id, run.run_id, { lastEventId: events[1].id }));
      assert.deepEqual(rest.map((e) => [e.event, e.id]), [["messages", "3"], ["messages", "4"], ["end", "4"]]);
      // In one of its modes.
      const values = await collect(c.runs.joinStream(t.thread_id, run.run_id, { streamMode: "values" }));
      assert.deepEqual(values.map((e) => e.event), ["metadata", "values", "end"]);
      assert.equal((await c.runs.get(t.thread_id, run.run_id)).status, "success");
      await assert.rejects(collect(c.runs.joinStream(t.thread_id, "no-such-run")), (err) => err.status === 404);
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

  test("RemoteGraph: stream in messages mode yields [message, metadata] pairs", async () => {
    const g = newRemoteGraph(port());
    const config = { configurable: { thread_id: `${SUITE}-${randomUUID()}` } };
    const pairs = await collect(await g.stream(user("pairs"), { ...config, streamMode: "messages" }));
    assert.deepEqual(pairs.map(([m, meta]) => [m.role, m.content, meta.langgraph_node]), [["user", "pairs", "echo"], ["assistant", "pairs", "echo"]]);
  });

  test("RemoteGraph: a thread-less invoke on echo_agent", async () => {
    const out = await newRemoteGraph(port()).invoke(user("no thread"));
    assert.deepEqual(contents(out), ["no thread", "no thread"]);
  });
}
