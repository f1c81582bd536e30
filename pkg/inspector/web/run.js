// A run: status, timings and failure; its graph with the path taken; its history; actions
// (send an event, cancel, rewind a failed run, purge) through the runs API. Draws the run from
// its status first, then follows the run's feed while it is unfinished.
const manifestCache = new Map();

async function manifestOf(graph, hash) {
  const key = `${graph}@${hash}`;
  if (!manifestCache.has(key)) {
    try { manifestCache.set(key, await runsApi.manifest(graph, hash)); } catch (e) {
      if (!(e instanceof ApiError) || e.status !== 404) throw e;
      manifestCache.set(key, null); // a version this process has not registered: draw from history
    }
  }
  return manifestCache.get(key);
}

// FEED_WAIT is how long one feed request waits for the run to move (seconds); the runs API
// answers as soon as it moves.
const FEED_WAIT = 20;

// FEED_FOLLOW_AFTER is how long the page waits, once it has drawn the run (its status, then its
// history read with the feed up to now), before it opens its first long poll (ms). The poll
// reads from where the drawing stopped, so nothing is missed; the pause is what lets a
// headless browser's screenshot with a virtual time budget below it (docs/inspector.md) be
// taken of the drawn run, since an open request holds virtual time still.
const FEED_FOLLOW_AFTER = 1000;

// showRun draws the run from its status, then follows it through its feed: the history from
// the start (drawn again once read), then, after FEED_FOLLOW_AFTER, one request at a time that
// answers once the run moves (or after FEED_WAIT seconds); the status is read again only when
// the feed brought something new.
async function showRun(id, view) {
  const main = document.getElementById("main");
  const state = { selected: null, formEvent: null, payload: null };
  main.replaceChildren(el("h1", {}, "Run ", el("code", {}, id)), el("p", { class: "muted" }, "Loading…"));
  let run = null;
  const events = [];
  let live = newLive(); // the live chunks of the step in flight (live.js)
  let after = 0;
  let feedRun = ""; // the run `after` is a position in: a new start of the id is another run
  let painted = "";
  const paint = async (force) => {
    if (!view.live()) return;
    const sig = JSON.stringify([run, events.length, inFlight(live).map((w) => [w.key, w.records])]);
    if (!force && sig === painted) return; // unchanged: keep the page (and the caret) as it is
    painted = sig;
    const cs = run.custom_status || {};
    const graph = cs.graph_name || (run.input && run.input.graph_name);
    const hash = cs.graph_hash || (run.input && run.input.graph_hash);
    const m = graph ? await manifestOf(graph, hash) : null;
    if (!view.live()) return;
    showError(null);
    const active = document.activeElement;
    const focused = active && active.id;
    const focusedSeq = active && active.dataset && active.dataset.seq;
    const keep = (sel) => { const n = main.querySelector(sel); return n ? n.value : null; };
    state.payload = keep("#event-payload") ?? state.payload;
    state.formEvent = keep("#event-name") ?? state.formEvent;
    main.replaceChildren(...renderRun(id, run, events, m, state, view, live));
    const again = focused ? document.getElementById(focused) : (focusedSeq ? main.querySelector(`button.step[data-seq="${focusedSeq}"]`) : null);
    if (again) again.focus();
  };
  // read takes one feed answer; it returns whether the run moved. A finished run's feed has
  // ended once an answer holds no items (the status may say finished before the last items
  // are read).
  let ended = false;
  const read = async (wait) => {
    let f;
    try {
      f = await runsApi.feed(id, after, feedRun, wait, view.signal, live.next);
    } catch (e) {
      if (!(e instanceof ApiError) || e.status !== 409 || !feedRun) throw e;
      // The id holds another run now (a new start replaced this one, or it was purged and
      // started again): follow that one from its start.
      events.length = 0;
      after = 0;
      feedRun = "";
      live = newLive();
      return { moved: true, status: null };
    }
    events.push(...f.items.map(feedEvent));
    const liveMoved = (f.live || []).length > 0;
    addLive(live, f.live, f.live_next);
    after = f.next_after;
    feedRun = f.run;
    ended = f.items.length === 0 && FINISHED.has(f.runtime_status);
    return { moved: f.items.length > 0, live: liveMoved, status: f.runtime_status };
  };
  state.repaint = () => runsApi.getRun(id).then((r) => { run = r; return paint(true); }).catch(showError);
  const follow = async () => {
    try {
      if (!run) {
        run = await runsApi.getRun(id);
        await paint(); // the status before anything else: the run shows at once
        while ((await read(0)).moved && view.live()) { /* catch up, a page at a time */ }
        await paint();
        if (!ended) { view.timer(follow, FEED_FOLLOW_AFTER); return; }
      }
      while (view.live() && !ended) {
        const f = await read(FEED_WAIT);
        if (!view.live()) return;
        if (f.moved || f.status !== run.runtime_status) {
          run = await runsApi.getRun(id);
          await paint();
        } else if (f.live) {
          await paint(); // only the live output moved: no status read
        }
      }
    } catch (e) {
      if (!view.live()) return;
      showError(e);
      if (!run) {
        main.replaceChildren(el("h1", {}, "Run ", el("code", {}, id)), el("p", {}, el("a", { href: "#/" }, "Back to the runs")));
        return;
      }
      view.timer(follow, 3000); // a failed request: try again, from where the feed was
    }
  };
  await follow();
}

