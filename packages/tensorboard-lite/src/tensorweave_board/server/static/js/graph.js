// The dataflow graph grouped by name scope. Scopes start collapsed; clicking one fetches its children and
// lays them out inside it (a layered layout per scope, so the work grows with what is open, not with the
// graph). Ops and scopes are coloured by device; wheel zooms, dragging the background pans.

const SVG = "http://www.w3.org/2000/svg";
const PALETTE = ["#80cbc4", "#ffcc80", "#b39ddb", "#a5d6a7", "#ef9a9a", "#90caf9", "#fff59d", "#bcaaa4"];
const GAP_X = 22, GAP_Y = 34, PAD = 14, HEADER = 24;

function el(name, attrs, parent) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs || {})) { e.setAttribute(k, v); }
  if (parent) { parent.appendChild(e); }
  return e;
}

function layers(nodes, edges) {
  // Longest-path layers after dropping the edges that close cycles (found by depth-first search).
  const ids = nodes.map((n) => n.id), out = new Map(ids.map((id) => [id, []]));
  for (const e of edges) { if (out.has(e.source) && out.has(e.target)) { out.get(e.source).push(e.target); } }
  const state = new Map(), back = new Set();
  for (const root of ids) {
    if (state.get(root)) { continue; }
    const stack = [[root, 0]];
    state.set(root, 1);
    while (stack.length) {
      const top = stack[stack.length - 1], next = out.get(top[0])[top[1]++];
      if (next === undefined) { state.set(top[0], 2); stack.pop(); continue; }
      if (state.get(next) === 1) { back.add(`${top[0]}\u0000${next}`); continue; }
      if (!state.get(next)) { state.set(next, 1); stack.push([next, 0]); }
    }
  }
  const indeg = new Map(ids.map((id) => [id, 0])), dag = new Map(ids.map((id) => [id, []]));
  for (const [s, ts] of out) {
    for (const t of ts) { if (!back.has(`${s}\u0000${t}`)) { dag.get(s).push(t); indeg.set(t, indeg.get(t) + 1); } }
  }
  const layer = new Map(ids.map((id) => [id, 0])), queue = ids.filter((id) => indeg.get(id) === 0);
  while (queue.length) {
    const s = queue.shift();
    for (const t of dag.get(s)) {
      layer.set(t, Math.max(layer.get(t), layer.get(s) + 1));
      indeg.set(t, indeg.get(t) - 1);
      if (indeg.get(t) === 0) { queue.push(t); }
    }
  }
  return { layer, dag };
}

