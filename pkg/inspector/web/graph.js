// The graph of a run, drawn in SVG from its manifest: nodes in layers from the entrypoint
// (top to bottom), static edges (next_node), the route decisions and events the run took,
// terminal and route nodes, the path highlighted with visit counts, the current node marked.
// Nothing relies on colour alone: every mark is also written.
const SVG_NS = "http://www.w3.org/2000/svg";
const NODE_W = 200, NODE_H = 80, GAP_X = 36, GAP_Y = 70, PAD = 24;

function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null) node.setAttribute(k, String(v));
  for (const c of children.flat()) if (c !== null && c !== undefined) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

// graphModel merges the manifest (may be null: the run's version is not registered here) with
// the run's path and status.
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
    if (!e) { e = { from, to, kind, label: label || "", count: 0 }; edgeKey.set(key, e); edges.push(e); }
    return e;
  };
  nodes.forEach((n) => { if (n.next) addEdge(n.name, n.next, "next", ""); });
  path.transitions.forEach((t) => {
    const e = addEdge(t.from, t.to, t.via === "next" ? "route" : t.via, t.label);
    if (e) { e.count += t.count; if (t.label && !e.label) e.label = t.label; if (e.kind === "next" && t.via !== "next") e.kind = t.via; }
  });
  const cs = (run && run.custom_status) || {};
  const finished = run && FINISHED.has(run.runtime_status);
  return {
    nodes, edges, entry, byName,
    current: cs.current_node || null,
    waitingFor: finished ? null : (cs.waiting_for_event || null),
    resumeNode: cs.resume_node || null,
    finished, status: run ? run.runtime_status : "",
    events: manifest ? (manifest.event_handler_names || []) : [],
  };
}

// layers assigns each node a layer: breadth-first from the entrypoint over the known edges;
// nodes still unplaced are reached through route nodes (whose targets are dynamic): a route
// node may lead to any node without a static predecessor.
function layers(model) {
  const depth = new Map();
  const out = new Map(model.nodes.map((n) => [n.name, []]));
  model.edges.forEach((e) => out.get(e.from).push(e.to));
  const hasStaticIn = new Set(model.edges.filter((e) => e.kind === "next").map((e) => e.to));
  const walk = (starts) => {
    const queue = [...starts];
    while (queue.length) {
      const name = queue.shift();
      const d = depth.get(name);
      const targets = [...out.get(name)];
      if (model.byName.get(name).route) model.nodes.forEach((n) => { if (!depth.has(n.name) && !hasStaticIn.has(n.name) && n.name !== name) targets.push(n.name); });
      targets.forEach((t) => { if (!depth.has(t)) { depth.set(t, d + 1); queue.push(t); } });
    }
  };
  if (model.entry && model.byName.has(model.entry)) { depth.set(model.entry, 0); walk([model.entry]); }
  for (const n of model.nodes) {
    if (depth.has(n.name)) continue;
    const max = Math.max(-1, ...depth.values());
    depth.set(n.name, max + 1);
    walk([n.name]);
  }
  const rows = [];
  model.nodes.forEach((n) => { const d = depth.get(n.name); (rows[d] = rows[d] || []).push(n); });
  return rows.filter(Boolean);
}

function nodeMarks(n, model) {
  const marks = [];
  if (n.name === model.entry) marks.push("▶ start");
  if (n.route) marks.push("◇ route");
  if (n.terminal) marks.push("■ end");
  if (!n.known) marks.push("? not in manifest");
  return marks;
}

function nodeVisits(n) { return n.visits > 0 ? `visited ×${n.visits}` : "not visited"; }

// nodeNow says what the run does at n now: "" unless n is the current node.
function nodeNow(n, model) {
  if (n.name !== model.current) return "";
  if (model.waitingFor) return `‖ waiting: ${model.waitingFor}`;
  if (model.finished) return `${STATUS_MARK[model.status] || ""} ${model.status.toLowerCase()} here`;
  return model.status === "Running" ? "● current" : "";
}

function nodeState(n, model) { return [nodeVisits(n), nodeNow(n, model)].filter(Boolean).join(", "); }

