// The graph of a run, drawn in SVG from its manifest and its history, laid out by dagre
// (dagre.min.js, bundled): the flow runs top to bottom from the entrypoint, the branches of a
// fan-out side by side, every edge from its source to its target (the arrowhead at the
// target), its label in space of its own. The edges are the static ones (next_node) and those
// the run's history shows: the routes it took, the waits it decided (an event, a deadline),
// its sleeps, its fan-outs and joins; its child runs are boxes linking to their own page.
// Marks say where the run is: the current node, what it waits for, until when it sleeps, the
// retries it has pending. Nothing relies on colour alone: every mark is also written.
const SVG_NS = "http://www.w3.org/2000/svg";
const NODE_MIN_W = 180, LINE_H = 17, NODE_PAD_Y = 10, NODE_PAD_X = 14;
const LABEL_PAD_X = 8, LABEL_H = 18, SELF_LOOP_W = 40;
const FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';

function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null) node.setAttribute(k, String(v));
  for (const c of children.flat()) if (c !== null && c !== undefined) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

// textWidth measures text in the given CSS font (a canvas, so before anything is drawn).
let measureCtx = null;
function textWidth(text, font) {
  if (!measureCtx) measureCtx = document.createElement("canvas").getContext("2d");
  if (!measureCtx) return text.length * 8; // no canvas: a generous guess
  measureCtx.font = font;
  return measureCtx.measureText(text).width;
}

// fmtShort is a time for a mark in the drawing: the time of day (UTC) for today, else the date
// and the minute.
function fmtShort(iso) {
  const full = fmtTime(iso);
  if (!full || full === iso) return iso || "";
  const today = new Date().toISOString().slice(0, 10);
  return full.startsWith(today) ? full.slice(11, 19) + "Z" : full.slice(0, 16) + "Z";
}

// graphModel merges the manifest (may be null: the run's version is not registered here) with
// the run's history and status.
function graphModel(manifest, events, run) {
  const path = pathOf(events);
  const nodes = [];
  const byName = new Map();
  const add = (name, def) => {
    if (!name || byName.has(name)) return;
    const n = { name, terminal: !!(def && def.terminal), route: !!(def && def.route_handler_name), next: def ? def.next_node : null, known: !!def, visits: path.visits.get(name) || 0 };
    byName.set(name, n);
    nodes.push(n);
  };
  const defs = manifest ? Object.values(manifest.nodes || {}) : [];
  defs.forEach((d) => add(d.name, d));
  events.forEach((e) => add(e.node, null));
  const entry = manifest ? manifest.entrypoint : (events[0] && events[0].node);
  const edges = [];
  const edgeKey = new Map();
  const addEdge = (from, to, kind, label) => {
    if (!byName.has(from) || !byName.has(to)) return null;
    const key = `${from}\u0000${to}`;
    let e = edgeKey.get(key);
    if (!e) { e = { from, to, kind, label: label || "", count: 0, pending: "" }; edgeKey.set(key, e); edges.push(e); }
    return e;
  };
  nodes.forEach((n) => { if (n.next) addEdge(n.name, n.next, "next", ""); });
  // The decisions the history shows, taken or not yet: a wait's event and deadline, a sleep.
  path.decided.forEach((d) => {
    const e = addEdge(d.from, d.to, d.kind, d.label);
    if (e && e.kind === "next") { e.kind = d.kind; e.label = d.label; }
  });
  path.transitions.forEach((t) => {
    const e = addEdge(t.from, t.to, t.via === "next" ? "route" : t.via, t.label);
    if (e) { e.count += t.count; if (t.label && !e.label) e.label = t.label; if (e.kind === "next" && t.via !== "next") e.kind = t.via; }
  });
  const cs = (run && run.custom_status) || {};
  const finished = !!(run && FINISHED.has(run.runtime_status));
  const model = {
    nodes, edges, entry, byName, children: path.children, fanOuts: path.fanOuts,
    current: cs.current_node || null,
    waitingFor: finished ? null : (cs.waiting_for_event || null),
    waitingForChild: finished ? null : (cs.waiting_for_child || null),
    resumeNode: cs.resume_node || null,
    finished, status: run ? run.runtime_status : "",
    sleepingUntil: !finished && run ? run.sleeping_until || null : null,
    nodeRetry: !finished && run ? run.node_retry || null : null,
    branchRetries: new Map(),
    deadline: null,
    events: manifest ? (manifest.event_handler_names || []) : [],
  };
  // What is pending now: the wait's deadline, the sleep's end, the branches backing off.
  if (!finished && path.openWait && model.waitingFor) {
    model.deadline = path.openWait.deadline || null;
    const w = edgeKey.get(`${path.openWait.from}\u0000${path.openWait.to}`);
    if (w) w.pending = "‖ waiting";
    const t = path.openWait.timeoutNode && edgeKey.get(`${path.openWait.from}\u0000${path.openWait.timeoutNode}`);
    if (t && model.deadline) t.pending = `at ${fmtShort(model.deadline)}`;
  }
  if (model.sleepingUntil && path.openSleep) {
    const s = edgeKey.get(`${path.openSleep.from}\u0000${path.openSleep.to}`);
    if (s) s.pending = `until ${fmtShort(model.sleepingUntil)}`;
  }
  if (!finished && run && Array.isArray(run.branches_retrying)) {
    run.branches_retrying.forEach((b) => {
      const node = path.branchNodes.get(b.index);
      if (!node || !byName.has(node)) return;
      if (!model.branchRetries.has(node)) model.branchRetries.set(node, []);
      model.branchRetries.get(node).push(b);
    });
  }
  return model;
}