export class GraphView {
  constructor(svg, info, legend) {
    this.svg = svg; this.info = info; this.legend = legend;
    this.run = null; this.scopes = new Map(); this.expanded = new Set(); this.devices = [];
    this.view = { x: 0, y: 0, k: 1 };
    this.root = el("g", {}, svg);
    const defs = el("defs", {}, svg);
    const marker = el("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto" }, defs);
    el("path", { d: "M0,0 L10,5 L0,10 z", fill: "#90a4ae" }, marker);
    let pan = null;
    svg.addEventListener("mousedown", (e) => { if (!e.target.closest(".node")) { pan = [e.clientX, e.clientY]; } });
    window.addEventListener("mouseup", () => { pan = null; });
    svg.addEventListener("mousemove", (e) => {
      if (!pan) { return; }
      this.view.x += e.clientX - pan[0]; this.view.y += e.clientY - pan[1]; pan = [e.clientX, e.clientY];
      this.applyView();
    });
    svg.addEventListener("wheel", (e) => {
      e.preventDefault();
      const r = svg.getBoundingClientRect(), f = e.deltaY > 0 ? 0.85 : 1 / 0.85;
      const px = e.clientX - r.left, py = e.clientY - r.top;
      this.view.x = px - (px - this.view.x) * f; this.view.y = py - (py - this.view.y) * f; this.view.k *= f;
      this.applyView();
    }, { passive: false });
  }

  async show(run) {
    if (run === this.run && this.scopes.size) { return; }
    this.run = run; this.scopes.clear(); this.expanded.clear(); this.info.hidden = true;
    await this.fetchScope("");
    this.render(true);
  }

  async fetchScope(path) {
    if (this.scopes.has(path)) { return this.scopes.get(path); }
    const r = await fetch(`/api/graph?run=${encodeURIComponent(this.run)}&scope=${encodeURIComponent(path)}`);
    if (!r.ok) { throw new Error((await r.json()).error); }
    const data = await r.json();
    this.scopes.set(path, data);
    if (path === "") { this.devices = data.devices; this.drawLegend(); }
    return data;
  }

  color(device) {
    const i = this.devices.indexOf(device);
    return device === "" || i < 0 ? "#e0e0e0" : PALETTE[i % PALETTE.length];
  }

  drawLegend() {
    this.legend.replaceChildren(...this.devices.map((d) => {
      const s = document.createElement("span");
      s.innerHTML = `<i class="swatch" style="background:${this.color(d)}"></i> `;
      s.append(d || "no device recorded");
      return s;
    }));
  }

  layout(path) {
    const data = this.scopes.get(path);
    const nodes = data.nodes.map((n) => {
      const box = { ...n };
      if (n.kind === "scope" && this.expanded.has(n.id) && this.scopes.has(n.id)) {
        box.inner = this.layout(n.id);
        box.w = Math.max(box.inner.w + 2 * PAD, n.label.length * 7 + 40); box.h = box.inner.h + HEADER + PAD;
      } else if (n.kind === "scope") {
        box.w = Math.max(96, n.label.length * 7 + 44); box.h = 34;
      } else {
        box.w = Math.max(64, n.label.length * 6.6 + 22); box.h = 26;
      }
      return box;
    });
    const byId = new Map(nodes.map((n) => [n.id, n]));
    const { layer, dag } = layers(nodes, data.edges);
    const rows = [];
    for (const n of nodes) { (rows[layer.get(n.id)] ||= []).push(n); }
    const preds = new Map(nodes.map((n) => [n.id, []]));
    for (const [s, ts] of dag) { for (const t of ts) { preds.get(t).push(s); } }
    const pos = new Map();
    const order = () => rows.forEach((row) => row.forEach((n, i) => pos.set(n.id, i)));
    order();
    for (let sweep = 0; sweep < 4; sweep++) {
      for (const row of rows.slice(1)) {
        const bary = (n) => { const p = preds.get(n.id); return p.length ? p.reduce((a, id) => a + pos.get(id), 0) / p.length : pos.get(n.id); };
        row.sort((a, b) => bary(a) - bary(b));
        row.forEach((n, i) => pos.set(n.id, i));
      }
    }
    const widths = rows.map((row) => row.reduce((a, n) => a + n.w, 0) + GAP_X * (row.length - 1));
    const width = Math.max(0, ...widths);
    let y = 0;
    rows.forEach((row, r) => {
      let x = (width - widths[r]) / 2;
      const height = Math.max(...row.map((n) => n.h));
      for (const n of row) { n.x = x; n.y = y + (height - n.h) / 2; x += n.w + GAP_X; }
      y += height + GAP_Y;
    });
    const edges = data.edges.filter((e) => byId.has(e.source) && byId.has(e.target))
      .map((e) => ({ ...e, a: byId.get(e.source), b: byId.get(e.target) }));
    return { nodes, edges, w: width, h: Math.max(0, y - GAP_Y) };
  }

  render(fit) {
    const root = this.scopes.get("");
    this.root.replaceChildren();
    if (!root.nodes.length) { el("text", { x: 20, y: 30 }, this.root).textContent = "the graph has no ops"; return; }
    this.laid = this.layout("");
    this.draw(this.laid, this.root);
    if (fit) { this.fit(); } else { this.applyView(); }
  }

  draw(lay, parent) {
    const edgeLayer = el("g", {}, parent);
    for (const e of lay.edges) {
      const x1 = e.a.x + e.a.w / 2, y1 = e.a.y + e.a.h, x2 = e.b.x + e.b.w / 2, y2 = e.b.y;
      const up = y2 <= y1;
      const d = up ? `M${x1},${y1} C${x1 + 60},${y1 + 40} ${x2 + 60},${y2 - 40} ${x2},${y2}`
        : `M${x1},${y1} C${x1},${(y1 + y2) / 2} ${x2},${(y1 + y2) / 2} ${x2},${y2}`;
      const p = el("path", { d, class: `edge${e.control ? " control" : ""}`, "marker-end": "url(#arrow)" }, edgeLayer);
      p.setAttribute("stroke-width", Math.min(4, 1 + Math.log2(e.count)));
    }
    for (const n of lay.nodes) {
      const expanded = !!n.inner;
      const g = el("g", { class: `node ${n.kind}${expanded ? " expanded" : ""}`, "data-id": n.id, "data-op": n.op || "",
        transform: `translate(${n.x},${n.y})` }, parent);
      el("rect", { width: n.w, height: n.h, fill: this.color(n.device) }, g);
      const t = el("text", { x: expanded ? 8 : n.w / 2, y: expanded ? 16 : n.h / 2 + 4, "text-anchor": expanded ? "start" : "middle" }, g);
      t.textContent = n.kind === "scope" ? `${expanded ? "▾" : "▸"} ${n.label} (${n.count})` : n.label;
      if (expanded) {
        const inner = el("g", { transform: `translate(${PAD},${HEADER})` }, g);
        this.draw(n.inner, inner);
      }
      g.addEventListener("click", (ev) => { ev.stopPropagation(); this.clicked(n); });
    }
  }

  async clicked(n) {
    if (n.kind === "scope") {
      if (this.expanded.has(n.id)) { this.expanded.delete(n.id); } else { await this.fetchScope(n.id); this.expanded.add(n.id); }
      this.render(false);
      return;
    }
    this.info.hidden = false;
    this.info.replaceChildren();
    const add = (label, text) => { const p = document.createElement("div"); p.innerHTML = `<b>${label}</b> `; const c = document.createElement("code"); c.textContent = text; p.append(c); this.info.append(p); };
    add("op", n.id.replace(/\/$/, ""));
    add("type", n.op);
    add("device", n.device || "(none recorded)");
    add("inputs", n.inputs.length ? n.inputs.join(", ") : "(none)");
  }

  fit() {
    const r = this.svg.getBoundingClientRect();
    const w = Math.max(1, this.laid.w), h = Math.max(1, this.laid.h);
    const k = Math.min(1.5, (r.width - 40) / w, (r.height - 40) / h);
    this.view = { k, x: (r.width - w * k) / 2, y: 20 };
    this.applyView();
  }

  applyView() { this.root.setAttribute("transform", `translate(${this.view.x},${this.view.y}) scale(${this.view.k})`); }
}
