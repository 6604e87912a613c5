"use strict";

// ---- timeline ----

let tlTimer = null;
function scheduleTimeline() { clearTimeout(tlTimer); tlTimer = setTimeout(loadTimeline, 50); }
let drawTimer = null;
function drawTimelineSoon() { clearTimeout(drawTimer); drawTimer = setTimeout(scheduleTimeline, 30); }

const LABEL = 150, AXIS = 18, LANE = 16;

function visibleLanes() {
  const cv = $("tl-canvas");
  return Math.max(1, Math.floor(((cv.clientHeight || 150) - AXIS - LANE - 12) / LANE));
}

async function laneIDs() {
  const n = visibleLanes();
  const ids = [];
  if (state.session) ids.push(state.session);
  const r = await api("/api/sessions?" + sessionQuery(state.laneOffset, n + 1)).catch(() => null);
  if (r) for (const s of r.sessions) if (ids.length < n && skey(s) !== state.session) ids.push(skey(s));
  state.laneTotal = r ? r.total : 0;
  return ids;
}

async function loadTimeline() {
  const v = state.view;
  if (!v) return;
  const cv = $("tl-canvas");
  const px = Math.max(50, Math.floor(cv.clientWidth || 1000) - LABEL);
  const n = ++latest.timeline;
  const ids = await laneIDs();
  const p = new URLSearchParams({ from_ns: String(Math.max(0, Math.floor(v.from))), to_ns: String(Math.ceil(v.to)), px: String(px), lanes: ids.join(",") });
  let tl;
  try { tl = await api("/api/timeline?" + p.toString()); } catch (err) { report("Timeline", err); return; }
  if (n !== latest.timeline) return;
  state.tl = tl;
  drawTimeline();
}

function ticks(from, to, width) {
  const spanNs = to - from;
  const target = spanNs / Math.max(2, Math.floor(width / 110));
  const steps = [1e3, 1e4, 1e5, 1e6, 5e6, 1e7, 5e7, 1e8, 2.5e8, 5e8, 1e9, 2e9, 5e9, 1e10, 3e10, 6e10, 3e11, 6e11, 1.8e12, 3.6e12, 2.16e13, 8.64e13];
  const step = steps.find((s) => s >= target) || steps[steps.length - 1];
  const out = [];
  for (let t = Math.ceil(from / step) * step; t <= to; t += step) out.push(t);
  return out;
}

