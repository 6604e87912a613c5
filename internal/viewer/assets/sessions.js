"use strict";

// ---- capture and sessions ----

async function loadCapture() {
  const c = await api("/api/capture");
  state.capture = c;
  $("file").textContent = c.file;
  const start = c.header.start ? new Date(c.header.start).toISOString() : "unknown start";
  $("capture-info").textContent = count(c.records, "record") + ", " + count(c.index_sessions, "session") + ", recorded by " +
    (c.header.tool || "an unknown tool") + " from " + start + (c.being_written ? " (being written: its recorder holds it open)" : c.index_rebuilt ? " (index rebuilt: the capture was not closed cleanly)" : "");
  sizeNumbers(c);
  if (!state.view) state.view = { from: c.first_ns, to: Math.max(c.last_ns, c.first_ns + 1) };
  if (c.recordings && c.recordings.length > 1) renderRecordings(c);
  const ck = c.check;
  if (ck.error) $("check-status").textContent = "Check stopped: " + ck.error;
  else if (!ck.done && c.follow) $("check-status").textContent = "Checked " + count(ck.messages, "message") + " so far, as they arrive: " + c.findings.must + " MUST, " +
    c.findings.should + " SHOULD and " + c.findings.info + " INFO " + (c.findings.info === 1 ? "finding." : "findings.");
  else if (!ck.done) $("check-status").textContent = "Checking the capture: " + ck.read + " of about " + c.records + " records read…";
  else $("check-status").textContent = "Checked " + count(ck.messages, "message") + ": " + c.findings.must + " MUST, " +
    c.findings.should + " SHOULD and " + c.findings.info + " INFO " + (c.findings.info === 1 ? "finding." : "findings.");
  return c;
}

const SESS_COLS = [["id", "Session"], ["protocol", "Proto"], ["first", "Start"], ["messages", "Msgs"], ["must", "MUST"], ["should", "SHOULD"], ["info", "INFO"], ["state", "Ended in"], ["span", "Duration"]];
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

// sortButton is the header cell of the sessions' column key: its sort
// button, and beside it (not in it: a control holds no other) its grip.
function sortButton(key, name) {
  const b = el("button", { type: "button", "data-key": key, onclick: () => {
    if (state.sort.key === key) state.sort.desc = !state.sort.desc;
    else { state.sort.key = key; state.sort.desc = ["must", "should", "info", "messages"].includes(key); }
    refreshSessions(); pushURL();
  } }, name);
  const cell = el("span", { class: "c-" + key }, b);
  if (key !== "id") addGrip(cell, $("sessions-box"), "--s-" + key, name); // the id takes what is left
  return cell;
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
      r.append(midCell("mono c-id", "", s.id));
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
      r.lastChild.title = r.lastChild.lastChild.textContent;
      if (state.showSpan) r.append(cell("num c-span", "lasting", secs(Math.max(0, (s.last_ns || 0) - (s.first_ns || 0)))));
    },
    mark: (r, s) => {
      if (!s) return;
      const on = skey(s) === state.session;
      r.classList.toggle("current", on);
      if (on) r.setAttribute("aria-current", "true"); else r.removeAttribute("aria-current");
    },
    choose: (s) => selectSession(skey(s)),
  });
  $("sess-span").onchange = () => { state.showSpan = $("sess-span").checked; $("sessions-box").classList.toggle("show-span", state.showSpan); sessions.invalidate(); };
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
  $("sessions-caption").textContent = r.total + " of " + count(r.all, "session") + (r.pending ? " (" + r.pending + " not checked yet)" : "");
  state.sessionTotal = r.total;
}

function refreshSessions() {
  for (const b of $("sessions-sort").querySelectorAll("button")) {
    const on = b.dataset.key === state.sort.key;
    b.setAttribute("aria-pressed", String(on));
    b.firstChild.textContent = colName(b.dataset.key) + (on ? (state.sort.desc ? " ▼" : " ▲") : "");
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
