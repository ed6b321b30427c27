// Histograms over steps as offset ridgelines: one filled curve per step, later steps lower and darker.

import { formatNumber, niceTicks, numbers } from "./chart.js";

export function drawHistograms(canvas, data, color) {
  const dpr = window.devicePixelRatio || 1;
  const w = canvas.clientWidth || 440, h = 260;
  canvas.style.height = `${h}px`;
  canvas.width = Math.round(w * dpr); canvas.height = Math.round(h * dpr);
  const g = canvas.getContext("2d");
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, w, h);
  const edges = numbers(data.edges);  // a count that is not a finite positive number counts as none
  const hists = data.histograms.map((h) => ({ ...h, counts: numbers(h.counts).map((c) => (c > 0 && c < Infinity ? c : 0)) }));
  g.font = "10px system-ui, sans-serif"; g.fillStyle = "#6a7280";
  if (!hists.length) { g.fillText("no data yet", w / 2 - 25, h / 2); return; }
  const amp = 56, left = 44, right = 12, top = amp + 6, bottom = 24;
  const pw = w - left - right, ph = h - top - bottom;
  const lo = edges[0], hi = edges[edges.length - 1];
  const sx = (v) => left + ((v - lo) / (hi - lo)) * pw;
  const rowGap = hists.length > 1 ? ph / (hists.length - 1) : 0;
  hists.forEach((hist, r) => {
    const base = top + r * rowGap;
    const shade = 0.35 + 0.65 * (hists.length > 1 ? r / (hists.length - 1) : 1);
    const peak = Math.max(1e-12, ...hist.counts);  // each step scaled to its own peak, so every shape shows
    g.beginPath();
    g.moveTo(sx(lo), base);
    hist.counts.forEach((c, i) => { g.lineTo(sx((edges[i] + edges[i + 1]) / 2), base - (c / peak) * amp); });
    g.lineTo(sx(hi), base);
    g.closePath();
    g.globalAlpha = 0.55 * shade; g.fillStyle = color; g.fill();
    g.globalAlpha = shade; g.strokeStyle = "#37474f"; g.lineWidth = 0.6; g.stroke();
    g.globalAlpha = 1;
  });
  g.fillStyle = "#6a7280"; g.textAlign = "center"; g.textBaseline = "top";
  for (const t of niceTicks(lo, hi, 5)) { g.fillText(formatNumber(t), sx(t), h - bottom + 6); }
  g.textAlign = "right"; g.textBaseline = "middle";
  const labelled = new Set([0, hists.length - 1, Math.floor((hists.length - 1) / 2)]);
  labelled.forEach((r) => { g.fillText(`step ${hists[r].step}`, w - 2, top + r * rowGap - 6); });
}
