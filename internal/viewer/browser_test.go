package viewer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cdpinput "github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/gorilla/websocket"

	"github.com/aaep-tools/aaepkit/capfile/capfiletest"
	"github.com/aaep-tools/aaepkit/internal/binarytest"
	"github.com/aaep-tools/aaepkit/internal/browsertest"
	"github.com/aaep-tools/aaepkit/internal/golden"
	"github.com/aaep-tools/aaepkit/internal/testdeps"
	"github.com/aaep-tools/aaepkit/internal/viewer"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/models"
	"github.com/aaep-tools/aaepkit/recording"
	"github.com/aaep-tools/aaepkit/serve"
	"github.com/aaep-tools/aaepkit/timing"
	"github.com/aaep-tools/aaepkit/visualize"
)

const demo = "../../testdata/demo.aaep"

// renderBin is the aaep-render helper, built once per test run.
var renderBin = binarytest.New("github.com/aaep-tools/aaepkit/cmd/aaep-render", visualize.HelperName)

func TestMain(m *testing.M) {
	code := m.Run()
	renderBin.Remove()
	os.Exit(code)
}

// renderHelper is aaep-render for the trace drawings.
func renderHelper(t *testing.T) *visualize.Renderer {
	t.Helper()
	return &visualize.Renderer{Path: renderBin.Path(t)}
}

// startView serves path as aaep-replay view does: the viewer in front of a
// replay server with a paused, controlled shared timeline.
func startView(t *testing.T, path string, rend *visualize.Renderer) *httptest.Server {
	t.Helper()
	return startViewOf(t, serve.OpenFile(path), viewer.Options{Path: path, Renderer: rend})
}

// startViewOf serves what opts names, replayed from open, as startView does.
func startViewOf(t *testing.T, open serve.Opener, opts viewer.Options) *httptest.Server {
	t.Helper()
	return startViewAllowing(t, open, opts, nil)
}

// startViewAllowing is startViewOf with --allow-origin's origins.
func startViewAllowing(t *testing.T, open serve.Opener, opts viewer.Options, allow []string) *httptest.Server {
	t.Helper()
	opts.AllowOrigins = allow
	srv, err := serve.New(serve.Options{Open: open, Shared: true, Grace: 20 * time.Millisecond,
		Control: timing.NewController(nil, timing.Config{}, true), AllowOrigins: allow})
	if err != nil {
		t.Fatal(err)
	}
	opts.Replay = srv
	v, err := viewer.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(v)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		ts.Close()
		v.Close()
	})
	return ts
}

