// Drives funcgraph's MCP endpoint (docs/mcp.md) with the official MCP TypeScript SDK against the
// standalone server: FUNCGRAPH_SERVER_BIN started as `<bin> serve --addr 127.0.0.1:<port>` with
// FUNCGRAPH_FUNCTION_KEY set; the SDK's transport sends the key as the x-functions-key header.
// The SDK speaks MCP 2025-11-25 and does not know the Tasks extension of 2026-07-28, so these
// tests call tools; the Go tests of pkg/mcpserver drive the tasks.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import net from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const BIN = process.env.FUNCGRAPH_SERVER_BIN;
const KEY = "mcp-test-function-key";

let server;
let base;

async function freePort() {
  const srv = net.createServer();
  srv.listen(0, "127.0.0.1");
  await once(srv, "listening");
  const { port } = srv.address();
  srv.close();
  await once(srv, "close");
  return port;
}

before(async () => {
  assert.ok(BIN, "FUNCGRAPH_SERVER_BIN must name the server binary");
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  server = spawn(BIN, ["serve", "--addr", `127.0.0.1:${port}`], {
    env: { ...process.env, FUNCGRAPH_FUNCTION_KEY: KEY, FUNCGRAPH_LOG_LEVEL: "warn" },
    stdio: ["ignore", "inherit", "inherit"],
  });
  let exited = false;
  server.once("exit", () => { exited = true; });
  for (let i = 0; i < 300; i++) {
    if (exited) throw new Error("server exited during startup");
    try {
      if ((await fetch(`${base}/api/health`)).ok) return;
    } catch { /* not listening yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("server did not answer /api/health within 30 s");
});

after(async () => {
  if (!server || server.exitCode !== null) return;
  server.kill("SIGTERM");
  await once(server, "exit");
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

test("the durable graphs are the tools, each with its state's input schema", async () => {
  const client = await connect();
  try {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name).sort();
    assert.deepEqual(names, ["assistant", "content_classifier", "data_pipeline", "reply_writer", "research_agent", "support_agent"]);
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
