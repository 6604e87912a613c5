// aaep-replay view: the page. Plain JavaScript, no build step, no library:
// the lists are virtual (only the rows on screen exist), every answer of the
// API is a bounded page, and the page never scrolls on selection: each pane
// scrolls on its own.
"use strict";

const $ = (id) => document.getElementById(id);

const KINDS = [
  ["other", "#6b6b6b"], ["session start/end", "#1f4e9c"], ["state change", "#2f7d32"], ["tool", "#7a3fb0"],
  ["awaiting reply", "#c26a00"], ["subscriber reply", "#0a7f86"], ["output", "#4f5b66"], ["progress", "#8d8d3a"], ["connection", "#999999"],
];
const LEVELS = { 1: "INFO", 2: "SHOULD", 3: "MUST" };
const ROW = 22;
const PAGE = 50;

const state = {
  capture: null,
  session: "",          // session the messages list and the trace show (its key)
  selected: -1,         // selected record index
  selRow: -1,           // its row in the messages list
  filter: "", q: "",
  sort: { key: "order", desc: false }, onlyFindings: false,
  several: false,       // several recordings are viewed (the capture lists them)
  recording: "",        // only the sessions of this recording (several only)
  traceSession: "", steps: null,
  view: null,           // timeline window {from, to} in ns
  tl: null, laneOffset: 0, laneIDs: [],
  control: true, ctlSeq: 0, ctl: null, lastLive: "",
  detail: null,
};

// ---- helpers ----

