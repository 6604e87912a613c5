// Injected by aaep-replay test --page before any script of the page runs:
// records what a screen reader would announce of the page's ARIA live
// regions (text added to them, with their politeness), in
// window.__aaepHeard as {t: ms since the epoch, text, politeness, region}.
(() => {
  if (window.__aaepHeard) return;
  const heard = [];
  Object.defineProperty(window, "__aaepHeard", { value: heard });
  const roles = { alert: "assertive", status: "polite", log: "polite" };
  const now = () => performance.timeOrigin + performance.now();
  const norm = (s) => (s || "").replace(/\s+/g, " ").trim();
  // region finds the live region a node is in: the nearest ancestor with
  // aria-live (off ends the search) or a live role; an <output> is a
  // status.
  function region(node) {
    for (let el = node.nodeType === 1 ? node : node.parentElement; el; el = el.parentElement) {
      const live = el.getAttribute("aria-live");
      if (live !== null) {
        if (live === "off") return null;
        return { el, politeness: live === "assertive" ? "assertive" : "polite" };
      }
      const role = (el.getAttribute("role") || "").trim().split(/\s+/)[0];
      if (role in roles) return { el, politeness: roles[role] };
      if (el.tagName === "OUTPUT" && !el.hasAttribute("role")) return { el, politeness: "polite" };
    }
    return null;
  }
  function hidden(node) {
    const el = node.nodeType === 1 ? node : node.parentElement;
    if (!el || el.closest("[aria-hidden=true],[hidden]")) return true;
    const st = getComputedStyle(el);
    return st.display === "none" || st.visibility === "hidden";
  }
  function describe(el) {
    const role = el.getAttribute("role");
    const live = el.getAttribute("aria-live");
    let s = role ? "role=" + role : live ? "aria-live=" + live : el.tagName.toLowerCase();
    if (role && live) s += " aria-live=" + live;
    if (el.id) s += " #" + el.id;
    return s;
  }
  function visibleText(node) {
    if (node.nodeType === 3) return node.data;
    if (node.nodeType !== 1 || hidden(node)) return "";
    return node.innerText !== undefined && node.isConnected ? node.innerText : node.textContent;
  }
  function record(batch) {
    const t = now();
    for (const [el, v] of batch) {
      const text = norm(v.atomic ? visibleText(el) : v.parts.join(" "));
      // As many as test keeps (maxHeard): a page that says things without
      // end does not fill its memory with them.
      if (text && heard.length < 100000) heard.push({ t, text, politeness: v.politeness, region: describe(el) });
    }
  }
  new MutationObserver((muts) => {
    const batch = new Map();
    const add = (r, text) => {
      let v = batch.get(r.el);
      if (!v) {
        v = { politeness: r.politeness, atomic: r.el.getAttribute("aria-atomic") === "true", parts: [] };
        batch.set(r.el, v);
      }
      v.parts.push(text);
    };
    for (const m of muts) {
      if (m.type === "characterData") {
        const r = region(m.target);
        if (r && !hidden(m.target)) add(r, m.target.data);
        continue;
      }
      for (const n of m.addedNodes) {
        const r = region(m.target);
        if (r) {
          if (!hidden(n)) add(r, visibleText(n));
          continue;
        }
        // A region added with its content is not announced, except an
        // alert, which speaks as it appears.
        if (n.nodeType !== 1) continue;
        for (const el of [n, ...n.querySelectorAll("[role=alert]")]) {
          if ((el.getAttribute("role") || "").split(/\s+/)[0] === "alert" && !hidden(el)) {
            add({ el, politeness: "assertive" }, visibleText(el));
          }
        }
      }
    }
    record(batch);
  }).observe(document, { childList: true, subtree: true, characterData: true });
})();
