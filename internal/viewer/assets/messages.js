"use strict";

// ---- messages ----

function initEvents() {
  events = new VList($("events-list"), {
    cls: "ev",
    fetch: (from, n) => api("/api/rows?" + rowsQuery({ from: String(from), limit: String(n) })),
    render: (r, e) => {
      r.dataset.index = String(e.index);
      const cell = (cls, label, text) => el("span", { class: cls }, el("span", { class: "sr-only", text: label }), text);
      r.append(el("span", { class: "mono", text: "#" + e.index }), cell("num", ", at ", secs(e.offset_ns)),
        cell("num c-delta", ", after the row before by ", e.delta_ns === undefined ? "–" : "+" + secs(e.delta_ns)), cell("", ", ", e.kind),
        e.session ? midCell("mono", ", session ", e.session) : cell("mono", ", session ", "–"), cell("", ", ", shortType(e.type) || "–"), cell("", ": ", e.summary),
        cell(levelClass(e.worst), e.worst ? ", finding " : "", e.worst || ""));
      state.cols.forEach((c, k) => { const v = (e.cols || [])[k] || ""; const x = cell("c-extra", ", " + c + " ", v || "–"); if (v) x.title = c + ": " + v; r.append(x); });
      for (const c of r.children) if (!c.title && c.textContent.length > 8) c.title = c.lastChild.textContent;
    },
    mark: (r, e) => { r.classList.toggle("playhead", !!(e && state.ctl && (state.ctl.next >= 0 ? state.ctl.next : state.ctl.position && state.ctl.position.index) === e.index)); },
    choose: (e, i, by) => { state.selRow = i; selectEvent(e.index, { fromList: true, reveal: by === "click" }); },
    enter: () => $("inspector-h").focus({ preventScroll: true }),
  });
  $("filter-cancel").onclick = () => cancelReload();
  initColumnGrips();
  $("ev-delta").onchange = () => { $("messages-box").classList.toggle("show-delta", $("ev-delta").checked); };
  $("ev-all").onclick = () => { state.session = ""; sessions.draw(); reloadEvents(); pushURL(); };
  $("ev-nextf").onclick = () => nextFinding(1);
  $("ev-prevf").onclick = () => nextFinding(-1);
}

// reloadEvents asks for the list the page's state names. Every reload has
// its number: a later one cancels the request of an earlier one still
// running, and an answer that is not the latest reload's is dropped (a slow
// filter never overwrites a later one's list or count).
let reloading = null;
async function reloadEvents() {
  const n = ++latest.reload;
  if (reloading) reloading.abort();
  const ctl = new AbortController();
  reloading = ctl;
  const q = rowsQuery({ from: "0", limit: String(PAGE) });
  const busy = setTimeout(() => { if (n === latest.reload) narrowing(q, ctl); }, 150);
  const r = await api("/api/rows?" + q, { signal: ctl.signal }).catch((err) => {
    if (n === latest.reload && err.name !== "AbortError") { $("filter-status").textContent = err.message; $("filter").setAttribute("aria-invalid", "true"); }
    return null;
  });
  clearTimeout(busy);
  if (n !== latest.reload) return;
  reloading = null;
  stale(false);
  if (!r) return;
  latest.rows = r; latest.shown = { filter: state.filter, q: state.q };
  $("filter").removeAttribute("aria-invalid");
  events.reset(r.total, r.rows);
  const rec = state.several ? await sessionRecording(state.session) : "";
  if (n !== latest.reload) return; // a later reload started meanwhile
  state.scopeRec = rec;
  showScope(r.total, r.partial);
  if (state.selected >= 0) locateSelected();
}

