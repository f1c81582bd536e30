// Shared harness of the SDK tests: starts FUNCGRAPH_SERVER_BIN as
// `<bin> serve --addr 127.0.0.1:<free port>` with FUNCGRAPH_FUNCTION_KEY set, and builds SDK
// clients that send the key as the x-functions-key header.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import net from "node:net";
import { Client } from "@langchain/langgraph-sdk";
import { Client as Client2 } from "sdk2";
import { RemoteGraph } from "@langchain/langgraph/remote";

const BIN = process.env.FUNCGRAPH_SERVER_BIN;
const KEY = "sdk-test-function-key";

export const ASSISTANT = "echo_agent";
export const SUITE = `suite-${process.pid}-${Date.now()}`;
export const user = (content) => ({ messages: [{ role: "user", content }] });

export async function freePort() {
  const srv = net.createServer();
  srv.listen(0, "127.0.0.1");
  await once(srv, "listening");
  const { port } = srv.address();
  srv.close();
  await once(srv, "close");
  return port;
}

// startServer starts the server on port, with env added to its environment.
export async function startServer(port, env = {}) {
  assert.ok(BIN, "FUNCGRAPH_SERVER_BIN must name the server binary");
  const proc = spawn(BIN, ["serve", "--addr", `127.0.0.1:${port}`], {
    env: { ...process.env, FUNCGRAPH_FUNCTION_KEY: KEY, FUNCGRAPH_LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "inherit", "inherit"],
  });
  let exited = false;
  proc.once("exit", () => { exited = true; });
  for (let i = 0; i < 300; i++) {
    if (exited) throw new Error("server exited during startup");
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/health`);
      if (res.ok) return proc;
    } catch { /* not listening yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  proc.kill("SIGKILL");
  throw new Error("server did not answer /api/health within 30 s");
}

// stopServer stops proc with SIGTERM and waits for it to exit; a server still running 30 s
// later is killed and the test fails, naming the hang, instead of the suite waiting for ever.
export async function stopServer(proc) {
  if (!proc || proc.exitCode !== null) return;
  proc.kill("SIGTERM");
  let timer;
  const late = new Promise((resolve) => { timer = setTimeout(() => resolve("late"), 30000); });
  const outcome = await Promise.race([once(proc, "exit").then(() => "exited"), late]);
  clearTimeout(timer);
  if (outcome === "late") {
    proc.kill("SIGKILL");
    await once(proc, "exit");
    throw new Error("the server did not exit within 30 s of SIGTERM");
  }
}

// SDKS are the SDK majors the tests drive: 1.15 and 2.x (the npm alias sdk2).
export const SDKS = [["sdk 1.15", Client], ["sdk 2.x", Client2]];

export const newClient = (port, ClientClass = Client) => new ClientClass({
  apiUrl: `http://127.0.0.1:${port}/api`,
  apiKey: null,
  defaultHeaders: { "x-functions-key": KEY },
});

// newRemoteGraph is RemoteGraph (@langchain/langgraph) on the echo agent, over an SDK 1.15
// client (the one @langchain/langgraph depends on).
export const newRemoteGraph = (port) => new RemoteGraph({ graphId: ASSISTANT, client: newClient(port) });

// joinAll joins a background run's stream until its end event, joining again after the last
// event id it saw when an answer ends without it (as SDK 1.15 does by itself when the server
// names the stream in Location; SDK 2.x leaves it to the caller). It returns the events and
// the number of joinStream calls.
export async function joinAll(client, threadId, runId, options = {}) {
  const events = [];
  for (let calls = 1; ; calls++) {
    const lastEventId = events.findLast((e) => e.id !== undefined)?.id;
    events.push(...await collect(client.runs.joinStream(threadId, runId, { ...options, lastEventId })));
    if (events.at(-1)?.event === "end") return { events, calls };
    assert.ok(calls < 20, `no end after ${calls} joins: ${JSON.stringify(events)}`);
  }
}

// collect drains an async iterable.
export async function collect(it) {
  const out = [];
  for await (const x of it) out.push(x);
  return out;
}
