"use strict";

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
  $("trace-status").textContent = count(r.total, "step") + (r.more ? " (" + r.more + " more not listed)" : "") + " in session " + id + ".";
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
