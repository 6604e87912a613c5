"use strict";

// ---- trace ----

async function loadTrace(id) {
  state.traceSession = id;
  state.steps = null;
  traceLive.records = -1;
  $("trace-h").textContent = "Trace: " + sessionLabel(id);
  $("trace-status").textContent = "Drawing session " + sessionLabel(id) + "…";
  $("trace-svg").replaceChildren();
  drawingLinks(null);
  steps.reset(0);
  if (state.capture && state.capture.follow) {
    // Counted before the trace is asked for: a record that comes in
    // meanwhile is drawn again at the next growth.
    const n = await sessionRecords(id);
    if (state.traceSession !== id) return;
    traceLive.records = n;
  }
  let r;
  try { r = await api("/api/trace/" + encodeURIComponent(id) + "/steps?limit=1"); } catch (err) { $("trace-status").textContent = err.message; return; }
  if (state.traceSession !== id) return;
  state.steps = r;
  steps.reset(r.total);
  $("trace-status").textContent = count(r.total, "step") + (r.more ? " (" + r.more + " more not listed)" : "") + " in session " + id + ".";
  if (!r.drawn) return;
  try {
    const resp = await fetch("/api/trace/" + encodeURIComponent(id) + "/svg");
    if (!resp.ok) { const b = await resp.json(); throw new Error(b.error); }
    const doc = new DOMParser().parseFromString(await resp.text(), "image/svg+xml");
    const svg = doc.documentElement;
    if (state.traceSession !== id || svg.nodeName !== "svg") return;
    showDrawing(svg, id);
    drawingZoom.fit();
    markStep(state.selected, true);
  } catch (err) {
    $("trace-svg").replaceChildren(el("p", { class: "muted", text: "No drawing: " + err.message }));
  }
}

// showDrawing puts svg, the drawing of session id, in the pane.
function showDrawing(svg, id) {
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", "State machine trace of session " + id + "; the steps list says the same");
  $("trace-svg").replaceChildren(document.importNode(svg, true));
  drawingLinks(id);
}

// drawingLinks points "open in a new tab" and "download" at the drawing of
// session id (with its legend: it is read alone), or hides them.
function drawingLinks(id) {
  const open = $("tr-open"), dl = $("tr-download"), base = id ? "/api/trace/" + encodeURIComponent(id) + "/svg?legend=1" : "";
  open.hidden = dl.hidden = !id;
  for (const b of ["tr-in", "tr-out", "tr-fit"]) $(b).disabled = !id;
  if (!id) { open.removeAttribute("href"); dl.removeAttribute("href"); $("tr-zoom").textContent = ""; return; }
  open.href = base;
  dl.href = base + "&download=1";
  dl.setAttribute("download", "trace-" + id.replace(/[^A-Za-z0-9._-]/g, "_") + ".svg");
}

// drawingZoom scales the drawing in its box, which scrolls: fit shows it whole,
// by(f, x, y) scales by f keeping the point (x, y) of the box in place.
const drawingZoom = {
  scale: 0, fitted: true,
  size() {
    const svg = $("trace-svg").querySelector("svg");
    if (!svg) return null;
    const vb = svg.viewBox && svg.viewBox.baseVal;
    return vb && vb.width ? { svg, w: vb.width, h: vb.height } : null;
  },
  apply(s) {
    const z = this.size();
    if (!z) return;
    this.scale = s;
    z.svg.style.width = (z.w * s) + "px"; z.svg.style.height = (z.h * s) + "px";
    $("tr-zoom").textContent = Math.round(s * 100) + "%";
  },
  fit() {
    const z = this.size(), box = $("trace-svg");
    if (!z) return;
    this.fitted = true;
    this.apply(Math.max(0.05, Math.min((box.clientWidth - 2) / z.w, (box.clientHeight - 2) / z.h)));
    box.scrollLeft = 0; box.scrollTop = 0;
  },
  by(f, x, y) {
    const box = $("trace-svg");
    if (!this.size()) return;
    if (x === undefined) { x = box.clientWidth / 2; y = box.clientHeight / 2; }
    const s = Math.min(8, Math.max(0.05, this.scale * f)), r = s / this.scale;
    const cx = box.scrollLeft + x, cy = box.scrollTop + y;
    this.fitted = false;
    this.apply(s);
    box.scrollLeft = cx * r - x; box.scrollTop = cy * r - y;
  },
};