function renderRun(id, run, events, m, state, view, live) {
  const cs = run.custom_status || {};
  const manifest = m ? m.manifest : null;
  const model = graphModel(manifest, events, run);
  const first = events[0], last = events[events.length - 1];
  const started = first ? new Date(first.timestamp) : null;
  const ended = last ? new Date(last.timestamp) : null;
  const finished = FINISHED.has(run.runtime_status);
  const facts = [
    ["Status", statusBadge(run.runtime_status, cs.waiting_for_event)],
    ["Graph", `${cs.graph_name || run.input.graph_name} ${cs.graph_version || ""}`.trim()],
    ["Graph hash", el("code", {}, cs.graph_hash || run.input.graph_hash || "")],
    ["Current node", cs.current_node || "—"],
    ["Started", first ? fmtTime(first.timestamp) : "not yet"],
    [finished ? "Finished" : "Last event", last ? fmtTime(last.timestamp) : "—"],
    ["Duration", finished && started ? fmtDuration(ended - started) : "not finished"],
    ["Steps", `${events.filter((e) => e.type === "node_completed" || e.type === "branch_completed").length} node visits, ${events.length} history events`],
  ];
  if (cs.waiting_for_version) facts.push(["Waiting for version", cs.waiting_for_version]);
  // A run continued as new: the count of its histories before this one (0 for the first).
  if (run.generation) facts.push(["Generation", el("span", { id: "generation" }, String(run.generation))]);
  // What a Running run waits for (the status's sleeping_until, node_retry, branches_retrying).
  if (run.sleeping_until && !finished) facts.push(["Sleeping until", el("span", { id: "sleeping-until" }, fmtTime(run.sleeping_until))]);
  if (run.node_retry && !finished) {
    facts.push(["Retry", el("span", { id: "node-retry" }, `attempt ${run.node_retry.attempt} of ${cs.current_node || "the node"} at ${fmtTime(run.node_retry.retry_at)}`)]);
  }
  if (run.branches_retrying && run.branches_retrying.length && !finished) {
    facts.push(["Branches retrying", el("span", { id: "branches-retrying" },
      run.branches_retrying.map((b, i) => [i ? "; " : "", `branch ${b.index}: attempt ${b.attempt} at ${fmtTime(b.retry_at)}`]))]);
  }
  // Child runs (durable.StartChild): links to the parent, the child waited for, every child.
  if (cs.waiting_for_child && !finished) facts.push(["Waiting for child run", runLink(cs.waiting_for_child)]);
  if (run.parent_instance_id) facts.push(["Parent run", runLink(run.parent_instance_id)]);
  if (run.child_instance_ids && run.child_instance_ids.length) {
    const graphOf = new Map(model.children.map((c) => [c.id, c]));
    facts.push(["Child runs", el("ul", { id: "child-runs", class: "child-runs" }, run.child_instance_ids.map((c) => {
      const known = graphOf.get(c);
      return el("li", {}, runLink(c), known ? ` ${known.graph}${known.status ? `, ${known.status}` : ""}` : "");
    }))]);
  }
  const out = [
    el("p", {}, el("a", { href: "#/" }, "← All runs")),
    el("h1", {}, "Run ", el("code", { id: "run-id" }, id)),
    el("dl", { class: "facts" }, facts.map(([k, v]) => el("div", {}, el("dt", {}, k), el("dd", {}, v)))),
  ];
  if (run.runtime_status === "Failed") out.push(el("section", { class: "failure", "aria-label": "Failure" }, el("h2", {}, "✗ Failure"), el("pre", { id: "failure-message" }, typeof run.output === "string" ? run.output : pretty(run.output))));
  if (run.runtime_status === "Terminated") out.push(el("section", { class: "failure", "aria-label": "Termination" }, el("h2", {}, "■ Terminated"), el("p", {}, `Reason: ${typeof run.output === "string" ? run.output : pretty(run.output)}`)));
  const livePanel = !finished && live ? renderLive(live) : null;
  if (livePanel) out.push(livePanel);
  out.push(renderActions(id, run, m, state));
  out.push(el("section", { class: "panel graph-panel", "aria-labelledby": "graph-h" },
    el("h2", { id: "graph-h" }, "Graph and path"),
    m ? null : el("p", { class: "muted" }, "This version is not registered on this process: the graph is drawn from the history alone."),
    el("p", { class: "legend" }, "Legend: ▶ start, ◇ route node (its targets are decided at run time), ⇉ fan-out (its branches side by side), ■ end (terminal), thick border and ×N: visited N times, dashed: not visited; ‖ waiting for an event, ◷ its deadline, ☾ sleeping, ↻ a retry pending, ↳ a child run (its box opens the child's page); edges: ⚡ on an event, ◷ on a timeout, ☾ after a sleep, ✗ on a failure route, amber: pending now."),
    el("div", { class: "graph-wrap", tabindex: "0", "aria-label": "Graph drawing (scrolls)" }, renderGraph(model)),
    el("details", { open: true }, el("summary", {}, "The graph as text"), graphText(model)),
    model.events.length ? el("p", {}, "Events the graph takes: ", model.events.join(", ")) : null));
  const tl = renderTimeline(events, state.selected, (seq) => { state.selected = seq; state.repaint(); });
  out.push(el("section", { class: "panel history", "aria-labelledby": "history-h" },
    el("h2", { id: "history-h" }, "History"),
    el("div", { class: "history-grid" }, tl.list, tl.detail)));
  if (run.runtime_status === "Completed" && run.output) {
    out.push(el("section", { class: "panel" }, el("h2", {}, "Output"), el("pre", { class: "json", id: "run-output" }, pretty(run.output))));
  }
  return out;
}

