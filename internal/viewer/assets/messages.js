"use strict";

// ---- messages ----

function initEvents() {
  events = new VList($("events-list"), {
    cls: "ev",
    fetch: (from, n) => api("/api/rows?" + listQuery({ from: String(from), limit: String(n) })),
    render: (r, e) => {
      r.dataset.index = String(e.index);
      const cell = (cls, label, text) => el("span", { class: cls }, el("span", { class: "sr-only", text: label }), text);
      r.append(el("span", { class: "mono", text: "#" + e.index }), cell("num", ", at ", secs(e.offset_ns)), cell("", ", ", e.kind),
        e.session ? midCell("mono", ", session ", e.session) : cell("mono", ", session ", "–"), cell("", ", ", shortType(e.type) || "–"), cell("", ": ", e.summary),
        cell(levelClass(e.worst), e.worst ? ", finding " : "", e.worst || ""));
    },
    mark: (r, e) => { r.classList.toggle("playhead", !!(e && state.ctl && state.ctl.position && state.ctl.position.index === e.index)); },
    choose: (e, i, by) => { state.selRow = i; selectEvent(e.index, { fromList: true, reveal: by === "click" }); },
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
  $("events-scope").textContent = parts.join(", ") + ": " + count(r.total, "row") + (r.partial ? " so far (the check is still reading)" : "") + ".";
  $("filter-status").textContent = state.filter || state.q ? count(r.total, "match", "matches") : "";
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
