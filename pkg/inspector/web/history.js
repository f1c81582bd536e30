// A run's history as the timeline shows it: each event's kind, a one-line summary, the state
// after it and what changed.
const EVENT_KIND = {
  run_started: "start", node_completed: "step", route_resolved: "decision", wait_started: "wait",
  wait_timed_out: "wait", event_received: "event", event_applied: "event",
  node_retry_scheduled: "retry", run_completed: "end", run_failed: "failure", run_terminated: "end",
  branches_started: "fan-out", branch_completed: "branch", branch_failed: "failure", branches_joined: "join",
  custom: "emitted", node_failed: "failure", sleep_started: "wait", event_refused: "event",
  event_not_applied: "event", child_started: "child", child_finished: "child", child_completed: "child",
  run_rewound: "rewind",
};

// isBranch reports whether an event is one branch's completion or failure: the timeline draws
// the branches of a fan-out side by side.
function isBranch(e) { return e.type === "branch_completed" || e.type === "branch_failed"; }

function eventSummary(e) {
  const d = e.data || {};
  switch (e.type) {
    case "run_started": return `run started at ${e.node || "?"}`;
    case "node_completed": return `node ${e.node} completed`;
    case "route_resolved":
      if (d.action === "next") return `route from ${e.node}: next ${d.next_node}`;
      if (d.action === "wait_for_event") return `route from ${e.node}: wait for '${d.event_name}', then ${d.resume_node}` + (d.note ? ` (${d.note})` : "");
      if (d.action === "complete") return `route from ${e.node}: complete` + (d.note ? ` (${d.note})` : "");
      if (d.action === "sleep") return `route from ${e.node}: sleep, then ${d.next_node}`;
      if (d.action === "child") return `route from ${e.node}: child run of ${(d.child || {}).graph}, then ${d.resume_node}`;
      if (d.action === "parallel") return `route from ${e.node}: ${(d.branches || []).length} branches, then ${d.join_node}`;
      return `route from ${e.node}: ${d.action}`;
    case "wait_started": return `waiting for '${d.event_name}' at ${e.node}` + (d.deadline ? ` until ${fmtTime(d.deadline)}` : "");
    case "wait_timed_out": return `wait timed out at ${e.node}` + (d.next_node ? `, next ${d.next_node}` : "");
    case "event_received": return `event '${e.name}' received`;
    case "event_applied": return `event '${d.event_name || e.name}' applied, resuming at ${e.node}`;
    case "node_retry_scheduled": return `node ${e.node} failed, retry scheduled` + (d.error ? `: ${d.error}` : "");
    case "run_completed": return `run completed at ${d.final_node || e.node}`;
    case "run_failed": return `run failed` + (d.error ? `: ${d.error}` : (typeof d === "string" ? `: ${d}` : ""));
    case "run_terminated": return `run terminated` + (d.reason ? `: ${d.reason}` : "");
    case "branches_started": return `${d.count} branches started, joining at ${d.join_node}`;
    case "branch_completed": return `branch ${d.index} (${e.node}${d.item === null || d.item === undefined ? "" : ` ${JSON.stringify(d.item)}`}) completed`;
    case "branch_failed": return `branch ${d.index} (${e.node}) failed` + (d.error ? `: ${d.error}` : "");
    case "branches_joined": return `${d.count} branches joined at ${d.join_node || e.node}`;
    case "node_failed": return `node ${e.node} failed, continuing at ${d.failure_node}` + (d.error ? `: ${d.error}` : "");
    case "sleep_started": return `sleeping until ${fmtTime(d.until)}, then ${d.next_node}`;
    case "event_refused": return `event '${d.event_name || e.name}' refused` + (d.reason || d.error ? `: ${d.reason || d.error}` : "");
    case "event_not_applied": return `event '${d.event_name || e.name}' never applied`;
    case "child_started": return `child run ${d.child_instance_id} of ${d.graph_name} started, then ${d.resume_node}`;
    case "child_finished": return `child run ${d.child_instance_id} finished (${d.runtime_status})`;
    case "child_completed": return `child run ${d.child_instance_id} completed` + (d.into ? ` into ${d.into}` : "");
    case "run_rewound": return "run rewound: it continues from the step that failed" + (d.reason ? ` (${d.reason})` : "");
    case "custom": return `node ${e.node} emitted '${e.name}': ${JSON.stringify(d.data).slice(0, 80)}`;
  }
  return e.type;
}

