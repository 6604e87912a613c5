package viewer_test

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/aaep-tools/aaepkit/internal/browsertest"
	"github.com/aaep-tools/aaepkit/internal/golden"
	"github.com/aaep-tools/aaepkit/internal/viewer"
	"github.com/aaep-tools/aaepkit/serve"
)

// listEnd is true when the messages list is scrolled to its end (within
// a row: a horizontal scroll bar takes some of the box).
const listEnd = `(() => { const b = document.getElementById("events-list"); return b.scrollTop + b.clientHeight >= b.scrollHeight - 22; })()`

// TestLiveInBrowser: issue 40's item 1 in the page. While a writer
// appends to the capture (each record at its real receive time, flushed by
// the writer's timer as aaep-capture's are), view --follow shows each new
// row without a reload, the heading's counts current, a live mark, the
// capture named as being written; the messages list follows the end until
// the user scrolls up (the count still grows, the list stays put) and again
// once they scroll back to the end; no row shows "…" meanwhile; the mark
// says when the recording has ended.
func TestLiveInBrowser(t *testing.T) {
	c := newLiveCapture(t, 120)
	ts := startViewOf(t, serve.OpenFile(c.path), viewer.Options{Path: c.path, Follow: true})
	b := browsertest.New(t)
	p := b.NewPage(t)
	p.Do(t, chromedp.EmulateViewport(1440, 900))
	p.Navigate(t, ts.URL+"/")
	p.WaitFor(t, 60*time.Second, `document.body.dataset.ready === "true" && document.getElementById("live").classList.contains("on") && document.getElementById("events-scope").textContent.includes("120 rows")`)
	p.WaitFor(t, 20*time.Second, `document.getElementById("events-list-r119") !== null && `+listEnd)
	if s := text(t, p, "#capture-info"); !contains(s, "120 records", "being written") {
		t.Errorf("capture line while recording: %q", s)
	}
	if s := text(t, p, "#live-text"); !contains(s, "Live", "following") {
		t.Errorf("live mark: %q", s)
	}
	// The sessions' verdicts so far, not "…" until a check that runs as
	// long as the recording is done.
	p.WaitFor(t, 20*time.Second, `document.querySelectorAll("#sessions-list .vrow[data-filled='1']").length === 4`)
	var pending []string
	p.Eval(t, `[...document.querySelectorAll("#sessions-list .vrow span.num")].filter(e => e.textContent.endsWith("…")).map(e => e.textContent)`, &pending)
	if len(pending) > 0 {
		t.Errorf("session cells still waiting while the capture is followed: %q", pending)
	}
	// Any row shown blank ("…", a page not fetched yet) while the list
	// grows is counted (settled: the rows on screen filled, the count
	// started again, after the user scrolled).
	p.Eval(t, `window.blanks = 0; new MutationObserver((ms) => { for (const m of ms) for (const n of m.addedNodes) if (n.textContent === "…") window.blanks++; }).observe(document.getElementById("events-list"), { childList: true })`, nil)
	blanks := 0
	settle := func(growing bool) {
		t.Helper()
		p.WaitFor(t, 20*time.Second, `![...document.querySelectorAll("#events-list .vrow")].some(r => r.textContent === "…")`)
		var n int
		p.Eval(t, `(() => { const n = window.blanks; window.blanks = 0; return n; })()`, &n)
		if growing {
			blanks += n
		}
	}

	c.add(1)
	p.WaitFor(t, 20*time.Second, `document.getElementById("events-list-r120") !== null && document.getElementById("events-scope").textContent.includes("121 rows") && `+listEnd)
	p.WaitFor(t, 20*time.Second, `document.getElementById("capture-info").textContent.includes("121 records")`)
	settle(true)

	// Scrolled up: the list stays where the user put it, the counts grow.
	p.Eval(t, `document.getElementById("events-list").scrollTop = 0`, nil)
	p.WaitFor(t, 20*time.Second, `document.getElementById("live-text").textContent.includes("scrolled up")`)
	settle(false)
	c.add(10)
	p.WaitFor(t, 20*time.Second, `document.getElementById("events-scope").textContent.includes("131 rows") && document.getElementById("capture-info").textContent.includes("131 records")`)
	settle(true)
	var top float64
	p.Eval(t, `document.getElementById("events-list").scrollTop`, &top)
	if top != 0 {
		t.Errorf("the list scrolled to %v px while the user was scrolled up", top)
	}

	// Back at the end: it follows again, scrolled there or by the live
	// mark's button.
	p.Eval(t, `(() => { const b = document.getElementById("events-list"); b.scrollTop = b.scrollHeight; })()`, nil)
	p.WaitFor(t, 20*time.Second, `document.getElementById("live-text").textContent.includes("following") && document.getElementById("live-follow").getClientRects().length === 0`)
	p.Eval(t, `document.getElementById("events-list").scrollTop = 0`, nil)
	p.WaitFor(t, 20*time.Second, `document.getElementById("live-follow").getClientRects().length > 0`)
	click(t, p, "#live-follow")
	p.WaitFor(t, 20*time.Second, `document.getElementById("live-text").textContent.includes("following") && `+listEnd)
	settle(false)
	c.add(5)
	p.WaitFor(t, 20*time.Second, `document.getElementById("events-list-r135") !== null && document.getElementById("events-scope").textContent.includes("136 rows") && `+listEnd)
	var shown string
	p.Eval(t, `document.getElementById("events-list-r135").dataset.index`, &shown)
	if shown != "135" {
		t.Errorf("last row shows record %s, want 135", shown)
	}
	settle(true)
	if blanks != 0 {
		t.Errorf("%d rows were shown blank (…) while the list grew", blanks)
	}
	if golden.Updating() {
		// docs/viewer.md's picture of a recording followed live.
		screenshot(t, p, filepath.Join("..", "..", "docs", "viewer-live.png"), "")
	}
	var lat []float64
	p.Eval(t, `window.aaepView.latency()`, &lat)
	if len(lat) < 16 {
		t.Errorf("latency noted for %d rows, want the 16 added", len(lat))
	}
	t.Logf("receive to row: %v ms", lat)

	if err := c.w.Close(); err != nil {
		t.Fatal(err)
	}
	p.WaitFor(t, 20*time.Second, `document.getElementById("live-text").textContent.includes("ended") && !document.getElementById("live").classList.contains("on")`)
	if s := text(t, p, "#capture-info"); contains(s, "being written") || contains(s, "not closed cleanly") {
		t.Errorf("capture line once closed: %q", s)
	}
	axe(t, p, "live view")
}

