// The dashboard: runs in the sidebar, one view per tab, and a long poll of /api/runs that refreshes whatever
// gained data as soon as the server has read it, so a run being written shows its new points within a second.

import { LineChart, numbers } from "./chart.js";
import { GraphView } from "./graph.js";
import { drawHistograms } from "./histogram.js";
import { Timeline } from "./timeline.js";

const COLORS = ["#e8710a", "#1a73e8", "#12b5cb", "#e52592", "#7cb342", "#9334e6", "#f9ab00", "#5f6368"];
const $ = (id) => document.getElementById(id);

const state = {
  tab: "scalars", runs: [], selected: new Set(), known: new Set(), smoothing: 0.6, axis: "step", logY: false,
  filter: null, cards: new Map(), counts: new Map(), versions: new Map(),
};
window.__board = { state, timings: {} };

function runColor(name) {
  const i = state.runs.findIndex((r) => r.name === name);
  return COLORS[(i < 0 ? 0 : i) % COLORS.length];
}

async function getJSON(url) {
  const r = await fetch(url);
  const body = await r.json();
  if (!r.ok) { throw new Error(body.error || r.statusText); }
  return body;
}

function makeCard(parent, key, title, sub) {
  const card = document.createElement("div");
  card.className = "card";
  card.dataset.key = key;
  const h = document.createElement("h3");
  h.textContent = title;
  card.append(h);
  if (sub) { const s = document.createElement("div"); s.className = "sub"; s.textContent = sub; card.append(s); }
  if (parent) { parent.append(card); }
  return card;
}

function tagMatches(tag) { return !state.filter || state.filter.test(tag); }

function selectedRuns() { return state.runs.filter((r) => state.selected.has(r.name)); }

// ---- runs ------------------------------------------------------------------------------------------
function renderRuns() {
  const list = $("runs");
  list.replaceChildren(...state.runs.map((r) => {
    const li = document.createElement("li");
    const box = document.createElement("input");
    box.type = "checkbox"; box.checked = state.selected.has(r.name); box.dataset.run = r.name;
    box.addEventListener("change", () => {
      if (box.checked) { state.selected.add(r.name); } else { state.selected.delete(r.name); }
      refresh(true);
    });
    const sw = document.createElement("i");
    sw.className = "swatch"; sw.style.background = runColor(r.name);
    const label = document.createElement("span");
    label.textContent = r.name;
    li.append(box, sw, label);
    return li;
  }));
}

function renderProblems(files) {
  const bad = files.filter((f) => ["corrupt", "missing", "unreadable"].includes(f.state));
  $("file-problems").hidden = !bad.length;
  $("problems").replaceChildren(...bad.map((f) => { const li = document.createElement("li"); li.textContent = f.error; return li; }));
}

// Long polling: the server answers as soon as it has read new data (or after 20 s with nothing new). The
// first request waits for generation 1, the end of the server's first reading (or 1 s of it, for a big
// log directory), so a page opened at start-up draws whole charts rather than the first block of a file.
let generation = 0;

async function poll() {
  try {
    const data = await getJSON(`/api/runs?after=${generation}&wait=20`);
    generation = data.generation;
    const changed = data.runs.length !== state.runs.length || data.runs.some((r) => state.versions.get(r.name) !== r.version);
    for (const r of data.runs) {
      if (!state.known.has(r.name)) { state.known.add(r.name); state.selected.add(r.name); }
      state.versions.set(r.name, r.version);
    }
    state.runs = data.runs;
    renderRuns();
    renderProblems(data.files);
    const points = data.runs.reduce((a, r) => a + Object.values(r.scalar_counts).reduce((x, y) => x + y, 0), 0);
    $("status").textContent = `${data.runs.length} run${data.runs.length === 1 ? "" : "s"} · ${points.toLocaleString()} scalar points`;
    if (changed) { await refresh(false); }
    return true;
  } catch (e) {
    $("status").textContent = `server unreachable: ${e.message}`;
    return false;
  }
}

async function pollForever() {
  const ok = await poll();
  setTimeout(pollForever, ok ? 0 : 3000);
}

// ---- scalars -------------------------------------------------------------------------------------
function scalarTags() {
  const tags = new Set();
  for (const r of selectedRuns()) { r.tags.scalars.forEach((t) => tags.add(t)); }
  return [...tags].filter(tagMatches).sort();
}

function scalarCard(tag) {
  let entry = state.cards.get(`s:${tag}`);
  if (entry) { return entry; }
  const card = makeCard(null, `s:${tag}`, tag);
  card.dataset.tag = tag;
  const legend = document.createElement("ul");
  legend.className = "series";
  entry = { card, legend, range: null, data: new Map(), visible: false };
  entry.chart = new LineChart(card, { onZoom: (range) => { entry.range = range; loadScalarCard(tag, true); } });
  card.append(legend);
  state.cards.set(`s:${tag}`, entry);
  observer.observe(card);
  return entry;
}