function nodeMarks(n, model) {
  const marks = [];
  if (n.name === model.entry) marks.push("▶ start");
  if (n.route) marks.push("◇ route");
  if (model.fanOuts.has(n.name)) marks.push(`⇉ fan-out ×${model.fanOuts.get(n.name)}`);
  if (n.terminal) marks.push("■ end");
  if (!n.known) marks.push("? not in manifest");
  return marks;
}

function nodeVisits(n) { return n.visits > 0 ? `visited ×${n.visits}` : "not visited"; }

// nodeNow says what the run does at n now, one line a fact: [] unless n is the current node
// or a branch node with branches backing off.
function nodeNow(n, model) {
  const out = [];
  if (n.name === model.current) {
    if (model.waitingFor) {
      out.push(`‖ waiting: ${model.waitingFor}`);
      if (model.deadline) out.push(`◷ until ${fmtShort(model.deadline)}`);
    } else if (model.finished) {
      out.push(`${STATUS_MARK[model.status] || ""} ${model.status.toLowerCase()} here`);
    } else if (model.sleepingUntil) {
      out.push(`☾ sleeping until ${fmtShort(model.sleepingUntil)}`);
    } else if (model.waitingForChild) {
      out.push("↳ waiting for its child run");
    } else if (model.status === "Running") {
      out.push("● current");
    }
    if (model.nodeRetry) out.push(`↻ attempt ${model.nodeRetry.attempt} at ${fmtShort(model.nodeRetry.retry_at)}`);
  }
  (model.branchRetries.get(n.name) || []).forEach((b) => out.push(`↻ branch ${b.index}: attempt ${b.attempt} at ${fmtShort(b.retry_at)}`));
  return out;
}

function nodeState(n, model) { return [nodeVisits(n), ...nodeNow(n, model)].join(", "); }

// edgeText is an edge's label: how it is taken, how often, what is pending on it.
function edgeText(e) {
  const parts = [];
  if (e.kind === "event") parts.push(`⚡ ${e.label}`);
  else if (e.kind === "timeout") parts.push("◷ timeout");
  else if (e.kind === "sleep") parts.push("☾ sleep");
  else if (e.kind === "child") parts.push("↳ after child run");
  else if (e.kind === "failure") parts.push("✗ on failure");
  else if (e.kind === "route") parts.push("◇");
  if (e.count > 0) parts.push(`×${e.count}`);
  if (e.pending) parts.push(e.pending);
  return parts.join(" ");
}