// verdicts checks the capture independently of the viewer: MUST, SHOULD and
// INFO counts per session.
func verdicts(t *testing.T, path string) map[string][3]int64 {
	t.Helper()
	out := map[string][3]int64{}
	eng, err := protocol.NewEngine(models.All(), "", nil, protocol.StreamInfo{}, protocol.Sink{
		Finding: func(f protocol.Finding) {
			if f.Session == "" {
				return
			}
			v := out[f.Session]
			v[protocol.Must-f.Level]++
			out[f.Session] = v
		},
		SessionDone: func(s protocol.SessionSummary) {
			if _, ok := out[s.Session]; !ok {
				out[s.Session] = [3]int64{}
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := recording.Each(context.Background(), path, func(m *protocol.Message) error { eng.Feed(m); return nil }); err != nil {
		t.Fatal(err)
	}
	eng.Finish()
	return out
}

func npmDir() string {
	if d := os.Getenv("AAEP_NPM_DIR"); d != "" {
		return d
	}
	return filepath.Join("..", "..", ".cache", "npm")
}

// click clicks the element a selector finds, failing when there is none.
func click(t *testing.T, p *browsertest.Page, selector string) {
	t.Helper()
	var ok bool
	p.Eval(t, fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) return false; e.click(); return true; })()`, selector), &ok)
	if !ok {
		t.Fatalf("nothing to click at %s", selector)
	}
}

func text(t *testing.T, p *browsertest.Page, selector string) string {
	t.Helper()
	var s string
	p.Eval(t, fmt.Sprintf(`(document.querySelector(%q) || {}).textContent || ""`, selector), &s)
	return s
}

// cellText is the JavaScript of a cell's text as shown: without the label
// for screen readers, an id cut in the middle whole.
const cellText = `c => [...c.childNodes].filter(n => !(n.classList && n.classList.contains("sr-only"))).map(n => n.textContent).join("")`

// rowsOf returns the text of the cells of the rows a virtual list draws.
func rowsOf(t *testing.T, p *browsertest.Page, list string) [][]string {
	t.Helper()
	var rows [][]string
	p.Eval(t, fmt.Sprintf(`[...document.querySelectorAll("#%s .vrow[data-filled='1']")].sort((a, b) => a.dataset.row - b.dataset.row).map(r => [...r.children].map(%s))`, list, cellText), &rows)
	return rows
}

// noPageScroll fails when the page itself has scrolled: selection scrolls
// panes, never the page.
func noPageScroll(t *testing.T, p *browsertest.Page) {
	t.Helper()
	var y float64
	p.Eval(t, `document.scrollingElement.scrollTop + window.scrollY`, &y)
	if y != 0 {
		t.Errorf("the page scrolled by %v px", y)
	}
}

func axe(t *testing.T, p *browsertest.Page, what string) {
	t.Helper()
	src, err := os.ReadFile(testdeps.File(t, filepath.Join(npmDir(), "node_modules", "axe-core", "axe.min.js"), "the npm package axe-core (in $AAEP_NPM_DIR or .cache/npm)"))
	if err != nil {
		t.Fatalf("axe-core (run scripts/testdeps.sh): %v", err)
	}
	var loaded bool
	p.Eval(t, `typeof axe !== "undefined"`, &loaded)
	if !loaded {
		p.Eval(t, string(src)+";true", nil)
	}
	var res struct {
		Passes     int
		Violations []struct {
			ID, Impact, Help string
			Targets          []string
		}
	}
	p.Eval(t, `axe.run(document).then(r => ({Passes: r.passes.length, Violations: r.violations.map(v => ({ID: v.id, Impact: v.impact || "", Help: v.help, Targets: v.nodes.slice(0, 5).map(n => n.target.join(" "))}))}))`, &res)
	if res.Passes < 15 {
		t.Errorf("%s: axe checked only %d rules successfully; did it run on the page?", what, res.Passes)
	}
	for _, v := range res.Violations {
		t.Errorf("%s: axe %s (%s): %s at %v", what, v.ID, v.Impact, v.Help, v.Targets)
	}
}

func setFilter(t *testing.T, p *browsertest.Page, expr string) {
	t.Helper()
	p.Eval(t, fmt.Sprintf(`(() => { document.getElementById("filter").value = %q; document.getElementById("filter-apply").click(); return true; })()`, expr), nil)
}

func TestViewInBrowser(t *testing.T) {
	rend := renderHelper(t)
	ts := startView(t, demo, rend)
	_, recs := capfiletest.ReadAll(t, demo)
	b := browsertest.New(t)
	p := b.NewPage(t)
	p.Do(t, chromedp.EmulateViewport(1440, 900))
	p.Navigate(t, ts.URL+"/")
	p.WaitFor(t, 30*time.Second, `document.body.dataset.ready === "true"`)

	t.Run("sessions and verdicts", func(t *testing.T) {
		p.WaitFor(t, 30*time.Second, `document.querySelectorAll("#sessions-list .vrow[data-filled='1']").length === 8`)
		rows := rowsOf(t, p, "sessions-list")
		want := verdicts(t, demo)
		if len(rows) != len(want) || len(rows) != 8 {
			t.Fatalf("the page lists %d sessions, the check finds %d (want 8)", len(rows), len(want))
		}
		// One recording: no Recording column, no filter by recording.
		var one struct {
			Column, Filter bool
			Cells          int
		}
		p.Eval(t, `({Column: !!document.querySelector('#sessions-sort button[data-key="recording"]'), Filter: !document.getElementById("rec-filter").hidden,
			Cells: document.querySelector("#sessions-list .vrow[data-filled='1']").children.length})`, &one)
		if one.Column || one.Filter || one.Cells != 8 {
			t.Errorf("one recording viewed: Recording column %v, filter by recording shown %v, %d cells a row (want none, hidden, 8)", one.Column, one.Filter, one.Cells)
		}
		failing := 0
		for _, r := range rows {
			w, ok := want[r[0]]
			if !ok {
				t.Errorf("the page lists session %q, which the check does not know", r[0])
				continue
			}
			if got, exp := r[4]+"/"+r[5]+"/"+r[6], fmt.Sprintf("%d/%d/%d", w[0], w[1], w[2]); got != exp {
				t.Errorf("session %s: MUST/SHOULD/INFO %s on the page, %s by the check", r[0], got, exp)
			}
			if w[0] > 0 {
				failing++
			}
		}
		if failing != 2 {
			t.Errorf("%d sessions with MUST findings, want the demo's 2 broken ones", failing)
		}
		axe(t, p, "opened, nothing selected")
		// Only sessions with findings; then sorted by MUST, most first.
		click(t, p, "#only-findings")
		p.WaitFor(t, 30*time.Second, `document.getElementById("sessions-caption").textContent.startsWith("2 of 8")`)
		click(t, p, "#only-findings")
		click(t, p, `#sessions-sort button[data-key="must"]`)
		p.WaitFor(t, 30*time.Second, `document.querySelectorAll("#sessions-list .vrow[data-filled='1']").length === 8 && location.hash.includes("sort=must")`)
		if rows := rowsOf(t, p, "sessions-list"); rows[0][4] == "0" || rows[1][4] == "0" || rows[2][4] != "0" {
			t.Errorf("sorted by MUST: %v", rows)
		}
	})

	t.Run("filter expression and inspector", func(t *testing.T) {
		setFilter(t, p, "rule == EVT-URGENCY-CRITICAL")
		p.WaitFor(t, 30*time.Second, `document.getElementById("events-scope").textContent.includes(": 2 rows")`)
		setFilter(t, p, "rule == SEQ-STATE-CHAIN && session == sess_eb1273ca151c1c3d")
		p.WaitFor(t, 30*time.Second, `(document.querySelector("#events-list .vrow[data-filled='1']") || {}).dataset?.index === "33"`)
		click(t, p, "#events-list .vrow")
		p.WaitFor(t, 30*time.Second, `document.getElementById("inspector-h").textContent.includes("#33")`)
		noPageScroll(t, p)
		findings := text(t, p, "#insp-findings")
		if !strings.Contains(findings, "MUST SEQ-STATE-CHAIN") || !strings.Contains(findings, "Each from_state equals the previous to_state") {
			t.Errorf("inspector findings %q: want SEQ-STATE-CHAIN with its rule's doc", findings)
		}
		for _, r := range protocol.ListRules(models.All()) {
			if want := "Stated in: " + r.Spec + "."; r.ID == "SEQ-STATE-CHAIN" && !strings.Contains(findings, want) {
				t.Errorf("inspector findings %q: want the rule's declared Spec (%q)", findings, want)
			}
		}
		if dts := text(t, p, "#insp-fields"); strings.Contains(dts, "Recording") {
			t.Errorf("one recording viewed, the inspector names a recording: %q", dts)
		}
		if raw := text(t, p, "#insp-raw"); raw != string(recs[33].Payload) {
			t.Errorf("raw payload on the page differs from the capture's record 33:\n%s\n%s", raw, recs[33].Payload)
		}
		if pretty := text(t, p, "#insp-pretty"); !strings.Contains(pretty, "\n  \"from_state\": \"deciding\"") {
			t.Errorf("pretty payload %q is not indented JSON", pretty)
		}
		p.WaitFor(t, 30*time.Second, `location.hash.includes("event=33") && location.hash.includes("filter=")`)
		axe(t, p, "filtered, a message selected")
		click(t, p, "#filter-clear")
		p.WaitFor(t, 30*time.Second, `document.getElementById("events-scope").textContent.includes(": 108 rows")`)
	})

	t.Run("trace selection both ways", func(t *testing.T) {
		p.Eval(t, `window.aaepView.selectEvent(33)`, nil)
		p.WaitFor(t, 30*time.Second, `document.querySelector("#trace-steps .vrow[aria-selected=true][data-index='33']") && document.querySelector("#trace-svg g.edge.selected-edge")`)
		var edge, selEdge string
		p.Eval(t, `document.querySelector("#trace-steps .vrow[aria-selected=true]").dataset.edge`, &edge)
		p.Eval(t, `document.querySelector("#trace-svg g.edge.selected-edge").id`, &selEdge)
		if edge == "" || edge != selEdge {
			t.Errorf("selected step's edge %q, highlighted drawing edge %q", edge, selEdge)
		}
		click(t, p, `#trace-steps .vrow[data-index='38']`)
		p.WaitFor(t, 30*time.Second, `document.getElementById("inspector-h").textContent.includes("#38")`)
		var first struct {
			Edge  string
			Index int64
		}
		p.Eval(t, `(() => { const r = document.querySelector("#trace-steps .vrow[data-row='0']"); return {Edge: r.dataset.edge, Index: Number(r.dataset.index)}; })()`, &first)
		var clicked bool
		p.Eval(t, fmt.Sprintf(`(() => { const g = [...document.querySelectorAll("#trace-svg g.edge")].find(g => g.id === %q); if (!g) return false; g.querySelector("path").dispatchEvent(new MouseEvent("click", {bubbles: true})); return true; })()`, first.Edge), &clicked)
		if !clicked {
			t.Fatalf("no drawn edge %q", first.Edge)
		}
		p.WaitFor(t, 30*time.Second, fmt.Sprintf(`document.getElementById("inspector-h").textContent.includes("#%d")`, first.Index))
		noPageScroll(t, p)
	})

	t.Run("pause, step and seek steer a subscriber", func(t *testing.T) {
		ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.URL, "http")+"/aaep/v1/ws", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ws.Close()
		p.WaitFor(t, 30*time.Second, `document.querySelector("#rp-subs [data-sub]") && document.getElementById("rp-live").textContent.includes("paused")`)
		read := func() []byte {
			t.Helper()
			ws.SetReadDeadline(time.Now().Add(10 * time.Second))
			_, msg, err := ws.ReadMessage()
			if err != nil {
				t.Fatalf("subscriber: %v", err)
			}
			return msg
		}
		click(t, p, "#rp-step")
		if got := read(); !bytes.Equal(got, recs[0].Payload) {
			t.Fatalf("after Step the subscriber got %s, want record 0", got)
		}
		p.WaitFor(t, 30*time.Second, `document.getElementById("rp-live").textContent.includes("paused after event #0")`)
		p.Eval(t, `window.aaepView.selectEvent(46)`, nil)
		p.WaitFor(t, 30*time.Second, `document.getElementById("inspector-h").textContent.includes("#46")`)
		click(t, p, "#rp-seek")
		click(t, p, "#rp-step")
		got := read()
		if !bytes.Equal(got, recs[46].Payload) {
			t.Fatalf("after Seek and Step the subscriber got %s, want record 46", got)
		}
		// The playhead: the list marks the replay's row.
		p.WaitFor(t, 30*time.Second, `document.querySelector("#events-list .vrow.playhead[data-index='46']")`)
		var ev struct {
			Token string `json:"reply_token"`
		}
		if err := json.Unmarshal(got, &ev); err != nil || ev.Token == "" {
			t.Fatalf("record 46 has no reply token: %v", err)
		}
		reply := fmt.Sprintf(`{"type":"confirmation.reply","reply_token":%q,"decision":"reject","timestamp":"2026-11-02T09:00:08Z"}`, ev.Token)
		if err := ws.WriteMessage(websocket.TextMessage, []byte(reply)); err != nil {
			t.Fatal(err)
		}
		p.WaitFor(t, 30*time.Second, `document.querySelector("#rp-subs [data-sub] ol").textContent.includes("sent confirmation.reply decision=reject (accepted)")`)
		log := text(t, p, "#rp-subs [data-sub] ol")
		if !strings.Contains(log, "received #0") || !strings.Contains(log, "received #46") {
			t.Errorf("subscriber log %q: want records 0 and 46", log)
		}
		// Step 10 with the key Shift+. (">"), from the page.
		p.Eval(t, `document.activeElement.blur(); true`, nil)
		p.Do(t, chromedp.KeyEvent(">"))
		for range 10 {
			read()
		}
		p.WaitFor(t, 30*time.Second, `document.getElementById("rp-live").textContent.includes("paused after event #57")`)
		// Step N: 3 more.
		p.Eval(t, `document.getElementById("rp-n").value = "3"; true`, nil)
		click(t, p, "#rp-stepn")
		for range 3 {
			read()
		}
		p.WaitFor(t, 30*time.Second, `document.getElementById("rp-live").textContent.includes("paused after event #60")`)
		p.Eval(t, `(() => { const s = document.getElementById("rp-speed"); s.value = "2"; s.dispatchEvent(new Event("change")); return true; })()`, nil)
		click(t, p, "#rp-play")
		next := read()
		if !bytes.Contains(next, []byte(`"type":"aaep:agent.`)) {
			t.Fatalf("after Play: %s", next)
		}
		// At 2× the rest of the demo lasts far longer than a click takes
		// on a loaded machine (at 100× it could end first: "paused" never came).
		click(t, p, "#rp-pause")
		p.WaitFor(t, 30*time.Second, `document.getElementById("rp-live").textContent.includes("paused")`)
		if golden.Updating() {
			docsScreenshots(t, p)
		}
	})

	t.Run("keyboard only", func(t *testing.T) {
		p2 := b.NewPage(t)
		p2.Do(t, chromedp.EmulateViewport(1280, 800))
		p2.Navigate(t, ts.URL+"/")
		p2.WaitFor(t, 30*time.Second, `document.body.dataset.ready === "true"`)
		key := func(k string) { t.Helper(); p2.Do(t, chromedp.KeyEvent(k)) }
		// Tab reaches the skip link first; Enter on it moves to the messages.
		key(kb.Tab)
		if got := text(t, p2, ":focus"); !strings.Contains(got, "Skip to the messages") {
			t.Errorf("first Tab focuses %q, want the skip link", got)
		}
		key(kb.Enter)
		p2.WaitFor(t, 30*time.Second, `location.hash.startsWith("#events-list") || document.activeElement.id === "events-list"`)
		p2.Eval(t, `document.getElementById("events-list").focus({preventScroll: true}); true`, nil)
		// Arrows select messages; the inspector follows.
		key(kb.ArrowDown)
		key(kb.ArrowDown)
		p2.WaitFor(t, 30*time.Second, `document.getElementById("inspector-h").textContent.includes("#1")`)
		// n: the next finding, N: back.
		key("n")
		p2.WaitFor(t, 30*time.Second, `document.querySelector("#insp-findings .finding")`)
		var first string
		p2.Eval(t, `document.getElementById("inspector-h").textContent`, &first)
		key("n")
		p2.WaitFor(t, 30*time.Second, fmt.Sprintf(`document.getElementById("inspector-h").textContent !== %q`, first))
		key("N")
		p2.WaitFor(t, 30*time.Second, fmt.Sprintf(`document.getElementById("inspector-h").textContent === %q`, first))
		noPageScroll(t, p2)
		// "/" goes to the filter; typing and Enter apply it.
		p2.Eval(t, `document.activeElement.blur(); true`, nil)
		key("/")
		p2.WaitFor(t, 30*time.Second, `document.activeElement.id === "filter"`)
		// (CDP sends "/" as a char event of its own, which the page's
		// preventDefault on keydown cannot stop: empty the box first.)
		p2.Eval(t, `document.getElementById("filter").value = ""; true`, nil)
		p2.Do(t, chromedp.KeyEvent("level >= MUST"), chromedp.KeyEvent(kb.Enter))
		p2.WaitFor(t, 30*time.Second, `document.getElementById("events-scope").textContent.includes("filter level >= MUST: 6 rows")`)
		// The timeline zooms with + and shows everything with Home.
		p2.Eval(t, `document.getElementById("tl-canvas").focus({preventScroll: true}); true`, nil)
		before := text(t, p2, "#tl-range")
		key("+")
		p2.WaitFor(t, 30*time.Second, fmt.Sprintf(`document.getElementById("tl-range").textContent !== %q`, before))
		key(kb.Home)
		p2.WaitFor(t, 30*time.Second, `document.getElementById("tl-range").textContent.includes("108 events")`)
		heading := text(t, p2, "#inspector-h")
		key(kb.Enter)
		p2.WaitFor(t, 30*time.Second, fmt.Sprintf(`document.getElementById("inspector-h").textContent !== %q`, heading))
		// A splitter moves with the arrows.
		p2.Eval(t, `document.getElementById("split-1").focus(); true`, nil)
		key(kb.ArrowRight)
		var w string
		p2.Eval(t, `document.documentElement.style.getPropertyValue("--list-w")`, &w)
		if w != "42%" {
			t.Errorf("after → on the splitter the list is %q wide, want 42%%", w)
		}
		noPageScroll(t, p2)
	})

	t.Run("timeline brush, click and the replay's next finding", func(t *testing.T) {
		p.Eval(t, `document.getElementById("tl-all").click(); true`, nil)
		p.WaitFor(t, 30*time.Second, `document.getElementById("tl-range").textContent.includes("108 events")`)
		var box struct{ X, Y, W, H float64 }
		p.Eval(t, `(() => { const r = document.getElementById("tl-canvas").getBoundingClientRect(); return {X: r.left, Y: r.top, W: r.width, H: r.height}; })()`, &box)
		// Drag across the middle fifth of the plot: the window zooms to it.
		x0, x1, y := box.X+150+(box.W-150)*0.4, box.X+150+(box.W-150)*0.6, box.Y+box.H/2
		p.Do(t, chromedp.MouseEvent(cdpinput.DispatchMouseEventTypeMousePressed, x0, y, chromedp.ButtonLeft),
			chromedp.MouseEvent(cdpinput.DispatchMouseEventTypeMouseMoved, (x0+x1)/2, y, chromedp.ButtonLeft),
			chromedp.MouseEvent(cdpinput.DispatchMouseEventTypeMouseReleased, x1, y, chromedp.ButtonLeft))
		p.WaitFor(t, 30*time.Second, `!document.getElementById("tl-range").textContent.includes("108 events") && window.aaepView.state.tl.events`)
		var view struct{ From, To float64 }
		p.Eval(t, `({From: window.aaepView.state.view.from, To: window.aaepView.state.view.to})`, &view)
		var c struct {
			First float64 `json:"first_ns"`
			Last  float64 `json:"last_ns"`
		}
		p.Eval(t, `window.aaepView.state.capture`, &c)
		span := c.Last - c.First
		if got := (view.To - view.From) / span; got < 0.15 || got > 0.25 {
			t.Errorf("after brushing a fifth of the timeline the window is %.2f of the capture", got)
		}
		// A click on an event of a lane selects it.
		var ev struct{ Index, X, Y float64 }
		p.Eval(t, `(() => { const s = window.aaepView.state, tl = s.tl, cv = document.getElementById("tl-canvas"), r = cv.getBoundingClientRect();
			const e = tl.events[Math.floor(tl.events.length / 2)];
			return {Index: e[0], X: r.left + 150 + (e[1] - s.view.from) / (s.view.to - s.view.from) * (r.width - 150), Y: r.top + 18 + (e[2] + 1) * 16 + 8}; })()`, &ev)
		p.Do(t, chromedp.MouseClickXY(ev.X, ev.Y))
		p.WaitFor(t, 30*time.Second, fmt.Sprintf(`document.getElementById("inspector-h").textContent.endsWith("#%d")`, int64(ev.Index)))
		// "[" seeks the replay to the finding before its position (the last
		// event it released, #60 or later after the steps above) and
		// selects it.
		var pos int64
		p.Eval(t, `document.activeElement.blur(); window.aaepView.state.ctl.position.index`, &pos)
		if pos < 60 {
			t.Fatalf("the replay's position is #%d, want #60 or later after the steps above", pos)
		}
		p.Do(t, chromedp.KeyEvent("["))
		p.WaitFor(t, 30*time.Second, fmt.Sprintf(`document.querySelector("#insp-findings .finding") && Number(document.getElementById("inspector-h").textContent.split("#")[1]) < %d`, pos))
		if e := text(t, p, "#rp-error"); e != "" {
			t.Errorf("seeking the replay to the next finding: %s", e)
		}
	})

	t.Run("state in the URL", func(t *testing.T) {
		p3 := b.NewPage(t)
		p3.Navigate(t, ts.URL+"/#session=sess_eb1273ca151c1c3d&event=46&filter="+url.QueryEscape("direction == recv"))
		p3.WaitFor(t, 30*time.Second, `document.getElementById("inspector-h").textContent.includes("#46") && document.getElementById("events-scope").textContent.includes("Session sess_eb1273ca151c1c3d, filter direction == recv: 8 rows")`)
		var v string
		p3.Eval(t, `document.getElementById("filter").value`, &v)
		if v != "direction == recv" {
			t.Errorf("the filter box says %q", v)
		}
	})

	t.Run("phone", func(t *testing.T) {
		p4 := b.NewPage(t)
		p4.Do(t, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile))
		p4.Navigate(t, ts.URL+"/#sort=must:desc")
		p4.WaitFor(t, 30*time.Second, `document.body.dataset.ready === "true" && document.querySelectorAll("#sessions-list .vrow[data-filled='1']").length > 0`)
		var layout struct {
			Width, ScrollWidth int
			MustRight          float64
			MustShown          bool
		}
		p4.Eval(t, `(() => { const m = document.querySelector("#sessions-list .vrow[data-row='0']").children[4]; const r = m.getBoundingClientRect();
			return {Width: window.innerWidth, ScrollWidth: document.documentElement.scrollWidth, MustRight: r.right, MustShown: r.width > 0 && m.textContent !== ""}; })()`, &layout)
		if layout.ScrollWidth > layout.Width || !layout.MustShown || layout.MustRight > float64(layout.Width) {
			t.Errorf("phone layout: page %d px wide in a %d px screen, MUST column shown %v ending at %v px", layout.ScrollWidth, layout.Width, layout.MustShown, layout.MustRight)
		}
		p4.Eval(t, `window.aaepView.selectEvent(33)`, nil)
		p4.WaitFor(t, 30*time.Second, `document.getElementById("inspector-h").textContent.includes("#33")`)
		axe(t, p4, "phone")
	})

	t.Run("axe-core audit", func(t *testing.T) {
		axe(t, p, "desktop, trace drawn, subscriber attached")
	})
}

