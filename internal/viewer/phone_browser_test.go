package viewer_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/gorilla/websocket"

	"github.com/aaep-tools/aaepkit/internal/browsertest"
)

// TestPhoneAndSmallFixesInBrowser: issue 40's item 5. On a 390×844 phone a
// tap on a message brings the filled inspector into view; no column header
// (SHOULD sorted, with its arrow) widens the page; the timeline never
// starts before the capture after a session is chosen; counts of one are
// singular; a subscriber's log is one tab stop however many events it
// received, its events reached with the arrow keys.
func TestPhoneAndSmallFixesInBrowser(t *testing.T) {
	ts := startView(t, demo, nil)
	b := browsertest.New(t)
	p := b.NewPage(t)
	p.Do(t, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile))
	p.Navigate(t, ts.URL+"/#sort=should:desc")
	p.WaitFor(t, 30*time.Second, `document.body.dataset.ready === "true" && document.querySelectorAll("#sessions-list .vrow[data-filled='1']").length > 0 && document.querySelectorAll("#events-list .vrow[data-filled='1']").length > 0`)

	t.Run("no sideways scroll", func(t *testing.T) {
		var w struct {
			Inner, Scroll int
			Wide          []string
		}
		p.Eval(t, `({Inner: window.innerWidth, Scroll: document.documentElement.scrollWidth,
			Wide: [...document.querySelectorAll("body *")].filter(e => e.getClientRects().length && e.getBoundingClientRect().right > window.innerWidth + 0.5).slice(0, 5).map(e => e.tagName + "#" + e.id + "." + e.className + " " + e.textContent.slice(0, 20))})`, &w)
		if w.Scroll > w.Inner || len(w.Wide) > 0 {
			t.Errorf("the page is %d px wide in a %d px screen (sorted by SHOULD); beyond its right edge: %q", w.Scroll, w.Inner, w.Wide)
		}
		// Each header shown fits its column, whatever the font's widths:
		// it does not spill over the list's edge.
		var spill []string
		p.Eval(t, `(() => { const box = document.getElementById("sessions-list").getBoundingClientRect();
			return [...document.querySelectorAll("#sessions-sort button")].filter(b => b.getClientRects().length).filter(b => b.scrollWidth > b.clientWidth + 0.5 || b.getBoundingClientRect().right > box.right + 0.5)
				.map(b => b.textContent + ": " + b.scrollWidth + "/" + b.clientWidth + " px, right " + b.getBoundingClientRect().right + " of " + box.right); })()`, &spill)
		for _, s := range spill {
			t.Errorf("a session header spills: %s", s)
		}
	})

	t.Run("a tap brings the inspector into view", func(t *testing.T) {
		p.Eval(t, `window.scrollTo(0, 0); true`, nil)
		var below bool
		p.Eval(t, `document.getElementById("inspector").getBoundingClientRect().top > window.innerHeight`, &below)
		if !below {
			t.Fatal("the inspector is on screen before the tap: nothing to test")
		}
		click(t, p, "#events-list .vrow[data-row='3']")
		p.WaitFor(t, 30*time.Second, `document.getElementById("inspector-h").textContent.includes("#")`)
		p.WaitFor(t, 10*time.Second, `(() => { const r = document.getElementById("inspector-h").getBoundingClientRect(); return r.top >= 0 && r.bottom <= window.innerHeight; })()`)
	})

	t.Run("the timeline starts at the capture's start", func(t *testing.T) {
		// Each of the demo's sessions, the first to start among them.
		var keys []string
		p.Eval(t, `fetch("/api/sessions?limit=100&sort=first").then(r => r.json()).then(r => r.sessions.map(s => s.key || s.id))`, &keys)
		if len(keys) == 0 {
			t.Fatal("no sessions")
		}
		p.Eval(t, fmt.Sprintf(`window.aaepView.selectSession(%q)`, keys[0]), nil)
		p.WaitFor(t, 30*time.Second, `window.aaepView.state.tl && document.getElementById("tl-range").textContent !== ""`)
		var v struct{ From, First float64 }
		p.Eval(t, `({From: window.aaepView.state.view.from, First: window.aaepView.state.capture.first_ns})`, &v)
		if v.From < v.First {
			t.Errorf("after choosing session %s the timeline starts at %.0f ns, before the capture's start %.0f ns", keys[0], v.From, v.First)
		}
		if r := text(t, p, "#tl-range"); strings.HasPrefix(r, "-") {
			t.Errorf("the timeline's range reads %q", r)
		}
	})

	t.Run("one row, not one rows", func(t *testing.T) {
		click(t, p, "#ev-all")
		p.WaitFor(t, 30*time.Second, `document.getElementById("events-scope").textContent === "All sessions: 108 rows."`)
		setFilter(t, p, "index == 33")
		p.WaitFor(t, 30*time.Second, `document.getElementById("events-scope").textContent.includes("filter index == 33")`)
		if s := text(t, p, "#events-scope"); !strings.HasSuffix(s, ": 1 row.") {
			t.Errorf("the scope of one message reads %q, want it to end in \": 1 row.\"", s)
		}
		if s := text(t, p, "#filter-status"); s != "1 match" {
			t.Errorf("the filter's status reads %q, want \"1 match\"", s)
		}
		var body string
		p.Eval(t, `document.body.innerText`, &body)
		for _, w := range []string{" 1 rows", " 1 matches", " 1 events", " 1 sessions", " 1 steps", " 1 subscribers", " 1 replies", " 1 records", " 1 messages"} {
			if strings.Contains(body, w) {
				t.Errorf("the page says %q", strings.TrimSpace(w))
			}
		}
		click(t, p, "#filter-clear")
		p.WaitFor(t, 30*time.Second, `document.getElementById("events-scope").textContent.includes(": 108 rows")`)
	})

	t.Run("a subscriber's log is one tab stop", func(t *testing.T) {
		ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.URL, "http")+"/aaep/v1/ws", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ws.Close()
		p.WaitFor(t, 30*time.Second, `document.querySelector("#rp-subs [data-sub]") && document.getElementById("rp-live").textContent.includes("paused")`)
		p.Eval(t, `window.aaepView.control("step", {count: 5})`, nil)
		for range 5 {
			ws.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, _, err := ws.ReadMessage(); err != nil {
				t.Fatalf("subscriber: %v", err)
			}
		}
		p.WaitFor(t, 30*time.Second, `document.querySelectorAll("#rp-subs [data-sub] ol button").length === 5`)
		var stops int
		p.Eval(t, `[...document.querySelectorAll("#rp-subs [data-sub] *")].filter(e => e.tabIndex >= 0 && !e.disabled).length`, &stops)
		if stops != 1 {
			t.Errorf("a subscriber's log of 5 events has %d tab stops, want 1", stops)
		}
		if s := text(t, p, "#rp-subs [data-sub] p"); !strings.HasPrefix(s, "Received 5 events, sent 0 replies") {
			t.Errorf("the subscriber's line reads %q", s)
		}
		// The arrows move among the events; Enter inspects one.
		p.Eval(t, `document.querySelector("#rp-subs [data-sub] ol").focus(); true`, nil)
		p.Do(t, chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.ArrowDown))
		var focused string
		p.Eval(t, `document.activeElement.textContent`, &focused)
		if focused != "#1" {
			t.Errorf("after ↓ ↓ in the log the focus is on %q, want the second event, #1", focused)
		}
		p.Do(t, chromedp.KeyEvent(kb.Enter))
		p.WaitFor(t, 30*time.Second, `document.getElementById("inspector-h").textContent.endsWith("#1")`)
		axe(t, p, "phone, a subscriber's log")
	})
}
