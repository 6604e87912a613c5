"use strict";

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
    if (state.cols.length) p.set("cols", state.cols.join(","));
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
  state.cols = (p.get("cols") || "").split(",").filter(Boolean).slice(0, 8); showCols();
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

// live keeps up with a capture that is still being written (view
// --follow): the server pushes an event (/api/live) each time the capture
// has grown and been checked; the counts, the lists, the sessions and the
// timeline take in what is new at once. The messages list follows the end
// while it is scrolled to it, as terminals do: scrolling up stops that,
// scrolling back to the end resumes it.
function live() {
  state.latency = [];
  events.follows = true;
  liveMark(null);
  const es = new EventSource("/api/live");
  let busy = false, again = false, last = null;
  const update = async () => {
    if (busy) { again = true; return; }
    busy = true;
    try {
      do {
        again = false;
        const ev = last, before = state.capture, prev = events.total;
        // The new rows first: the heading's counts come in beside them.
        const [total, c] = await Promise.all([
          events.grow(events.atEnd).catch((err) => { report("List", err); return prev; }),
          loadCapture().catch(() => null),
        ]);
        noteLatency(prev, total);
        showScope(total);
        if (c) {
          if (state.view && state.view.to >= before.last_ns) state.view.to = Math.max(c.last_ns, state.view.from + 1);
          sessions.grow(false).catch(() => null);
          scheduleTimeline();
          traceGrowSoon();
        }
        liveMark(ev);
      } while (again);
    } finally { busy = false; }
  };
  es.onmessage = (e) => {
    last = JSON.parse(e.data);
    if (last.ended) es.close();
    update();
  };
  events.box.addEventListener("scroll", () => liveMark(last));
  // Back to the end, following again (as scrolling there does).
  $("live-follow").onclick = () => { events.atEnd = true; events.scrollTo(events.maxVt()); liveMark(last); };
}

// liveMark shows whether the page is live and whether the list follows the end.
function liveMark(ev) {
  const m = $("live");
  m.hidden = false;
  const on = !!ev && !ev.ended;
  m.classList.toggle("on", on);
  $("live-text").textContent = !ev ? "Connecting…" : !on ? (ev.being_written ? "Not following" : "Recording ended: not live") :
    events.atEnd ? "Live: following the newest messages" : "Live: scrolled up, not following";
  $("live-follow").hidden = !on || events.atEnd;
}

// noteLatency keeps, for the rows that came in with the last growth, the
// time from their receive time to their row on the page (make bench).
function noteLatency(prev, total) {
  const start = state.capture.header.start ? Date.parse(state.capture.header.start) : NaN;
  if (isNaN(start) || total <= prev) return;
  const now = Date.now();
  for (let i = prev; i < total; i++) {
    const e = events.row(i);
    if (e && e.offset_ns !== undefined) state.latency.push(now - (start + e.offset_ns / 1e6));
  }
  if (state.latency.length > 10000) state.latency.splice(0, state.latency.length - 10000);
}

// ---- start ----

async function start() {
  initSessions(); initEvents(); initInspector(); initTrace(); initTimeline(); initSplitters(); initFilter(); initFilterBox(); initKeys(); initControl();
  try {
    await loadCapture();
    const ev = await restoreURL();
    await reloadEvents();
    refreshSessions();
    scheduleTimeline();
    if (ev >= 0) selectEvent(ev);
    document.body.dataset.rows = "true";
    let c = state.capture;
    if (c.follow) {
      // Being written: the check goes on as long as the recording, and
      // the page keeps up with it, the messages list from its end.
      document.body.dataset.ready = "true";
      events.atEnd = true;
      live();
      return;
    }
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
  } catch (err) {
    report("Loading", err);
  }
}

window.aaepView = { latency: () => state.latency || [], traceRedraws: () => traceLive.redraws, state, selectEvent, selectSession, control, nextFinding, lists: () => ({ sessions, events, steps }) };
start();
