package viewer_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/aaep-tools/aaepkit/internal/browsertest"
)

// readyPage opens the page at url in a new Chromium at 1440×900 and waits
// until it is ready (the check's verdicts in).
func readyPage(t *testing.T, url string) (*browsertest.Browser, *browsertest.Page) {
	t.Helper()
	b := browsertest.New(t)
	p := b.NewPage(t)
	p.Do(t, chromedp.EmulateViewport(1440, 900))
	p.Navigate(t, url+"/")
	p.WaitFor(t, 60*time.Second, `document.body.dataset.ready === "true"`)
	return b, p
}

// visibleRows is the JavaScript of the rows of list id drawn whole inside
// its box, filled, in order.
const visibleRows = `(id => { const box = document.getElementById(id).getBoundingClientRect();
	return [...document.querySelectorAll("#" + id + " .vrow[data-filled='1']")].filter(r => { const b = r.getBoundingClientRect(); return b.top >= box.top - 0.5 && b.bottom <= box.bottom + 0.5; })
		.map(r => Number(r.dataset.row)).sort((a, b) => a - b); })`

// TestTenMillionRowsInBrowser: issue 40's item 2, size. The page's list
// (VList, as the messages use it) of 10,000,000 rows, far beyond the
// browser's element height cap (33,554,430 px: 1.52M rows), scrolls to
// every row: End shows the last, Home the first, a row chosen in the
// middle is shown, dragging the scrollbar to its end shows the last row and
// to its middle the middle rows, the wheel moves by its own pixels.
func TestTenMillionRowsInBrowser(t *testing.T) {
	ts := startView(t, demo, nil)
	_, p := readyPage(t, ts.URL)
	const total = 10_000_000
	p.Eval(t, `(() => {
		const box = el("div", { id: "big", class: "vlist", tabindex: "0", role: "listbox", "aria-label": "Ten million rows" });
		box.style.height = "300px"; box.style.flex = "none";
		document.getElementById("messages-box").append(box);
		window.bigFetches = 0;
		window.big = new VList(box, {
			fetch: (from, n) => { window.bigFetches++; return Promise.resolve({ rows: Array.from({ length: Math.min(n, 10000000 - from) }, (_, k) => ({ i: from + k })), total: 10000000 }); },
			render: (r, d) => { r.textContent = "row " + d.i; },
		});
		big.reset(10000000);
		return true; })()`, nil)
	var spacer, scrollMax float64
	p.Eval(t, `document.querySelector("#big .spacer").getBoundingClientRect().height`, &spacer)
	if spacer > 33_554_430 || spacer < 1_000_000 {
		t.Errorf("the spacer is %v px high: want at most the cap (33,554,430 px), and a scrollbar", spacer)
	}
	visible := func() []int {
		var rows []int
		p.Eval(t, visibleRows+`("big")`, &rows)
		return rows
	}
	waitShown := func(row int, what string) []int {
		t.Helper()
		var rows []int
		for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			if rows = visible(); len(rows) > 0 && rows[0] <= row && row <= rows[len(rows)-1] {
				return rows
			}
		}
		t.Fatalf("%s: row %d is not shown; the rows shown are %v", what, row, rows)
		return nil
	}
	key := func(k string) {
		t.Helper()
		p.Eval(t, `(() => { document.getElementById("big").focus(); return true; })()`, nil)
		p.Do(t, chromedp.KeyEvent(k))
	}
	key(kb.End)
	waitShown(total-1, "End")
	var active string
	p.Eval(t, `document.getElementById("big").getAttribute("aria-activedescendant") || ""`, &active)
	if active != "big-r9999999" {
		t.Errorf("after End the selected row is %q, want big-r9999999", active)
	}
	var lastText string
	p.Eval(t, `document.getElementById("big-r9999999").textContent`, &lastText)
	if lastText != "row 9999999" {
		t.Errorf("the last row reads %q", lastText)
	}
	key(kb.ArrowUp)
	waitShown(total-2, "ArrowUp from the last row")
	key(kb.Home)
	if rows := waitShown(0, "Home"); rows[0] != 0 {
		t.Errorf("after Home the first row shown is %d", rows[0])
	}
	p.Eval(t, `big.choose(5000000, true).then(() => true)`, nil)
	waitShown(5_000_000, "choosing row 5,000,000")
	// The scrollbar dragged to its end, then to its middle.
	p.Eval(t, `(() => { const b = document.getElementById("big"); b.scrollTop = b.scrollHeight; return true; })()`, nil)
	waitShown(total-1, "the scrollbar at its end")
	p.Eval(t, `(() => { const b = document.getElementById("big"); b.scrollTop = (b.scrollHeight - b.clientHeight) / 2; return b.scrollHeight - b.clientHeight; })()`, &scrollMax)
	mid := waitShown(total/2, "the scrollbar at its middle")
	if mid[0] < total/2-20 {
		t.Errorf("the scrollbar at its middle shows rows from %d", mid[0])
	}
	// The wheel moves the list by its own pixels, not the scaled bar's.
	key(kb.Home)
	waitShown(0, "Home again")
	p.Eval(t, `(() => { document.getElementById("big").dispatchEvent(new WheelEvent("wheel", { deltaY: 10 * ROW, bubbles: true, cancelable: true })); return true; })()`, nil)
	if rows := waitShown(10, "a wheel of ten rows"); rows[0] != 10 {
		t.Errorf("a wheel of ten rows from the top shows rows from %d", rows[0])
	}
	var fetches int
	p.Eval(t, `bigFetches`, &fetches)
	if fetches > 40 {
		t.Errorf("%d pages fetched for a few jumps", fetches)
	}
	noPageScroll(t, p)
}

