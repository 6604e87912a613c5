"use strict";

// ---- virtual list ----
// A listbox whose rows are fetched a page at a time and drawn only while
// on screen. One tab stop; arrows, Page keys, Home and End move the
// selection; aria-activedescendant names the selected row.
//
// Browsers cap an element's height (Chromium at 33,554,430 px: 1.52M rows
// of 22 px), so a longer list is scaled: its spacer is at most MAX_SPACER
// high and the scrollbar moves through the list in proportion. vt is the
// list's own scroll position in rows' pixels (0 to total*ROW - height):
// rows are drawn where vt puts them, the wheel moves vt by its own pixels
// (not the scaled bar's), and show() sets vt exactly.
const MAX_SPACER = 8_000_000;

class VList {
  constructor(box, opts) {
    this.box = box; this.o = opts; this.total = 0; this.pages = new Map(); this.sel = -1; this.gen = 0;
    this.vt = 0; this.setTop = -1;
    // atEnd: scrolled to the end, within a row (a scroll bar may take
    // some of the box); a growing list follows its end (grow).
    this.atEnd = true;
    this.spacer = el("div", { class: "spacer" });
    box.append(this.spacer);
    box.addEventListener("scroll", () => {
      // A scroll the list made itself (show, wheel) keeps its exact vt.
      if (Math.abs(this.box.scrollTop - this.setTop) >= 1) this.vt = this.box.scrollTop * this.scale();
      this.setTop = -1;
      this.draw();
      this.atEnd = this.vt >= this.maxVt() - ROW;
    });
    box.addEventListener("wheel", (e) => {
      if (this.scale() <= 1 || e.ctrlKey) return;
      e.preventDefault();
      const d = e.deltaMode === 1 ? e.deltaY * ROW : e.deltaMode === 2 ? e.deltaY * this.box.clientHeight : e.deltaY;
      this.scrollTo(this.vt + d);
    }, { passive: false });
    box.addEventListener("click", (e) => {
      const r = e.target.closest(".vrow");
      if (r) this.choose(Number(r.dataset.row), "click");
    });
    box.addEventListener("keydown", (e) => this.key(e));
    // A list that follows its end (follows, set by its owner) stays at
    // the end when its box is resized.
    new ResizeObserver(() => { if (this.follows && this.atEnd) this.scrollTo(this.maxVt()); else this.draw(); }).observe(box);
  }
  // reset empties the list; first, when given, is its first page.
  reset(total, first) {
    this.gen++; this.total = total; this.pages.clear(); this.sel = -1;
    if (first) this.pages.set(0, { rows: first, wait: Promise.resolve() });
    this.vt = 0; this.setTop = -1; this.box.scrollTop = 0;
    this.size();
    this.draw();
  }
  setTotal(total) { this.total = total; this.size(); this.vt = Math.min(this.vt, this.maxVt()); this.draw(); }
  size() { this.spacer.style.height = Math.min(this.total * ROW, MAX_SPACER) + "px"; }
  // scale is how many of the list's pixels one pixel of the scrollbar moves.
  scale() {
    const full = this.total * ROW, h = this.box.clientHeight || 300;
    return full <= MAX_SPACER || MAX_SPACER <= h ? 1 : (full - h) / (MAX_SPACER - h);
  }
  maxVt() { return Math.max(0, this.total * ROW - (this.box.clientHeight || 300)); }
  // scrollTo puts the list's pixel vt at the top of the box.
  scrollTo(vt) {
    this.vt = Math.min(this.maxVt(), Math.max(0, vt));
    const top = this.vt / this.scale();
    if (Math.abs(this.box.scrollTop - top) < 1) { this.draw(); return; }
    this.box.scrollTop = top;
    this.setTop = this.box.scrollTop;
    this.draw();
  }
  // grow takes in a list that has grown (a capture being written): the
  // pages to show are fetched first, then swapped in with the new total in
  // one go, so no row blanks meanwhile; with follow, a list scrolled to its
  // end follows the end. It returns the new total.
  async grow(follow) {
    const gen = this.gen, h = this.box.clientHeight || 300;
    const pagesOf = (top) => { const ps = []; for (let p = Math.floor(Math.max(0, Math.floor(top / ROW) - 2) / PAGE); p <= Math.floor((Math.ceil((top + h) / ROW) + 2) / PAGE); p++) ps.push(p); return ps; };
    const got = new Map();
    const fetchPage = async (p) => { if (!got.has(p)) got.set(p, await this.o.fetch(p * PAGE, PAGE)); return got.get(p); };
    const total = (await fetchPage(Math.floor(Math.max(0, this.total - 1) / PAGE))).total;
    const top = follow ? Math.max(0, total * ROW - h) : this.vt;
    for (const p of pagesOf(top)) if (p * PAGE < Math.max(total, 1)) await fetchPage(p);
    if (gen !== this.gen) return this.total;
    this.gen++;
    this.pages.clear();
    for (const [p, r] of got) this.pages.set(p, { rows: r.rows, wait: Promise.resolve() });
    this.total = total; this.size();
    if (follow && this.atEnd) { this.scrollTo(this.maxVt()); this.atEnd = true; } // unless scrolled up meanwhile
    else this.draw();
    return total;
  }
  invalidate() { this.gen++; this.pages.clear(); this.draw(); }
  row(i) { const p = this.pages.get(Math.floor(i / PAGE)); return p && p.rows ? p.rows[i % PAGE] : undefined; }
  async load(page) {
    if (this.pages.has(page)) return this.pages.get(page).wait;
    const gen = this.gen;
    const entry = {};
    entry.wait = this.o.fetch(page * PAGE, PAGE).then((r) => {
      if (gen !== this.gen) return;
      entry.rows = r.rows;
      if (r.total !== undefined && r.total !== this.total) this.setTotal(r.total);
      this.draw();
    }).catch((err) => { this.pages.delete(page); report("List", err); });
    this.pages.set(page, entry);
    return entry.wait;
  }
  draw() {
    if (this.total === 0 && !this.pages.has(0)) this.load(0); // learns the total
    const h = this.box.clientHeight || 300;
    if (this.scale() === 1) this.vt = this.box.scrollTop;
    const vt = Math.min(this.vt, this.maxVt()), shift = this.box.scrollTop - vt;
    const first = Math.max(0, Math.floor(vt / ROW) - 2);
    const last = Math.min(this.total, Math.ceil((vt + h) / ROW) + 2);
    const keep = new Map();
    for (const c of [...this.box.children]) if (c !== this.spacer) { const i = Number(c.dataset.row); if (i >= first && i < last && c.dataset.gen === String(this.gen) && c.dataset.filled === "1") keep.set(i, c); else c.remove(); }
    for (let i = first; i < last; i++) {
      if (keep.has(i)) { keep.get(i).style.top = (i * ROW + shift) + "px"; this.decorate(keep.get(i), i); continue; }
      const data = this.row(i);
      if (data === undefined) this.load(Math.floor(i / PAGE));
      const r = el("div", { class: "vrow " + (this.o.cls || ""), role: "option", id: this.box.id + "-r" + i, "data-row": String(i), "data-gen": String(this.gen),
        "aria-setsize": String(this.total), "aria-posinset": String(i + 1) });
      r.style.top = (i * ROW + shift) + "px";
      if (data !== undefined) {
        this.o.render(r, data, i); r.dataset.filled = "1";
        if (!this.marked) { this.marked = true; performance.mark(this.box.id + "-filled"); } // the first rows on screen
      } else { r.textContent = "…"; r.setAttribute("aria-label", "loading row " + (i + 1)); }
      this.decorate(r, i);
      this.box.append(r);
    }
    const cur = this.box.querySelector("#" + CSS.escape(this.box.id + "-r" + this.sel));
    if (cur) this.box.setAttribute("aria-activedescendant", cur.id); else this.box.removeAttribute("aria-activedescendant");
  }
  decorate(r, i) {
    r.setAttribute("aria-selected", String(i === this.sel));
    if (this.o.mark) this.o.mark(r, this.row(i), i);
  }
  // show scrolls the list (never the page) so that row i is in view.
  show(i) {
    const top = i * ROW, h = this.box.clientHeight;
    if (top < this.vt) this.scrollTo(top);
    else if (top + ROW > this.vt + h) this.scrollTo(top + ROW - h);
  }
  select(i, scroll) { this.sel = i; if (scroll && i >= 0) this.show(i); this.draw(); }
  async choose(i, byUser) {
    if (i < 0 || i >= this.total) return;
    this.select(i, true);
    let data = this.row(i);
    if (data === undefined) { await this.load(Math.floor(i / PAGE)); data = this.row(i); }
    if (data !== undefined && this.o.choose) this.o.choose(data, i, byUser);
  }
  key(e) {
    const page = Math.max(1, Math.floor(this.box.clientHeight / ROW) - 1);
    const moves = { ArrowDown: 1, ArrowUp: -1, PageDown: page, PageUp: -page };
    let to = null;
    if (moves[e.key] !== undefined) to = Math.min(this.total - 1, Math.max(0, (this.sel < 0 ? 0 : this.sel + moves[e.key])));
    else if (e.key === "Home") to = 0;
    else if (e.key === "End") to = this.total - 1;
    else if (e.key === "Enter" && this.o.enter && this.sel >= 0) { e.preventDefault(); this.o.enter(this.row(this.sel)); return; }
    if (to === null) return;
    e.preventDefault();
    this.choose(to, true);
  }
}
