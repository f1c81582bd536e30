// Tests of durable assistants' live streams, run by sdk.test.mjs against its server with SDK
// 1.15 and SDK 2.x: reply_writer writes its reply word by word (50 ms apart) while its one
// node runs, and the SDK receives the pieces (messages-tuple) and the progress chunks (custom)
// while the run is still busy, in runs.stream and in runs.joinStream; research_agent's
// branches' events arrive as each branch commits.
import { test } from "node:test";
import assert from "node:assert/strict";
import { SUITE, SDKS, newClient } from "./harness.mjs";

const WRITER = "reply_writer";
const input = { prompt: "hello", pause_ms: 50 };

// follow drains a stream, noting the thread's status when the first messages event arrives.
async function follow(c, threadId, stream) {
  const events = [];
  let statusAtFirstPiece;
  for await (const e of stream) {
    if (e.event === "messages" && statusAtFirstPiece === undefined) {
      statusAtFirstPiece = (await c.threads.get(threadId)).status;
    }
    events.push(e);
  }
  return { events, statusAtFirstPiece };
}

// checkPieces checks the messages and custom events of reply_writer's run: the pieces make the
// final reply, one message of the compose node; progress chunks, then "composed" once.
function checkPieces(events, reply, name) {
  const words = reply.split(" ").length;
  const pairs = events.filter((e) => e.event === "messages").map((e) => e.data);
  assert.equal(pairs.length, words, name);
  assert.equal(pairs.map(([m]) => m.content).join(""), reply, name);
  assert.ok(pairs.every(([m, meta]) => m.type === "AIMessageChunk" && m.id === pairs[0][0].id && meta.langgraph_node === "compose"),
    JSON.stringify(pairs[0]));
  const custom = events.filter((e) => e.event === "custom").map((e) => e.data);
  const progress = Array.from({ length: Math.ceil(words / 5) }, () => "progress");
  assert.deepEqual(custom.map((c) => c.name), [...progress, "composed"], name);
  assert.deepEqual(custom.at(-2).data, { pieces: words, of: words }, name);
  assert.deepEqual(custom.at(-1).data, { pieces: words }, name);
  assert.equal(events.at(-1).event, "end", name);
}

export function durableTests(port) {
  for (const [name, ClientClass] of SDKS) {
    const client = () => newClient(port(), ClientClass);

    test(`${name}: a durable assistant's messages-tuple and custom events arrive while its node writes`, async () => {
      const c = client();
      const t = await c.threads.create({ metadata: { suite: SUITE, kind: "durable-live" } });
      const { events, statusAtFirstPiece } = await follow(c, t.thread_id,
        c.runs.stream(t.thread_id, WRITER, { input, streamMode: ["messages-tuple", "custom", "values"] }));
      assert.equal(statusAtFirstPiece, "busy", "the first piece came once the run had ended");
      const values = events.filter((e) => e.event === "values");
      assert.equal(values.length, 1, JSON.stringify(values));
      assert.match(values[0].data.reply, /^You wrote "hello"\. /);
      checkPieces(events, values[0].data.reply, name);
      assert.equal((await c.threads.get(t.thread_id)).status, "idle");
    });

    test(`${name}: a durable assistant's background run is joined live with joinStream`, async () => {
      const c = client();
      const t = await c.threads.create({ metadata: { suite: SUITE, kind: "durable-live" } });
      const run = await c.runs.create(t.thread_id, WRITER, { input, streamMode: ["messages-tuple", "custom"] });
      const { events, statusAtFirstPiece } = await follow(c, t.thread_id, c.runs.joinStream(t.thread_id, run.run_id));
      assert.equal(statusAtFirstPiece, "busy", "the first piece came once the run had ended");
      const state = await c.threads.getState(t.thread_id);
      checkPieces(events, state.values.reply, name);
      assert.equal((await c.runs.get(t.thread_id, run.run_id)).status, "success");
    });

    // research_agent's branch 1 fails its first attempt and commits a second after the
    // others: its "searched" event comes last, not in slot order at the join.
    test(`${name}: a fan-out branch's emitted event arrives when that branch commits`, async () => {
      const c = client();
      const t = await c.threads.create({ metadata: { suite: SUITE, kind: "durable-live" } });
      const events = [];
      for await (const e of c.runs.stream(t.thread_id, "research_agent", {
        input: { question: "Is Go fast?", sources: ["a", "b", "c"] }, streamMode: ["custom"],
      })) events.push(e);
      const searched = events.filter((e) => e.event === "custom" && e.data.name === "searched").map((e) => e.data.data.source);
      assert.deepEqual(searched.toSorted(), ["a", "b", "c"], JSON.stringify(events));
      assert.equal(searched.at(-1), "b", `the retried branch's event came in slot order: ${searched}`);
    });
  }
}