function drawTimeline() {
  drawMini();
  const cv = $("tl-canvas");
  const tl = state.tl, v = state.view;
  if (!tl || !v) return;
  const dpr = window.devicePixelRatio || 1;
  const w = cv.clientWidth || 1000, h = cv.clientHeight || 150;
  cv.width = Math.floor(w * dpr); cv.height = Math.floor(h * dpr);
  const g = cv.getContext("2d");
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, w, h);
  g.font = "11px system-ui, sans-serif";
  const plotW = w - LABEL;
  const x = (ns) => LABEL + (ns - v.from) / (v.to - v.from) * plotW;
  const colX = (c) => LABEL + c * plotW / tl.px;
  // Axis.
  g.fillStyle = "#1b1b1b"; g.strokeStyle = "#c9c9c4";
  for (const t of ticks(v.from, v.to, plotW)) {
    const px = x(t);
    g.beginPath(); g.moveTo(px, AXIS - 4); g.lineTo(px, h); g.stroke();
    g.fillText(clock(t), px + 2, 11);
  }
  // The window, all sessions.
  const lanes = [{ id: "all sessions", cells: tl.all, all: true }].concat(tl.lanes);
  lanes.forEach((lane, i) => {
    const y = AXIS + i * LANE;
    if (!lane.all && skey(lane) === state.session && state.session) { g.fillStyle = "#fff2b3"; g.fillRect(0, y, w, LANE); }
    else if (i % 2) { g.fillStyle = "#f7f7f5"; g.fillRect(0, y, w, LANE); }
    g.fillStyle = "#1b1b1b";
    g.fillText((lane.all ? "All " + count(tl.sessions, "session") : lane.id).slice(0, 24), 4, y + LANE - 4);
    if (!lane.all && tl.events) return;
    const max = Math.max(1, ...lane.cells.map((c) => c[1]));
    for (const [c, count, level] of lane.cells) {
      const a = Math.min(1, 0.25 + Math.log10(count + 1) / Math.log10(max + 1) * 0.75);
      g.fillStyle = level >= 2 ? "rgba(208,16,26," + a + ")" : "rgba(31,78,156," + a + ")";
      g.fillRect(colX(c), y + 2, Math.max(1, plotW / tl.px), LANE - 4);
    }
  });
  if (tl.spans) {
    for (const [lane, s, e, kind, , endIdx, level] of tl.spans) {
      const y = AXIS + (lane + 1) * LANE;
      g.fillStyle = kind === 0 ? "rgba(122,63,176,0.35)" : "rgba(194,106,0,0.35)";
      const x0 = Math.max(LABEL, x(s)), x1 = Math.min(w, x(e));
      g.fillRect(x0, y + 3, Math.max(2, x1 - x0), LANE - 6);
      if (endIdx === -1) { g.fillStyle = "#c26a00"; g.fillText("…", x1 - 8, y + LANE - 4); }
      if (endIdx === -2) { g.fillStyle = "#1b1b1b"; g.fillRect(x1 - 2, y + 2, 2, LANE - 4); g.fillText("timed out", Math.min(x1 + 3, w - 50), y + LANE - 4); }
      if (level >= 2) { g.fillStyle = "#d0101a"; g.fillRect(x1 - 2, y + 2, 3, LANE - 4); }
    }
  }
  if (tl.events) {
    for (const [idx, off, lane, kind, level] of tl.events) {
      const px = x(off), y = AXIS + (lane + 1) * LANE;
      g.fillStyle = KINDS[kind][1];
      g.fillRect(px - 1, y + 2, 2, LANE - 4);
      if (level >= 2) {
        g.fillStyle = "#d0101a";
        g.beginPath(); g.moveTo(px - 4, y + 1); g.lineTo(px + 4, y + 1); g.lineTo(px, y + 7); g.fill();
      }
      if (idx === state.selected) { g.fillStyle = "#f5a700"; g.fillRect(px - 2, AXIS, 4, lanes.length * LANE); }
    }
  }
  const lanesShown = lanes.length * LANE + AXIS;
  const more = (state.laneTotal || 0) - state.laneOffset - tl.lanes.length;
  if (more > 0 || state.laneOffset > 0) {
    g.fillStyle = "#4a4a4a";
    g.fillText((state.laneOffset > 0 ? count(state.laneOffset, "lane") + " above; " : "") + (more > 0 ? "+" + more + " more " + (more === 1 ? "lane" : "lanes") + " (Lanes ▼)" : ""), 4, Math.min(h - 3, lanesShown + 12));
  }
  // The replay's position.
  const pos = state.ctl && state.ctl.position;
  if (pos && pos.index >= 0) {
    const px = x(pos.offset_ns);
    if (px >= LABEL && px <= w) { g.fillStyle = "#0b5cad"; g.fillRect(px - 1, 0, 2, h); g.fillText("▶ #" + pos.index, Math.min(px + 3, w - 60), h - 4); }
  }
  if (state.brush) {
    g.fillStyle = "rgba(11,92,173,0.15)";
    g.fillRect(Math.min(state.brush.a, state.brush.b), 0, Math.abs(state.brush.b - state.brush.a), h);
  }
  const n = tl.count;
  const detail = tl.events ? "each event" : (tl.detail === "read" ? "per pixel" : "in buckets of " + secs(tl.bucket_ns));
  $("tl-range").textContent = clock(v.from) + " to " + clock(v.to) + ": " + count(n, "event") + ", " + detail + (tl.spans ? ", " + count(tl.spans.length, "span") : "");
  cv.setAttribute("aria-label", "Timeline from " + clock(v.from) + " to " + clock(v.to) + ", " + tl.lanes.length + " of " + tl.sessions + " session lanes, " + count(n, "event") +
    (tl.events ? ", " + tl.events.filter((e) => e[4] >= 2).length + " with violations" : ""));
}

function drawMini() {
  const cv = $("tl-mini");
  const tl = state.tl, v = state.view, c = state.capture;
  if (!tl || !v || !c) return;
  const dpr = window.devicePixelRatio || 1;
  const w = cv.clientWidth || 1000, h = cv.clientHeight || 28;
  cv.width = Math.floor(w * dpr); cv.height = Math.floor(h * dpr);
  const g = cv.getContext("2d");
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, w, h);
  const max = Math.max(1, ...tl.overview.map((x) => x[1]));
  const cw = w / tl.px;
  for (const [col, count, level] of tl.overview) {
    const bh = Math.max(2, (h - 4) * count / max);
    g.fillStyle = level >= 2 ? "#d0101a" : "#5b7fb8";
    g.fillRect(col * cw, h - bh, Math.max(1, cw), bh);
  }
  const full = Math.max(1, c.last_ns - c.first_ns);
  const a = (v.from - c.first_ns) / full * w, b = (v.to - c.first_ns) / full * w;
  g.strokeStyle = "#0b5cad"; g.lineWidth = 2;
  g.strokeRect(Math.max(1, a), 1, Math.max(3, b - a), h - 2);
  const pos = state.ctl && state.ctl.position;
  if (pos && pos.index >= 0) { g.fillStyle = "#0b5cad"; g.fillRect((pos.offset_ns - c.first_ns) / full * w - 1, 0, 2, h); }
  cv.setAttribute("aria-label", "Minimap of the whole capture; the box is the timeline's window, " + clock(v.from) + " to " + clock(v.to));
}

