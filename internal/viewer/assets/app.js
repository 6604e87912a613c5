// aaep-replay view: the page. Plain JavaScript, no libraries, no build step.
// Everything comes from the JSON API of package viewer and the /control API
// of package serve, in pages; the capture is never loaded whole.
"use strict";

const $ = (id) => document.getElementById(id);

const KINDS = [
  ["other", "#6b6b6b"], ["session start/end", "#1f4e9c"], ["state change", "#2f7d32"], ["tool", "#7a3fb0"],
  ["awaiting reply", "#c26a00"], ["subscriber reply", "#0a7f86"], ["output", "#4f5b66"], ["progress", "#8d8d3a"], ["connection", "#999999"],
];
const LEVELS = { 1: "INFO", 2: "SHOULD", 3: "MUST" };
const PAGE = 200;

const state = {
  capture: null,
  sessions: [],
  filters: { type: "", urgency: "", source: "", rule: "" },
  session: "",          // session the messages table and trace show
  selected: -1,         // selected record index
  pageFrom: 0, pageStack: [], nextFrom: -1,
  steps: [], traceSession: "",
  view: null,           // timeline window {from, to} in ns
  tl: null,             // last timeline answer
  control: true, ctlSeq: 0, subs: new Map(), lastLive: "",
};

// ---- helpers ----

async function api(path, opts) {
  const r = await fetch(path, opts);
  const text = await r.text();
  let body = null;
  try { body = text ? JSON.parse(text) : null; } catch (e) { body = null; }
  if (!r.ok) {
    const msg = body && body.error ? body.error : (r.status + " " + r.statusText);
    const err = new Error(msg);
    err.status = r.status;
    throw err;
  }
  return body;
}

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

