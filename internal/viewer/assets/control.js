"use strict";

// ---- replay control ----

async function control(action, params) {
  $("rp-error").textContent = "";
  const q = params ? "?" + new URLSearchParams(params).toString() : "";
  try { renderControl(await api("/control/" + action + q, { method: "POST" })); }
  catch (err) { $("rp-error").textContent = "Replay " + action + ": " + err.message; }
}

function describe(st) {
  const p = st.position;
  let where = p.index >= 0 ? "event #" + p.index + " (" + shortType(p.type) + ", +" + secs(p.offset_ns) + ")" : "the start";
  // After a seek the replay continues from the record sought (next), not
  // after the last event it released.
  if (st.next >= 0) {
    const subs = count(st.subscribers.filter((s) => s.state === "active").length, "subscriber");
    const ni = state.nextInfo && state.nextInfo.index === st.next ? state.nextInfo : null;
    const at = "record #" + st.next + (ni ? " (" + (shortType(ni.type) || ni.direction) + ", +" + secs(ni.offset_ns) + ")" : "");
    switch (st.state) {
      case "waiting": return "Replay waiting for a subscriber to attach; it will start at " + at + ".";
      case "playing": return "Replay playing from " + at + " (sought), speed " + st.speed + "×, " + subs + " attached.";
      default: return "Replay paused: it continues at " + at + " (sought; the last event sent was " + where + "), speed " + st.speed + "×, " + subs + " attached.";
    }
  }
  const n = st.subscribers.filter((s) => s.state === "active").length;
  const subs = count(n, "subscriber");
  switch (st.state) {
    case "waiting": return "Replay waiting for a subscriber to attach; " + st.released + " events sent so far.";
    case "ended": return "Replay at its end after " + where + "; seek to play again. " + subs + " attached.";
    case "paused": return "Replay paused after " + where + ", speed " + st.speed + "×, " + subs + " attached.";
    default: return "Replay playing, at " + where + ", speed " + st.speed + "×, " + subs + " attached.";
  }
}

function renderControl(st) {
  const moved = !state.ctl || !state.ctl.position || state.ctl.position.index !== st.position.index || state.ctl.next !== st.next;
  state.ctl = st;
  // The record a seek continues at, named by its type and time once known.
  if (st.next >= 0 && (!state.nextInfo || state.nextInfo.index !== st.next) && state.nextAsked !== st.next) {
    state.nextAsked = st.next;
    api("/api/event/" + st.next).then((d) => { state.nextInfo = d; if (state.ctl && state.ctl.next === d.index) renderControl(state.ctl); }).catch(() => {});
  }
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
        el("h4", { id: hid }), el("p", { class: "muted" }), el("ol", { tabindex: "0", "aria-label": "What " + s.subscription + " received and sent; arrow keys move between its events", onkeydown: logKey }));
      box.append(card);
    }
    card.querySelector("h4").textContent = s.subscription + " (" + s.transport + ", " + s.state + ")";
    card.querySelector("p").textContent = "Received " + count(s.sent, "event") + ", sent " + count(s.replies, "reply", "replies") + (s.close ? "; closed: " + s.close.reason : "") + ".";
  }
  for (const card of [...box.children]) if (card.dataset.sub && !ids.has(card.dataset.sub)) card.remove();
  if (!list.length) box.replaceChildren(el("p", { class: "muted", text: "No subscriber attached yet." }));
  else for (const p of [...box.children]) if (p.tagName === "P") p.remove();
}

// logKey moves the focus among the events of a subscriber's log (one tab
// stop for the log, however many events it holds): arrows, Home and End.
function logKey(e) {
  const ol = e.currentTarget, bs = [...ol.querySelectorAll("button")];
  if (!bs.length) return;
  const at = bs.indexOf(document.activeElement);
  const to = { ArrowDown: at + 1, ArrowUp: at < 0 ? bs.length - 1 : at - 1, Home: 0, End: bs.length - 1 }[e.key];
  if (to === undefined) return;
  e.preventDefault();
  bs[Math.max(0, Math.min(bs.length - 1, to))].focus();
}

function logLine(e) {
  if (e.kind === "event") {
    return el("li", {}, "received ", el("button", { type: "button", class: "linkish", tabindex: "-1", onclick: () => selectEvent(e.index) }, "#" + e.index), " " + shortType(e.type) + (e.session ? " " + e.session : ""));
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
  $("rp-to").addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); $("rp-to-go").click(); } });
  $("rp-stepn").onclick = () => control("step", { count: String(Math.max(1, Math.floor(Number($("rp-n").value) || 1))) });
  // The panel is live from the start: a subscriber may attach before the check ends.
  setInterval(pollControl, 500);
  pollControl();
}
