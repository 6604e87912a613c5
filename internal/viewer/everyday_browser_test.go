package viewer_test

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	cdpinput "github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/aaep-tools/aaepkit/capfile/capfiletest"
	"github.com/aaep-tools/aaepkit/payload"
)

// TestEverydayMovesInBrowser: issue 40's item 4. The filter is checked as
// it is typed, completes field names and remembers filters; the Δ and
// Duration columns say the right times; a payload field of the inspector
// becomes a filter and a column; columns resize and long cells tell their
// full text; the timeline tells what is under the pointer and a dragged
// range filters the list; Enter in "Seek to time" seeks and the panel
// names the record the replay continues at.
func TestEverydayMovesInBrowser(t *testing.T) {
	ts := startView(t, demo, nil)
	_, recs := capfiletest.ReadAll(t, demo)
	_, p := readyPage(t, ts.URL)
	typeIn := func(sel, s string) {
		t.Helper()
		p.Eval(t, fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.focus(); e.value = ""; e.dispatchEvent(new Event("input")); return true; })()`, sel), nil)
		p.Do(t, chromedp.KeyEvent(s))
	}
	attr := func(sel, name string) string {
		t.Helper()
		var v string
		p.Eval(t, fmt.Sprintf(`document.querySelector(%q).getAttribute(%q) || ""`, sel, name), &v)
		return v
	}

	t.Run("filter checked as typed, completed, remembered", func(t *testing.T) {
		typeIn("#filter", "type ==")
		p.WaitFor(t, 5*time.Second, `document.getElementById("filter").getAttribute("aria-invalid") === "true"`)
		if got := text(t, p, "#filter-check"); !strings.Contains(got, "value is missing") {
			t.Errorf("typing 'type ==': %q", got)
		}
		p.Do(t, chromedp.KeyEvent(" x"))
		p.WaitFor(t, 5*time.Second, `!document.getElementById("filter").hasAttribute("aria-invalid") && document.getElementById("filter-check").textContent === ""`)
		// Completion of a payload field after &&.
		p.Do(t, chromedp.KeyEvent(" && session_i"))
		p.WaitFor(t, 5*time.Second, `[...document.querySelectorAll("#filter-suggest li")].some(li => li.firstChild.textContent === "session_id")`)
		if got := attr("#filter", "aria-expanded"); got != "true" {
			t.Errorf("suggestions shown, aria-expanded %q", got)
		}
		p.Do(t, chromedp.KeyEvent(kb.ArrowDown))
		if got := attr("#filter", "aria-activedescendant"); got != "filter-opt-0" {
			t.Errorf("ArrowDown: active %q", got)
		}
		p.Do(t, chromedp.KeyEvent(kb.Enter))
		var v string
		p.Eval(t, `document.getElementById("filter").value`, &v)
		if v != "type == x && session_id " {
			t.Errorf("completed to %q", v)
		}
		if got := text(t, p, "#events-scope"); strings.Contains(got, "filter ") {
			t.Errorf("Enter on a suggestion applied the filter: %q", got)
		}
		axe(t, p, "filter suggestions open")
		// A filter applied is offered again.
		typeIn("#filter", "index < 5")
		p.Do(t, chromedp.KeyEvent(kb.Escape), chromedp.KeyEvent(kb.Enter))
		p.WaitFor(t, 10*time.Second, `document.getElementById("events-scope").textContent.includes("filter index < 5: 5 rows")`)
		typeIn("#filter", "ind")
		p.WaitFor(t, 5*time.Second, `[...document.querySelectorAll("#filter-suggest li.sug-history")].some(li => li.firstChild.textContent === "index < 5")`)
		p.Eval(t, `(() => { document.getElementById("filter").blur(); return true; })()`, nil)
		click(t, p, "#filter-clear")
		p.WaitFor(t, 10*time.Second, `document.getElementById("events-scope").textContent.includes(": 108 rows")`)
	})

	t.Run("Δ and Duration columns", func(t *testing.T) {
		click(t, p, "#ev-delta")
		click(t, p, "#sess-span")
		p.WaitFor(t, 10*time.Second, `document.querySelectorAll("#sessions-list .vrow[data-filled='1'] .c-span").length > 0`)
		var rows []struct {
			Index int64
			Delta string
			Shown bool
		}
		p.Eval(t, `[...document.querySelectorAll("#events-list .vrow[data-filled='1']")].sort((a, b) => a.dataset.row - b.dataset.row).slice(0, 8).map(r => { const d = r.querySelector(".c-delta");
			return {Index: Number(r.dataset.index), Delta: d.lastChild.textContent, Shown: d.getBoundingClientRect().width > 20}; })`, &rows)
		if len(rows) < 5 {
			t.Fatalf("%d rows", len(rows))
		}
		for i, r := range rows {
			want := "–"
			if i > 0 {
				want = fmt.Sprintf("+%.3fs", float64(recs[r.Index].Time-recs[rows[i-1].Index].Time)/1e9)
			}
			if r.Delta != want || !r.Shown {
				t.Errorf("row %d (#%d): Δ %q (shown %v), want %q", i, r.Index, r.Delta, r.Shown, want)
			}
		}
		var spans []struct{ Title, Span string }
		p.Eval(t, `[...document.querySelectorAll("#sessions-list .vrow[data-filled='1']")].map(r => ({Title: r.querySelector(".c-id").title, Span: r.querySelector(".c-span").lastChild.textContent}))`, &spans)
		var ss struct {
			Sessions []struct {
				ID    string
				First int64 `json:"first_ns"`
				Last  int64 `json:"last_ns"`
			}
		}
		getJSON(t, ts.URL+"/api/sessions", 200, &ss)
		want := map[string]string{}
		for _, s := range ss.Sessions {
			want[s.ID] = fmt.Sprintf("%.3fs", float64(s.Last-s.First)/1e9)
		}
		for _, s := range spans {
			if want[s.Title] != s.Span {
				t.Errorf("session %s: Duration %q, want %q", s.Title, s.Span, want[s.Title])
			}
		}
		// Two more columns need a wider pane: the list's splitter at 50%.
		p.Eval(t, `(() => { document.documentElement.style.setProperty("--list-w", "50%"); return true; })()`, nil)
		var cut []string
		p.Eval(t, cutCells, &cut)
		for _, c := range cut {
			t.Errorf("with Δ and Duration, the list at half the page, cut: %s", c)
		}
		p.Eval(t, `(() => { document.documentElement.style.removeProperty("--list-w"); return true; })()`, nil)
	})

	t.Run("a payload field as a filter and as a column", func(t *testing.T) {
		p.Eval(t, `window.aaepView.selectEvent(33)`, nil)
		p.WaitFor(t, 10*time.Second, `[...document.querySelectorAll("#insp-payload tbody th")].some(th => th.textContent === "session_id")`)
		click(t, p, `#insp-payload tbody tr:has(th:is([scope=row])) button[aria-label^="Column of session_id"]`)
		p.WaitFor(t, 10*time.Second, `!document.getElementById("ev-colbar").hidden && document.querySelectorAll("#events-list .vrow[data-filled='1'] .c-extra").length > 0`)
		var cells []struct{ Session, Col string }
		p.Eval(t, `[...document.querySelectorAll("#events-list .vrow[data-filled='1']")].map(r => ({Session: r.querySelector(".mid") ? r.querySelector(".mid").title : "", Col: r.querySelector(".c-extra").lastChild.textContent}))`, &cells)
		for _, c := range cells {
			if c.Session != "" && c.Col != c.Session {
				t.Errorf("the session_id column reads %q in a row of session %q", c.Col, c.Session)
			}
		}
		var typ string
		p.Eval(t, `[...document.querySelectorAll("#insp-payload tbody tr")].find(tr => tr.querySelector("th").textContent === "type").children[1].textContent`, &typ)
		p.Eval(t, `(() => { [...document.querySelectorAll("#insp-payload tbody tr")].find(tr => tr.querySelector("th").textContent === "type").querySelector("button").click(); return true; })()`, nil)
		want := `type == "` + typ + `"`
		p.WaitFor(t, 10*time.Second, fmt.Sprintf(`document.getElementById("events-scope").textContent.includes(%q)`, "filter "+want))
		var f string
		p.Eval(t, `document.getElementById("filter").value`, &f)
		if f != want {
			t.Errorf("applied as a filter: %q, want %q", f, want)
		}
		p.WaitFor(t, 5*time.Second, `location.hash.includes("cols=session_id")`)
		axe(t, p, "a payload column and a field filter")
		click(t, p, `#ev-colbar button`)
		p.WaitFor(t, 5*time.Second, `document.getElementById("ev-colbar").hidden && !document.querySelector("#events-list .c-extra")`)
		click(t, p, "#filter-clear")
		p.WaitFor(t, 10*time.Second, `document.getElementById("events-scope").textContent.includes(": 108 rows")`)
	})

	t.Run("columns resize, full text on hover", func(t *testing.T) {
		var g struct{ X, Y, Before float64 }
		p.Eval(t, `(() => { const r = document.querySelector(".ev-cols .c-type .grip").getBoundingClientRect(); return {X: r.left + r.width / 2, Y: r.top + r.height / 2,
			Before: document.querySelector(".ev-cols .c-type").getBoundingClientRect().width}; })()`, &g)
		p.Do(t, chromedp.MouseEvent(cdpinput.DispatchMouseEventTypeMousePressed, g.X, g.Y, chromedp.ButtonLeft),
			chromedp.MouseEvent(cdpinput.DispatchMouseEventTypeMouseMoved, g.X+20, g.Y, chromedp.ButtonLeft),
			chromedp.MouseEvent(cdpinput.DispatchMouseEventTypeMouseMoved, g.X+40, g.Y, chromedp.ButtonLeft),
			chromedp.MouseEvent(cdpinput.DispatchMouseEventTypeMouseReleased, g.X+40, g.Y, chromedp.ButtonLeft))
		var after struct{ Head, Row float64 }
		p.Eval(t, `({Head: document.querySelector(".ev-cols .c-type").getBoundingClientRect().width,
			Row: document.querySelector("#events-list .vrow[data-filled='1']").children[5].getBoundingClientRect().width})`, &after)
		if math.Abs(after.Head-(g.Before+40)) > 3 || math.Abs(after.Row-after.Head) > 1 {
			t.Errorf("the Type column dragged 40 px wider: header %v → %v, rows %v", g.Before, after.Head, after.Row)
		}
		// The sessions' too: the State column, and the drag sorts nothing.
		var sg struct {
			X, Y, Before float64
			Sort         string
		}
		p.Eval(t, `(() => { const r = document.querySelector("#sessions-sort .c-state .grip").getBoundingClientRect(); return {X: r.left + r.width / 2, Y: r.top + r.height / 2,
			Before: document.querySelector("#sessions-sort .c-state").getBoundingClientRect().width, Sort: JSON.stringify(window.aaepView.state.sort)}; })()`, &sg)
		p.Do(t, chromedp.MouseEvent(cdpinput.DispatchMouseEventTypeMousePressed, sg.X, sg.Y, chromedp.ButtonLeft),
			chromedp.MouseEvent(cdpinput.DispatchMouseEventTypeMouseMoved, sg.X+15, sg.Y, chromedp.ButtonLeft),
			chromedp.MouseEvent(cdpinput.DispatchMouseEventTypeMouseMoved, sg.X+30, sg.Y, chromedp.ButtonLeft),
			chromedp.MouseEvent(cdpinput.DispatchMouseEventTypeMouseReleased, sg.X+30, sg.Y, chromedp.ButtonLeft))
		var safter struct {
			Head, Row float64
			Sort      string
		}
		p.Eval(t, `({Head: document.querySelector("#sessions-sort .c-state").getBoundingClientRect().width,
			Row: document.querySelector("#sessions-list .vrow[data-filled='1'] .c-state").getBoundingClientRect().width, Sort: JSON.stringify(window.aaepView.state.sort)})`, &safter)
		if math.Abs(safter.Head-(sg.Before+30)) > 3 || math.Abs(safter.Row-safter.Head) > 1 || safter.Sort != sg.Sort {
			t.Errorf("the sessions' State column dragged 30 px wider: header %v → %v, rows %v, sort %s → %s", sg.Before, safter.Head, safter.Row, sg.Sort, safter.Sort)
		}
		var untitled []string
		p.Eval(t, `[...document.querySelectorAll("#events-list .vrow[data-filled='1'] > span")].filter(c => c.scrollWidth > c.clientWidth + 1 && !c.title).map(c => c.textContent)`, &untitled)
		for _, u := range untitled {
			t.Errorf("a cut cell without its full text on hover: %q", u)
		}
	})

	t.Run("columns resize with the keys", func(t *testing.T) {
		// Each header's grip is a focusable vertical separator whose value
		// is its column's width; the arrows resize (Shift: by more), Home
		// gives the column its own width back. One tab stop a column, none
		// a row.
		type grip struct {
			Role, Orient, Label string
			Now, Head, Row      float64
			Prop, Focused       string
		}
		get := func(sel, cell, row string) grip {
			t.Helper()
			var g grip
			p.Eval(t, fmt.Sprintf(`(() => { const g = document.querySelector(%[1]q), h = document.querySelector(%[2]q), r = document.querySelector(%[3]q);
				return {Role: g.getAttribute("role"), Orient: g.getAttribute("aria-orientation"), Label: g.getAttribute("aria-label") || "",
					Now: Number(g.getAttribute("aria-valuenow")), Head: h.getBoundingClientRect().width, Row: r ? r.getBoundingClientRect().width : -1,
					Prop: g.closest(".pane-box, #messages-box, #sessions-box").style.getPropertyValue(%[4]q), Focused: document.activeElement === g ? "yes" : "no"}; })()`,
				sel, cell, row, "--w-"+strings.TrimPrefix(cell[strings.LastIndex(cell, ".")+1:], "c-")), &g)
			return g
		}
		const tg, tc, tr = ".ev-cols .c-time .grip", ".ev-cols .c-time", "#events-list .vrow[data-filled='1'] > span:nth-child(2)"
		p.Eval(t, `(() => { document.querySelector(".ev-cols .c-time .grip").focus(); return true; })()`, nil)
		g0 := get(tg, tc, tr)
		if g0.Role != "separator" || g0.Orient != "vertical" || !strings.Contains(g0.Label, "Time") || g0.Focused != "yes" || math.Abs(g0.Now-g0.Head) > 1 {
			t.Fatalf("the Time column's grip: %+v", g0)
		}
		p.Do(t, chromedp.KeyEvent(kb.ArrowRight), chromedp.KeyEvent(kb.ArrowRight), chromedp.KeyEvent(kb.ArrowRight))
		g1 := get(tg, tc, tr)
		if math.Abs(g1.Head-(g0.Head+24)) > 1 || math.Abs(g1.Row-g1.Head) > 1 || math.Abs(g1.Now-g1.Head) > 1 {
			t.Errorf("three → on the Time column's grip: %v → %+v", g0.Head, g1)
		}
		p.Do(t, chromedp.KeyEvent(kb.ArrowLeft, chromedp.KeyModifiers(kb.ModifierShift)))
		g2 := get(tg, tc, tr)
		if math.Abs(g2.Head-(g1.Head-40)) > 1 || math.Abs(g2.Row-g2.Head) > 1 || math.Abs(g2.Now-g2.Head) > 1 {
			t.Errorf("Shift+← on the Time column's grip: %v → %+v", g1.Head, g2)
		}
		p.Do(t, chromedp.KeyEvent(kb.Home))
		if g3 := get(tg, tc, tr); g3.Prop != "" || math.Abs(g3.Head-g0.Head) > 1 || math.Abs(g3.Now-g3.Head) > 1 {
			t.Errorf("Home on the Time column's grip: %+v, its own width %v", g3, g0.Head)
		}
		// The sessions' Start column: narrower, and the keys sort nothing.
		const sg, sc = "#sessions-sort .c-first .grip", "#sessions-sort .c-first"
		var sort0 string
		p.Eval(t, `JSON.stringify(window.aaepView.state.sort)`, &sort0)
		p.Eval(t, `(() => { document.querySelector("#sessions-sort .c-first .grip").focus(); return true; })()`, nil)
		s0 := get(sg, sc, "#sessions-list .vrow[data-filled='1'] .c-first")
		p.Do(t, chromedp.KeyEvent(kb.ArrowLeft), chromedp.KeyEvent(kb.Enter), chromedp.KeyEvent(" "))
		s1 := get(sg, sc, "#sessions-list .vrow[data-filled='1'] .c-first")
		var sort1 string
		p.Eval(t, `JSON.stringify(window.aaepView.state.sort)`, &sort1)
		if s0.Role != "separator" || math.Abs(s1.Head-(s0.Head-8)) > 1 || math.Abs(s1.Row-s1.Head) > 1 || math.Abs(s1.Now-s1.Head) > 1 || sort1 != sort0 {
			t.Errorf("← on the sessions' Start grip: %+v → %+v, sort %s → %s", s0, s1, sort0, sort1)
		}
		var stops struct{ Grips, Columns, InRows int }
		p.Eval(t, `({Grips: document.querySelectorAll(".cols .grip[tabindex='0']").length,
			Columns: document.querySelectorAll(".ev-cols > span, #sessions-sort > span").length,
			InRows: document.querySelectorAll(".vlist .vrow [tabindex], .vlist .vrow[tabindex]").length})`, &stops)
		if stops.Grips == 0 || stops.Grips >= stops.Columns || stops.InRows != 0 {
			t.Errorf("tab stops: %d grips for %d columns, %d in the rows", stops.Grips, stops.Columns, stops.InRows)
		}
		axe(t, p, "a column's grip focused")
	})

	t.Run("timeline hover and a dragged range as a filter", func(t *testing.T) {
		click(t, p, "#tl-all")
		p.WaitFor(t, 10*time.Second, `window.aaepView.state.tl && window.aaepView.state.tl.events && window.aaepView.state.tl.events.length > 0`)
		var ev struct{ X, Y, Index float64 }
		p.Eval(t, `(() => { const tl = window.aaepView.state.tl, cv = document.getElementById("tl-canvas"), r = cv.getBoundingClientRect(), v = window.aaepView.state.view;
			const e = tl.events[Math.floor(tl.events.length / 2)];
			return {X: r.left + LABEL + (e[1] - v.from) / (v.to - v.from) * (cv.clientWidth - LABEL), Y: r.top + AXIS + (e[2] + 1) * LANE + LANE / 2, Index: e[0]}; })()`, &ev)
		p.Do(t, chromedp.MouseEvent(cdpinput.DispatchMouseEventTypeMouseMoved, ev.X, ev.Y))
		p.WaitFor(t, 5*time.Second, `!document.getElementById("tl-tip").hidden`)
		if got := text(t, p, "#tl-tip"); !strings.HasPrefix(got, "#"+strconv.Itoa(int(ev.Index))+" · ") {
			t.Errorf("hovering event #%v: %q", ev.Index, got)
		}
		click(t, p, "#tl-filter")
		var box struct{ X, Y, W, H float64 }
		p.Eval(t, `(() => { const r = document.getElementById("tl-canvas").getBoundingClientRect(); return {X: r.left, Y: r.top, W: r.width, H: r.height}; })()`, &box)
		x0, x1, y := box.X+150+(box.W-150)*0.3, box.X+150+(box.W-150)*0.6, box.Y+box.H/2
		p.Do(t, chromedp.MouseEvent(cdpinput.DispatchMouseEventTypeMousePressed, x0, y, chromedp.ButtonLeft),
			chromedp.MouseEvent(cdpinput.DispatchMouseEventTypeMouseMoved, (x0+x1)/2, y, chromedp.ButtonLeft),
			chromedp.MouseEvent(cdpinput.DispatchMouseEventTypeMouseReleased, x1, y, chromedp.ButtonLeft))
		p.WaitFor(t, 10*time.Second, `document.getElementById("events-scope").textContent.includes("filter time >= ")`)
		var f string
		p.Eval(t, `document.getElementById("filter").value`, &f)
		var lo, hi float64
		if _, err := fmt.Sscanf(f, "time >= %g && time <= %g", &lo, &hi); err != nil || hi <= lo {
			t.Fatalf("the drag's filter is %q", f)
		}
		n := 0
		for _, r := range recs {
			if s := float64(r.Time) / 1e9; s >= lo && s <= hi {
				n++
			}
		}
		if got := text(t, p, "#events-scope"); n == 0 || !strings.Contains(got, ": "+strconv.Itoa(n)+" row") {
			t.Errorf("dragged %s: the scope reads %q, want %d rows", f, got, n)
		}
		click(t, p, "#tl-filter")
		click(t, p, "#filter-clear")
	})

	t.Run("Enter in Seek to time; the next position shown", func(t *testing.T) {
		typeIn("#rp-to", "3s")
		p.Do(t, chromedp.KeyEvent(kb.Enter))
		p.WaitFor(t, 10*time.Second, `document.getElementById("rp-live").textContent.includes("record #")`)
		var st struct {
			Next     int64
			Position struct{ Index int64 }
		}
		getJSON(t, ts.URL+"/control", 200, &st)
		want := int64(-1)
		for i, r := range recs {
			if r.Time >= int64(3*time.Second) {
				want = int64(i)
				break
			}
		}
		if st.Next < 0 || st.Next != want {
			t.Errorf("after seeking to 3s /control says next %d, want the first record at 3 s or later (#%d)", st.Next, want)
		}
		wantAt := fmt.Sprintf("record #%d (", st.Next)
		if st.Next >= 0 {
			wantAt += fmt.Sprintf("%s, +%.3fs)", strings.TrimPrefix(string(payload.Decode(recs[st.Next].Payload).Routing.TypeName()), "aaep:"), float64(recs[st.Next].Time)/1e9)
		}
		p.WaitFor(t, 5*time.Second, fmt.Sprintf(`document.getElementById("rp-live").textContent.includes(%q)`, wantAt))
		p.Eval(t, fmt.Sprintf(`api("/api/find?index=%d").then(r => { events.show(r.row); return true; })`, st.Next), nil)
		p.WaitFor(t, 5*time.Second, fmt.Sprintf(`!!document.querySelector("#events-list .vrow.playhead[data-index='%d']")`, st.Next))
	})
}