// nodeLines are the lines written in a node's box, each with its class and font.
function nodeLines(n, model) {
  const name = n.name.length > 28 ? n.name.slice(0, 27) + "…" : n.name;
  const lines = [{ text: name, cls: "node-name", font: `700 14px ${FONT}`, title: n.name }];
  const marks = nodeMarks(n, model);
  if (marks.length) lines.push({ text: marks.join("  "), cls: "node-marks", font: `12px ${FONT}` });
  lines.push({ text: nodeVisits(n), cls: "node-visits", font: `700 13px ${FONT}` });
  nodeNow(n, model).forEach((t) => lines.push({ text: t, cls: "node-state", font: `700 13px ${FONT}` }));
  return lines;
}

// childLines are the lines of a child run's box; the one its parent waits for says so.
function childLines(c, model) {
  const awaited = model.waitingForChild === c.id;
  const short = c.id.length > 30 ? c.id.slice(0, 14) + "…" + c.id.slice(-14) : c.id;
  return [
    { text: `↳ child run: ${c.graph || "?"}`, cls: "node-name", font: `700 14px ${FONT}` },
    { text: short, cls: "node-marks", font: `12px ${FONT}`, title: c.id },
    { text: c.status ? `${STATUS_MARK[c.status] || ""} ${c.status}` : "started", cls: "node-visits", font: `700 13px ${FONT}` },
    awaited ? { text: "‖ its parent waits for it", cls: "node-state", font: `700 13px ${FONT}` } : null,
  ].filter(Boolean);
}

function boxSize(lines) {
  const w = Math.max(NODE_MIN_W, ...lines.map((l) => Math.ceil(textWidth(l.text, l.font)) + 2 * NODE_PAD_X));
  return { width: w, height: lines.length * LINE_H + 2 * NODE_PAD_Y };
}

// layoutGraph places the model's nodes, child runs and edges with dagre. A node no edge
// leads to (a route node's targets are only known once taken) is placed, for the layout only,
// after the nearest node declared before it that is not terminal, so that an unvisited part
// of the graph sits where its flow would be rather than in the first row.
function layoutGraph(model) {
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: "TB", nodesep: 36, ranksep: 48, edgesep: 28, marginx: 16, marginy: 16 });
  g.setDefaultEdgeLabel(() => ({}));
  const boxes = new Map();
  model.nodes.forEach((n) => {
    const lines = nodeLines(n, model);
    const size = boxSize(lines);
    boxes.set(n.name, { kind: "node", node: n, lines, ...size });
    g.setNode(n.name, { ...size });
  });
  model.children.forEach((c) => {
    const lines = childLines(c, model);
    const size = boxSize(lines);
    const key = `child\u0000${c.id}`;
    boxes.set(key, { kind: "child", child: c, lines, ...size });
    g.setNode(key, { ...size });
  });
  const drawn = [];
  model.edges.forEach((e, i) => {
    const text = edgeText(e);
    const font = `${e.pending ? "700 " : ""}12px ${FONT}`; // as style.css draws it
    const label = text ? { width: Math.ceil(textWidth(text, font)) + 2 * LABEL_PAD_X, height: LABEL_H, labelpos: "c" } : { width: 0, height: 0 };
    if (e.from === e.to) label.width += SELF_LOOP_W; // the loop's room, beside its label
    g.setEdge(e.from, e.to, { ...label, minlen: 1, weight: e.count > 0 ? 2 : 1 }, `e${i}`);
    drawn.push({ edge: e, name: `e${i}`, from: e.from, to: e.to, text });
  });
  model.children.forEach((c, i) => {
    if (!model.byName.has(c.from)) return;
    const text = "starts";
    g.setEdge(c.from, `child\u0000${c.id}`, { width: Math.ceil(textWidth(text, `12px ${FONT}`)) + 2 * LABEL_PAD_X, height: LABEL_H, labelpos: "c", minlen: 1 }, `c${i}`);
    drawn.push({ edge: { kind: "child-run", count: 1, from: c.from, to: c.id }, name: `c${i}`, from: c.from, to: `child\u0000${c.id}`, toChild: c.id, text });
  });
  const reached = new Set(model.edges.map((e) => e.to));
  model.nodes.forEach((n, i) => {
    if (n.name === model.entry || reached.has(n.name)) return;
    for (let j = i - 1; j >= 0; j--) {
      const before = model.nodes[j];
      if (before.terminal) continue;
      g.setEdge(before.name, n.name, { width: 0, height: 0, minlen: 1, weight: 0 }, `layout${i}`);
      break;
    }
  });
  dagre.layout(g);
  const placed = new Map();
  boxes.forEach((b, key) => {
    const p = g.node(key);
    placed.set(key, { ...b, x: p.x - b.width / 2, y: p.y - b.height / 2 });
  });
  const edges = drawn.map((d) => {
    const l = g.edge({ v: d.from, w: d.to, name: d.name });
    let points = l.points, lx = l.x, ly = l.y, lw = l.width;
    if (d.from === d.to) {
      // A self edge loops out of the node's right side and back, through the room dagre kept
      // beside the node for it (SELF_LOOP_W and its label), its label right of the loop.
      const b = placed.get(d.from);
      const right = b.x + b.width, cy = b.y + b.height / 2;
      lw = l.width - SELF_LOOP_W;
      lx = right + SELF_LOOP_W + lw / 2;
      ly = cy;
      const far = right + SELF_LOOP_W - 8;
      points = [{ x: right, y: cy - b.height / 4 }, { x: far, y: cy - b.height / 4 }, { x: far, y: cy + b.height / 4 }, { x: right, y: cy + b.height / 4 }];
    }
    return { ...d, points, lx, ly, lw, lh: l.height };
  });
  const gg = g.graph();
  return { boxes: placed, edges, width: Math.ceil(gg.width), height: Math.ceil(gg.height) };
}

