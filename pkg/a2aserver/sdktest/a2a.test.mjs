// Drives funcgraph's A2A v1.0 endpoint (docs/a2a.md) with the official A2A JS SDK against
// FUNCGRAPH_SERVER_BIN with FUNCGRAPH_FUNCTION_KEY set, standalone or under the emulated
// Functions host (server.mjs); the SDK sends the key as the x-functions-key header.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer } from "./server.mjs";
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client";

const BIN = process.env.FUNCGRAPH_SERVER_BIN;
const KEY = "a2a-test-function-key";
const AGENT = "support_agent";

let server;
let base;

before(async () => {
  server = await startServer({ bin: BIN, key: KEY, prefix: "a2ajs" });
  base = server.base;
});

after(async () => {
  if (server) await server.stop();
});

// keyed is fetch with the function key.
const keyed = (input, init = {}) => {
  const headers = new Headers(init.headers);
  headers.set("x-functions-key", KEY);
  return fetch(input, { ...init, headers });
};

async function newClient() {
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl: keyed })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl: keyed }),
  }));
  // The card is resolved relative to the base URL: its trailing slash keeps the agent name.
  return factory.createFromUrl(`${base}/api/a2a/${AGENT}/`);
}

let seq = 0;
const message = (part, taskId = "") => ({
  messageId: `m-${process.pid}-${++seq}`, contextId: "", taskId, role: 1 /* ROLE_USER */,
  parts: [part], metadata: undefined, extensions: [], referenceTaskIds: [],
});
const text = (value) => ({ content: { $case: "text", value } });
const data = (value) => ({ content: { $case: "data", value } });
const send = (client, msg) => client.sendMessage({ tenant: "", message: msg, configuration: undefined, metadata: undefined });
// asTask returns the SDK's send result (a Task or a Message), failing unless it is a task.
const asTask = (res) => {
  assert.ok(typeof res?.id === "string" && res.status !== undefined && !("messageId" in res), JSON.stringify(res));
  return res;
};

test("the card names the JSON-RPC interface", async () => {
  const res = await keyed(`${base}/api/a2a/${AGENT}/.well-known/agent-card.json`);
  assert.equal(res.status, 200);
  const card = await res.json();
  assert.equal(card.name, AGENT);
  assert.equal(card.supportedInterfaces[0].protocolBinding, "JSONRPC");
  assert.equal(card.supportedInterfaces[0].url, `${base}/api/a2a/${AGENT}`);
});

test("sendMessage completes with the run's output", async () => {
  const client = await newClient();
  const task = asTask(await send(client, message(text("hello"))));
  assert.equal(task.status.state, 3 /* TASK_STATE_COMPLETED */, JSON.stringify(task));
  assert.match(task.artifacts[0].parts[0].content.value.final_response, /^Thanks for reaching out/);
  const again = await client.getTask({ tenant: "", id: task.id, historyLength: undefined });
  assert.equal(again.status.state, 3);
});

test("input-required, answered by a streamed message, completes", async () => {
  const client = await newClient();
  const task = asTask(await send(client, message(text("I want a refund"))));
  assert.equal(task.status.state, 6 /* TASK_STATE_INPUT_REQUIRED */, JSON.stringify(task));
  const events = [];
  for await (const ev of client.sendMessageStream({ tenant: "", message: message(data({ approved: true, reviewer: "ana" }), task.id),
    configuration: undefined, metadata: undefined })) {
    events.push(ev);
  }
  const last = events.at(-1);
  // The run may complete before the stream's first event: then the task is the only event,
  // else a status update ends the stream.
  assert.ok(["task", "statusUpdate"].includes(last.payload.$case), JSON.stringify(events));
  const state = last.payload.value.status.state;
  assert.equal(state, 3, JSON.stringify(events));
  const done = await client.getTask({ tenant: "", id: task.id, historyLength: undefined });
  assert.match(done.artifacts[0].parts[0].content.value.final_response, /Reviewer: ana\.$/);
});

test("cancelTask cancels; listTasks lists the tasks", async () => {
  const client = await newClient();
  const task = asTask(await send(client, message(text("a legal matter"))));
  assert.equal(task.status.state, 6);
  const canceled = await client.cancelTask({ tenant: "", id: task.id, metadata: undefined });
  assert.equal(canceled.status.state, 5 /* TASK_STATE_CANCELED */);
  await assert.rejects(client.cancelTask({ tenant: "", id: task.id, metadata: undefined }));
  const list = await client.listTasks({ tenant: "", contextId: "", status: 0, pageSize: 100, pageToken: "",
    historyLength: undefined, statusTimestampAfter: undefined, includeArtifacts: false });
  assert.ok(list.tasks.some((t) => t.id === task.id && t.status.state === 5), JSON.stringify(list));
  await assert.rejects(client.getTask({ tenant: "", id: "no-such-task", historyLength: undefined }));
});

test("a hosted agent answers a message with a message; its contextId keeps the thread", async () => {
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl: keyed })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl: keyed }),
  }));
  const client = await factory.createFromUrl(`${base}/api/a2a/echo_agent/`);
  const say = (content, contextId) => send(client, {
    ...message(data({ messages: [{ role: "user", content }] })), contextId,
  });
  const first = await say("hello", "");
  assert.ok(typeof first?.messageId === "string" && first.role === 2 /* ROLE_AGENT */, JSON.stringify(first));
  assert.ok(first.contextId, JSON.stringify(first));
  assert.equal(first.parts[0].content.value.messages.length, 2, JSON.stringify(first));
  const second = await say("again", first.contextId);
  assert.equal(second.contextId, first.contextId);
  const users = second.parts[0].content.value.messages.filter((m) => m.role === "user").map((m) => m.content);
  assert.deepEqual(users, ["hello", "again"], JSON.stringify(second));
  await assert.rejects(client.getTask({ tenant: "", id: "no-such-task", historyLength: undefined }));
});