function zoomTo(from, to) {
  const c = state.capture;
  const span = Math.max(1e5, to - from);
  const pad = span * 0.02;
  state.view = { from: Math.max(c.first_ns, from - pad), to: to + pad }; // never before the capture's start
  scheduleTimeline(); pushURL();
}

function zoom(factor, centre) {
  const v = state.view, c = state.capture;
  const mid = centre === undefined ? (v.from + v.to) / 2 : centre;
  let span = (v.to - v.from) * factor;
  const full = Math.max(c.last_ns - c.first_ns, 1);
  span = Math.max(1e5, Math.min(span, full * 1.05));
  v.from = mid - span * ((mid - v.from) / (v.to - v.from));
  v.to = v.from + span;
  scheduleTimeline(); pushURL();
}

function pan(fraction) {
  const v = state.view;
  const d = (v.to - v.from) * fraction;
  v.from += d; v.to += d;
  scheduleTimeline(); pushURL();
}

function showAll() { const c = state.capture; zoomTo(c.first_ns, Math.max(c.last_ns, c.first_ns + 1)); }

function timeAt(px) {
  const w = $("tl-canvas").clientWidth, v = state.view;
  return v.from + (px - LABEL) / (w - LABEL) * (v.to - v.from);
}

function nearestEvent(px, lane) {
  const tl = state.tl;
  if (!tl || !tl.events || !tl.events.length) return null;
  const t = timeAt(px);
  const perPx = (state.view.to - state.view.from) / ($("tl-canvas").clientWidth - LABEL);
  let best = null, bestD = Infinity;
  for (const e of tl.events) {
    if (lane !== undefined && lane !== null && e[2] !== lane) continue;
    const d = Math.abs(e[1] - t);
    if (d < bestD) { best = e; bestD = d; }
  }
  return best && (bestD <= perPx * 6 || lane === undefined) ? best : null;
}

