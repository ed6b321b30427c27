// The step timeline: a lane per device and thread, a bar per op; wheel zooms around the pointer, drag pans.

const LANE = 22, LABEL = 210, AXIS = 22;

function colorOf(name) {
  let h = 0;
  for (const ch of name) { h = (h * 31 + ch.charCodeAt(0)) >>> 0; }
  return `hsl(${h % 360}, 55%, 62%)`;
}

export class Timeline {
  constructor(box) {
    this.box = box;
    this.canvas = document.createElement("canvas");
    box.replaceChildren(this.canvas);
    this.data = null; this.t0 = 0; this.t1 = 1; this.dragX = null;
    this.canvas.addEventListener("wheel", (e) => { e.preventDefault(); this.zoom(e); }, { passive: false });
    this.canvas.addEventListener("mousedown", (e) => { this.dragX = e.clientX; });
    window.addEventListener("mouseup", () => { this.dragX = null; });
    this.canvas.addEventListener("mousemove", (e) => this.move(e));
    this.canvas.addEventListener("mouseleave", () => { document.getElementById("tooltip").hidden = true; });
  }

  setData(data) {
    this.data = data; this.t0 = 0; this.t1 = Math.max(1, data.duration);
    this.draw();
  }

  scale() { return (this.canvas.clientWidth - LABEL - 10) / (this.t1 - this.t0); }

  zoom(e) {
    const x = e.clientX - this.canvas.getBoundingClientRect().left - LABEL;
    const t = this.t0 + x / this.scale();
    const f = e.deltaY > 0 ? 1.25 : 0.8;
    this.t0 = t - (t - this.t0) * f; this.t1 = t + (this.t1 - t) * f;
    this.draw();
  }

  move(e) {
    if (!this.data) { return; }
    if (this.dragX !== null) {
      const dt = (e.clientX - this.dragX) / this.scale();
      this.t0 -= dt; this.t1 -= dt; this.dragX = e.clientX; this.draw(); return;
    }
    const r = this.canvas.getBoundingClientRect();
    const lane = Math.floor((e.clientY - r.top - AXIS) / LANE);
    const t = this.t0 + (e.clientX - r.left - LABEL) / this.scale();
    const tip = document.getElementById("tooltip");
    const ops = this.data.lanes[lane] ? this.data.lanes[lane].ops : [];
    const hit = ops.find((o) => o[2] <= t && t <= o[2] + o[3]);
    tip.hidden = !hit;
    if (hit) {
      tip.textContent = `${hit[0]}\n${hit[1]}  start ${hit[2]} µs  duration ${hit[3]} µs`;
      tip.style.left = `${e.clientX + 14}px`; tip.style.top = `${e.clientY + 10}px`;
    }
  }

  draw() {
    const d = this.data, dpr = window.devicePixelRatio || 1;
    const w = this.box.clientWidth || 900, h = AXIS + Math.max(1, d.lanes.length) * LANE + 8;
    this.canvas.style.height = `${h}px`;
    this.canvas.width = Math.round(w * dpr); this.canvas.height = Math.round(h * dpr);
    const g = this.canvas.getContext("2d");
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.font = "11px system-ui, sans-serif";
    g.clearRect(0, 0, w, h);
    const s = this.scale();
    g.fillStyle = "#6a7280"; g.textBaseline = "middle";
    const tickStep = Math.pow(10, Math.floor(Math.log10((this.t1 - this.t0) / 5 || 1)));
    for (let t = Math.ceil(this.t0 / tickStep) * tickStep; t <= this.t1; t += tickStep) {
      const x = LABEL + (t - this.t0) * s;
      g.fillRect(x, AXIS - 4, 1, 4);
      g.fillText(`${Math.round(t)} µs`, x + 2, AXIS / 2);
    }
    d.lanes.forEach((lane, i) => {
      const y = AXIS + i * LANE;
      g.fillStyle = i % 2 ? "#fafbfc" : "#f1f3f5"; g.fillRect(0, y, w, LANE);
      g.fillStyle = "#37474f"; g.textAlign = "left";
      const dev = lane.device.split("/").slice(-1)[0] || lane.device;
      g.fillText(`${dev} · ${lane.thread}`.slice(0, 34), 6, y + LANE / 2);
      g.save(); g.beginPath(); g.rect(LABEL, y, w - LABEL, LANE); g.clip();
      for (const [name, op, start, dur] of lane.ops) {
        const x = LABEL + (start - this.t0) * s, bw = Math.max(1, dur * s);
        if (x > w || x + bw < LABEL) { continue; }
        g.fillStyle = colorOf(op || name); g.fillRect(x, y + 3, bw, LANE - 6);
        if (bw > 40) {
          const label = g.measureText(name).width < bw - 6 ? name : name.split("/").slice(-1)[0];
          g.fillStyle = "#1d2330"; g.fillText(label, x + 3, y + LANE / 2, bw - 6);
        }
      }
      g.restore();
    });
  }
}
