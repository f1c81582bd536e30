// Measures the run inspector's drawing of a graph on a page (graph.test.mjs): every edge's path
// against the boxes of its source and target, every box, every label, in screen pixels; and
// checks what every drawing must hold.
import assert from "node:assert/strict";

// geometry measures the drawing on the page, in screen pixels: each edge's path (its ends,
// points along it, its markers) against the boxes of its source and target, every box, every
// label.
export const geometry = (page) => page.evaluate(() => {
  const rect = (n) => { const r = n.getBoundingClientRect(); return { left: r.left, top: r.top, right: r.right, bottom: r.bottom }; };
  const svgRoot = document.querySelector(".graph-wrap svg.graph");
  const boxOf = (name, child) => {
    const n = child ? svgRoot.querySelector(`a[data-child="${CSS.escape(name)}"] rect.box`) : svgRoot.querySelector(`g.node[data-node="${CSS.escape(name)}"] > rect.box`);
    return n ? rect(n) : null;
  };
  const boxes = [...svgRoot.querySelectorAll("g.node")].map((g) => ({ name: g.dataset.node || `child ${g.dataset.child}`, ...rect(g.querySelector("rect.box")) }));
  const edges = [...svgRoot.querySelectorAll("g.edge")].map((g) => {
    const path = g.querySelector("path");
    const m = path.getScreenCTM();
    const at = (len) => { const p = path.getPointAtLength(len); return { x: m.a * p.x + m.c * p.y + m.e, y: m.b * p.x + m.d * p.y + m.f }; };
    const total = path.getTotalLength();
    const samples = [];
    for (let l = 0; l <= total; l += 3) samples.push({ at: l, ...at(l) });
    const label = g.querySelector(".edge-label");
    const labelBox = g.querySelector(".edge-label-box");
    return {
      from: g.dataset.from, to: g.dataset.to, toChild: g.dataset.toChild === "true",
      start: at(0), end: at(total), total, samples,
      markerEnd: path.getAttribute("marker-end"), markerStart: path.getAttribute("marker-start"),
      source: boxOf(g.dataset.from, false), target: boxOf(g.dataset.to, g.dataset.toChild === "true"),
      label: label ? { text: label.textContent, ...rect(label) } : null,
      labelBox: labelBox ? rect(labelBox) : null,
    };
  });
  const entry = document.querySelector(".graph-wrap g.node .node-marks") && [...svgRoot.querySelectorAll("g.node")].find((g) => (g.querySelector(".node-marks") || {}).textContent?.includes("▶ start"));
  return { svg: rect(svgRoot), boxes, edges, entry: entry ? entry.dataset.node : null };
});

// distance from point p to box b (0 inside it), and how far inside it p is (0 outside).
const outside = (p, b) => Math.hypot(Math.max(b.left - p.x, 0, p.x - b.right), Math.max(b.top - p.y, 0, p.y - b.bottom));
const inside = (p, b) => Math.max(0, Math.min(p.x - b.left, b.right - p.x, p.y - b.top, b.bottom - p.y));
const overlap = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 0.5 && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 0.5;
const TOL = 2.5; // px: an edge's end touches its box within this (anti-aliasing, rounding)

// checkDrawing asserts what every drawing must hold, and returns its geometry.
export async function checkDrawing(page, what) {
  const g = await geometry(page);
  assert.ok(g.edges.length > 0, `${what}: no edge drawn`);
  for (const e of g.edges) {
    const name = `${what}: edge ${e.from} → ${e.to}`;
    assert.ok(e.source && e.target, `${name}: its boxes are drawn`);
    assert.ok(e.markerEnd && !e.markerStart, `${name}: the arrowhead is at the target end only (${e.markerStart} / ${e.markerEnd})`);
    assert.ok(outside(e.end, e.target) <= TOL && inside(e.end, e.target) <= TOL, `${name}: it ends on the target's box: ${JSON.stringify(e.end)} vs ${JSON.stringify(e.target)}`);
    assert.ok(outside(e.start, e.source) <= TOL && inside(e.start, e.source) <= TOL, `${name}: it starts on the source's box: ${JSON.stringify(e.start)} vs ${JSON.stringify(e.source)}`);
    if (e.from !== e.to) {
      assert.ok(outside(e.end, e.source) > TOL, `${name}: its arrowhead is not at the source`);
    }
    // Between its ends, the line crosses no box (not even its own nodes'): an unvisited node
    // is never on a path line.
    for (const s of e.samples) {
      if (s.at < 6 || s.at > e.total - 6) continue;
      for (const b of g.boxes) assert.ok(inside(s, b) <= 1, `${name}: crosses the box of ${b.name} at ${JSON.stringify(s)}`);
    }
    if (e.label) {
      assert.ok(e.labelBox, `${name}: its label has a box`);
      assert.ok(e.label.left >= e.labelBox.left - 1 && e.label.right <= e.labelBox.right + 1, `${name}: label '${e.label.text}' wider than its box`);
      assert.ok(e.label.left >= g.svg.left - 1 && e.label.right <= g.svg.right + 1 && e.label.top >= g.svg.top - 1 && e.label.bottom <= g.svg.bottom + 1,
        `${name}: label '${e.label.text}' cut by the drawing's edge`);
      for (const b of g.boxes) assert.ok(!overlap(e.labelBox, b), `${name}: label '${e.label.text}' covers the box of ${b.name}`);
    }
  }
  for (let i = 0; i < g.boxes.length; i++) {
    for (let j = i + 1; j < g.boxes.length; j++) {
      assert.ok(!overlap(g.boxes[i], g.boxes[j]), `${what}: the boxes of ${g.boxes[i].name} and ${g.boxes[j].name} overlap`);
    }
  }
  const labels = g.edges.filter((e) => e.labelBox);
  for (let i = 0; i < labels.length; i++) {
    for (let j = i + 1; j < labels.length; j++) {
      assert.ok(!overlap(labels[i].labelBox, labels[j].labelBox), `${what}: labels '${labels[i].label.text}' and '${labels[j].label.text}' overlap`);
    }
  }
  // The flow starts at the top: no box above the entrypoint's.
  const entry = g.boxes.find((b) => b.name === g.entry);
  assert.ok(entry, `${what}: the entrypoint is marked`);
  for (const b of g.boxes) assert.ok(b.top >= entry.top - 0.5, `${what}: ${b.name} is above the entrypoint`);
  return g;
}

export const box = (g, name) => g.boxes.find((b) => b.name === name);
export const edge = (g, from, to) => g.edges.find((e) => e.from === from && e.to === to);
