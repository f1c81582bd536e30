// The live chunks of a run's step in flight: what a node, a branch or an event handler writes
// while it runs (durable.Write, and the previews of the events it emits), read with the feed
// (live=true). A writer is one attempt of one step or branch; its chunks are provisional until
// a commit record (its step committed: the history holds what counts, and every other writer of
// that step is retracted) or a retract record (the attempt failed) ends it. The page shows
// only the writers no record ended yet.
const LIVE_KEEP = 64 << 10; // the characters of one writer's text the page keeps (its tail)

function newLive() {
  return { next: 0, writers: new Map(), ended: new Set() };
}

// addLive takes the records of one feed answer.
function addLive(live, records, next) {
  for (const r of records || []) {
    const key = `${r.step}/${r.branch ?? ""}`;
    if (r.kind === "commit" || r.kind === "retract") {
      live.ended.add(r.writer);
      if (r.kind === "commit") {
        for (const [w, v] of live.writers) if (v.key === key) live.ended.add(w);
      }
      continue;
    }
    if (live.ended.has(r.writer)) continue;
    let w = live.writers.get(r.writer);
    if (!w) {
      w = { key, step: r.step, attempt: r.attempt, node: r.node, branch: r.branch, text: "", records: 0 };
      live.writers.set(r.writer, w);
    }
    const piece = r.kind === "custom" ? `\n[event ${r.name ?? ""}] ${JSON.stringify(r.data)}\n`
      : (typeof r.data === "string" ? r.data : JSON.stringify(r.data));
    w.text = (w.text + piece).slice(-LIVE_KEEP);
    w.records++;
  }
  for (const w of live.ended) live.writers.delete(w);
  if (typeof next === "number") live.next = next;
}

// inFlight returns the writers no record ended, oldest first.
function inFlight(live) {
  return [...live.writers.values()];
}

// renderLive is the panel of the live chunks in flight (null when there are none).
function renderLive(live) {
  const ws = inFlight(live);
  if (!ws.length) return null;
  return el("section", { class: "panel live", "aria-labelledby": "live-h", id: "live-panel" },
    el("h2", { id: "live-h" }, "Live output of the step in flight"),
    el("p", { class: "muted" }, "Provisional: written while the step runs; its commit makes the history the truth, a failed attempt's output is dropped."),
    ws.map((w) => el("div", { class: "live-writer" },
      el("h3", {}, `Step ${w.step + 1}, node ${w.node ?? "?"}`, w.branch !== null && w.branch !== undefined ? `, branch ${w.branch}` : "",
        w.attempt ? `, attempt ${w.attempt}` : ""),
      el("pre", { class: "live-text" }, w.text))));
}