// edgePath is a smooth path through dagre's points: straight from the first point to the
// middle of the first segment, a quadratic curve around each inner point, straight into the
// last point (where the arrowhead is).
function edgePath(points) {
  const p = points.map((q) => [Math.round(q.x * 10) / 10, Math.round(q.y * 10) / 10]);
  if (p.length < 3) return `M${p[0][0]},${p[0][1]} L${p[p.length - 1][0]},${p[p.length - 1][1]}`;
  const mid = (a, b) => [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2];
  let d = `M${p[0][0]},${p[0][1]}`;
  for (let i = 1; i < p.length - 1; i++) {
    const m1 = mid(p[i - 1], p[i]), m2 = mid(p[i], p[i + 1]);
    d += ` L${m1[0]},${m1[1]} Q${p[i][0]},${p[i][1]} ${m2[0]},${m2[1]}`;
  }
  const last = p[p.length - 1];
  return d + ` L${last[0]},${last[1]}`;
}

// renderGraph returns the SVG drawing, with the same facts as text in its desc for readers
// that cannot see it.
function renderGraph(model) {
  let layout;
  try {
    layout = layoutGraph(model);
  } catch (e) {
    // A defect of the layout must not hide the rest of the run: the text form follows.
    return el("p", { class: "error", role: "note" }, `The graph could not be drawn (${e.message}); the graph as text below says the same.`);
  }
  const { width, height } = layout;
  const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, width, class: "graph", role: "group", "aria-labelledby": "graph-title graph-desc" },
    svg("title", { id: "graph-title" }, `Graph ${model.nodes.length} nodes`),
    svg("desc", { id: "graph-desc" }, describeGraph(model)),
    svg("defs", {},
      svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerUnits: "userSpaceOnUse", markerWidth: 11, markerHeight: 11, orient: "auto" }, svg("path", { d: "M0,0 L10,5 L0,10 z", class: "arrow" })),
      svg("marker", { id: "arrow-taken", viewBox: "0 0 10 10", refX: 10, refY: 5, markerUnits: "userSpaceOnUse", markerWidth: 14, markerHeight: 14, orient: "auto" }, svg("path", { d: "M0,0 L10,5 L0,10 z", class: "arrow-taken" })),
      svg("marker", { id: "arrow-pending", viewBox: "0 0 10 10", refX: 10, refY: 5, markerUnits: "userSpaceOnUse", markerWidth: 13, markerHeight: 13, orient: "auto" }, svg("path", { d: "M0,0 L10,5 L0,10 z", class: "arrow-pending" }))));
  const edgeLayer = svg("g", { class: "edges" });
  layout.edges.forEach((d) => {
    const e = d.edge;
    const taken = e.count > 0;
    const g = svg("g", { class: `edge edge-${e.kind}${taken ? " taken" : ""}${e.pending ? " pending" : ""}`, "data-from": d.from, "data-to": d.toChild || d.to, "data-to-child": d.toChild ? "true" : null },
      svg("path", { d: edgePath(d.points), "marker-end": e.pending ? "url(#arrow-pending)" : taken ? "url(#arrow-taken)" : "url(#arrow)" }));
    edgeLayer.append(g);
    if (d.text) {
      // The label's own box (dagre kept it free of nodes and other labels), under its text.
      g.append(svg("rect", { class: "edge-label-box", x: d.lx - d.lw / 2, y: d.ly - d.lh / 2, width: d.lw, height: d.lh, rx: 3 }));
      g.append(svg("text", { x: d.lx, y: d.ly + 4, class: "edge-label" }, d.text));
    }
  });
  root.append(edgeLayer);
  layout.boxes.forEach((b) => root.append(b.kind === "child" ? drawChild(b) : drawNode(b, model)));
  return root;
}