// docsScreenshots takes the README's pictures (go test ./internal/viewer
// -run TestViewInBrowser -update): the panes with a message selected and
// the replay's playhead, a filter applied, and the timeline zoomed in to
// show spans, findings and the playhead.
func docsScreenshots(t *testing.T, p *browsertest.Page) {
	t.Helper()
	docs := filepath.Join("..", "..", "docs")
	p.Do(t, chromedp.EmulateViewport(1440, 900))
	p.Eval(t, `window.aaepView.selectSession("sess_eb1273ca151c1c3d")`, nil)
	p.Eval(t, `window.aaepView.control("seek", {index: 43}).then(() => window.aaepView.control("step"))`, nil)
	p.Eval(t, `window.aaepView.selectEvent(46)`, nil)
	p.WaitFor(t, 30*time.Second, `document.querySelector("#trace-svg g.edge.selected-edge") && document.getElementById("inspector-h").textContent.includes("#46")`)
	screenshot(t, p, filepath.Join(docs, "viewer.png"), "")
	setFilter(t, p, `type == "tool.invoked" || level >= MUST`)
	p.WaitFor(t, 30*time.Second, `document.getElementById("events-scope").textContent.includes("filter type")`)
	screenshot(t, p, filepath.Join(docs, "viewer-filter.png"), "")
	click(t, p, "#filter-clear")
	p.Eval(t, `(() => { const v = window.aaepView.state; v.view = {from: 4.5e9, to: 9.5e9}; document.getElementById("tl-in").click(); document.getElementById("tl-out").click(); return true; })()`, nil)
	p.WaitFor(t, 30*time.Second, `window.aaepView.state.tl && window.aaepView.state.tl.spans && window.aaepView.state.tl.spans.length > 0`)
	time.Sleep(300 * time.Millisecond)
	screenshot(t, p, filepath.Join(docs, "viewer-timeline.png"), "#timeline")
	// The replay where the steps of the test left it (#60), for the tests after.
	p.Eval(t, `window.aaepView.control("seek", {index: 60}).then(() => window.aaepView.control("step"))`, nil)
	p.WaitFor(t, 30*time.Second, `document.getElementById("rp-live").textContent.includes("paused after event #60")`)
}

// screenshot writes the viewport (or the element sel) as a PNG.
func screenshot(t *testing.T, p *browsertest.Page, path, sel string) {
	t.Helper()
	var png []byte
	time.Sleep(300 * time.Millisecond) // the canvases redraw
	p.Do(t, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) (err error) {
		if sel != "" {
			png, err = chromedp.Screenshot(chromedp.CSS(sel))(ctx, tg)
		} else {
			png, err = chromedp.CaptureScreenshot()(ctx, tg)
		}
		return err
	}))
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
}