async function api(path, opts) {
  const r = await fetch(path, opts);
  const text = await r.text();
  let body = null;
  try { body = text ? JSON.parse(text) : null; } catch (e) { body = null; }
  if (!r.ok) {
    const err = new Error(body && body.error ? body.error : (r.status + " " + r.statusText));
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
function clock(ns) {
  const c = state.capture;
  if (!$("tl-abs").checked || !c || !c.header.start) return secs(ns);
  return new Date(Date.parse(c.header.start) + ns / 1e6).toISOString().slice(11, 23);
}
function span(first, last) { return secs(first) + " (" + ((last - first) / 1e9).toFixed(1) + "s)"; }
function shortType(t) { return (t || "").replace(/^aaep:/, "").replace(/^https:\/\/aaep-protocol\.org\/types\//, ""); }
function levelClass(l) { return l === "MUST" || l === "SHOULD" ? "bad" : (l === "INFO" ? "warn" : ""); }
function report(where, err) { $("check-status").textContent = where + ": " + err.message; }

function listQuery(extra) {
  const p = new URLSearchParams(extra || {});
  if (state.session) p.set("session", state.session);
  if (state.filter) p.set("filter", state.filter);
  if (state.q) p.set("q", state.q);
  return p;
}

// ---- virtual list ----
// A listbox whose rows are fetched a page at a time and drawn only while
// on screen. One tab stop; arrows, Page keys, Home and End move the
// selection; aria-activedescendant names the selected row.

class VList {
  constructor(box, opts) {
    this.box = box; this.o = opts; this.total = 0; this.pages = new Map(); this.sel = -1; this.gen = 0;
    this.spacer = el("div", { class: "spacer" });
    box.append(this.spacer);
    box.addEventListener("scroll", () => this.draw());
    box.addEventListener("click", (e) => {
      const r = e.target.closest(".vrow");
      if (r) this.choose(Number(r.dataset.row), true);
    });
    box.addEventListener("keydown", (e) => this.key(e));
    new ResizeObserver(() => this.draw()).observe(box);
  }
  // reset empties the list; first, when given, is its first page.
  reset(total, first) {
    this.gen++; this.total = total; this.pages.clear(); this.sel = -1;
    if (first) this.pages.set(0, { rows: first, wait: Promise.resolve() });
    this.box.scrollTop = 0;
    this.spacer.style.height = (total * ROW) + "px";
    this.draw();
  }
  setTotal(total) { this.total = total; this.spacer.style.height = (total * ROW) + "px"; this.draw(); }
  invalidate() { this.gen++; this.pages.clear(); this.draw(); }
  row(i) { const p = this.pages.get(Math.floor(i / PAGE)); return p && p.rows ? p.rows[i % PAGE] : undefined; }
  async load(page) {
    if (this.pages.has(page)) return this.pages.get(page).wait;
    const gen = this.gen;
    const entry = {};
    entry.wait = this.o.fetch(page * PAGE, PAGE).then((r) => {
      if (gen !== this.gen) return;
      entry.rows = r.rows;
      if (r.total !== undefined && r.total !== this.total) this.setTotal(r.total);
      this.draw();
    }).catch((err) => { this.pages.delete(page); report("List", err); });
    this.pages.set(page, entry);
    return entry.wait;
  }
  draw() {
    if (this.total === 0 && !this.pages.has(0)) this.load(0); // learns the total
    const h = this.box.clientHeight || 300;
    const first = Math.max(0, Math.floor(this.box.scrollTop / ROW) - 2);
    const last = Math.min(this.total, Math.ceil((this.box.scrollTop + h) / ROW) + 2);
    const keep = new Map();
    for (const c of [...this.box.children]) if (c !== this.spacer) { const i = Number(c.dataset.row); if (i >= first && i < last && c.dataset.gen === String(this.gen) && c.dataset.filled === "1") keep.set(i, c); else c.remove(); }
    for (let i = first; i < last; i++) {
      if (keep.has(i)) { this.decorate(keep.get(i), i); continue; }
      const data = this.row(i);
      if (data === undefined) this.load(Math.floor(i / PAGE));
      const r = el("div", { class: "vrow " + (this.o.cls || ""), role: "option", id: this.box.id + "-r" + i, "data-row": String(i), "data-gen": String(this.gen),
        "aria-setsize": String(this.total), "aria-posinset": String(i + 1) });
      r.style.top = (i * ROW) + "px";
      if (data !== undefined) {
        this.o.render(r, data, i); r.dataset.filled = "1";
        if (!this.marked) { this.marked = true; performance.mark(this.box.id + "-filled"); } // the first rows on screen
      } else { r.textContent = "…"; r.setAttribute("aria-label", "loading row " + (i + 1)); }
      this.decorate(r, i);
      this.box.append(r);
    }
    const cur = this.box.querySelector("#" + CSS.escape(this.box.id + "-r" + this.sel));
    if (cur) this.box.setAttribute("aria-activedescendant", cur.id); else this.box.removeAttribute("aria-activedescendant");
  }
  decorate(r, i) {
    r.setAttribute("aria-selected", String(i === this.sel));
    if (this.o.mark) this.o.mark(r, this.row(i), i);
  }
  // show scrolls the list (never the page) so that row i is in view.
  show(i) {
    const top = i * ROW, h = this.box.clientHeight;
    if (top < this.box.scrollTop) this.box.scrollTop = top;
    else if (top + ROW > this.box.scrollTop + h) this.box.scrollTop = top + ROW - h;
  }
  select(i, scroll) { this.sel = i; if (scroll && i >= 0) this.show(i); this.draw(); }
  async choose(i, byUser) {
    if (i < 0 || i >= this.total) return;
    this.select(i, true);
    let data = this.row(i);
    if (data === undefined) { await this.load(Math.floor(i / PAGE)); data = this.row(i); }
    if (data !== undefined && this.o.choose) this.o.choose(data, i, byUser);
  }
  key(e) {
    const page = Math.max(1, Math.floor(this.box.clientHeight / ROW) - 1);
    const moves = { ArrowDown: 1, ArrowUp: -1, PageDown: page, PageUp: -page };
    let to = null;
    if (moves[e.key] !== undefined) to = Math.min(this.total - 1, Math.max(0, (this.sel < 0 ? 0 : this.sel + moves[e.key])));
    else if (e.key === "Home") to = 0;
    else if (e.key === "End") to = this.total - 1;
    else if (e.key === "Enter" && this.o.enter && this.sel >= 0) { e.preventDefault(); this.o.enter(this.row(this.sel)); return; }
    if (to === null) return;
    e.preventDefault();
    this.choose(to, true);
  }
}

// ---- capture and sessions ----

let sessions, events, steps;

async function loadCapture() {
  const c = await api("/api/capture");
  state.capture = c;
  $("file").textContent = c.file;
  const start = c.header.start ? new Date(c.header.start).toISOString() : "unknown start";
  $("capture-info").textContent = c.records + " records, " + c.index_sessions + " sessions, recorded by " +
    (c.header.tool || "an unknown tool") + " from " + start + (c.index_rebuilt ? " (index rebuilt: the capture was not closed cleanly)" : "");
  if (!state.view) state.view = { from: c.first_ns, to: Math.max(c.last_ns, c.first_ns + 1) };
  if (c.recordings && c.recordings.length > 1) renderRecordings(c);
  const ck = c.check;
  if (ck.error) $("check-status").textContent = "Check stopped: " + ck.error;
  else if (!ck.done) $("check-status").textContent = "Checking the capture: " + ck.read + " of about " + c.records + " records read…";
  else $("check-status").textContent = "Checked " + ck.messages + " messages: " + c.findings.must + " MUST, " +
    c.findings.should + " SHOULD and " + c.findings.info + " INFO findings.";
  return c;
}

const SESS_COLS = [["id", "Session"], ["protocol", "Proto"], ["first", "Start"], ["messages", "Msgs"], ["must", "MUST"], ["should", "SHOULD"], ["info", "INFO"], ["state", "Ended in"]];
// REC_COL is the column of the session's recording, second, when several
// recordings are viewed.
const REC_COL = ["recording", "Recording"];
function colName(key) { return (key === REC_COL[0] ? REC_COL : SESS_COLS.find((c) => c[0] === key))[1]; }

function sessionQuery(from, n) {
  const p = new URLSearchParams({ from: String(from), limit: String(n), sort: state.sort.key });
  if (state.sort.desc) p.set("desc", "1");
  if (state.onlyFindings) p.set("findings", "1");
  if (state.recording) p.set("recording", state.recording);
  return p;
}

function sortButton(key, name) {
  return el("button", { type: "button", "data-key": key, class: "c-" + key, onclick: () => {
    if (state.sort.key === key) state.sort.desc = !state.sort.desc;
    else { state.sort.key = key; state.sort.desc = ["must", "should", "info", "messages"].includes(key); }
    refreshSessions(); pushURL();
  } }, name);
}

function initSessions() {
  const bar = $("sessions-sort");
  for (const [key, name] of SESS_COLS) bar.append(sortButton(key, name));
  sessions = new VList($("sessions-list"), {
    cls: "sess",
    fetch: async (from, n) => { const r = await api("/api/sessions?" + sessionQuery(from, n)); sessionsCaption(r); return { rows: r.sessions, total: r.total }; },
    render: (r, s) => {
      const v = s.verdict || { must: 0, should: 0, info: 0 };
      const ck = s.checked;
      const cell = (cls, label, text) => el("span", { class: cls }, el("span", { class: "sr-only", text: label + " " }), text);
      r.append(el("span", { class: "mono c-id", text: s.id }));
      if (s.recording || s.stream) sessionInfo.set(skey(s), s);
      if (state.several) {
        const c = cell("mono c-recording", "recording", s.recording ? recLabel(s.recording) : (ck ? "–" : "…"));
        if (s.recording) c.title = s.recording;
        r.append(c);
      }
      r.append(cell("c-protocol", "protocol", s.protocol || "–"), cell("num c-first", "starts at", secs(s.first_ns)),
        cell("num c-messages", "messages", String(s.messages || s.records)),
        cell("num c-must " + (v.must ? "bad" : ""), "MUST", ck ? String(v.must) : "…"),
        cell("num c-should " + (v.should ? "bad" : ""), "SHOULD", ck ? String(v.should) : "…"),
        cell("num c-info", "INFO", ck ? String(v.info) : "…"),
        cell("c-state", "ended in", (s.state || "–") + (s.state && !s.complete ? "*" : "")));
    },
    mark: (r, s) => {
      if (!s) return;
      const on = skey(s) === state.session;
      r.classList.toggle("current", on);
      if (on) r.setAttribute("aria-current", "true"); else r.removeAttribute("aria-current");
    },
    choose: (s) => selectSession(skey(s)),
  });
  $("only-findings").onchange = () => { state.onlyFindings = $("only-findings").checked; refreshSessions(); pushURL(); };
  $("rec-select").onchange = () => { state.recording = $("rec-select").value; refreshSessions(); pushURL(); };
}

// ---- several recordings ----
// When several recordings are viewed (hosts' rotated parts, a prefix), the
// sessions get a Recording column and a filter by recording; the scope of
// the messages and the inspector name the recording. One recording: none
// of it.

// A session is its recording's (and, in a recording of a replay, its
// subscription's): recordings, and subscriptions, share session ids, so the
// page names a session by its key (the API's "key"; its id alone in a
// recording of one stream), never by its id.
function skey(s) { return s.key || s.id; }
const sessionInfo = new Map(); // session key -> its row, as the list showed it
let recPrefix = "";            // the directory or prefix all the recordings listed share

// recLabel is a recording's name without the directory (or s3:// prefix)
// that all of them share: what tells them apart.
function recLabel(name) { return recPrefix && name.startsWith(recPrefix) ? name.slice(recPrefix.length) : name; }

function commonDir(names) {
  if (!names.length) return "";
  let p = names[0];
  for (const n of names) while (!n.startsWith(p)) p = p.slice(0, -1);
  return p.slice(0, p.lastIndexOf("/") + 1);
}

function count(n, one, many) { return n + " " + (n === 1 ? one : many); }

// renderRecordings shows the column and the filter (once) and keeps the
// filter's counts up to date while the check runs.
function renderRecordings(c) {
  const sel = $("rec-select");
  if (!state.several) {
    state.several = true;
    $("sessions-box").classList.add("several");
    $("sessions-sort").insertBefore(sortButton(REC_COL[0], REC_COL[1]), $("sessions-sort").children[1]);
    $("rec-filter").hidden = false;
    sel.append(el("option", { value: "" }));
    if (sessions) sessions.invalidate();
  }
  const total = c.recordings_total || c.recordings.length;
  recPrefix = commonDir(c.recordings.map((r) => r.name));
  sel.options[0].textContent = "All " + total + " recordings";
  const have = new Map([...sel.options].map((o) => [o.value, o]));
  for (const r of c.recordings) {
    let o = have.get(r.name);
    if (!o) { o = el("option", { value: r.name }); sel.insertBefore(o, sel.querySelector("option[data-extra]")); }
    delete o.dataset.extra;
    const f = r.findings || {};
    o.textContent = recLabel(r.name) + ": " + count(r.sessions, "session", "sessions") + ", " + count(r.messages, "message", "messages") +
      (f.must ? ", " + f.must + " MUST" : "") + (c.check.done ? "" : " so far");
  }
  $("rec-note").textContent = (recPrefix ? "in " + recPrefix : "") + (recPrefix && c.recordings_cut ? "; " : "") +
    (c.recordings_cut ? "the list shows the first " + c.recordings.length + " of " + total + " recordings" : "");
  syncRecording();
}

// syncRecording sets the filter to state.recording, adding it to the list
// when the list (cut) does not hold it.
function syncRecording() {
  const sel = $("rec-select");
  if (state.recording && ![...sel.options].some((o) => o.value === state.recording)) {
    sel.append(el("option", { value: state.recording, "data-extra": "1", text: recLabel(state.recording) + " (not in the list)" }));
  }
  sel.value = state.recording;
}

// sessionOf is the row of the session of key (or of the first session of
// an id, the form of older links), null when there is none.
async function sessionOf(key) {
  if (!key) return null;
  if (sessionInfo.has(key)) return sessionInfo.get(key);
  const r = await api("/api/sessions?limit=1&key=" + encodeURIComponent(key)).catch(() => null);
  const s = r && r.sessions[0];
  if (s && skey(s) === key && (s.recording || s.stream)) sessionInfo.set(key, s);
  return s || null;
}

// sessionRecording is the recording of the session of key ("" for one recording).
async function sessionRecording(key) {
  if (!state.several || !key) return "";
  const s = await sessionOf(key);
  return s && s.recording ? s.recording : "";
}

// sessionLabel names the session of key as the page shows it: its id, and
// when several recordings or subscriptions are viewed, its stream.
function sessionLabel(key) {
  const s = sessionInfo.get(key);
  if (!s || !s.stream) return key;
  return s.id + " (" + (s.recording && s.stream === s.recording ? recLabel(s.recording) : recLabel(s.stream)) + ")";
}

function sessionsCaption(r) {
  $("sessions-caption").textContent = r.total + " of " + r.all + " sessions" + (r.pending ? " (" + r.pending + " not checked yet)" : "");
  state.sessionTotal = r.total;
}

function refreshSessions() {
  for (const b of $("sessions-sort").children) {
    const on = b.dataset.key === state.sort.key;
    b.setAttribute("aria-pressed", String(on));
    b.textContent = colName(b.dataset.key) + (on ? (state.sort.desc ? " ▼" : " ▲") : "");
  }
  sessions.reset(0);
  sessions.load(0).then(() => { drawTimelineSoon(); });
}

async function selectSession(id, keepEvent) {
  state.session = id;
  sessions.draw();
  $("events-scope").textContent = "Session " + sessionLabel(id) + "…";
  await reloadEvents();
  if (id) {
    state.laneOffset = 0;
    if (!keepEvent) {
      const s = await sessionOf(id);
      if (s && skey(s) === id) zoomTo(s.first_ns, s.last_ns);
    }
    scheduleTimeline();
    loadTrace(id);
  }
  pushURL();
}

// ---- messages ----

function initEvents() {
  events = new VList($("events-list"), {
    cls: "ev",
    fetch: (from, n) => api("/api/rows?" + listQuery({ from: String(from), limit: String(n) })),
    render: (r, e) => {
      r.dataset.index = String(e.index);
      const cell = (cls, label, text) => el("span", { class: cls }, el("span", { class: "sr-only", text: label }), text);
      r.append(el("span", { class: "mono", text: "#" + e.index }), cell("num", ", at ", secs(e.offset_ns)), cell("", ", ", e.kind),
        cell("mono", ", session ", e.session || "–"), cell("", ", ", shortType(e.type) || "–"), cell("", ": ", e.summary),
        cell(levelClass(e.worst), e.worst ? ", finding " : "", e.worst || ""));
    },
    mark: (r, e) => { r.classList.toggle("playhead", !!(e && state.ctl && state.ctl.position && state.ctl.position.index === e.index)); },
    choose: (e, i) => { state.selRow = i; selectEvent(e.index, { fromList: true }); },
    enter: () => $("inspector-h").focus({ preventScroll: true }),
  });
  $("ev-all").onclick = () => { state.session = ""; sessions.draw(); reloadEvents(); pushURL(); };
  $("ev-nextf").onclick = () => nextFinding(1);
  $("ev-prevf").onclick = () => nextFinding(-1);
}

async function reloadEvents() {
  const r = await api("/api/rows?" + listQuery({ from: "0", limit: String(PAGE) })).catch((err) => { $("filter-status").textContent = err.message; $("filter").setAttribute("aria-invalid", "true"); return null; });
  if (!r) return;
  latest.rows = r;
  $("filter").removeAttribute("aria-invalid");
  events.reset(r.total, r.rows);
  const rec = state.several ? await sessionRecording(state.session) : "";
  if (state.several && r !== latest.rows) return; // a later reload answered meanwhile
  const sid = sessionInfo.has(state.session) ? sessionInfo.get(state.session).id : state.session;
  const parts = [state.session ? "Session " + sid + (rec ? " of recording " + rec : "") : "All sessions"];
  if (state.filter) parts.push("filter " + state.filter);
  if (state.q) parts.push("text “" + state.q + "”");
  $("events-scope").textContent = parts.join(", ") + ": " + r.total + " rows" + (r.partial ? " so far (the check is still reading)" : "") + ".";
  $("filter-status").textContent = state.filter || state.q ? r.total + " match" : "";
  if (state.selected >= 0) locateSelected();
}

async function locateSelected() {
  const r = await api("/api/find?" + listQuery({ index: String(state.selected) })).catch(() => null);
  if (r && r.exact) { state.selRow = r.row; events.select(r.row, true); }
  else { state.selRow = -1; events.select(-1); }
}

async function nextFinding(dir) {
  const r = await api("/api/find?" + listQuery({ row: String(state.selRow), dir: String(dir) })).catch((err) => { report("Find", err); return null; });
  if (!r) return;
  if (r.row < 0) { $("filter-status").textContent = "No " + (dir > 0 ? "later" : "earlier") + " finding in this list."; return; }
  $("filter-status").textContent = "";
  state.selRow = r.row;
  events.select(r.row, true);
  selectEvent(r.index, { fromList: true });
}

// ---- inspector ----

const latest = { event: 0, timeline: 0, steps: 0 };

async function selectEvent(index, opts) {
  opts = opts || {};
  const n = ++latest.event;
  let d;
  try { d = await api("/api/event/" + index); } catch (err) { report("Record " + index, err); return; }
  if (n !== latest.event) return;
  state.selected = index;
  state.detail = d;
  renderInspector(d);
  if (!opts.fromList) {
    if (d.session && state.session && dkey(d) !== state.session) { state.session = dkey(d); sessions.draw(); await reloadEvents(); }
    else locateSelected();
  }
  drawTimeline();
  if (d.session && dkey(d) !== state.traceSession) loadTrace(dkey(d)).then(() => markStep(index, opts.fromTrace));
  else markStep(index, opts.fromTrace);
  if (opts.focus) $("inspector-h").focus({ preventScroll: true });
  pushURL();
}

// dkey is the key of a record's session (see skey).
function dkey(d) { return d.session_key || d.session; }

function renderInspector(d) {
  $("insp-empty").hidden = true;
  $("insp").hidden = false;
  $("copy-json").disabled = false;
  $("copy-curl").disabled = false;
  $("inspector-h").textContent = "Event inspector: record #" + d.index;
  const dl = $("insp-fields");
  dl.replaceChildren();
  const add = (k, v) => dl.append(el("dt", { text: k }), el("dd", { text: v }));
  add("Record", "#" + d.index);
  add("Received", d.received + " (offset " + secs(d.offset_ns) + ")");
  add("Direction", d.direction);
  add("Source", d.source_info ? d.source + ": " + d.source_info.transport + " " + d.source_info.endpoint : String(d.source));
  add("Session", d.session || "–");
  if (d.recording) add("Recording", d.recording);
  add("Type", d.type || "–");
  if (d.urgency) add("Urgency", d.urgency);
  add("Summary", d.summary || "–");
  const attrs = Object.entries(d.attrs || {});
  add("Transport attributes", attrs.length ? attrs.map(([k, v]) => k + "=" + v).join(", ") : "none recorded");
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

async function copyText(text, what) {
  try { await navigator.clipboard.writeText(text); $("copy-status").textContent = what + " copied."; }
  catch (err) {
    // No clipboard (an insecure origin, a denied permission): show it to copy by hand.
    $("copy-status").textContent = what + ": " + text;
  }
}

function initInspector() {
  $("copy-json").onclick = () => { const d = state.detail; if (d) copyText(d.pretty || d.raw, "Record #" + d.index + " as JSON"); };
  $("copy-curl").onclick = () => { const d = state.detail; if (d) copyText("curl -X POST '" + location.origin + "/control/seek?index=" + d.index + "'", "A curl seek to #" + d.index); };
  const upd = () => {
    for (const [id, f] of [["export-jsonl", "jsonl"], ["export-cap", "capture"]]) $(id).href = "/api/export?" + listQuery({ format: f });
  };
  state.updateExport = upd;
  upd();
}

// ---- trace ----

async function loadTrace(id) {
  state.traceSession = id;
  state.steps = null;
  $("trace-h").textContent = "Trace: " + sessionLabel(id);
  $("trace-status").textContent = "Drawing session " + sessionLabel(id) + "…";
  $("trace-svg").replaceChildren();
  steps.reset(0);
  let r;
  try { r = await api("/api/trace/" + encodeURIComponent(id) + "/steps?limit=1"); } catch (err) { $("trace-status").textContent = err.message; return; }
  if (state.traceSession !== id) return;
  state.steps = r;
  steps.reset(r.total);
  $("trace-status").textContent = r.total + " steps" + (r.more ? " (" + r.more + " more not listed)" : "") + " in session " + id + ".";
  if (!r.drawn) return;
  try {
    const resp = await fetch("/api/trace/" + encodeURIComponent(id) + "/svg");
    if (!resp.ok) { const b = await resp.json(); throw new Error(b.error); }
    const doc = new DOMParser().parseFromString(await resp.text(), "image/svg+xml");
    const svg = doc.documentElement;
    if (state.traceSession !== id || svg.nodeName !== "svg") return;
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", "State machine trace of session " + id + "; the steps list says the same");
    $("trace-svg").replaceChildren(document.importNode(svg, true));
    markStep(state.selected, true);
  } catch (err) {
    $("trace-svg").replaceChildren(el("p", { class: "muted", text: "No drawing: " + err.message }));
  }
}

function initTrace() {
  steps = new VList($("trace-steps"), {
    fetch: async (from, n) => {
      if (!state.traceSession) return { rows: [], total: 0 };
      const r = await api("/api/trace/" + encodeURIComponent(state.traceSession) + "/steps?from=" + from + "&limit=" + n);
      return { rows: r.steps, total: r.total };
    },
    render: (r, s) => {
      r.dataset.index = String(s.index); r.dataset.edge = s.edge;
      const label = s.n + ". " + s.from + " → " + s.to + " " + s.label + (s.detail ? " " + s.detail : "") + " (#" + s.index + ")" + (s.worst ? " — " + s.worst : "");
      r.append(el("span", { class: levelClass(s.worst), text: label }));
    },
    mark: (r, s) => { if (s) r.classList.toggle("current", s.index === state.selected); },
    choose: (s) => selectEvent(s.index, { fromTrace: true }),
  });
  $("trace-svg").addEventListener("click", (ev) => {
    const g = ev.target.closest && ev.target.closest("g.edge");
    if (!g) return;
    for (let i = 0; i < steps.total; i++) { const s = steps.row(i); if (s && s.edge === g.id) { steps.choose(i, true); return; } }
    api("/api/trace/" + encodeURIComponent(state.traceSession) + "/steps?limit=1000").then((r) => {
      const s = r.steps.find((x) => x.edge === g.id);
      if (s) selectEvent(s.index, { fromTrace: true });
    });
  });
}

async function markStep(index) {
  for (const g of $("trace-svg").querySelectorAll("g.edge.selected-edge")) g.classList.remove("selected-edge");
  if (!state.steps || index < 0) return;
  const n = ++latest.steps;
  const r = await api("/api/trace/" + encodeURIComponent(state.traceSession) + "/steps?limit=1&index=" + index).catch(() => null);
  if (!r || n !== latest.steps) return;
  const hit = r.steps[0] && r.steps[0].index === index ? r.steps[0] : null;
  if (!hit) { steps.select(-1); return; }
  steps.select(r.from, true);
  for (const g of $("trace-svg").querySelectorAll("g.edge")) if (g.id === hit.edge) g.classList.add("selected-edge");
}

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
    g.fillText((lane.all ? "All " + tl.sessions + " sessions" : lane.id).slice(0, 24), 4, y + LANE - 4);
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
    g.fillText((state.laneOffset > 0 ? state.laneOffset + " lanes above; " : "") + (more > 0 ? "+" + more + " more lanes (Lanes ▼)" : ""), 4, Math.min(h - 3, lanesShown + 12));
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
  $("tl-range").textContent = clock(v.from) + " to " + clock(v.to) + ": " + n + " events, " + detail + (tl.spans ? ", " + tl.spans.length + " spans" : "");
  cv.setAttribute("aria-label", "Timeline from " + clock(v.from) + " to " + clock(v.to) + ", " + tl.lanes.length + " of " + tl.sessions + " session lanes, " + n + " events" +
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
  state.view = { from: Math.max(c.first_ns - pad, from - pad), to: to + pad };
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
  cv.addEventListener("mousemove", (e) => { if (state.brush) { state.brush.b = e.offsetX; drawTimeline(); } });
  cv.addEventListener("mouseup", (e) => {
    const b = state.brush; state.brush = null;
    if (b) b.b = e.offsetX;
    if (b && Math.abs(b.b - b.a) > 5) { const t0 = timeAt(Math.min(b.a, b.b)), t1 = timeAt(Math.max(b.a, b.b)); state.view = { from: t0, to: t1 }; scheduleTimeline(); pushURL(); return; }
    const tl = state.tl;
    if (!tl) return;
    const lane = Math.floor((e.offsetY - AXIS) / LANE) - 1;
    const hit = lane >= 0 ? nearestEvent(e.offsetX, lane) : null;
    if (hit) selectEvent(hit[0]);
    else if (!tl.events) zoom(0.25, timeAt(e.offsetX));
    drawTimeline();
  });
  cv.addEventListener("mouseleave", () => { if (state.brush) { state.brush = null; drawTimeline(); } });
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

// ---- panes: resizable, and the keys of the page ----

function initSplitters() {
  const root = document.documentElement.style;
  const drag = (sep, apply) => {
    sep.addEventListener("pointerdown", (e) => {
      sep.setPointerCapture(e.pointerId);
      const move = (ev) => apply(ev);
      sep.addEventListener("pointermove", move);
      sep.addEventListener("pointerup", () => sep.removeEventListener("pointermove", move), { once: true });
    });
    sep.addEventListener("keydown", (e) => {
      const d = { ArrowLeft: -2, ArrowUp: -2, ArrowRight: 2, ArrowDown: 2 }[e.key];
      if (!d) return;
      e.preventDefault(); e.stopPropagation();
      sep.setAttribute("aria-valuenow", String(Math.min(Number(sep.getAttribute("aria-valuemax")), Math.max(Number(sep.getAttribute("aria-valuemin")), Number(sep.getAttribute("aria-valuenow")) + d))));
      apply(null, Number(sep.getAttribute("aria-valuenow")));
    });
  };
  const panes = $("panes");
  drag($("split-1"), (ev, pct) => {
    if (ev) pct = (ev.clientX - panes.getBoundingClientRect().left) / panes.clientWidth * 100;
    pct = Math.min(70, Math.max(15, pct)); $("split-1").setAttribute("aria-valuenow", String(Math.round(pct)));
    root.setProperty("--list-w", pct + "%");
  });
  drag($("split-2"), (ev, pct) => {
    if (ev) pct = (ev.clientX - panes.getBoundingClientRect().left) / panes.clientWidth * 100;
    pct = Math.min(85, Math.max(30, pct)); $("split-2").setAttribute("aria-valuenow", String(Math.round(pct)));
    root.setProperty("--side-w", (100 - pct) + "%");
  });
  const lp = $("list-pane");
  drag($("split-h"), (ev, pct) => {
    if (ev) pct = (ev.clientY - lp.getBoundingClientRect().top) / lp.clientHeight * 100;
    pct = Math.min(90, Math.max(10, pct)); $("split-h").setAttribute("aria-valuenow", String(Math.round(pct)));
    root.setProperty("--sess-h", pct + "%");
  });
}

function typing(e) {
  const t = e.target;
  return t && (t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA" || t.isContentEditable);
}

function initKeys() {
  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || typing(e)) return;
    const act = {
      "/": () => $("filter").focus(),
      "n": () => nextFinding(1), "N": () => nextFinding(-1),
      " ": () => control(state.ctl && state.ctl.state === "playing" ? "pause" : "play"),
      ".": () => control("step"), ">": () => control("step", { count: 10 }),
      "]": () => replayFinding(1), "[": () => replayFinding(-1),
    }[e.key];
    if (!act) return;
    if (e.key === " " && e.target && (e.target.tagName === "BUTTON" || e.target.tagName === "SUMMARY" || e.target.tagName === "A")) return;
    e.preventDefault();
    act();
  });
}

// replayFinding seeks the replay to the next (or previous) finding after
// its position, in the list shown.
async function replayFinding(dir) {
  const pos = state.ctl && state.ctl.position;
  const at = pos && pos.index >= 0 ? pos.index : -1;
  let row = -1;
  if (at >= 0) {
    const r = await api("/api/find?" + listQuery({ index: String(at) })).catch(() => null);
    if (r) row = r.exact || dir < 0 ? r.row : r.row - 1;
  }
  const f = await api("/api/find?" + listQuery({ row: String(row), dir: String(dir) })).catch(() => null);
  if (!f || f.row < 0) { $("rp-error").textContent = "No " + (dir > 0 ? "later" : "earlier") + " finding to seek to."; return; }
  await control("seek", { index: f.index });
  state.selRow = f.row; events.select(f.row, true);
  selectEvent(f.index, { fromList: true });
}

// ---- filter and URL ----

function initFilter() {
  $("filter-form").addEventListener("submit", (e) => {
    e.preventDefault();
    state.filter = $("filter").value.trim(); state.q = $("search").value;
    reloadEvents(); state.updateExport(); pushURL();
  });
  $("filter-clear").onclick = () => { $("filter").value = ""; $("search").value = ""; state.filter = ""; state.q = ""; reloadEvents(); state.updateExport(); pushURL(); };
}

let urlTimer = null;
function pushURL() {
  if (state.restoring) return;
  clearTimeout(urlTimer);
  urlTimer = setTimeout(() => {
    const p = new URLSearchParams();
    if (state.session) p.set("session", state.session);
    if (state.selected >= 0) p.set("event", String(state.selected));
    if (state.filter) p.set("filter", state.filter);
    if (state.q) p.set("q", state.q);
    if (state.sort.key !== "order") p.set("sort", state.sort.key + (state.sort.desc ? ":desc" : ""));
    if (state.onlyFindings) p.set("findings", "1");
    if (state.recording) p.set("recording", state.recording);
    if (state.view && state.capture && (state.view.from > state.capture.first_ns || state.view.to < state.capture.last_ns)) p.set("t", Math.round(state.view.from) + "-" + Math.round(state.view.to));
    const h = "#" + p.toString();
    if (location.hash !== h) history.replaceState(null, "", h);
    if (state.updateExport) state.updateExport();
  }, 100);
}

async function restoreURL() {
  const p = new URLSearchParams(location.hash.slice(1));
  state.restoring = true;
  state.filter = p.get("filter") || ""; state.q = p.get("q") || "";
  $("filter").value = state.filter; $("search").value = state.q;
  const sort = (p.get("sort") || "order").split(":");
  state.sort = { key: sort[0], desc: sort[1] === "desc" };
  state.onlyFindings = p.get("findings") === "1"; $("only-findings").checked = state.onlyFindings;
  if (state.several) { state.recording = p.get("recording") || ""; syncRecording(); }
  const t = (p.get("t") || "").split("-").map(Number);
  if (t.length === 2 && t[1] > t[0]) state.view = { from: t[0], to: t[1] };
  state.session = p.get("session") || "";
  if (state.session) {
    // A link names the session by its key, or (older links) by its id.
    const s = await sessionOf(state.session);
    if (s) state.session = skey(s);
    loadTrace(state.session);
  }
  const ev = p.get("event");
  state.restoring = false;
  return ev !== null ? Number(ev) : -1;
}

// ---- replay control ----

async function control(action, params) {
  $("rp-error").textContent = "";
  const q = params ? "?" + new URLSearchParams(params).toString() : "";
  try { renderControl(await api("/control/" + action + q, { method: "POST" })); }
  catch (err) { $("rp-error").textContent = "Replay " + action + ": " + err.message; }
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
  const moved = !state.ctl || !state.ctl.position || state.ctl.position.index !== st.position.index;
  state.ctl = st;
  const text = describe(st);
  if (text !== state.lastLive) { $("rp-live").textContent = text; state.lastLive = text; }
  $("rp-play").setAttribute("aria-pressed", String(st.state === "playing"));
  $("rp-pause").setAttribute("aria-pressed", String(st.state === "paused"));
  const sp = $("rp-speed");
  if (document.activeElement !== sp && [...sp.options].some((o) => Number(o.value) === st.speed)) sp.value = String(st.speed);
  const c = state.capture;
  const scrub = $("rp-scrub");
  if (c && document.activeElement !== scrub && st.position.index >= 0) scrub.value = String(Math.round((st.position.offset_ns - c.first_ns) / Math.max(1, c.last_ns - c.first_ns) * 1000));
  renderSubscribers(st.subscribers);
  if (moved) {
    events.draw();
    if ($("tl-follow").checked && st.position.index >= 0) {
      const v = state.view, half = (v.to - v.from) / 2;
      if (st.position.offset_ns < v.from || st.position.offset_ns > v.to) { state.view = { from: st.position.offset_ns - half, to: st.position.offset_ns + half }; scheduleTimeline(); }
      api("/api/find?" + listQuery({ index: String(st.position.index) })).then((r) => { if (r.exact) events.show(r.row); }).catch(() => {});
    }
    drawTimeline();
  }
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
  for (const card of [...box.children]) if (card.dataset.sub && !ids.has(card.dataset.sub)) card.remove();
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

let polling = false;
async function pollControl() {
  if (!state.control || polling) return;
  polling = true;
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
      for (const id of ["rp-play", "rp-pause", "rp-step", "rp-step10", "rp-seek", "rp-speed", "rp-scrub", "rp-to", "rp-to-go", "rp-n", "rp-stepn"]) $(id).disabled = true;
    } else $("rp-error").textContent = "Replay status: " + err.message;
  } finally { polling = false; }
}

function initControl() {
  $("ws-url").textContent = "ws://" + location.host + "/aaep/v1/ws";
  $("sse-url").textContent = location.origin + "/aaep/v1/events";
  $("rp-play").onclick = () => control("play");
  $("rp-pause").onclick = () => control("pause");
  $("rp-step").onclick = () => control("step");
  $("rp-step10").onclick = () => control("step", { count: 10 });
  $("rp-seek").onclick = () => {
    if (state.selected < 0) { $("rp-error").textContent = "Select a message first: the replay continues from it."; return; }
    control("seek", { index: state.selected });
  };
  $("rp-speed").onchange = () => control("speed", { value: $("rp-speed").value });
  $("rp-scrub").onchange = () => {
    const c = state.capture;
    const ns = (c.last_ns - c.first_ns) * Number($("rp-scrub").value) / 1000;
    control("seek", { to: Math.round(ns / 1e6) + "ms" });
  };
  $("rp-to-go").onclick = () => control("seek", { to: $("rp-to").value.trim() });
  $("rp-stepn").onclick = () => control("step", { count: String(Math.max(1, Math.floor(Number($("rp-n").value) || 1))) });
  // The panel is live from the start: a subscriber may attach before the check ends.
  setInterval(pollControl, 500);
  pollControl();
}

// follow keeps up with a capture that is still being written (view
// --follow): the lists, the sessions and the timeline grow with it.
function follow() {
  let records = state.capture.records, checked = state.capture.check.done;
  setInterval(async () => {
    const before = state.capture;
    const c = await loadCapture().catch(() => null);
    if (!c || (c.records === records && c.check.done === checked)) return;
    records = c.records; checked = c.check.done;
    if (state.view && state.view.to >= before.last_ns) state.view.to = Math.max(c.last_ns, state.view.from + 1);
    sessions.invalidate();
    const r = await api("/api/rows?" + listQuery({ from: "0", limit: "1" })).catch(() => null);
    if (r) { events.setTotal(r.total); events.invalidate(); }
    scheduleTimeline();
  }, 2000);
}

// ---- start ----

async function start() {
  initSessions(); initEvents(); initInspector(); initTrace(); initTimeline(); initSplitters(); initFilter(); initKeys(); initControl();
  try {
    await loadCapture();
    const ev = await restoreURL();
    await reloadEvents();
    refreshSessions();
    scheduleTimeline();
    if (ev >= 0) selectEvent(ev);
    document.body.dataset.rows = "true";
    let c = state.capture;
    while (!c.check.done && !c.check.error) {
      await new Promise((r) => setTimeout(r, 1000));
      c = await loadCapture();
      sessions.invalidate();
      if (state.session) { const r = await api("/api/rows?" + listQuery({ from: "0", limit: "1" })).catch(() => null); if (r) events.setTotal(r.total); }
    }
    // The verdicts are in: lists and marks again.
    sessions.invalidate();
    await reloadEvents();
    scheduleTimeline();
    if (state.selected >= 0) selectEvent(state.selected, { fromList: true });
    document.body.dataset.ready = "true";
    if (c.follow) follow();
  } catch (err) {
    report("Loading", err);
  }
}

window.aaepView = { state, selectEvent, selectSession, control, nextFinding, lists: () => ({ sessions, events, steps }) };
start();