async function loadScalarCard(tag, force) {
  const entry = state.cards.get(`s:${tag}`);
  if (!entry || !entry.visible) { return; }
  const runs = selectedRuns().filter((r) => r.tags.scalars.includes(tag));
  const width = Math.max(200, entry.chart.canvas.clientWidth || 440);
  const started = performance.now();
  const series = await Promise.all(runs.map(async (r) => {
    const count = r.scalar_counts[tag];
    const key = `${r.name}|${state.axis}|${state.smoothing}|${entry.range}`;
    const cached = entry.data.get(r.name);
    if (!force && cached && cached.key === key && cached.total === count) { return cached; }
    const q = new URLSearchParams({ run: r.name, tag, x: state.axis, smoothing: state.smoothing, buckets: width });
    if (entry.range) { q.set("min", entry.range[0]); q.set("max", entry.range[1]); }
    const d = await getJSON(`/api/scalars?${q}`);
    const s = { key, total: d.total, run: r.name, color: runColor(r.name), x: numbers(d.x), step: d.step,
      value: numbers(d.value), smoothed: numbers(d.smoothed), shown: d.shown, nonfinite: d.nonfinite, noX: d.no_x };
    entry.data.set(r.name, s);
    return s;
  }));
  entry.chart.setData(series, { axis: state.axis, logY: state.logY, smoothing: state.smoothing, xRange: entry.range });
  entry.legend.replaceChildren(...series.map((s) => {
    const li = document.createElement("li");
    li.dataset.run = s.run; li.dataset.total = s.total; li.dataset.shown = s.shown; li.dataset.nonfinite = s.nonfinite;
    li.innerHTML = `<i class="swatch" style="background:${s.color}"></i>`;
    if (s.nonfinite) { li.title = "NaN and infinite values are marked at the chart's edges: ▲ +Inf, ▼ -Inf, ◆ NaN"; }
    li.append(`${s.run}: ${s.total.toLocaleString()} point${s.total === 1 ? "" : "s"}` +
      `${s.shown < s.total ? ` (${s.shown.toLocaleString()} drawn)` : ""}${s.nonfinite ? `, ${s.nonfinite} NaN/Inf` : ""}` +
      `${s.noX ? `, ${s.noX} without a wall time` : ""} `);
    const a = document.createElement("a");
    a.href = `/api/scalars.csv?${new URLSearchParams({ run: s.run, tag })}`;
    a.textContent = "csv";
    a.title = "every point of this run and tag";
    a.download = `${s.run}-${tag}.csv`.replace(/[^\w.-]+/g, "_");
    li.append(a);
    return li;
  }));
  entry.card.dataset.loaded = "1";
  window.__board.timings[tag] = { fetchedAndDrawnMs: performance.now() - started, at: performance.now() };
}

const observer = new IntersectionObserver((items) => {
  for (const it of items) {
    const entry = state.cards.get(it.target.dataset.key);
    if (!entry) { continue; }
    entry.visible = it.isIntersecting;
    if (it.isIntersecting) { loadScalarCard(it.target.dataset.tag, false); }
  }
}, { rootMargin: "200px" });

const groupTitles = new Map();

function groupTitle(g) {
  if (!groupTitles.has(g)) {
    const h = document.createElement("h2");
    h.className = "group-title"; h.dataset.group = g; h.textContent = g || "(top level)";
    groupTitles.set(g, h);
  }
  return groupTitles.get(g);
}

async function refreshScalars() {
  const view = $("view-scalars");
  const tags = scalarTags();
  for (const [key, entry] of state.cards) {
    if (!tags.includes(key.slice(2))) { observer.unobserve(entry.card); state.cards.delete(key); }
  }
  if (!tags.length) { view.replaceChildren(emptyNote("No scalar summaries in the selected runs yet.")); return; }
  const children = [];
  let group = null;
  for (const tag of tags) {
    const g = tag.includes("/") ? tag.split("/")[0] : "";
    if (g !== group) { group = g; children.push(groupTitle(g)); }
    children.push(scalarCard(tag).card);
  }
  view.replaceChildren(...children);
  await Promise.all(tags.map((t) => loadScalarCard(t, false)));
}