function initZoom() {
  const box = $("trace-svg");
  $("tr-in").onclick = () => drawingZoom.by(1.25);
  $("tr-out").onclick = () => drawingZoom.by(0.8);
  $("tr-fit").onclick = () => drawingZoom.fit();
  box.addEventListener("wheel", (e) => {
    if (!drawingZoom.size()) return;
    e.preventDefault();
    const r = box.getBoundingClientRect();
    drawingZoom.by(Math.exp(-e.deltaY / 500), e.clientX - r.left, e.clientY - r.top);
  }, { passive: false });
  box.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const act = { "+": () => drawingZoom.by(1.25), "=": () => drawingZoom.by(1.25), "-": () => drawingZoom.by(0.8), "0": () => drawingZoom.fit() }[e.key];
    if (!act) return;
    e.preventDefault(); e.stopPropagation();
    act();
  });
  // A drag moves the drawing (a click on an edge still chooses its step).
  let drag = null;
  box.addEventListener("pointerdown", (e) => {
    if (e.button !== 0) return;
    drag = { x: e.clientX, y: e.clientY, left: box.scrollLeft, top: box.scrollTop, moved: false };
  });
  box.addEventListener("pointermove", (e) => {
    if (!drag) return;
    const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 4) return;
    if (!drag.moved) { drag.moved = true; box.setPointerCapture(e.pointerId); box.classList.add("dragging"); }
    box.scrollLeft = drag.left - dx; box.scrollTop = drag.top - dy;
  });
  const end = (e) => {
    if (drag && drag.moved) { box.classList.remove("dragging"); box.dataset.dragged = "1"; setTimeout(() => delete box.dataset.dragged, 0); }
    drag = null;
  };
  box.addEventListener("pointerup", end);
  box.addEventListener("pointercancel", end);
  new ResizeObserver(() => { if (drawingZoom.fitted) drawingZoom.fit(); }).observe(box);
}

function initTrace() {
  initZoom();
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
    if ($("trace-svg").dataset.dragged) return;
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

// ---- a trace that grows (view --follow) ----

// traceLive redraws the trace of the chosen session while a followed
// capture grows: at most once a second (the drawing is made again whole
// each time), only when that session has new records, the drawing kept at
// its zoom and position, the steps list where it was. records is the
// session's records when the trace shown was asked for (-1: not known yet);
// redraws counts the redraws (the browser test reads it).
const traceLive = { timer: 0, last: 0, records: -1, redraws: 0 };

// sessionRecords is the count of records of the session of key the index
// has now (-1 when it does not list it).
async function sessionRecords(key) {
  const r = await api("/api/sessions?limit=1&key=" + encodeURIComponent(key)).catch(() => null);
  const s = r && r.sessions[0];
  return s && skey(s) === key ? s.records : -1;
}

// traceGrowSoon runs when the followed capture has grown.
function traceGrowSoon() {
  if (!state.traceSession || traceLive.timer) return;
  traceLive.timer = setTimeout(async () => {
    try { await traceGrow(); } finally { traceLive.last = Date.now(); traceLive.timer = 0; }
  }, Math.max(0, traceLive.last + 1000 - Date.now()));
}

async function traceGrow() {
  const id = state.traceSession;
  if (!id || traceLive.records < 0) return;
  const n = await sessionRecords(id);
  if (id !== state.traceSession || n <= traceLive.records) return;
  traceLive.records = n;
  let r;
  try { r = await api("/api/trace/" + encodeURIComponent(id) + "/steps?limit=1"); } catch (err) { return; }
  if (state.traceSession !== id) return;
  state.steps = r;
  $("trace-status").textContent = count(r.total, "step") + (r.more ? " (" + r.more + " more not listed)" : "") + " in session " + id + ".";
  await steps.grow(false).catch(() => null);
  if (!r.drawn) return;
  const resp = await fetch("/api/trace/" + encodeURIComponent(id) + "/svg").catch(() => null);
  if (!resp || !resp.ok || state.traceSession !== id) return;
  const svg = new DOMParser().parseFromString(await resp.text(), "image/svg+xml").documentElement;
  if (state.traceSession !== id || svg.nodeName !== "svg") return;
  const box = $("trace-svg"), left = box.scrollLeft, top = box.scrollTop, had = !!drawingZoom.size();
  const marked = [...box.querySelectorAll("g.edge.selected-edge")].map((g) => g.id);
  showDrawing(svg, id);
  for (const g of box.querySelectorAll("g.edge")) if (marked.includes(g.id)) g.classList.add("selected-edge");
  if (!had || drawingZoom.fitted) drawingZoom.fit();
  else { drawingZoom.apply(drawingZoom.scale); box.scrollLeft = left; box.scrollTop = top; }
  traceLive.redraws++;
}