function drawLines(g, b) {
  b.lines.forEach((l, i) => {
    g.append(svg("text", { x: b.width / 2, y: NODE_PAD_Y + LINE_H * i + 13, class: l.cls }, l.title ? svg("title", {}, l.title) : null, l.text));
  });
}

function drawNode(b, model) {
  const n = b.node;
  const current = n.name === model.current;
  const retrying = (current && model.nodeRetry) || model.branchRetries.has(n.name);
  const cls = ["node", n.visits > 0 ? "visited" : "unvisited", current ? "current" : "", model.waitingFor && current ? "waiting" : "",
    current && model.sleepingUntil ? "sleeping" : "", retrying ? "retrying" : "", n.terminal ? "terminal" : "", n.route ? "route" : ""].filter(Boolean).join(" ");
  const g = svg("g", { class: cls, "data-node": n.name, transform: `translate(${b.x},${b.y})` });
  g.append(svg("rect", { class: "box", width: b.width, height: b.height, rx: n.route ? 4 : 12 }));
  if (n.terminal) g.append(svg("rect", { x: 4, y: 4, width: b.width - 8, height: b.height - 8, rx: 9, class: "inner" }));
  drawLines(g, b);
  return g;
}

// drawChild draws a child run as a link to its page.
function drawChild(b) {
  const c = b.child;
  const a = svg("a", { href: `#/run/${enc(c.id)}`, class: "child-link", "data-child": c.id, "aria-label": `Child run ${c.id} of ${c.graph || "?"}${c.status ? `, ${c.status}` : ""}` });
  const g = svg("g", { class: `node child-run${c.status ? ` child-${c.status.toLowerCase()}` : ""}`, "data-child": c.id, transform: `translate(${b.x},${b.y})` });
  g.append(svg("rect", { class: "box", width: b.width, height: b.height, rx: 12 }));
  drawLines(g, b);
  a.append(g);
  return a;
}

function describeGraph(model) {
  return model.nodes.map((n) => `${n.name}: ${[...nodeMarks(n, model), nodeState(n, model)].join(", ")}` +
    (n.next ? `, next ${n.next}` : "")).join(". ") +
    (model.children.length ? `. Child runs: ${model.children.map((c) => `${c.id} (${c.graph}) started by ${c.from}`).join(", ")}` : "");
}

// graphText is the graph as a list, next to the drawing.
function graphText(model) {
  const out = (name) => model.edges.filter((e) => e.from === name);
  const kids = (name) => model.children.filter((c) => c.from === name);
  return el("ul", { class: "graph-text" }, model.nodes.map((n) => el("li", { "data-node": n.name },
    el("strong", {}, n.name), " — ", [...nodeMarks(n, model), nodeState(n, model)].join(", "),
    out(n.name).length ? ` → ${out(n.name).map((e) => `${e.to}${e.kind === "event" ? ` (on ${e.label})` : ""}${e.kind === "timeout" ? " (on timeout)" : ""}${e.kind === "sleep" ? " (after a sleep)" : ""}${e.kind === "failure" ? " (on failure)" : ""}${e.count ? ` ×${e.count}` : ""}`).join(", ")}` : "",
    kids(n.name).map((c) => [", started child run ", runLink(c.id), ` (${c.graph}${c.status ? `, ${c.status}` : ""})`]))));
}