// contains reports whether s contains every one of subs.
func contains(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// TestLiveTraceInBrowser: while view --follow follows a capture being
// written, the trace of the chosen session is drawn again when that session
// gets new messages (not when only others do), at the zoom and position the
// user left it, its steps list grown.
func TestLiveTraceInBrowser(t *testing.T) {
	rend := renderHelper(t)
	c := newLiveCapture(t, 40)
	// The sample's message 40 is the chosen session's, 41 and 42 are others'.
	sid := c.msgs[40].Session
	if c.msgs[41].Session == sid || c.msgs[42].Session == sid {
		t.Fatalf("the sample's messages 41, 42 are of %s too", sid)
	}
	ts := startViewOf(t, serve.OpenFile(c.path), viewer.Options{Path: c.path, Follow: true, Renderer: rend})
	b := browsertest.New(t)
	p := b.NewPage(t)
	p.Do(t, chromedp.EmulateViewport(1440, 900))
	p.Navigate(t, ts.URL+"/#session="+sid)
	p.WaitFor(t, 60*time.Second, `document.body.dataset.ready === "true" && document.querySelector("#trace-svg svg g.edge") !== null && document.getElementById("tr-zoom").textContent !== ""`)
	stepsTotal := func() int {
		var n int
		p.Eval(t, `window.aaepView.lists().steps.total`, &n)
		return n
	}
	before := stepsTotal()
	type view struct {
		Zoom      string
		Left, Top float64
		Redraws   int
	}
	get := func() view {
		var v view
		p.Eval(t, `(() => { const b = document.getElementById("trace-svg"); return {Zoom: document.getElementById("tr-zoom").textContent, Left: b.scrollLeft, Top: b.scrollTop, Redraws: window.aaepView.traceRedraws()}; })()`, &v)
		return v
	}
	click(t, p, "#tr-in")
	click(t, p, "#tr-in")
	p.Eval(t, `(() => { const b = document.getElementById("trace-svg"); b.scrollLeft = 40; b.scrollTop = 30; return true; })()`, nil)
	zoomed := get()
	if zoomed.Left == 0 && zoomed.Top == 0 {
		t.Fatalf("the zoomed drawing does not move: %+v", zoomed)
	}

	// The session's new message: drawn again where the user left it.
	c.add(1) // 40: the session's
	p.WaitFor(t, 20*time.Second, `window.aaepView.traceRedraws() === 1`)
	if n := stepsTotal(); n <= before {
		t.Errorf("steps after the session's new message: %d, before %d", n, before)
	}
	if v := get(); v.Zoom != zoomed.Zoom || v.Left != zoomed.Left || v.Top != zoomed.Top {
		t.Errorf("redrawn at %+v, the user left it at %+v", v, zoomed)
	}
	var status string
	p.Eval(t, `document.getElementById("trace-status").textContent`, &status)
	if !strings.Contains(status, strconv.Itoa(stepsTotal())+" steps") {
		t.Errorf("trace status %q, steps %d", status, stepsTotal())
	}
	// Others' messages only: the capture grows, the trace stays.
	c.add(2) // 41, 42: others'
	p.WaitFor(t, 20*time.Second, `document.getElementById("capture-info").textContent.includes("43 records")`)
	// Past the debounce (a second) and the redraw's own requests.
	time.Sleep(2500 * time.Millisecond)
	if v := get(); v.Redraws != 1 {
		t.Errorf("the trace was drawn again %d times for others' messages", v.Redraws-1)
	}
	axe(t, p, "live trace")
}