// ---- histograms, images, text ------------------------------------------------------------------
async function refreshHistograms() {
  const view = $("view-histograms");
  view.replaceChildren();
  const jobs = [];
  for (const r of selectedRuns()) {
    for (const tag of r.tags.histograms.filter(tagMatches)) {
      const card = makeCard(view, `h:${r.name}:${tag}`, tag, r.name);
      card.dataset.tag = tag; card.dataset.run = r.name;
      const canvas = document.createElement("canvas");
      card.append(canvas);
      jobs.push(getJSON(`/api/histograms?${new URLSearchParams({ run: r.name, tag })}`).then((d) => {
        drawHistograms(canvas, d, runColor(r.name));
        card.dataset.count = d.histograms.length; card.dataset.loaded = "1";
      }));
    }
  }
  if (!jobs.length) { view.append(emptyNote("No histogram summaries in the selected runs yet.")); }
  await Promise.all(jobs);
}

async function refreshImages() {
  const view = $("view-images");
  view.replaceChildren();
  const jobs = [];
  for (const r of selectedRuns()) {
    for (const tag of r.tags.images.filter(tagMatches)) {
      const card = makeCard(view, `i:${r.name}:${tag}`, tag, r.name);
      card.dataset.tag = tag; card.dataset.run = r.name;
      jobs.push(getJSON(`/api/images?${new URLSearchParams({ run: r.name, tag })}`).then((d) => {
        const img = document.createElement("img");
        const label = document.createElement("div"); label.className = "sub";
        const slider = document.createElement("input");
        slider.type = "range"; slider.min = 0; slider.max = d.images.length - 1; slider.value = d.images.length - 1;
        const show = () => {
          const it = d.images[Number(slider.value)];
          img.src = `/api/image?${new URLSearchParams({ run: r.name, tag, index: it.index })}`;
          img.alt = `${tag} at step ${it.step}`;
          label.textContent = `step ${it.step} · ${it.width}×${it.height} · ${d.images.length} images`;
        };
        slider.addEventListener("input", show);
        show();
        card.append(img, slider, label);
        card.dataset.count = d.images.length; card.dataset.loaded = "1";
      }));
    }
  }
  if (!jobs.length) { view.append(emptyNote("No image summaries in the selected runs yet.")); }
  await Promise.all(jobs);
}

async function refreshAudio() {
  // Each tag's clips, one step at a time (the slider), played by the browser's own <audio> element.
  const view = $("view-audio");
  view.replaceChildren();
  const jobs = [];
  for (const r of selectedRuns()) {
    for (const tag of (r.tags.audio || []).filter(tagMatches)) {
      const card = makeCard(view, `a:${r.name}:${tag}`, tag, r.name);
      card.dataset.tag = tag; card.dataset.run = r.name;
      jobs.push(getJSON(`/api/audio?${new URLSearchParams({ run: r.name, tag })}`).then((d) => {
        const player = document.createElement("audio");
        player.controls = true; player.preload = "metadata";
        const label = document.createElement("div"); label.className = "sub";
        const slider = document.createElement("input");
        slider.type = "range"; slider.min = 0; slider.max = d.clips.length - 1; slider.value = d.clips.length - 1;
        const show = () => {
          const it = d.clips[Number(slider.value)];
          player.src = `/api/audio.wav?${new URLSearchParams({ run: r.name, tag, index: it.index })}`;
          label.textContent = `step ${it.step} · ${it.frames} frames × ${it.channels} channel(s) · ${d.clips.length} clips`;
        };
        slider.addEventListener("input", show);
        show();
        card.append(player, slider, label);
        card.dataset.count = d.clips.length; card.dataset.loaded = "1";
      }));
    }
  }
  if (!jobs.length) { view.append(emptyNote("No audio summaries in the selected runs yet.")); }
  await Promise.all(jobs);
}

function renderText(text) {
  // A Markdown table (| a | b | over |---|---|) becomes a table; anything else is shown as written.
  const lines = text.trim().split("\n");
  const cells = (line) => line.trim().replace(/^\||\|$/g, "").split("|").map((c) => c.trim());
  if (lines.length >= 2 && lines.every((l) => l.trim().startsWith("|")) && /^\|?\s*:?-{3,}/.test(lines[1].trim())) {
    const table = document.createElement("table");
    lines.filter((_, i) => i !== 1).forEach((line, i) => {
      const tr = table.insertRow();
      for (const c of cells(line)) { const td = document.createElement(i ? "td" : "th"); td.textContent = c; tr.append(td); }
    });
    return table;
  }
  const pre = document.createElement("pre");
  pre.textContent = text;
  return pre;
}

async function refreshText() {
  const view = $("view-text");
  view.replaceChildren();
  const jobs = [];
  for (const r of selectedRuns()) {
    for (const tag of r.tags.text.filter(tagMatches)) {
      const card = makeCard(view, `t:${r.name}:${tag}`, tag, r.name);
      card.dataset.tag = tag;
      jobs.push(getJSON(`/api/text?${new URLSearchParams({ run: r.name, tag })}`).then((d) => {
        for (const t of d.texts.slice().reverse().slice(0, 50)) {
          const div = document.createElement("div"); div.className = "text-entry";
          const s = document.createElement("div"); s.className = "sub"; s.textContent = `step ${t.step}`;
          div.append(s, renderText(t.text)); card.append(div);
        }
        card.dataset.loaded = "1";
      }));
    }
  }
  if (!jobs.length) { view.append(emptyNote("No text summaries in the selected runs yet.")); }
  await Promise.all(jobs);
}