function secs(ns) { return (ns / 1e9).toFixed(3) + "s"; }
function span(first, last) { return secs(first) + " – " + secs(last) + " (" + ((last - first) / 1e9).toFixed(1) + "s)"; }
function shortType(t) { return (t || "").replace(/^aaep:/, "").replace(/^https:\/\/aaep-protocol\.org\/types\//, ""); }
function levelClass(l) { return l === "MUST" || l === "SHOULD" ? "bad" : (l === "INFO" ? "warn" : ""); }

function reportError(where, err) {
  $("check-status").textContent = where + ": " + err.message;
}

// ---- capture and sessions ----

async function loadCapture() {
  const c = await api("/api/capture");
  state.capture = c;
  $("file").textContent = c.file;
  const start = c.header.start ? new Date(c.header.start).toISOString() : "unknown start";
  $("capture-info").textContent = c.records + " records, " + c.sessions.length + " sessions, recorded by " +
    (c.header.tool || "an unknown tool") + " from " + start + (c.index_rebuilt ? " (index rebuilt: the capture was not closed cleanly)" : "");
  if (!state.view) state.view = { from: c.first_ns, to: Math.max(c.last_ns, c.first_ns + 1) };
  const ck = c.check;
  if (ck.error) $("check-status").textContent = "Check stopped: " + ck.error;
  else if (!ck.done) $("check-status").textContent = "Checking the capture: " + ck.read + " of about " + c.records + " records read…";
  else $("check-status").textContent = "Checked " + ck.messages + " messages: " + c.findings.must + " MUST, " +
    c.findings.should + " SHOULD and " + c.findings.info + " INFO findings.";
  return c;
}

async function loadSessions() {
  const s = await api("/api/sessions");
  state.sessions = s.sessions;
  fillFilterOptions();
  renderSessions();
  return s.check_done;
}

function fillFilterOptions() {
  const sets = { type: new Set(), urgency: new Set(), source: new Set(), rule: new Set() };
  for (const s of state.sessions) {
    (s.types || []).forEach((v) => sets.type.add(v));
    (s.urgencies || []).forEach((v) => sets.urgency.add(v));
    (s.sources || []).forEach((v) => sets.source.add(String(v)));
    Object.keys(s.rules || {}).forEach((v) => sets.rule.add(v));
  }
  for (const [name, set] of Object.entries(sets)) {
    const sel = $("f-" + name);
    const keep = sel.value;
    sel.replaceChildren(el("option", { value: "", text: "any" }));
    for (const v of [...set].sort()) sel.append(el("option", { value: v, text: name === "type" ? shortType(v) : v }));
    sel.value = set.has(keep) ? keep : "";
    state.filters[name] = sel.value;
  }
}

function sessionMatches(s) {
  const f = state.filters;
  if (f.type && !(s.types || []).includes(f.type)) return false;
  if (f.urgency && !(s.urgencies || []).includes(f.urgency)) return false;
  if (f.source && !(s.sources || []).map(String).includes(f.source)) return false;
  if (f.rule && !(s.rules || {})[f.rule]) return false;
  return true;
}

function renderSessions() {
  const tb = $("sessions-table").tBodies[0];
  tb.replaceChildren();
  let shown = 0;
  for (const s of state.sessions) {
    if (!sessionMatches(s)) continue;
    shown++;
    const v = s.verdict || { must: 0, should: 0, info: 0 };
    const checked = s.checked;
    const tr = el("tr", { class: s.id === state.session ? "selected" : "" },
      el("td", {}, el("button", { type: "button", class: "linkish", "aria-pressed": String(s.id === state.session),
        "aria-label": "Session " + s.id + (v.must ? ", " + v.must + " MUST findings" : ""), onclick: () => selectSession(s.id) }, s.id)),
      el("td", { text: s.protocol || "–" }),
      el("td", { text: span(s.first_ns, s.last_ns) }),
      el("td", { class: "num", text: String(s.messages || s.records) }),
      el("td", { class: "num " + (v.must ? "bad" : ""), text: checked ? String(v.must) : "…" }),
      el("td", { class: "num " + (v.should ? "bad" : ""), text: checked ? String(v.should) : "…" }),
      el("td", { class: "num", text: checked ? String(v.info) : "…" }),
      el("td", { text: (s.state || "–") + (s.state && !s.complete ? " (incomplete)" : "") }));
    tb.append(tr);
  }
  $("sessions-caption").textContent = "Sessions of the capture: " + shown + " of " + state.sessions.length + " shown";
}

async function selectSession(id) {
  state.session = id;
  renderSessions();
  state.pageStack = [];
  await loadEvents(0);
  await loadTrace(id);
}

// ---- messages table ----

function eventQuery(from) {
  const p = new URLSearchParams({ from: String(from), limit: String(PAGE) });
  if (state.session) p.set("session", state.session);
  const f = state.filters;
  if (f.type) p.set("type", f.type);
  if (f.urgency) p.set("urgency", f.urgency);
  if (f.source) p.set("source", f.source);
  if (f.rule) p.set("rule", f.rule);
  return "/api/events?" + p.toString();
}

// Requests that may overlap (a filter changed twice, a second click) are
// numbered: only the answer to the newest one is shown.
const latest = { events: 0, event: 0, timeline: 0 };

async function loadEvents(from) {
  const n = ++latest.events;
  const r = await api(eventQuery(from));
  if (n !== latest.events) return;
  state.pageFrom = from;
  state.nextFrom = r.next;
  const tb = $("events-table").tBodies[0];
  tb.replaceChildren();
  for (const e of r.events) {
    const tr = el("tr", { "data-index": String(e.index), class: e.index === state.selected ? "selected" : "" },
      el("td", {}, el("button", { type: "button", class: "linkish", "aria-label": "Inspect record " + e.index, onclick: () => selectEvent(e.index) }, "#" + e.index)),
      el("td", { class: "num", text: secs(e.offset_ns) }),
      el("td", { text: e.kind }),
      el("td", { class: "mono", text: e.session || "–" }),
      el("td", { text: shortType(e.type) || "–" }),
      el("td", { text: e.summary }),
      el("td", { class: levelClass(e.worst), text: e.worst || "" }));
    tb.append(tr);
  }
  const parts = [];
  parts.push(state.session ? "Session " + state.session : "All sessions");
  for (const [k, v] of Object.entries(state.filters)) if (v) parts.push(k + " " + v);
  $("events-scope").textContent = parts.join(", ") + ": " + r.events.length + " messages from record " + from + (r.next >= 0 ? " (more follow)" : "") + ".";
  $("ev-prev").disabled = state.pageStack.length === 0;
  $("ev-first").disabled = from === 0;
  $("ev-next").disabled = r.next < 0;
}

// ---- event inspector ----

async function selectEvent(index, opts) {
  opts = opts || {};
  let d;
  const n = ++latest.event;
  try { d = await api("/api/event/" + index); } catch (err) { reportError("Record " + index, err); return; }
  if (n !== latest.event) return;
  state.selected = index;
  renderInspector(d);
  for (const tr of $("events-table").tBodies[0].rows) tr.classList.toggle("selected", tr.dataset.index === String(index));
  drawTimeline();
  if (d.session && d.session !== state.traceSession) await loadTrace(d.session);
  markStep(index, opts.fromTrace);
  if (opts.focus !== false) $("inspector-h").focus({ preventScroll: true });
}

function renderInspector(d) {
  $("insp-empty").hidden = true;
  $("insp").hidden = false;
  $("inspector-h").textContent = "Event inspector: record #" + d.index;
  const dl = $("insp-fields");
  dl.replaceChildren();
  const add = (k, v) => dl.append(el("dt", { text: k }), el("dd", { text: v }));
  add("Record", "#" + d.index);
  add("Received", d.received + " (offset " + secs(d.offset_ns) + ")");
  add("Direction", d.direction);
  add("Source", d.source_info ? d.source + ": " + d.source_info.transport + " " + d.source_info.endpoint : String(d.source));
  add("Session", d.session || "–");
  add("Type", d.type || "–");
  if (d.urgency) add("Urgency", d.urgency);
  add("Summary", d.summary || "–");
  const attrs = Object.entries(d.attrs || {});
  add("Transport attributes", attrs.length ? attrs.map(([k, v]) => k + "=" + v).join(", ") : "none recorded");
  if (d.attrs && d.attrs.id !== undefined) add("SSE id", d.attrs.id);
  if (d.attrs && d.attrs.event !== undefined) add("SSE event", d.attrs.event);
  add("Size", d.bytes + " bytes" + (d.flags.length ? " (" + d.flags.join(", ") + ")" : ""));
  const ul = $("insp-findings");
  ul.replaceChildren();
  if (!d.findings.length) ul.append(el("li", { text: d.checked ? "No finding on this message." : "The check is still running…" }));
  for (const f of d.findings) {
    const r = f.rule_doc || {};
    const spec = r.spec ? "Stated in: " + r.spec + "." : "The rule table says nowhere where this rule is stated.";
    ul.append(el("li", { class: "finding" },
      el("strong", { class: levelClass(LEVELS[f.level] || f.level), text: f.level + " " + f.rule }), " (" + (r.protocol || f.protocol) + "): " + f.message,
      el("br"), el("span", { class: "muted", text: "Rule: " + (r.summary || "") + " " + spec })));
  }
  $("insp-raw").textContent = d.raw_base64 ? "(not UTF-8; base64) " + d.raw_base64 : d.raw;
  $("insp-pretty").textContent = d.pretty || "(not JSON)";
}

// ---- trace ----

async function loadTrace(id) {
  state.traceSession = id;
  state.steps = [];
  $("trace-h").textContent = "Trace: " + id;
  $("trace-status").textContent = "Drawing session " + id + "…";
  const ol = $("trace-steps");
  ol.replaceChildren();
  $("trace-svg").replaceChildren();
  let r;
  try { r = await api("/api/trace/" + encodeURIComponent(id) + "/steps"); } catch (err) { $("trace-status").textContent = err.message; return; }
  if (state.traceSession !== id) return;
  state.steps = r.steps;
  for (const s of r.steps) {
    const label = s.n + ". " + s.from + " → " + s.to + " " + s.label + (s.detail ? " " + s.detail : "") + " (#" + s.index + ")";
    const li = el("li", { "data-index": String(s.index), "data-edge": s.edge },
      el("button", { type: "button", class: "linkish " + levelClass(s.worst), onclick: () => selectEvent(s.index, { fromTrace: true }) }, label + (s.worst ? " — " + s.worst : "")));
    ol.append(li);
  }
  $("trace-status").textContent = r.steps.length + " steps" + (r.more ? " (" + r.more + " more not listed)" : "") + " in session " + id + ".";
  if (!r.drawn) return;
  try {
    const resp = await fetch("/api/trace/" + encodeURIComponent(id) + "/svg");
    if (!resp.ok) { const b = await resp.json(); throw new Error(b.error); }
    const doc = new DOMParser().parseFromString(await resp.text(), "image/svg+xml");
    const svg = doc.documentElement;
    if (state.traceSession !== id || svg.nodeName !== "svg") return;
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", "State machine trace of session " + id + "; the steps list beside it says the same");
    $("trace-svg").replaceChildren(document.importNode(svg, true));
    markStep(state.selected, false);
  } catch (err) {
    $("trace-svg").replaceChildren(el("p", { class: "muted", text: "No drawing: " + err.message }));
  }
}

function markStep(index, fromTrace) {
  let found = null;
  for (const li of $("trace-steps").children) {
    const on = li.dataset.index === String(index);
    li.classList.toggle("selected", on);
    if (on) li.firstChild.setAttribute("aria-current", "step"); else li.firstChild.removeAttribute("aria-current");
    if (on && !found) found = li;
  }
  for (const g of $("trace-svg").querySelectorAll("g.edge.selected-edge")) g.classList.remove("selected-edge");
  if (!found) return;
  if (!fromTrace) found.scrollIntoView({ block: "nearest" });
  const edge = found.dataset.edge;
  for (const g of $("trace-svg").querySelectorAll("g.edge")) if (g.id === edge) g.classList.add("selected-edge");
}

function onSvgClick(ev) {
  const g = ev.target.closest && ev.target.closest("g.edge");
  if (!g) return;
  const step = state.steps.find((s) => s.edge === g.id);
  if (step) selectEvent(step.index, { fromTrace: true });
}

// ---- timeline ----

let tlTimer = null;
function scheduleTimeline() {
  clearTimeout(tlTimer);
  tlTimer = setTimeout(loadTimeline, 60);
}

async function loadTimeline() {
  const v = state.view;
  if (!v) return;
  const cv = $("tl-canvas");
  const width = Math.max(100, Math.floor(cv.clientWidth || 1000) - LANE_LABEL);
  const p = new URLSearchParams({ from_ns: String(Math.floor(v.from)), to_ns: String(Math.ceil(v.to)), buckets: String(width), max: "5000" });
  const n = ++latest.timeline;
  let tl;
  try { tl = await api("/api/timeline?" + p.toString()); } catch (err) { reportError("Timeline", err); return; }
  if (n !== latest.timeline) return;
  state.tl = tl;
  drawTimeline();
}

const LANE_LABEL = 150;
function drawTimeline() {
  const cv = $("tl-canvas");
  const tl = state.tl;
  const v = state.view;
  if (!tl || !v) return;
  const dpr = window.devicePixelRatio || 1;
  const w = cv.clientWidth || 1000;
  const lanes = tl.lanes.length;
  const laneH = Math.max(10, Math.min(26, Math.floor(400 / Math.max(lanes, 1))));
  const h = lanes * laneH + 24;
  cv.style.height = h + "px";
  cv.width = Math.floor(w * dpr);
  cv.height = Math.floor(h * dpr);
  const g = cv.getContext("2d");
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, w, h);
  g.font = "11px system-ui, sans-serif";
  const x = (ns) => LANE_LABEL + (ns - v.from) / (v.to - v.from) * (w - LANE_LABEL - 4);
  for (let i = 0; i < lanes; i++) {
    const y = i * laneH;
    if (tl.lanes[i] === state.session && state.session) { g.fillStyle = "#fff2b3"; g.fillRect(0, y, w, laneH); }
    g.fillStyle = i % 2 ? "#fafaf8" : "#ffffff";
    if (!(tl.lanes[i] === state.session && state.session)) g.fillRect(LANE_LABEL, y, w - LANE_LABEL, laneH);
    g.fillStyle = "#1b1b1b";
    g.fillText((tl.lanes[i] || "(no session)").slice(0, 22), 4, y + laneH - 4);
  }
  if (tl.events) {
    for (const e of tl.events) {
      const [, off, lane, kind, level] = e;
      const px = x(off);
      g.fillStyle = level >= 2 ? "#d0101a" : KINDS[kind][1];
      const bad = level >= 2;
      g.fillRect(px - (bad ? 2 : 1), lane * laneH + 2, bad ? 4 : 2, laneH - 4);
    }
  } else if (tl.buckets) {
    const bw = Math.max(1, (w - LANE_LABEL) / ((tl.to_ns - tl.from_ns) / tl.bucket_ns));
    for (const [lane, b, count, level] of tl.buckets) {
      const px = x(tl.from_ns + b * tl.bucket_ns);
      const a = Math.min(1, 0.25 + Math.log10(count + 1) / 3);
      g.fillStyle = level >= 2 ? "rgba(208,16,26," + a + ")" : "rgba(31,78,156," + a + ")";
      g.fillRect(px, lane * laneH + 2, Math.max(1, bw), laneH - 4);
    }
  }
  if (state.selected >= 0 && tl.events) {
    const e = tl.events.find((e) => e[0] === state.selected);
    if (e) { g.fillStyle = "#f5a700"; g.fillRect(x(e[1]) - 1, 0, 3, lanes * laneH); }
  }
  // Axis.
  g.fillStyle = "#1b1b1b";
  const y0 = lanes * laneH + 14;
  g.fillText(secs(v.from), LANE_LABEL, y0);
  const right = secs(v.to);
  g.fillText(right, w - g.measureText(right).width - 4, y0);
  const n = tl.events ? tl.events.length : tl.count;
  $("tl-range").textContent = secs(v.from) + " to " + secs(v.to) + ": " + n + " events" + (tl.buckets ? " (zoom in to see each)" : "") + (tl.truncated ? " (partial: zoom in)" : "");
  cv.setAttribute("aria-label", "Timeline from " + secs(v.from) + " to " + secs(v.to) + ", " + lanes + " lanes, " + n + " events" +
    (tl.events ? ", " + tl.events.filter((e) => e[4] >= 2).length + " with violations" : ""));
}

function zoom(factor, centre) {
  const v = state.view;
  const c = state.capture;
  const mid = centre === undefined ? (v.from + v.to) / 2 : centre;
  let span = (v.to - v.from) * factor;
  const full = Math.max(c.last_ns - c.first_ns, 1);
  span = Math.max(1e5, Math.min(span, full * 1.05));
  v.from = mid - span * ((mid - v.from) / (v.to - v.from));
  v.to = v.from + span;
  scheduleTimeline();
}

function pan(fraction) {
  const v = state.view;
  const d = (v.to - v.from) * fraction;
  v.from += d; v.to += d;
  scheduleTimeline();
}

function showAll() {
  const c = state.capture;
  state.view = { from: c.first_ns, to: Math.max(c.last_ns, c.first_ns + 1) };
  scheduleTimeline();
}

function timeAt(px) {
  const cv = $("tl-canvas");
  const w = cv.clientWidth;
  const v = state.view;
  return v.from + (px - LANE_LABEL) / (w - LANE_LABEL - 4) * (v.to - v.from);
}

function nearestEvent(px, lane) {
  const tl = state.tl;
  if (!tl || !tl.events || !tl.events.length) return null;
  const t = timeAt(px);
  const perPx = (state.view.to - state.view.from) / ($("tl-canvas").clientWidth - LANE_LABEL);
  let best = null, bestD = Infinity;
  for (const e of tl.events) {
    if (lane !== undefined && lane !== null && e[2] !== lane) continue;
    const d = Math.abs(e[1] - t);
    if (d < bestD) { best = e; bestD = d; }
  }
  return best && bestD <= perPx * 6 ? best : (lane === undefined ? best : null);
}

function initTimeline() {
  const cv = $("tl-canvas");
  const legend = $("tl-legend");
  KINDS.forEach(([name, colour]) => { const li = el("li", { text: name }); li.style.setProperty("--swatch", colour); legend.append(li); });
  const bad = el("li", { text: "breaks a rule" }); bad.style.setProperty("--swatch", "#d0101a"); legend.append(bad);
  $("tl-in").onclick = () => zoom(0.5);
  $("tl-out").onclick = () => zoom(2);
  $("tl-left").onclick = () => pan(-0.25);
  $("tl-right").onclick = () => pan(0.25);
  $("tl-all").onclick = showAll;
  cv.addEventListener("wheel", (e) => { e.preventDefault(); zoom(e.deltaY > 0 ? 1.25 : 0.8, timeAt(e.offsetX)); }, { passive: false });
  let drag = null;
  cv.addEventListener("mousedown", (e) => { drag = { x: e.offsetX, from: state.view.from, to: state.view.to, moved: false }; });
  cv.addEventListener("mousemove", (e) => {
    if (!drag) return;
    const dx = e.offsetX - drag.x;
    if (Math.abs(dx) > 3) drag.moved = true;
    if (!drag.moved) return;
    const per = (drag.to - drag.from) / (cv.clientWidth - LANE_LABEL);
    state.view.from = drag.from - dx * per; state.view.to = drag.to - dx * per;
    scheduleTimeline();
  });
  window.addEventListener("mouseup", () => { setTimeout(() => { drag = null; }, 0); });
  cv.addEventListener("click", (e) => {
    if (drag && drag.moved) return;
    const tl = state.tl;
    if (!tl) return;
    const laneH = (cv.clientHeight - 24) / tl.lanes.length;
    const lane = Math.floor(e.offsetY / laneH);
    const hit = nearestEvent(e.offsetX, lane);
    if (hit) selectEvent(hit[0], { focus: false });
    else if (tl.buckets) zoom(0.25, timeAt(e.offsetX));
  });
  cv.addEventListener("keydown", (e) => {
    const keys = { "+": () => zoom(0.5), "=": () => zoom(0.5), "-": () => zoom(2), "ArrowLeft": () => pan(-0.1), "ArrowRight": () => pan(0.1), "Home": showAll };
    if (keys[e.key]) { e.preventDefault(); keys[e.key](); return; }
    if (e.key === "Enter") {
      const hit = nearestEvent(LANE_LABEL + (cv.clientWidth - LANE_LABEL) / 2);
      if (hit) selectEvent(hit[0]);
    }
  });
  window.addEventListener("resize", scheduleTimeline);
}

// ---- replay control ----

async function control(action, params) {
  $("rp-error").textContent = "";
  const q = params ? "?" + new URLSearchParams(params).toString() : "";
  try {
    const st = await api("/control/" + action + q, { method: "POST" });
    renderControl(st);
  } catch (err) {
    $("rp-error").textContent = "Replay " + action + ": " + err.message;
  }
}

function describe(st) {
  const p = st.position;
  const where = p.index >= 0 ? "event #" + p.index + " (" + shortType(p.type) + ", +" + secs(p.offset_ns) + ")" : "the start";
  const n = st.subscribers.filter((s) => s.state === "active").length;
  const subs = n === 1 ? "1 subscriber" : n + " subscribers";
  switch (st.state) {
    case "waiting": return "Replay waiting for a subscriber to attach; " + st.released + " events sent so far.";
    case "ended": return "Replay at its end after " + where + "; seek to play again. " + subs + " attached.";
    case "paused": return "Replay paused after " + where + ", speed " + st.speed + "×, " + subs + " attached.";
    default: return "Replay playing, at " + where + ", speed " + st.speed + "×, " + subs + " attached.";
  }
}

function renderControl(st) {
  const text = describe(st);
  if (text !== state.lastLive) { $("rp-live").textContent = text; state.lastLive = text; }
  $("rp-play").setAttribute("aria-pressed", String(st.state === "playing"));
  $("rp-pause").setAttribute("aria-pressed", String(st.state === "paused"));
  const sp = $("rp-speed");
  if (document.activeElement !== sp && [...sp.options].some((o) => Number(o.value) === st.speed)) sp.value = String(st.speed);
  renderSubscribers(st.subscribers);
}

function renderSubscribers(list) {
  const box = $("rp-subs");
  const ids = new Set(list.map((s) => s.subscription));
  for (const s of list) {
    let card = box.querySelector('[data-sub="' + CSS.escape(s.subscription) + '"]');
    if (!card) {
      const hid = "sub-h-" + s.subscription.replace(/[^A-Za-z0-9_-]/g, "");
      card = el("section", { class: "sub", "data-sub": s.subscription, "aria-labelledby": hid },
        el("h4", { id: hid }), el("p", { class: "muted" }), el("ol", { tabindex: "0", "aria-label": "What " + s.subscription + " received and sent" }));
      box.append(card);
    }
    card.querySelector("h4").textContent = s.subscription + " (" + s.transport + ", " + s.state + ")";
    card.querySelector("p").textContent = "Received " + s.sent + " events, sent " + s.replies + " replies" + (s.close ? "; closed: " + s.close.reason : "") + ".";
  }
  for (const card of [...box.children]) if (!ids.has(card.dataset.sub)) card.remove();
  if (!list.length) box.replaceChildren(el("p", { class: "muted", text: "No subscriber attached yet." }));
  else for (const p of [...box.children]) if (p.tagName === "P") p.remove();
}

function logLine(e) {
  if (e.kind === "event") {
    return el("li", {}, "received ", el("button", { type: "button", class: "linkish", onclick: () => selectEvent(e.index) }, "#" + e.index), " " + shortType(e.type) + (e.session ? " " + e.session : ""));
  }
  if (e.kind === "receive") {
    let what = e.message_type || "a message";
    const pl = e.payload || {};
    if (pl.decision) what += " decision=" + pl.decision;
    if (pl.response !== undefined) what += " response=" + JSON.stringify(pl.response);
    return el("li", { class: e.verdict === "ignored" ? "bad" : "" }, "sent " + what + (e.verdict ? " (" + e.verdict + (e.reason ? ": " + e.reason : "") + ")" : ""));
  }
  return el("li", { class: "muted", text: e.kind + (e.reason ? ": " + e.reason : "") });
}

async function pollControl() {
  if (!state.control) return;
  try {
    const st = await api("/control");
    const log = await api("/control/log?since=" + state.ctlSeq);
    renderControl(st);
    for (const e of log.entries) {
      const card = $("rp-subs").querySelector('[data-sub="' + CSS.escape(e.subscription) + '"]');
      if (!card) continue;
      const ol = card.querySelector("ol");
      ol.append(logLine(e));
      while (ol.children.length > 300) ol.firstChild.remove();
      ol.scrollTop = ol.scrollHeight;
    }
    state.ctlSeq = log.next;
  } catch (err) {
    if (err.status === 404) {
      state.control = false;
      $("rp-live").textContent = "Replay control is off (view --shared=false gives each subscriber its own replay).";
      for (const id of ["rp-play", "rp-pause", "rp-step", "rp-seek", "rp-speed"]) $(id).disabled = true;
      return;
    }
    $("rp-error").textContent = "Replay status: " + err.message;
  }
}

function initControl() {
  $("ws-url").textContent = "ws://" + location.host + "/aaep/v1/ws";
  $("sse-url").textContent = location.origin + "/aaep/v1/events";
  $("rp-play").onclick = () => control("play");
  $("rp-pause").onclick = () => control("pause");
  $("rp-step").onclick = () => control("step");
  $("rp-seek").onclick = () => {
    if (state.selected < 0) { $("rp-error").textContent = "Select a message first: the replay continues from it."; return; }
    control("seek", { index: state.selected });
  };
  $("rp-speed").onchange = () => control("speed", { value: $("rp-speed").value });
}

// ---- start ----

function initFilters() {
  for (const name of ["type", "urgency", "source", "rule"]) {
    $("f-" + name).onchange = () => { state.filters[name] = $("f-" + name).value; renderSessions(); state.pageStack = []; loadEvents(0); };
  }
  $("f-clear").onclick = () => {
    for (const name of ["type", "urgency", "source", "rule"]) { $("f-" + name).value = ""; state.filters[name] = ""; }
    renderSessions(); state.pageStack = []; loadEvents(0);
  };
  $("ev-next").onclick = () => { if (state.nextFrom >= 0) { state.pageStack.push(state.pageFrom); loadEvents(state.nextFrom); } };
  $("ev-prev").onclick = () => { if (state.pageStack.length) loadEvents(state.pageStack.pop()); };
  $("ev-first").onclick = () => { state.pageStack = []; loadEvents(0); };
  $("ev-all").onclick = () => { state.session = ""; renderSessions(); state.pageStack = []; loadEvents(0); };
  $("trace-svg").addEventListener("click", onSvgClick);
}

async function start() {
  initFilters();
  initTimeline();
  initControl();
  try {
    await loadCapture();
    await loadEvents(0);
    scheduleTimeline();
    let done = await loadSessions();
    while (!done) {
      await new Promise((r) => setTimeout(r, 700));
      await loadCapture();
      done = await loadSessions();
    }
    await loadCapture();
    await loadEvents(state.pageFrom);
    scheduleTimeline();
    document.body.dataset.ready = "true";
  } catch (err) {
    reportError("Loading", err);
  }
  setInterval(pollControl, 400);
  pollControl();
}

window.aaepView = { state, selectEvent, selectSession, control };
start();
