// The server the JavaScript SDK tests talk to, through one of the two transports the Go tests
// use: the standalone server (`<bin> serve`), or, when FUNCGRAPH_EMULATE_BIN names the
// emulate command (this folder), the folder `<bin> stage` writes, run under the emulated
// Functions host as `func start` would run it. The Makefile copies this file next to the
// tests.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";

async function freePort() {
  const srv = net.createServer();
  srv.listen(0, "127.0.0.1");
  await once(srv, "listening");
  const { port } = srv.address();
  srv.close();
  await once(srv, "close");
  return port;
}

// run runs a command to its end, failing on a non-zero exit.
async function run(cmd, args, env) {
  const p = spawn(cmd, args, { env, stdio: ["ignore", "inherit", "inherit"] });
  const [code] = await once(p, "exit");
  if (code !== 0) throw new Error(`${cmd} ${args.join(" ")} exited ${code}`);
}

// startServer starts the app of bin with the function key and returns {base, transport,
// stop}: base is the URL the routes are under (`${base}/api/...`).
export async function startServer({ bin, key, prefix }) {
  if (!bin) throw new Error("FUNCGRAPH_SERVER_BIN must name the server binary");
  const emulate = process.env.FUNCGRAPH_EMULATE_BIN;
  const env = { ...process.env, FUNCGRAPH_FUNCTION_KEY: key, FUNCGRAPH_LOG_LEVEL: "warn" };
  let proc;
  let base;
  if (emulate) {
    // A fresh storage prefix: the staged local.settings.json names its queues from it.
    env.FUNCGRAPH_STORAGE_PREFIX = `${prefix}${process.pid}`;
    const root = path.join(mkdtempSync(path.join(os.tmpdir(), "fg-stage-")), "app");
    await run(bin, ["stage", "--out", root], env);
    proc = spawn(emulate, ["--root", root, "--function-key", key, "--quiet"], { env, stdio: ["ignore", "pipe", "inherit"] });
    const lines = readline.createInterface({ input: proc.stdout });
    base = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("the emulated host did not start within 60 s")), 60_000);
      proc.once("exit", (code) => reject(new Error(`the emulated host exited ${code} during startup`)));
      lines.on("line", (line) => {
        if (line.startsWith("listening ")) {
          clearTimeout(timer);
          resolve(line.slice("listening ".length).trim().replace(/\/$/, ""));
        }
      });
    });
  } else {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    proc = spawn(bin, ["serve", "--addr", `127.0.0.1:${port}`], { env, stdio: ["ignore", "inherit", "inherit"] });
    let exited = false;
    proc.once("exit", () => { exited = true; });
    let up = false;
    for (let i = 0; i < 300 && !up; i++) {
      if (exited) throw new Error("server exited during startup");
      try {
        up = (await fetch(`${base}/api/health`)).ok;
      } catch { /* not listening yet */ }
      if (!up) await new Promise((r) => setTimeout(r, 100));
    }
    if (!up) throw new Error("server did not answer /api/health within 30 s");
  }
  return {
    base,
    transport: emulate ? "emulated-host" : "standalone",
    async stop() {
      if (proc.exitCode !== null) return;
      proc.kill("SIGTERM");
      await once(proc, "exit");
    },
  };
}
