"use strict";

// ---- inspector ----

async function selectEvent(index, opts) {
  opts = opts || {};
  const n = ++latest.event;
  let d;
  try { d = await api("/api/event/" + index); } catch (err) { report("Record " + index, err); return; }
  if (n !== latest.event) return;
  state.selected = index;
  state.detail = d;
  renderInspector(d);
  // One column (a phone): a tap on a message brings the inspector, below the lists, into view.
  if (opts.reveal && matchMedia("(max-width: 760px)").matches) $("inspector").scrollIntoView({ block: "start" });
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
  payloadFields(d);
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

// payloadFields lists the payload's top-level fields, each with "Filter"
// (its value anded to the filter) and "Column" (shown in the messages list).
function payloadFields(d) {
  const body = $("insp-payload").tBodies[0];
  body.replaceChildren();
  let obj = null;
  try { obj = d.pretty ? JSON.parse(d.pretty) : null; } catch (e) { obj = null; }
  const rows = obj && typeof obj === "object" && !Array.isArray(obj) ? Object.entries(obj).slice(0, 60) : [];
  $("insp-payload").hidden = !rows.length;
  $("pf-h").hidden = !rows.length;
  for (const [k, v] of rows) {
    const scalar = v === null || typeof v !== "object";
    const shown = typeof v === "string" ? v : JSON.stringify(v);
    const name = /^[A-Za-z_][\w.]*$/.test(k) ? k : JSON.stringify(k);
    const value = typeof v === "string" ? JSON.stringify(v) : String(v);
    body.append(el("tr", {}, el("th", { scope: "row", class: "mono", text: k }), el("td", { text: shown.length > 120 ? shown.slice(0, 120) + "…" : shown, title: shown.length > 120 ? shown : null }),
      el("td", {}, scalar ? el("button", { type: "button", "aria-label": "Filter on " + k + " == " + shown.slice(0, 40), onclick: () => applyFilter(addClause(state.filter, name + " == " + value)) }, "Filter") : null, " ",
        el("button", { type: "button", "aria-label": "Column of " + k, onclick: () => setCols([...state.cols, k]) }, "Column"))));
  }
}
