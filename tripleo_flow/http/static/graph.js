// A workflow's task graph drawn as SVG: tasks in rows by their distance from the
// start (top to bottom), edges as curves, each task coloured by its state (updated live).
const NS = "http://www.w3.org/2000/svg";
const W = 190, H = 46, GAP_X = 24, GAP_Y = 34, PAD = 16;

function el(name, attrs = {}, parent = null) {
  const node = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (parent) parent.appendChild(node);
  return node;
}

// Row of each task: longest path from a task nothing leads to (cycles cut).
function levels(graph) {
  const next = new Map(graph.tasks.map((t) => [t.name, []]));
  const incoming = new Map(graph.tasks.map((t) => [t.name, 0]));
  for (const e of graph.edges) {
    if (!next.has(e.from) || !next.has(e.to)) continue;
    next.get(e.from).push(e.to);
    incoming.set(e.to, incoming.get(e.to) + 1);
  }
  const column = new Map();  // task -> level
  const roots = graph.tasks.filter((t) => incoming.get(t.name) === 0).map((t) => t.name);
  const visit = (name, depth, path) => {
    if (path.has(name) || (column.get(name) ?? -1) >= depth) return;
    column.set(name, depth);
    path.add(name);
    for (const n of next.get(name)) visit(n, depth + 1, path);
    path.delete(name);
  };
  for (const r of (roots.length ? roots : [graph.tasks[0]?.name]).filter(Boolean)) visit(r, 0, new Set());
  for (const t of graph.tasks) if (!column.has(t.name)) column.set(t.name, 0);
  return column;
}

// Draw graph ({tasks, edges}) into container; returns update(name, state, title).
export function drawGraph(container, graph) {
  const level = levels(graph);
  const across = new Map();
  const place = new Map();
  for (const t of graph.tasks) {
    const l = level.get(t.name), i = across.get(l) || 0;
    across.set(l, i + 1);
    place.set(t.name, { x: PAD + i * (W + GAP_X), y: PAD + l * (H + GAP_Y) });
  }
  const width = PAD * 2 + Math.max(1, ...across.values()) * (W + GAP_X) - GAP_X;
  const height = PAD * 2 + (Math.max(0, ...level.values()) + 1) * (H + GAP_Y) - GAP_Y;
  container.replaceChildren();
  const svg = el("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "img",
                          "aria-label": `Task graph of ${graph.name}` }, container);
  const defs = el("defs", {}, svg);
  const marker = el("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5,
                                markerWidth: 7, markerHeight: 7, orient: "auto" }, defs);
  el("path", { d: "M0,0 L10,5 L0,10 z", class: "arrow" }, marker);
  for (const e of graph.edges) {
    const a = place.get(e.from), b = place.get(e.to);
    if (!a || !b) continue;
    const x1 = a.x + W / 2, y1 = a.y + H, x2 = b.x + W / 2, y2 = b.y;
    const bend = Math.max(20, Math.abs(y2 - y1) / 2) * (y2 >= y1 ? 1 : -1);
    const path = el("path", { d: `M${x1},${y1} C${x1},${y1 + bend} ${x2},${y2 - bend} ${x2},${y2}`,
                              class: `edge ${e.label.split(":")[0]}`, "marker-end": "url(#arrow)" }, svg);
    el("title", {}, path).textContent = `${e.from} → ${e.to} (${e.label})`;
  }
  const nodes = new Map();
  for (const t of graph.tasks) {
    const p = place.get(t.name);
    const g = el("g", { class: "node", transform: `translate(${p.x},${p.y})`, "data-task": t.name }, svg);
    el("rect", { width: W, height: H }, g);
    const title = el("title", {}, g);
    el("text", { x: 8, y: 18 }, g).textContent = t.name.length > 26 ? t.name.slice(0, 25) + "…" : t.name;
    const sub = el("text", { x: 8, y: 36, class: "muted" }, g);
    const what = t.action || (t.workflow ? `workflow ${t.workflow}` : "");
    sub.textContent = what.length > 28 ? what.slice(0, 27) + "…" : what;
    title.textContent = `${t.name}: ${what} (not started)`;
    nodes.set(t.name, { g, title, sub, what });
  }
  return function update(name, state, detail = "") {
    const node = nodes.get(name);
    if (!node) return;
    node.g.setAttribute("class", `node ${state}`);
    node.g.setAttribute("data-state", state);
    node.title.textContent = `${name}: ${node.what} (${state})${detail ? " " + detail : ""}`;
    node.sub.textContent = `${state}${detail ? " · " + detail : ""}`.slice(0, 28);
  };
}
