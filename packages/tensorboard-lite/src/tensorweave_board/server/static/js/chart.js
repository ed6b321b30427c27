// A line chart on a canvas: several runs overlaid, raw values faint and smoothed values solid, linear or
// log values, step / relative / wall-time axes, hover read-out, drag to zoom and double-click to reset.
// Non-finite values (the server sends them as "NaN", "Infinity", "-Infinity") are left out of the line and
// marked at the plot's edges: +Infinity ▲ at the top, -Infinity ▼ and NaN ◆ at the bottom.

const PAD = { left: 56, right: 12, top: 8, bottom: 26 };

// The numbers of a reply's list: Number() reads the server's "NaN", "Infinity" and "-Infinity" back.
export function numbers(list) { return list.map(Number); }

export function niceTicks(lo, hi, count) {
  if (!(hi > lo)) { return [lo]; }
  const raw = (hi - lo) / count;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw);
  const ticks = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) { ticks.push(Math.abs(v) < step * 1e-9 ? 0 : v); }
  return ticks;
}

export function formatNumber(v) {
  if (v === 0) { return "0"; }
  const a = Math.abs(v);
  if (a >= 1e5 || a < 1e-3) { return v.toExponential(2); }
  return Number(v.toPrecision(4)).toString();
}

export function formatX(v, axis) {
  if (axis === "wall") { return new Date(v * 1000).toLocaleTimeString(); }
  if (axis === "relative") {
    if (v < 60) { return `${Number(v.toPrecision(3))}s`; }
    if (v < 3600) { return `${Math.floor(v / 60)}m${Math.round(v % 60)}s`; }
    return `${(v / 3600).toFixed(1)}h`;
  }
  return Math.abs(v) >= 1e4 ? `${Number((v / 1000).toPrecision(3))}k` : String(Math.round(v * 100) / 100);
}

export class LineChart {
  constructor(parent, { height = 220, onZoom = null } = {}) {
    this.canvas = document.createElement("canvas");
    this.canvas.style.height = `${height}px`;
    parent.appendChild(this.canvas);
    this.height = height;
    this.series = [];
    this.options = { axis: "step", logY: false, smoothing: 0 };
    this.onZoom = onZoom;
    this.drag = null;
    this.hover = null;
    this.canvas.addEventListener("mousedown", (e) => { this.drag = { x0: this.localX(e), x1: this.localX(e) }; });
    this.canvas.addEventListener("mousemove", (e) => this.mouseMove(e));
    this.canvas.addEventListener("mouseleave", () => { this.hover = null; this.hideTip(); this.draw(); });
    this.canvas.addEventListener("mouseup", () => this.finishDrag());
    this.canvas.addEventListener("dblclick", () => { if (this.onZoom) { this.onZoom(null); } });
  }

  localX(e) { return e.clientX - this.canvas.getBoundingClientRect().left; }

  setData(series, options) {
    this.series = series;
    Object.assign(this.options, options);
    this.draw();
  }

  extents() {
    let xlo = Infinity, xhi = -Infinity, ylo = Infinity, yhi = -Infinity;
    const log = this.options.logY;
    for (const s of this.series) {
      const ys = this.options.smoothing > 0 ? [s.value, s.smoothed] : [s.value];
      for (let i = 0; i < s.x.length; i++) {
        xlo = Math.min(xlo, s.x[i]); xhi = Math.max(xhi, s.x[i]);
        for (const arr of ys) {
          const y = arr[i];
          if (!Number.isFinite(y) || (log && !(y > 0))) { continue; }
          ylo = Math.min(ylo, y); yhi = Math.max(yhi, y);
        }
      }
    }
    if (!isFinite(xlo)) { return null; }
    if (this.options.xRange) { [xlo, xhi] = this.options.xRange; } else {
      const pad = (xhi - xlo) * 0.02;
      xlo -= pad; xhi += pad;
    }
    if (xhi === xlo) { xlo -= 1; xhi += 1; }
    if (!isFinite(ylo)) { ylo = log ? 0.1 : 0; yhi = log ? 1 : 1; }
    if (log) { ylo = Math.log10(ylo); yhi = Math.log10(yhi); }
    if (yhi === ylo) { ylo -= 0.5; yhi += 0.5; }
    const m = (yhi - ylo) * 0.05;
    return { xlo, xhi, ylo: ylo - m, yhi: yhi + m };
  }