// TestReloadsInBrowser: issue 40's item 2. A slower earlier reload never
// overwrites a later filter's list and count; a search that takes long
// marks the list as the earlier result, shows it is running and can be
// cancelled, which puts the filter and the search back to what the list
// shows.
func TestReloadsInBrowser(t *testing.T) {
	ts := startView(t, demo, nil)
	_, p := readyPage(t, ts.URL)
	// Answers to a search for "slowtext" arrive late (after 1.5 s, or 30 s
	// for "slowertext"), whether or not the page still wants them.
	p.Eval(t, `(() => { const real = window.fetch; window.fetch = (u, o) => {
		const s = String(u), d = s.includes("q=slowertext") ? 30000 : s.includes("q=slowtext") ? 1500 : 0;
		return d && s.includes("/api/rows") ? new Promise((res) => setTimeout(() => res(real(u)), d)) : real(u, o); }; return true; })()`, nil)
	apply := func(filter, q string) {
		t.Helper()
		p.Eval(t, fmt.Sprintf(`(() => { document.getElementById("filter").value = %q; document.getElementById("search").value = %q; return true; })()`, filter, q), nil)
		click(t, p, "#filter-apply")
	}
	apply("", "slowtext")
	apply("index < 5", "")
	p.WaitFor(t, 10*time.Second, `document.getElementById("events-scope").textContent.includes("index < 5")`)
	time.Sleep(2500 * time.Millisecond) // the slow answer has come
	if got := text(t, p, "#events-scope"); !strings.Contains(got, "filter index < 5: 5 rows") {
		t.Errorf("after a slow search and a later filter the scope reads %q", got)
	}
	if got := text(t, p, "#filter-status"); got != "5 matches" {
		t.Errorf("after a slow search and a later filter the status reads %q", got)
	}
	if rows := rowsOf(t, p, "events-list"); len(rows) != 5 {
		t.Errorf("%d rows drawn, want 5", len(rows))
	}
	// A long search: the earlier result marked, then cancelled.
	apply("index < 5", "slowertext")
	p.WaitFor(t, 10*time.Second, `document.getElementById("events-list").classList.contains("stale") && !document.getElementById("filter-busy").hidden`)
	if got := text(t, p, "#events-scope"); !strings.HasPrefix(got, "Earlier result") || !strings.Contains(got, "5 rows") {
		t.Errorf("while searching the scope reads %q", got)
	}
	var busy string
	p.Eval(t, `document.getElementById("events-list").getAttribute("aria-busy") || ""`, &busy)
	if busy != "true" {
		t.Errorf("while searching the list is not aria-busy (%q)", busy)
	}
	axe(t, p, "a search running")
	click(t, p, "#filter-cancel")
	p.WaitFor(t, 5*time.Second, `!document.getElementById("events-list").classList.contains("stale")`)
	var vals []string
	p.Eval(t, `[document.getElementById("filter").value, document.getElementById("search").value, document.getElementById("filter-status").textContent, document.getElementById("events-scope").textContent, String(document.getElementById("filter-busy").hidden)]`, &vals)
	if vals[0] != "index < 5" || vals[1] != "" || !strings.HasPrefix(vals[2], "Search cancelled") || !strings.Contains(vals[3], "5 rows") || strings.HasPrefix(vals[3], "Earlier") || vals[4] != "true" {
		t.Errorf("after cancelling: filter %q, search %q, status %q, scope %q, progress hidden %s", vals[0], vals[1], vals[2], vals[3], vals[4])
	}
	p.WaitFor(t, 5*time.Second, `!location.hash.includes("slowertext")`)
}