// stateOf returns the state after an event given prev, the state before it, or undefined
// when the event records none. A graph with reducers records what each step changed
// ("update", docs/durable-graphs.md "What history stores"): each changed field's
// {"set": v}, {"removed": true}, or for a list {"keep": k, "add": [...]}, its first k
// elements then add. This is the engine's fold (engine.FoldState) for the browser.
function stateOf(e, prev) {
  const d = e.data;
  if (!d || typeof d !== "object") return undefined;
  if (e.type === "run_started") return d.initial_state;
  if (d.state && typeof d.state === "object") return d.state;
  if (d.update && typeof d.update === "object" && prev && typeof prev === "object") return applyUpdate(prev, d.update);
  return undefined;
}

// applyUpdate returns prev with a row's update applied (stateOf), prev unchanged.
function applyUpdate(prev, update) {
  const out = { ...prev };
  for (const [k, op] of Object.entries(update)) {
    if (!op || typeof op !== "object") continue;
    if ("set" in op) out[k] = op.set;
    else if (op.removed) delete out[k];
    else if ("keep" in op && Array.isArray(op.add)) out[k] = (Array.isArray(prev[k]) ? prev[k].slice(0, op.keep) : []).concat(op.add);
  }
  return out;
}

// withStates annotates each event with the state after it (the last state carried so far) and
// the state before it.
function withStates(events) {
  let state;
  return events.map((e) => {
    const before = state;
    const s = stateOf(e, state);
    if (s !== undefined) state = s;
    return { event: e, before, after: state, kind: EVENT_KIND[e.type] || "other" };
  });
}

// stateChanges lists the top-level fields whose JSON differs between two states.
function stateChanges(before, after) {
  const a = before && typeof before === "object" ? before : {};
  const b = after && typeof after === "object" ? after : {};
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
  return keys.filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]))
    .map((k) => ({ field: k, before: k in a ? a[k] : undefined, after: k in b ? b[k] : undefined }));
}

// pathOf returns what the history says of the graph: the nodes executed and how often, the
// transitions between them, each with how it was taken (next, an event, a timeout, a sleep,
// after a child run, a failure route, a fan-out or its join) and how often; the edges the run decided, taken
// or not yet (a wait's event and deadline, a sleep); the wait or sleep still open; the child
// runs it started; the nodes that fanned out (with their last fan-out's branch count) and the
// node of each branch of the last fan-out.
function pathOf(events) {
  const visits = new Map();
  const transitions = new Map();
  const decided = [];
  const children = [];
  const fanOuts = new Map();
  const branchNodes = new Map();
  let openWait = null, openSleep = null;
  let last = null;
  let via = "next";
  let label = "";
  let fanFrom = null; // the node that fanned out, while its branches are listed
  let joinFrom = []; // the branch nodes, until the join node's visit
  const take = (from, to, how, text) => {
    const key = `${from}\u0000${to}`;
    const t = transitions.get(key) || { from, to, count: 0, via: how, label: text };
    t.count++;
    transitions.set(key, t);
  };
  for (const e of events) {
    const d = (e.data && typeof e.data === "object") ? e.data : {};
    if (e.type === "route_resolved" && d.action === "parallel") {
      branchNodes.clear();
      (d.branches || []).forEach((b, i) => branchNodes.set(i, b.node));
    } else if (e.type === "branches_started") {
      fanFrom = last;
      joinFrom = [];
      if (e.node) fanOuts.set(e.node, d.count || 0);
    } else if (isBranch(e)) {
      visits.set(e.node, (visits.get(e.node) || 0) + 1);
      if (typeof d.index === "number") branchNodes.set(d.index, e.node);
      if (fanFrom !== null) take(fanFrom, e.node, "parallel", "parallel");
      if (!joinFrom.includes(e.node)) joinFrom.push(e.node);
    } else if (e.type === "branches_joined") {
      fanFrom = null;
      last = null;
    } else if (e.type === "node_completed") {
      visits.set(e.node, (visits.get(e.node) || 0) + 1);
      if (last !== null) take(last, e.node, via, label);
      joinFrom.forEach((b) => take(b, e.node, "parallel", "join"));
      joinFrom = [];
      last = e.node;
      via = "next";
      label = "";
      openSleep = null;
    } else if (e.type === "node_failed") {
      // The node failed for good and the run goes on at its failure route's node.
      visits.set(e.node, (visits.get(e.node) || 0) + 1);
      if (last !== null && last !== e.node) take(last, e.node, via, label);
      if (d.failure_node) decided.push({ from: e.node, to: d.failure_node, kind: "failure", label: "on failure" });
      last = e.node;
      via = "failure";
      label = "on failure";
    } else if (e.type === "wait_started") {
      if (d.resume_node) decided.push({ from: e.node, to: d.resume_node, kind: "event", label: d.event_name || "" });
      if (d.timeout_node) decided.push({ from: e.node, to: d.timeout_node, kind: "timeout", label: "timeout" });
      openWait = { from: e.node, to: d.resume_node, timeoutNode: d.timeout_node || null, deadline: d.deadline || null };
    } else if (e.type === "event_applied") {
      via = "event";
      label = d.event_name || e.name || "";
      openWait = null;
    } else if (e.type === "wait_timed_out") {
      via = "timeout";
      label = "timeout";
      openWait = null;
    } else if (e.type === "sleep_started") {
      if (d.next_node) decided.push({ from: e.node, to: d.next_node, kind: "sleep", label: "sleep" });
      openSleep = { from: e.node, to: d.next_node };
      via = "sleep";
      label = "sleep";
    } else if (e.type === "child_started") {
      if (d.child_instance_id && !children.some((c) => c.id === d.child_instance_id)) {
        children.push({ id: d.child_instance_id, graph: d.graph_name || "", from: e.node, status: "" });
      }
      via = "child";
      label = "after child run";
    } else if (e.type === "child_finished" || e.type === "child_completed") {
      const c = children.find((x) => x.id === d.child_instance_id);
      if (c) c.status = d.runtime_status || (e.type === "child_completed" ? "Completed" : c.status);
    }
  }
  return { visits, transitions: [...transitions.values()], decided, children, fanOuts, branchNodes, openWait, openSleep };
}