  draw() {
    const c = this.canvas, dpr = window.devicePixelRatio || 1;
    const w = c.clientWidth || 440, h = this.height;
    if (c.width !== Math.round(w * dpr)) { c.width = Math.round(w * dpr); c.height = Math.round(h * dpr); }
    const g = c.getContext("2d");
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, h);
    const ext = this.extents();
    this.ext = ext;
    g.font = "10px system-ui, sans-serif";
    g.fillStyle = "#6a7280";
    if (!ext) { g.fillText("no data yet", w / 2 - 25, h / 2); return; }
    const pw = w - PAD.left - PAD.right, ph = h - PAD.top - PAD.bottom;
    const log = this.options.logY;
    this.sx = (x) => PAD.left + ((x - ext.xlo) / (ext.xhi - ext.xlo)) * pw;
    this.sy = (y) => PAD.top + (1 - ((log ? Math.log10(y) : y) - ext.ylo) / (ext.yhi - ext.ylo)) * ph;
    this.invX = (px) => ext.xlo + ((px - PAD.left) / pw) * (ext.xhi - ext.xlo);
    g.strokeStyle = "#eceff1"; g.lineWidth = 1;
    g.textAlign = "right"; g.textBaseline = "middle";
    for (const t of niceTicks(ext.ylo, ext.yhi, 5)) {
      const y = PAD.top + (1 - (t - ext.ylo) / (ext.yhi - ext.ylo)) * ph;
      g.beginPath(); g.moveTo(PAD.left, y); g.lineTo(w - PAD.right, y); g.stroke();
      g.fillText(log ? formatNumber(Math.pow(10, t)) : formatNumber(t), PAD.left - 4, y);
    }
    g.textAlign = "center"; g.textBaseline = "top";
    for (const t of niceTicks(ext.xlo, ext.xhi, Math.max(2, Math.floor(pw / 90)))) {
      const x = this.sx(t);
      g.beginPath(); g.moveTo(x, PAD.top); g.lineTo(x, PAD.top + ph); g.stroke();
      g.fillText(formatX(t, this.options.axis), x, PAD.top + ph + 4);
    }
    g.save();
    g.beginPath(); g.rect(PAD.left, PAD.top, pw, ph); g.clip();
    const smoothing = this.options.smoothing > 0;
    let marks = 0;
    for (const s of this.series) {
      this.line(g, s.x, s.value, s.color, smoothing ? 0.25 : 1, 1.3);
      if (smoothing) { this.line(g, s.x, s.smoothed, s.color, 1, 1.6); }
      marks += this.marks(g, s, ph);
    }
    c.dataset.marks = marks;
    if (this.drag && Math.abs(this.drag.x1 - this.drag.x0) > 2) {
      g.fillStyle = "rgba(232,113,10,.15)";
      g.fillRect(Math.min(this.drag.x0, this.drag.x1), PAD.top, Math.abs(this.drag.x1 - this.drag.x0), ph);
    }
    if (this.hover) {
      g.strokeStyle = "#90a4ae"; g.beginPath(); g.moveTo(this.hover.px, PAD.top); g.lineTo(this.hover.px, PAD.top + ph); g.stroke();
      for (const p of this.hover.points.filter((q) => Number.isFinite(q.y))) {
        g.fillStyle = p.color; g.beginPath(); g.arc(this.sx(p.x), this.sy(p.y), 3, 0, 2 * Math.PI); g.fill();
      }
    }
    g.restore();
    g.strokeStyle = "#b0bec5"; g.strokeRect(PAD.left, PAD.top, pw, ph);
  }

  // The line through the finite values (a non-finite one is skipped, its neighbours joined); a dot if
  // there is only one.
  line(g, xs, ys, color, alpha, width) {
    g.globalAlpha = alpha; g.strokeStyle = color; g.lineWidth = width;
    g.beginPath();
    let pen = false, drawn = 0, last = -1;
    const log = this.options.logY;
    for (let i = 0; i < xs.length; i++) {
      if (!Number.isFinite(ys[i])) { continue; }
      if (log && !(ys[i] > 0)) { pen = false; continue; }
      const x = this.sx(xs[i]), y = this.sy(ys[i]);
      if (pen) { g.lineTo(x, y); } else { g.moveTo(x, y); pen = true; }
      drawn += 1; last = i;
    }
    g.stroke();
    if (drawn === 1) {
      g.fillStyle = color; g.beginPath(); g.arc(this.sx(xs[last]), this.sy(ys[last]), 3, 0, 2 * Math.PI); g.fill();
    }
    g.globalAlpha = 1;
  }

  // Marks for the non-finite values of a series at the plot's edges; returns how many were drawn.
  marks(g, s, ph) {
    const top = PAD.top, bottom = PAD.top + ph;
    let count = 0;
    g.lineWidth = 1.2; g.strokeStyle = s.color; g.fillStyle = s.color;
    for (let i = 0; i < s.x.length; i++) {
      const v = s.value[i];
      if (Number.isFinite(v)) { continue; }
      const x = this.sx(s.x[i]);
      g.beginPath();
      if (v === Infinity) {
        g.moveTo(x, top); g.lineTo(x - 4, top + 7); g.lineTo(x + 4, top + 7); g.closePath(); g.fill();
      } else if (v === -Infinity) {
        g.moveTo(x, bottom); g.lineTo(x - 4, bottom - 7); g.lineTo(x + 4, bottom - 7); g.closePath(); g.fill();
      } else {
        g.moveTo(x, bottom - 9); g.lineTo(x + 4, bottom - 5); g.lineTo(x, bottom - 1); g.lineTo(x - 4, bottom - 5);
        g.closePath(); g.fillStyle = "#fff"; g.fill(); g.stroke(); g.fillStyle = s.color;
      }
      count += 1;
    }
    return count;
  }

  mouseMove(e) {
    if (!this.ext) { return; }
    const px = this.localX(e);
    if (this.drag) { this.drag.x1 = px; this.draw(); return; }
    const x = this.invX(px);
    const points = [];
    for (const s of this.series) {
      if (!s.x.length) { continue; }
      let lo = 0, hi = s.x.length - 1;
      while (hi - lo > 1) { const mid = (lo + hi) >> 1; if (s.x[mid] < x) { lo = mid; } else { hi = mid; } }
      const i = Math.abs(s.x[lo] - x) <= Math.abs(s.x[hi] - x) ? lo : hi;
      const y = this.options.smoothing > 0 ? s.smoothed[i] : s.value[i];
      points.push({ run: s.run, color: s.color, x: s.x[i], y, step: s.step[i], value: s.value[i], smoothed: s.smoothed[i] });
    }
    this.hover = { px, points };
    this.draw();
    const lines = points.map((p) => `${p.run}  step ${p.step}  value ${formatNumber(p.value)}` +
      (this.options.smoothing > 0 ? `  smoothed ${formatNumber(p.smoothed)}` : ""));
    const tip = document.getElementById("tooltip");
    tip.textContent = lines.join("\n");
    tip.hidden = lines.length === 0;
    tip.style.left = `${e.clientX + 14}px`; tip.style.top = `${e.clientY + 10}px`;
  }

  hideTip() { document.getElementById("tooltip").hidden = true; }

  finishDrag() {
    const d = this.drag;
    this.drag = null;
    if (d && Math.abs(d.x1 - d.x0) > 4 && this.onZoom) {
      const a = this.invX(Math.min(d.x0, d.x1)), b = this.invX(Math.max(d.x0, d.x1));
      this.onZoom([a, b]);
    } else { this.draw(); }
  }
}