function initTimeline() {
  const cv = $("tl-canvas"), mini = $("tl-mini");
  const legend = $("tl-legend");
  KINDS.forEach(([name, colour]) => { const li = el("li", { text: name }); li.style.setProperty("--swatch", colour); legend.append(li); });
  for (const [name, colour] of [["breaks a rule", "#d0101a"], ["tool call span", "rgba(122,63,176,0.5)"], ["wait for a reply", "rgba(194,106,0,0.5)"], ["replay position", "#0b5cad"]]) {
    const li = el("li", { text: name }); li.style.setProperty("--swatch", colour); legend.append(li);
  }
  $("tl-in").onclick = () => zoom(0.5);
  $("tl-out").onclick = () => zoom(2);
  $("tl-left").onclick = () => pan(-0.25);
  $("tl-right").onclick = () => pan(0.25);
  $("tl-all").onclick = showAll;
  $("tl-up").onclick = () => { state.laneOffset = Math.max(0, state.laneOffset - visibleLanes()); scheduleTimeline(); };
  $("tl-down").onclick = () => { if (state.laneOffset + visibleLanes() < (state.laneTotal || 0)) { state.laneOffset += visibleLanes(); scheduleTimeline(); } };
  $("tl-abs").onchange = drawTimeline;
  cv.addEventListener("wheel", (e) => { e.preventDefault(); zoom(e.deltaY > 0 ? 1.25 : 0.8, timeAt(e.offsetX)); }, { passive: false });
  // Brush: drag to zoom to the range; a click selects the nearest event.
  cv.addEventListener("mousedown", (e) => { state.brush = { a: e.offsetX, b: e.offsetX }; });
  cv.addEventListener("mousemove", (e) => { if (state.brush) { state.brush.b = e.offsetX; drawTimeline(); hoverTip(null); } else hoverTip(e); });
  cv.addEventListener("mouseup", (e) => {
    const b = state.brush; state.brush = null;
    if (b) b.b = e.offsetX;
    if (b && Math.abs(b.b - b.a) > 5) {
      const t0 = timeAt(Math.min(b.a, b.b)), t1 = timeAt(Math.max(b.a, b.b));
      state.view = { from: t0, to: t1 }; scheduleTimeline(); pushURL();
      if ($("tl-filter").checked) filterToTimes(t0, t1);
      return;
    }
    const tl = state.tl;
    if (!tl) return;
    const lane = Math.floor((e.offsetY - AXIS) / LANE) - 1;
    const hit = lane >= 0 ? nearestEvent(e.offsetX, lane) : null;
    if (hit) selectEvent(hit[0]);
    else if (!tl.events) zoom(0.25, timeAt(e.offsetX));
    drawTimeline();
  });
  cv.addEventListener("mouseleave", () => { hoverTip(null); if (state.brush) { state.brush = null; drawTimeline(); } });
  cv.addEventListener("keydown", (e) => {
    const keys = { "+": () => zoom(0.5), "=": () => zoom(0.5), "-": () => zoom(2), "ArrowLeft": () => pan(-0.1), "ArrowRight": () => pan(0.1), "Home": showAll,
      "ArrowDown": () => $("tl-down").click(), "ArrowUp": () => $("tl-up").click() };
    if (keys[e.key]) { e.preventDefault(); e.stopPropagation(); keys[e.key](); return; }
    if (e.key === "Enter") {
      const hit = nearestEvent(LABEL + (cv.clientWidth - LABEL) / 2);
      if (hit) selectEvent(hit[0]);
    }
  });
  // The minimap: drag to choose a window over the whole capture, click to centre it.
  let m = null;
  const miniTime = (px) => { const c = state.capture; return c.first_ns + px / mini.clientWidth * (c.last_ns - c.first_ns); };
  mini.addEventListener("mousedown", (e) => { m = { a: e.offsetX }; });
  mini.addEventListener("mouseup", (e) => {
    if (!m) return;
    const a = Math.min(m.a, e.offsetX), b = Math.max(m.a, e.offsetX); m = null;
    if (b - a > 4) { state.view = { from: miniTime(a), to: miniTime(b) }; scheduleTimeline(); pushURL(); return; }
    const v = state.view, half = (v.to - v.from) / 2, t = miniTime(e.offsetX);
    state.view = { from: t - half, to: t + half }; scheduleTimeline(); pushURL();
  });
  mini.addEventListener("keydown", (e) => {
    const keys = { "ArrowLeft": () => pan(-0.5), "ArrowRight": () => pan(0.5), "Home": showAll, "+": () => zoom(0.5), "-": () => zoom(2) };
    if (keys[e.key]) { e.preventDefault(); e.stopPropagation(); keys[e.key](); }
  });
  new ResizeObserver(() => scheduleTimeline()).observe(cv);
}

// hoverTip shows what is under the pointer on the timeline: the nearest
// event of the lane (its record, kind, time, session, finding), or the
// lane's session and the time; null hides it.
function hoverTip(e) {
  const tip = $("tl-tip");
  const tl = state.tl;
  if (!e || !tl) { tip.hidden = true; return; }
  const lane = Math.floor((e.offsetY - AXIS) / LANE) - 1;
  const hit = lane >= 0 ? nearestEvent(e.offsetX, lane) : null;
  const sid = lane >= 0 && state.laneIDs[lane] !== undefined ? state.laneIDs[lane] : "";
  let text = clock(timeAt(e.offsetX));
  if (hit) {
    text = "#" + hit[0] + " · " + (KINDS[hit[3]] ? KINDS[hit[3]][0] : "event") + " · " + clock(hit[1]) + (sid ? " · " + sessionLabel(sid) : "") + (hit[4] ? " · " + LEVELS[hit[4]] + " finding" : "");
  } else if (sid) text = sessionLabel(sid) + " · " + text;
  tip.textContent = text;
  tip.hidden = false;
  const box = $("tl-canvas");
  tip.style.left = Math.min(e.offsetX + box.offsetLeft + 12, box.offsetLeft + box.clientWidth - tip.offsetWidth) + "px";
  tip.style.top = (box.offsetTop + e.offsetY + 14) + "px";
}

// filterToTimes narrows the messages list to [t0, t1] (ns): the filter's
// time clause, replaced on each drag, and the rest of the filter kept.
function filterToTimes(t0, t1) {
  const clause = "time >= " + (t0 / 1e9).toFixed(3) + " && time <= " + (t1 / 1e9).toFixed(3);
  let base = state.filter.replace(/(\s*&&\s*)?time >= -?[0-9.]+ && time <= -?[0-9.]+/, "").trim().replace(/^&&\s*/, "");
  if (base.includes("||") && !/^\(.*\)$/.test(base)) base = "(" + base + ")";
  state.filter = base ? base + " && " + clause : clause;
  $("filter").value = state.filter;
  reloadEvents(); pushURL();
}