// runLink links to the run view of run id.
function runLink(id) {
  return el("a", { href: `#/run/${enc(id)}`, class: "run-link", "data-run": id }, el("code", {}, id));
}

function renderActions(id, run, m, state) {
  const finished = FINISHED.has(run.runtime_status);
  const cs = run.custom_status || {};
  const events = m ? m.events : [];
  const section = el("section", { class: "panel actions", "aria-labelledby": "actions-h" }, el("h2", { id: "actions-h" }, "Actions"));
  if (!finished) {
    const waiting = cs.waiting_for_event || "";
    const names = [...new Set([waiting, ...events.map((e) => e.event_name)].filter(Boolean))];
    const chosen = state.formEvent && names.includes(state.formEvent) ? state.formEvent : (waiting || names[0] || "");
    const nameInput = el("input", { id: "event-name", name: "event", list: "event-names", value: chosen, required: true });
    const payload = el("textarea", { id: "event-payload", name: "payload", rows: 4, cols: 40, spellcheck: "false" }, state.payload ?? "{}");
    const info = events.find((e) => e.event_name === chosen);
    const schema = info && info.typed
      ? el("details", { open: true, class: "schema" }, el("summary", {}, `Payload schema of '${chosen}' (typed handler)`), el("pre", { class: "json", id: "payload-schema" }, pretty(info.payload_schema)))
      : el("p", { class: "muted", id: "payload-schema" }, chosen && info ? `'${chosen}' has an untyped handler: any JSON value.` : "");
    nameInput.addEventListener("change", () => { state.formEvent = nameInput.value; state.repaint(); });
    section.append(el("form", { id: "event-form", onsubmit: async (ev) => {
      ev.preventDefault();
      try {
        await runsApi.sendEvent(id, nameInput.value, payload.value);
        state.payload = null;
        showError(null);
        notice(`Event '${nameInput.value}' accepted for run ${id}.`);
        state.repaint();
      } catch (e) { showError(e); }
    } },
    el("h3", {}, waiting ? `Send an event (the run waits for '${waiting}')` : "Send an event"),
    el("label", {}, "Event name ", nameInput), el("datalist", { id: "event-names" }, names.map((n) => el("option", { value: n }))),
    el("label", { class: "block" }, "Payload (JSON; empty means null) ", payload), schema,
    el("button", { type: "submit" }, "Send event")));
    const reason = el("input", { id: "cancel-reason", name: "reason", placeholder: "cancel requested by client" });
    section.append(el("form", { id: "cancel-form", onsubmit: async (ev) => {
      ev.preventDefault();
      if (!confirm(`Cancel run ${id}?`)) return;
      try {
        const res = await runsApi.cancel(id, reason.value);
        showError(null);
        notice(`Cancel accepted: ${res.reason}`);
        state.repaint();
      } catch (e) { showError(e); }
    } }, el("h3", {}, "Cancel the run"), el("label", {}, "Reason ", reason), " ", el("button", { type: "submit" }, "Cancel run")));
  } else {
    if (run.runtime_status === "Failed") section.append(rewindForm(id));
    section.append(el("form", { id: "purge-form", onsubmit: async (ev) => {
      ev.preventDefault();
      if (!confirm(`Purge run ${id} and its history? This cannot be undone.`)) return;
      try {
        await runsApi.purge(id);
        showError(null);
        notice(`Run ${id} purged.`);
        location.hash = "#/";
      } catch (e) { showError(e); }
    } }, el("p", {}, "The run is finished: no event or cancel applies."), el("button", { type: "submit", class: "danger" }, "Purge run")));
  }
  return section;
}

// rewindForm rewinds a Failed run (POST runs/{id}/rewind): it continues from the step that
// failed, its history kept. Accepted, the page follows the run again; refused (409 for a run
// no longer Failed, 404 for one gone), it shows the API's error.
function rewindForm(id) {
  const reason = el("input", { id: "rewind-reason", name: "reason", placeholder: "model endpoint back" });
  return el("form", { id: "rewind-form", onsubmit: async (ev) => {
    ev.preventDefault();
    const button = ev.target.querySelector("button");
    button.disabled = true;
    try {
      const res = await runsApi.rewind(id, reason.value);
      showError(null);
      notice(`Rewind accepted: run ${id} is ${res && res.runtime_status ? res.runtime_status : "running again"}, continuing from the step that failed.`);
      route(); // follow the run again, from its status
    } catch (e) {
      button.disabled = false;
      showError(e);
    }
  } },
  el("h3", {}, "Rewind the run"),
  el("p", {}, "Continue the failed run from the step that failed, on the version it is pinned to; its history is kept and the rewind recorded in it."),
  el("label", {}, "Reason ", reason), " ", el("button", { type: "submit" }, "Rewind run"));
}