// showScope says which rows the messages list holds and how many (kept
// current as a followed capture grows).
function showScope(total, partial) {
  const sid = sessionInfo.has(state.session) ? sessionInfo.get(state.session).id : state.session;
  const parts = [state.session ? "Session " + sid + (state.scopeRec ? " of recording " + state.scopeRec : "") : "All sessions"];
  if (state.filter) parts.push("filter " + state.filter);
  if (state.q) parts.push("text “" + state.q + "”");
  $("events-scope").textContent = parts.join(", ") + ": " + count(total, "row") + (partial ? " so far (the check is still reading)" : "") + ".";
  $("filter-status").textContent = state.filter || state.q ? count(total, "match", "matches") : "";
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

// stale marks the list as an earlier answer while a new one is being
// made (or clears the mark).
function stale(on) {
  const list = $("events-list"), scope = $("events-scope");
  list.classList.toggle("stale", on); scope.classList.toggle("stale", on);
  if (on) list.setAttribute("aria-busy", "true"); else list.removeAttribute("aria-busy");
  $("filter-busy").hidden = !on;
  if (on && !scope.dataset.was) { scope.dataset.was = scope.textContent; scope.textContent = "Earlier result, a new one is being made: " + scope.textContent; }
  if (!on && scope.dataset.was !== undefined) { if (scope.textContent.startsWith("Earlier result")) scope.textContent = scope.dataset.was; delete scope.dataset.was; }
}

// narrowing shows how far the server has read for a list that takes long
// (a whole-capture search) until its reload is answered or cancelled.
async function narrowing(q, ctl) {
  stale(true);
  while (reloading === ctl && !ctl.signal.aborted) {
    const p = await api("/api/progress?" + q).catch(() => null);
    if (reloading !== ctl) return;
    if (p && p.total > 0) {
      $("filter-progress").max = p.total; $("filter-progress").value = p.read;
      $("filter-status").textContent = "Searching: " + Math.floor(100 * p.read / p.total) + "% of " + count(p.total, "record") + " read";
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

// cancelReload stops the reload being made: its request ends (and with it
// the server's search), the list keeps the earlier result and the filter
// and search go back to what that result shows.
function cancelReload() {
  if (!reloading) return;
  latest.reload++;
  reloading.abort(); reloading = null;
  stale(false);
  const shown = latest.shown || { filter: "", q: "" };
  state.filter = shown.filter; state.q = shown.q;
  $("filter").value = shown.filter; $("search").value = shown.q;
  $("filter-status").textContent = "Search cancelled: the list shows the earlier result.";
  pushURL();
}

// showCols draws the payload fields shown as columns: their headers, the
// grid's extra tracks, and the bar that removes them.
function showCols() {
  const box = $("messages-box"), head = box.querySelector(".ev-cols");
  for (const h of [...head.querySelectorAll(".c-extra")]) h.remove();
  for (const c of state.cols) head.append(el("span", { class: "c-extra", "aria-hidden": "true", text: c, title: c }));
  box.style.setProperty("--extra-cols", state.cols.map(() => "minmax(4rem, 9rem)").join(" "));
  const bar = $("ev-colbar");
  bar.hidden = !state.cols.length;
  bar.replaceChildren(el("span", { class: "muted", text: "Payload columns: " }),
    ...state.cols.map((c) => el("button", { type: "button", "aria-label": "Remove the column " + c, onclick: () => setCols(state.cols.filter((x) => x !== c)) }, c + " ×")));
}

function setCols(cols) {
  state.cols = [...new Set(cols)].slice(0, 8);
  showCols();
  events.invalidate();
  pushURL();
}

function applyFilter(f) {
  state.filter = f;
  $("filter").value = f;
  rememberFilter(f);
  reloadEvents(); state.updateExport(); pushURL();
}

// initColumnGrips lets the pointer and the keys resize the messages'
// columns (the Summary takes what is left): a grip at each header's right
// edge sets that column's width (--w-NAME) for the header and the rows
// alike. The header's names are for the eye (each row's cells are labelled
// for screen readers); its grips are not hidden, being controls.
function initColumnGrips() {
  const box = $("messages-box");
  for (const sp of box.querySelectorAll(".ev-cols > span")) {
    const name = sp.className.replace(/^c-/, ""), label = sp.textContent;
    sp.replaceChildren(el("span", { "aria-hidden": "true", text: label }));
    if (name !== "sum") addGrip(sp, box, "--w-" + name, label); // the Summary takes what is left
  }
}

// GRIP_MIN is a column's least width (px); GRIP_MAX its widest.
const GRIP_MIN = 24, GRIP_MAX = 1200;

// addGrip puts a grip at the right edge of header cell, the column named
// label: dragged, or focused and moved with the arrow keys (Shift: by more),
// it sets the width property prop on box (for the header and the rows
// alike); Home gives the column its own width back. It is a separator
// (vertical, its value the column's width in px), one tab stop a column.
// A drag that starts on it is no click on the cell (a sort button).
function addGrip(cell, box, prop, label) {
  const grip = el("span", { class: "grip", role: "separator", "aria-orientation": "vertical", tabindex: "0",
    "aria-label": "Width of the column " + label + " (arrow keys resize)", "aria-valuemin": String(GRIP_MIN), "aria-valuemax": String(GRIP_MAX) });
  cell.append(grip);
  const width = () => cell.getBoundingClientRect().width;
  const note = () => { const w = Math.round(width()); grip.setAttribute("aria-valuenow", String(w)); grip.setAttribute("aria-valuetext", w + " pixels"); };
  const set = (w) => { box.style.setProperty(prop, Math.min(GRIP_MAX, Math.max(GRIP_MIN, Math.round(w))) + "px"); note(); };
  note();
  grip.addEventListener("focus", note);
  grip.addEventListener("click", (e) => { e.preventDefault(); e.stopPropagation(); });
  grip.addEventListener("pointerdown", (e) => {
    e.preventDefault(); e.stopPropagation();
    grip.setPointerCapture(e.pointerId);
    const w = width(), x = e.clientX;
    const move = (ev) => set(w + ev.clientX - x);
    grip.addEventListener("pointermove", move);
    grip.addEventListener("pointerup", () => grip.removeEventListener("pointermove", move), { once: true });
  });
  grip.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const step = e.shiftKey ? 40 : 8;
    const act = { ArrowLeft: () => set(width() - step), ArrowRight: () => set(width() + step),
      Home: () => { box.style.removeProperty(prop); note(); } }[e.key];
    if (!act) return;
    e.preventDefault(); e.stopPropagation();
    act();
  });
}