// renderTimeline draws the history as a list of buttons; choosing one shows the state after
// it and what changed. Arrow keys move between steps. The branches of a fan-out share one
// list item, side by side.
function renderTimeline(events, selectedSeq, onSelect) {
  const rows = withStates(events);
  const list = el("ol", { class: "timeline", "aria-label": "History, oldest first" });
  let lane = null; // the list item of the branches being drawn
  rows.forEach((row) => {
    const e = row.event;
    const selected = e.sequence === selectedSeq;
    const btn = el("button", {
      type: "button", class: `step kind-${row.kind}`, "aria-pressed": selected ? "true" : "false",
      "data-seq": e.sequence, onclick: () => onSelect(e.sequence),
      onkeydown: (ev) => {
        const move = { ArrowDown: 1, ArrowUp: -1 }[ev.key];
        if (!move) return;
        ev.preventDefault();
        const all = [...list.querySelectorAll("button.step")];
        const next = all[all.indexOf(btn) + move];
        if (next) next.focus();
      },
    },
    el("span", { class: "seq" }, `#${e.sequence}`), " ",
    el("span", { class: "kind" }, `[${row.kind}]`), " ",
    el("span", { class: "what" }, eventSummary(e)), " ",
    el("time", { datetime: e.timestamp }, fmtTime(e.timestamp).slice(11)));
    if (!isBranch(e)) {
      lane = null;
      list.append(el("li", {}, btn));
      return;
    }
    if (!lane) {
      lane = el("li", { class: "branches", role: "group", "aria-label": "Parallel branches" });
      list.append(lane);
    }
    lane.append(btn);
  });
  const chosen = rows.find((r) => r.event.sequence === selectedSeq) || rows[rows.length - 1];
  return { list, detail: chosen ? renderStep(chosen) : el("p", {}, "No history yet.") };
}

function renderStep(row) {
  const e = row.event;
  const changes = stateChanges(row.before, row.after);
  const show = (v) => (v === undefined ? "(absent)" : JSON.stringify(v));
  return el("section", { class: "step-detail", "aria-live": "polite", "aria-label": `Step ${e.sequence}` },
    el("h3", {}, `Step #${e.sequence}: ${e.type}`),
    el("p", {}, eventSummary(e), " — ", fmtTime(e.timestamp)),
    el("h4", {}, "What changed"),
    changes.length === 0 ? el("p", { class: "muted" }, "No state change at this step.")
      : el("table", { class: "changes" },
        el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Field"), el("th", { scope: "col" }, "Before"), el("th", { scope: "col" }, "After"))),
        el("tbody", {}, changes.map((c) => el("tr", {},
          el("th", { scope: "row" }, c.field), el("td", {}, el("del", {}, show(c.before))), el("td", {}, el("ins", {}, show(c.after))))))),
    el("h4", {}, "State after this step"),
    el("pre", { class: "json", tabindex: "0" }, row.after === undefined ? "(no state yet)" : pretty(row.after)),
    el("details", {}, el("summary", {}, "Event data"), el("pre", { class: "json" }, pretty(e.data))));
}
