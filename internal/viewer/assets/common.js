// aaep-replay view: the page. Plain JavaScript, no build step, no library:
// the lists are virtual (only the rows on screen exist), every answer of the
// API is a bounded page, and the page never scrolls on selection: each pane
// scrolls on its own. The scripts share one global scope and run in the
// order index.html lists them: common.js first, app.js, which starts the
// page, last.
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
  cols: [],             // payload fields shown as columns of the messages list
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
// midCell is a cell holding an id cut in the middle when it does not fit:
// its start and the end that tells it from its neighbours stay, the whole
// id in its title (hover) and for screen readers.
function midCell(cls, label, text) {
  const k = Math.min(6, Math.floor(text.length / 2));
  return el("span", { class: cls + " mid", title: text }, label ? el("span", { class: "sr-only", text: label }) : null,
    el("span", { class: "mid-head", text: text.slice(0, text.length - k) }), el("span", { class: "mid-tail", text: text.slice(text.length - k) }));
}

// sizeNumbers widens the columns of counts, record numbers and times to
// their largest value in the capture: a number is never cut.
function sizeNumbers(c) {
  const digits = (n) => String(Math.max(0, Math.floor(n))).length;
  const root = document.documentElement.style;
  root.setProperty("--count-ch", String(digits(c.records)));
  root.setProperty("--time-ch", String(digits(c.last_ns / 1e9) + 5));
}

// count is n with its noun, singular for 1 (many defaults to one + "s").
function count(n, one, many) { return n + " " + (n === 1 ? one : (many || one + "s")); }
function report(where, err) { $("check-status").textContent = where + ": " + err.message; }

function listQuery(extra) {
  const p = new URLSearchParams(extra || {});
  if (state.session) p.set("session", state.session);
  if (state.filter) p.set("filter", state.filter);
  if (state.q) p.set("q", state.q);
  return p;
}

// rowsQuery is listQuery with the payload fields shown as columns.
function rowsQuery(extra) {
  const p = listQuery(extra);
  for (const c of state.cols) p.append("col", c);
  return p;
}

// addClause ands a clause to the filter (the filter in parentheses when
// it has an ||).
function addClause(filter, clause) {
  filter = (filter || "").trim();
  if (!filter) return clause;
  if (filter.includes("||") && !/^\(.*\)$/.test(filter)) filter = "(" + filter + ")";
  return filter + " && " + clause;
}

// The lists, and the latest request of each pane (a later answer wins).
let sessions, events, steps;
const latest = { event: 0, timeline: 0, steps: 0, reload: 0 };