// renderGraph returns a figure: the SVG and, for readers that cannot see it, the same facts
// as text.
function renderGraph(model) {
  const rows = layers(model);
  const widest = Math.max(1, ...rows.map((r) => r.length));
  const width = PAD * 2 + widest * NODE_W + (widest - 1) * GAP_X + 120;
  const height = PAD * 2 + rows.length * NODE_H + (rows.length - 1) * GAP_Y;
  const pos = new Map();
  rows.forEach((row, i) => {
    const rowW = row.length * NODE_W + (row.length - 1) * GAP_X;
    const x0 = (width - 120 - rowW) / 2;
    row.forEach((n, j) => pos.set(n.name, { x: x0 + j * (NODE_W + GAP_X), y: PAD + i * (NODE_H + GAP_Y), layer: i }));
  });
  const title = `Graph ${model.nodes.length} nodes`;
  const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, width, class: "graph", role: "img", "aria-labelledby": "graph-title graph-desc", focusable: "false" },
    svg("title", { id: "graph-title" }, title),
    svg("desc", { id: "graph-desc" }, describeGraph(model)),
    svg("defs", {},
      svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" }, svg("path", { d: "M0,0 L10,5 L0,10 z", class: "arrow" })),
      svg("marker", { id: "arrow-taken", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto-start-reverse" }, svg("path", { d: "M0,0 L10,5 L0,10 z", class: "arrow-taken" }))));
  model.edges.forEach((e) => root.append(drawEdge(e, pos.get(e.from), pos.get(e.to), width)));
  model.nodes.forEach((n) => root.append(drawNode(n, pos.get(n.name), model)));
  return root;
}

function drawEdge(e, a, b, width) {
  const taken = e.count > 0;
  let d, lx, ly;
  if (e.from === e.to) {
    const x = a.x + NODE_W, y = a.y + NODE_H / 2;
    d = `M${x},${y - 12} C${x + 60},${y - 40} ${x + 60},${y + 40} ${x},${y + 12}`;
    lx = x + 50; ly = y;
  } else if (b.layer > a.layer) {
    const x1 = a.x + NODE_W / 2, y1 = a.y + NODE_H, x2 = b.x + NODE_W / 2, y2 = b.y;
    const my = (y1 + y2) / 2;
    d = `M${x1},${y1} C${x1},${my} ${x2},${my} ${x2},${y2}`;
    lx = (x1 + x2) / 2 + 6; ly = my;
  } else {
    const side = width - 100;
    const x1 = a.x + NODE_W, y1 = a.y + NODE_H / 2, x2 = b.x + NODE_W, y2 = b.y + NODE_H / 2;
    d = `M${x1},${y1} C${side},${y1} ${side},${y2} ${x2},${y2}`;
    lx = side - 10; ly = (y1 + y2) / 2;
  }
  const parts = [];
  if (e.kind === "event") parts.push(`⚡ ${e.label}`);
  else if (e.kind === "timeout") parts.push("⏱ timeout");
  else if (e.kind === "route") parts.push("◇");
  if (taken) parts.push(`×${e.count}`);
  const g = svg("g", { class: `edge edge-${e.kind}${taken ? " taken" : ""}` },
    svg("path", { d, "marker-end": taken ? "url(#arrow-taken)" : "url(#arrow)" }));
  if (parts.length) g.append(svg("text", { x: lx, y: ly, class: "edge-label" }, parts.join(" ")));
  return g;
}

function drawNode(n, p, model) {
  const current = n.name === model.current;
  const cls = ["node", n.visits > 0 ? "visited" : "unvisited", current ? "current" : "", model.waitingFor && current ? "waiting" : "", n.terminal ? "terminal" : "", n.route ? "route" : ""].filter(Boolean).join(" ");
  const g = svg("g", { class: cls, "data-node": n.name, transform: `translate(${p.x},${p.y})` });
  g.append(svg("rect", { width: NODE_W, height: NODE_H, rx: n.route ? 4 : 12 }));
  if (n.terminal) g.append(svg("rect", { x: 4, y: 4, width: NODE_W - 8, height: NODE_H - 8, rx: 9, class: "inner" }));
  const name = n.name.length > 24 ? n.name.slice(0, 23) + "…" : n.name;
  g.append(svg("text", { x: NODE_W / 2, y: 20, class: "node-name" }, svg("title", {}, n.name), name));
  g.append(svg("text", { x: NODE_W / 2, y: 38, class: "node-marks" }, nodeMarks(n, model).join("  ")));
  g.append(svg("text", { x: NODE_W / 2, y: 55, class: "node-visits" }, nodeVisits(n)));
  if (nodeNow(n, model)) g.append(svg("text", { x: NODE_W / 2, y: 71, class: "node-state" }, nodeNow(n, model)));
  return g;
}

function describeGraph(model) {
  return model.nodes.map((n) => `${n.name}: ${[...nodeMarks(n, model), nodeState(n, model)].join(", ")}` +
    (n.next ? `, next ${n.next}` : "")).join(". ");
}

// graphText is the graph as a list, next to the drawing.
function graphText(model) {
  const out = (name) => model.edges.filter((e) => e.from === name);
  return el("ul", { class: "graph-text" }, model.nodes.map((n) => el("li", { "data-node": n.name },
    el("strong", {}, n.name), " — ", [...nodeMarks(n, model), nodeState(n, model)].join(", "),
    out(n.name).length ? ` → ${out(n.name).map((e) => `${e.to}${e.kind === "event" ? ` (on ${e.label})` : ""}${e.count ? ` ×${e.count}` : ""}`).join(", ")}` : "")));
}
