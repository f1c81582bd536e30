// Drives funcgraph's MCP endpoint (docs/mcp.md) with the official MCP TypeScript SDK against
// FUNCGRAPH_SERVER_BIN with FUNCGRAPH_FUNCTION_KEY set, standalone or under the emulated
// Functions host (server.mjs); the SDK's transport sends the key as the x-functions-key header.
// The SDK speaks MCP 2025-11-25 and does not know the Tasks extension of 2026-07-28: a call
// declares it in its _meta client capabilities, as the stateless revision sends them, and the
// task methods go through the SDK's generic client.request.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer } from "./server.mjs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResultSchema } from "@modelcontextprotocol/sdk/types.js";

const BIN = process.env.FUNCGRAPH_SERVER_BIN;
const KEY = "mcp-test-function-key";

let server;
let base;

before(async () => {
  server = await startServer({ bin: BIN, key: KEY, prefix: "mcpjs" });
  base = server.base;
});

after(async () => {
  if (server) await server.stop();
});

// connect returns a connected client, with the function key unless key is null.
async function connect(key = KEY) {
  const headers = key === null ? {} : { "x-functions-key": key };
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/api/mcp`), { requestInit: { headers } });
  const client = new Client({ name: "funcgraph-sdktest", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

test("without the function key the endpoint refuses the client", async () => {
  await assert.rejects(connect(null));
  await assert.rejects(connect("not-the-key"));
});

test("the durable and the hosted graphs are the tools, each with its state's input schema", async () => {
  const client = await connect();
  try {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name).sort();
    assert.deepEqual(names, ["assistant", "content_classifier", "data_pipeline", "echo_agent", "reply_writer", "research_agent", "support_agent"]);
    const support = tools.find((t) => t.name === "support_agent");
    assert.equal(support.inputSchema.type, "object");
    assert.ok("user_message" in support.inputSchema.properties, JSON.stringify(support.inputSchema));
  } finally {
    await client.close();
  }
});

test("a call of a run that completes answers its output as structured content", async () => {
  const client = await connect();
  try {
    const out = await client.callTool({ name: "data_pipeline", arguments: { source_url: "https://example.com/data" } });
    assert.ok(!out.isError, JSON.stringify(out));
    assert.equal(out.structuredContent.graph_name, "data_pipeline");
    assert.equal(out.structuredContent.final_node, "load");
    assert.equal(out.structuredContent.state.source_url, "https://example.com/data");
  } finally {
    await client.close();
  }
});

test("a call of a run that waits for approval names the run, the event and its status URL", async () => {
  const client = await connect();
  try {
    const out = await client.callTool({ name: "support_agent", arguments: { user_message: "I want a refund for invoice 42" } });
    assert.ok(!out.isError, JSON.stringify(out));
    const run = out._meta["io.funcgraph/run"];
    assert.equal(run.state, "input_required");
    assert.equal(run.runtime_status, "Running");
    assert.match(out.content[0].text, /waits for event "approval"/);
    const status = await fetch(run.status_url, { headers: { "x-functions-key": KEY } });
    assert.equal(status.status, 200);
    assert.equal((await status.json()).custom_status.waiting_for_event, "approval");
  } finally {
    await client.close();
  }
});

test("arguments the state model refuses are a tool error", async () => {
  const client = await connect();
  try {
    const out = await client.callTool({ name: "support_agent", arguments: {} });
    assert.equal(out.isError, true, JSON.stringify(out));
  } finally {
    await client.close();
  }
});

const THREAD = "io.funcgraph/thread_id";
// TASKS is the _meta of a call whose client declares the Tasks extension.
const TASKS = { "io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/tasks": {} } } };

// task sends one task method through the SDK's generic request.
function task(client, method, params) {
  return client.request({ method, params }, ResultSchema);
}

// awaitTask polls tasks/get until the task reaches status (30 s at most).
async function awaitTask(client, taskId, status) {
  for (let i = 0; i < 300; i++) {
    const t = await task(client, "tasks/get", { taskId });
    if (t.status === status) return t;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`task ${taskId} did not reach ${status}`);
}

test("a hosted graph is a tool run within the call, and its thread goes on when the call names it", async () => {
  const client = await connect();
  try {
    const say = (content, _meta) => client.callTool({ name: "echo_agent", arguments: { messages: [{ role: "user", content }] }, _meta });
    const first = await say("hello");
    assert.ok(!first.isError, JSON.stringify(first));
    const tid = first._meta[THREAD];
    assert.ok(tid, JSON.stringify(first));
    assert.equal(first.structuredContent.messages.length, 2);
    const second = await say("again", { [THREAD]: tid });
    assert.ok(!second.isError, JSON.stringify(second));
    const users = second.structuredContent.messages.filter((m) => m.role === "user").map((m) => m.content);
    assert.deepEqual(users, ["hello", "again"], JSON.stringify(second.structuredContent));
    assert.equal(second._meta[THREAD], tid);
  } finally {
    await client.close();
  }
});

test("a durable tool that waits for approval answers a task: tasks/update answers it, the task completes with the run's output", async () => {
  const client = await connect();
  try {
    const created = await client.callTool({ name: "support_agent", arguments: { user_message: "I want a refund for invoice 42" }, _meta: TASKS });
    assert.equal(created.resultType, "task", JSON.stringify(created));
    assert.equal(created.status, "input_required");
    const waiting = await task(client, "tasks/get", { taskId: created.taskId });
    assert.equal(waiting.status, "input_required");
    assert.equal(waiting.inputRequests.approval.method, "elicitation/create", JSON.stringify(waiting));
    const updated = await task(client, "tasks/update", {
      taskId: created.taskId,
      inputResponses: { approval: { action: "accept", content: { approved: true, reviewer: "ann" } } },
    });
    assert.deepEqual(updated, {});
    const done = await awaitTask(client, created.taskId, "completed");
    assert.equal(done.result.structuredContent.final_node, "finalize_reply", JSON.stringify(done));
    assert.equal(done.result.structuredContent.state.approved, true);
    assert.equal(done.result.structuredContent.state.reviewer, "ann");
  } finally {
    await client.close();
  }
});

test("tasks/cancel cancels the task's run; another cancel says it is cancelled already", async () => {
  const client = await connect();
  try {
    const created = await client.callTool({ name: "support_agent", arguments: { user_message: "I want a refund for invoice 7" }, _meta: TASKS });
    assert.equal(created.status, "input_required", JSON.stringify(created));
    assert.deepEqual(await task(client, "tasks/cancel", { taskId: created.taskId }), {});
    await awaitTask(client, created.taskId, "cancelled");
    await assert.rejects(task(client, "tasks/cancel", { taskId: created.taskId }), /already cancelled/);
    await assert.rejects(task(client, "tasks/get", { taskId: "no-such-task" }), /task not found/);
  } finally {
    await client.close();
  }
});
