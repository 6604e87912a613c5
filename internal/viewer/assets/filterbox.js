"use strict";

// ---- the filter box: checked as it is typed, field names completed, a history ----
// The expression is checked by the server's own parser (/api/filter) a
// moment after each keystroke; where a field name may stand, the names
// that start with what is typed are offered (the filter's fields and the
// payloads', /api/fields), and so are the filters applied before (kept in
// this browser, newest first). Arrows move in the suggestions, Enter or Tab
// takes one, Escape closes them.

const HISTORY_KEY = "aaep-view-filter-history";
const HISTORY_MAX = 20;
const fbox = { fields: [], opts: [], active: -1, timer: null, seq: 0 };

function filterHistory() {
  try { const h = JSON.parse(localStorage.getItem(HISTORY_KEY) || "[]"); return Array.isArray(h) ? h.filter((x) => typeof x === "string") : []; } catch (e) { return []; }
}

function rememberFilter(f) {
  if (!f) return;
  const h = [f, ...filterHistory().filter((x) => x !== f)].slice(0, HISTORY_MAX);
  try { localStorage.setItem(HISTORY_KEY, JSON.stringify(h)); } catch (e) { /* storage off: no history */ }
}

// fieldWord is the field name being typed at pos in v, with where it
// starts, or null where no field name may stand (after an operator, in a
// quoted string).
function fieldWord(v, pos) {
  const before = v.slice(0, pos);
  if ((before.match(/"/g) || []).length % 2) return null;
  const m = before.match(/[A-Za-z_][\w.]*$/);
  const word = m ? m[0] : "";
  const rest = before.slice(0, before.length - word.length).trimEnd();
  if (rest !== "" && !/(\(|!|&&|\|\|)$/.test(rest)) return null;
  return { word, start: pos - word.length };
}

function suggest() {
  const input = $("filter"), v = input.value, list = $("filter-suggest");
  const opts = [];
  const w = fieldWord(v, input.selectionStart === null ? v.length : input.selectionStart);
  if (w && (w.word || v.trim() !== "")) {
    const lw = w.word.toLowerCase();
    for (const f of fbox.fields) if (f.toLowerCase().startsWith(lw) && f !== w.word && opts.length < 8) opts.push({ kind: "field", text: f, w });
  }
  for (const h of filterHistory()) if (h !== v && h.startsWith(v) && opts.filter((o) => o.kind === "history").length < 5) opts.push({ kind: "history", text: h });
  fbox.opts = opts; fbox.active = -1;
  list.replaceChildren(...opts.map((o, i) => el("li", { id: "filter-opt-" + i, role: "option", "aria-selected": "false", class: "sug-" + o.kind,
    onmousedown: (e) => { e.preventDefault(); take(i); } }, o.text, el("span", { class: "sr-only", text: o.kind === "field" ? " (field)" : " (applied before)" }))));
  const open = opts.length > 0 && document.activeElement === input;
  list.hidden = !open;
  input.setAttribute("aria-expanded", String(open));
  input.removeAttribute("aria-activedescendant");
}

function closeSuggest() {
  $("filter-suggest").hidden = true; fbox.opts = []; fbox.active = -1;
  $("filter").setAttribute("aria-expanded", "false"); $("filter").removeAttribute("aria-activedescendant");
}

function take(i) {
  const o = fbox.opts[i], input = $("filter");
  if (!o) return;
  if (o.kind === "history") input.value = o.text;
  else {
    const v = input.value, end = o.w.start + o.w.word.length;
    const after = v.slice(end);
    input.value = v.slice(0, o.w.start) + o.text + (after.startsWith(" ") ? "" : " ") + after;
    const at = o.w.start + o.text.length + 1;
    input.setSelectionRange(at, at);
  }
  closeSuggest();
  checkSoon();
}

function moveActive(d) {
  const n = fbox.opts.length;
  if (!n) return;
  fbox.active = (fbox.active + 1 + d + n + 1) % (n + 1) - 1; // -1: none, between the last and the first
  [...$("filter-suggest").children].forEach((li, i) => li.setAttribute("aria-selected", String(i === fbox.active)));
  if (fbox.active >= 0) $("filter").setAttribute("aria-activedescendant", "filter-opt-" + fbox.active);
  else $("filter").removeAttribute("aria-activedescendant");
}

// checkSoon checks the expression a moment after the typing stops.
function checkSoon() {
  clearTimeout(fbox.timer);
  fbox.timer = setTimeout(async () => {
    const v = $("filter").value, n = ++fbox.seq;
    const r = v.trim() ? await api("/api/filter?" + new URLSearchParams({ filter: v })).catch(() => null) : { ok: true };
    if (!r || n !== fbox.seq) return;
    if (r.ok) { $("filter").removeAttribute("aria-invalid"); $("filter-check").textContent = ""; }
    else { $("filter").setAttribute("aria-invalid", "true"); $("filter-check").textContent = r.error; }
  }, 150);
}

function initFilterBox() {
  const input = $("filter");
  api("/api/fields").then((r) => { fbox.fields = [...r.builtin, ...r.payload]; }).catch(() => {});
  input.addEventListener("input", () => { suggest(); checkSoon(); });
  input.addEventListener("focus", suggest);
  input.addEventListener("blur", closeSuggest);
  input.addEventListener("keydown", (e) => {
    const open = !$("filter-suggest").hidden;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      if (!open) suggest();
      e.preventDefault(); moveActive(e.key === "ArrowDown" ? 1 : -1);
    } else if ((e.key === "Enter" || e.key === "Tab") && open && fbox.active >= 0) {
      e.preventDefault(); take(fbox.active);
    } else if (e.key === "Escape" && open) {
      e.preventDefault(); e.stopPropagation(); closeSuggest();
    }
  });
  $("filter-form").addEventListener("submit", () => { rememberFilter(input.value.trim()); closeSuggest(); });
}
