// Tests of the example app's assistant agent as a durable LangGraph assistant, run by
// sdk.test.mjs with SDK 1.15 and SDK 2.x: its reply arrives in messages-tuple while it is
// generated, its refund waits as an interrupt naming the exact call, command.resume with
// LangChain's decisions approves (or rejects) it, and the thread's messages are LangChain's.
import { test } from "node:test";
import assert from "node:assert/strict";
import { SUITE, SDKS, newClient } from "./harness.mjs";

const AGENT = "assistant";
const ask = (content) => ({ messages: [{ role: "user", content }] });

export function agentTests(port) {
  for (const [name, ClientClass] of SDKS) {
    const client = () => newClient(port(), ClientClass);

    test(`${name}: the assistant agent streams its reply, waits for approval of its refund, and resumes with decisions`, async () => {
      const c = client();
      const t = await c.threads.create({ metadata: { suite: SUITE, kind: "agent" } });
      const events = [];
      for await (const e of c.runs.stream(t.thread_id, AGENT, { input: ask("Please refund order A100"), streamMode: ["messages-tuple", "values"] })) {
        events.push(e);
      }
      const pieces = events.filter((e) => e.event === "messages").map((e) => e.data);
      assert.ok(pieces.length > 3, JSON.stringify(events.map((e) => e.event)));
      assert.ok(pieces.every(([m, meta]) => m.type === "AIMessageChunk" && meta.langgraph_node === "model"), JSON.stringify(pieces[0]));
      assert.ok(pieces.map(([m]) => m.content).join("").startsWith("Let me look up order A100."), pieces.map(([m]) => m.content).join(""));

      const state = await c.threads.getState(t.thread_id);
      assert.equal((await c.threads.get(t.thread_id)).status, "interrupted");
      assert.deepEqual(state.next, ["tools"]);
      assert.equal(state.tasks[0].interrupts[0].value.event, "approval");
      assert.match(state.tasks[0].interrupts[0].value.note, /issue_refund\(\{"order":"A100","amount":\d+\}\)/);
      const [call] = state.values.pending_approval;
      assert.equal(call.name, "issue_refund");
      const msgs = state.values.messages;
      assert.deepEqual(msgs.map((m) => m.type), ["human", "ai", "tool", "ai"]);
      assert.ok(msgs.every((m) => typeof m.id === "string" && m.id.length > 0), JSON.stringify(msgs));
      assert.deepEqual(msgs[3].tool_calls, [{ name: "issue_refund", args: call.args, id: call.id, type: "tool_call" }]);
      assert.equal(msgs[3].usage_metadata.total_tokens, msgs[3].usage_metadata.input_tokens + msgs[3].usage_metadata.output_tokens);

      const done = await c.runs.wait(t.thread_id, AGENT, { command: { resume: { decisions: [{ type: "approve" }] } } });
      assert.equal(done.messages.at(-1).type, "ai");
      assert.match(done.messages.at(-1).content, /^Done: refunded \d+ EUR for order A100 \(reference call_issue_refund_4\)/);
      assert.equal(done.usage.model_calls, 3);
      assert.equal((await c.threads.get(t.thread_id)).status, "idle");
    });

    test(`${name}: a rejected refund is not issued and the model is told why`, async () => {
      const c = client();
      const t = await c.threads.create({ metadata: { suite: SUITE, kind: "agent" } });
      const first = await c.runs.wait(t.thread_id, AGENT, { input: ask("Refund A200 please") });
      assert.equal(first.__interrupt__[0].value.event, "approval");
      await assert.rejects(c.runs.wait(t.thread_id, AGENT, { command: { resume: { decisions: [{ type: "maybe" }] } } }), (err) => err.status >= 400 && err.status < 500);
      const done = await c.runs.wait(t.thread_id, AGENT, { command: { resume: { decisions: [{ type: "reject", message: "needs a manager" }] } } });
      const tool = done.messages.at(-2);
      assert.equal(tool.type, "tool");
      assert.equal(tool.status, "error");
      assert.equal(tool.content, "needs a manager");
      assert.equal(done.messages.at(-1).content, "I did not issue the refund: needs a manager");
    });
  }
}