// ---- graph and timeline ------------------------------------------------------------------------
const graph = new GraphView($("graph-svg"), $("graph-info"), $("graph-legend"));
let timelineView = null;

function fillSelect(select, values) {
  const current = select.value;
  select.replaceChildren(...values.map((v) => { const o = document.createElement("option"); o.value = v; o.textContent = v; return o; }));
  if (values.includes(current)) { select.value = current; }
}

async function refreshGraph() {
  const runs = state.runs.filter((r) => r.tags.graph).map((r) => r.name);
  fillSelect($("graph-run"), runs);
  if (!runs.length) { $("graph-legend").textContent = "No run has a graph yet: pass graph= to FileWriter or call add_graph."; return; }
  await graph.show($("graph-run").value);
}

async function refreshTimeline(changedRun) {
  const runs = state.runs.filter((r) => r.tags.run_metadata.length);
  fillSelect($("timeline-run"), runs.map((r) => r.name));
  const run = runs.find((r) => r.name === $("timeline-run").value);
  if (!run) { $("timeline-box").replaceChildren(emptyNote("No run metadata yet: trace a step with RunOptions(trace_level=FULL_TRACE) and FileWriter.add_run_metadata.")); return; }
  const before = $("timeline-tag").value;
  fillSelect($("timeline-tag"), run.tags.run_metadata);
  const tag = $("timeline-tag").value;
  if (!changedRun && timelineView && timelineView.key === `${run.name}|${tag}` && before === tag) { return; }
  const q = new URLSearchParams({ run: run.name, tag });
  const data = await getJSON(`/api/timeline?${q}`);
  $("timeline-trace").href = `/api/trace?${q}`;
  if (!timelineView) { timelineView = new Timeline($("timeline-box")); }
  timelineView.key = `${run.name}|${tag}`;
  timelineView.setData(data);
}

function emptyNote(text) { const d = document.createElement("div"); d.className = "empty"; d.textContent = text; return d; }

// ---- wiring ----------------------------------------------------------------------------------------
let refreshing = Promise.resolve();

function refresh(rebuild) {
  refreshing = refreshing.then(() => doRefresh(rebuild)).catch((e) => { $("status").textContent = `error: ${e.message}`; });
  return refreshing;
}

async function doRefresh(rebuild) {
  const views = { scalars: refreshScalars, histograms: refreshHistograms, images: refreshImages, audio: refreshAudio,
    text: refreshText,
    graph: refreshGraph, timeline: () => refreshTimeline(false) };
  await views[state.tab](rebuild);
}

document.querySelectorAll("#tabs button").forEach((b) => b.addEventListener("click", () => {
  state.tab = b.dataset.tab;
  document.querySelectorAll("#tabs button").forEach((x) => x.classList.toggle("active", x === b));
  document.querySelectorAll(".view").forEach((v) => { v.hidden = v.id !== `view-${state.tab}`; });
  $("scalar-controls").hidden = state.tab !== "scalars";
  refresh(true);
}));

let smoothTimer = null;
$("smoothing").addEventListener("input", (e) => {
  state.smoothing = Number(e.target.value);
  $("smoothing-value").textContent = state.smoothing.toFixed(2);
  clearTimeout(smoothTimer);
  smoothTimer = setTimeout(() => refresh(false), 120);
});
document.querySelectorAll("#x-axis input").forEach((i) => i.addEventListener("change", () => {
  state.axis = i.value;
  for (const [, entry] of state.cards) { entry.range = null; }
  refresh(false);
}));
$("log-scale").addEventListener("change", (e) => { state.logY = e.target.checked; refresh(false); });
$("tag-filter").addEventListener("input", (e) => {
  try { state.filter = e.target.value ? new RegExp(e.target.value, "i") : null; e.target.style.outline = ""; } catch { e.target.style.outline = "2px solid #e53935"; return; }
  refresh(true);
});
$("graph-run").addEventListener("change", () => graph.show($("graph-run").value));
$("graph-fit").addEventListener("click", () => graph.fit());
$("timeline-run").addEventListener("change", () => refreshTimeline(true));
$("timeline-tag").addEventListener("change", () => refreshTimeline(true));
window.addEventListener("resize", () => { for (const [, e] of state.cards) { e.chart.draw(); } });

pollForever();
