package viewer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/gorilla/websocket"

	"github.com/aaep-tools/aaepkit/capfile/capfiletest"
	"github.com/aaep-tools/aaepkit/input"
	"github.com/aaep-tools/aaepkit/internal/browsertest"
	"github.com/aaep-tools/aaepkit/internal/golden"
	"github.com/aaep-tools/aaepkit/internal/viewer"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/models"
	"github.com/aaep-tools/aaepkit/serve"
	"github.com/aaep-tools/aaepkit/timing"
	"github.com/aaep-tools/aaepkit/visualize"
)

const demo = "../../testdata/demo.aaep"

// renderHelper builds aaep-render for the trace drawings.
func renderHelper(t *testing.T) *visualize.Renderer {
	t.Helper()
	path := filepath.Join(t.TempDir(), visualize.HelperName)
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if out, err := exec.Command(goTool, "build", "-o", path, "github.com/aaep-tools/aaepkit/cmd/aaep-render").CombinedOutput(); err != nil {
		t.Fatalf("build aaep-render: %v\n%s", err, out)
	}
	return &visualize.Renderer{Path: path}
}

// startView serves path as aaep-replay view does: the viewer in front of a
// replay server with a paused, controlled shared timeline.
func startView(t *testing.T, path string, rend *visualize.Renderer) *httptest.Server {
	t.Helper()
	srv, err := serve.New(serve.Options{Open: serve.OpenFile(path), Shared: true, Grace: 20 * time.Millisecond,
		Control: timing.NewController(nil, timing.Config{}, true)})
	if err != nil {
		t.Fatal(err)
	}
	v, err := viewer.New(viewer.Options{Path: path, Replay: srv, Renderer: rend})
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
	eng, err := protocol.NewEngine(models.All(), "", nil, protocol.Sink{
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
	if _, err := input.Each(context.Background(), path, func(m *protocol.Message) error { eng.Feed(m); return nil }); err != nil {
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

func TestViewInBrowser(t *testing.T) {
	rend := renderHelper(t)
	ts := startView(t, demo, rend)
	_, recs := capfiletest.ReadAll(t, demo)
	b := browsertest.New(t)
	p := b.NewPage(t)
	p.Navigate(t, ts.URL+"/")
	p.WaitFor(t, 30*time.Second, `document.body.dataset.ready === "true"`)

	t.Run("sessions and verdicts", func(t *testing.T) {
		var rows []struct {
			ID                 string
			Must, Should, Info string
		}
		p.Eval(t, `[...document.querySelectorAll("#sessions-table tbody tr")].map(tr => ({ID: tr.cells[0].textContent, Must: tr.cells[4].textContent, Should: tr.cells[5].textContent, Info: tr.cells[6].textContent}))`, &rows)
		want := verdicts(t, demo)
		if len(rows) != len(want) || len(rows) != 8 {
			t.Fatalf("the page lists %d sessions, the check finds %d (want 8)", len(rows), len(want))
		}
		failing := 0
		for _, r := range rows {
			w, ok := want[r.ID]
			if !ok {
				t.Errorf("the page lists session %q, which the check does not know", r.ID)
				continue
			}
			got := r.Must + "/" + r.Should + "/" + r.Info
			if exp := fmt.Sprintf("%d/%d/%d", w[0], w[1], w[2]); got != exp {
				t.Errorf("session %s: MUST/SHOULD/INFO %s on the page, %s by the check", r.ID, got, exp)
			}
			if w[0] > 0 {
				failing++
			}
		}
		if failing != 2 {
			t.Errorf("%d sessions with MUST findings, want the demo's 2 broken ones", failing)
		}
		// The rule filter keeps the sessions that break the rule.
		p.Eval(t, `(() => { const s = document.getElementById("f-rule"); s.value = "EVT-URGENCY-CRITICAL"; s.dispatchEvent(new Event("change")); return true; })()`, nil)
		p.WaitFor(t, 10*time.Second, `document.querySelectorAll("#sessions-table tbody tr").length === 2`)
		p.WaitFor(t, 10*time.Second, `document.querySelectorAll("#events-table tbody tr").length === 2`)
		click(t, p, "#f-clear")
		p.WaitFor(t, 10*time.Second, `document.querySelectorAll("#sessions-table tbody tr").length === 8`)
	})

	t.Run("inspector shows a violation's rule", func(t *testing.T) {
		p.Eval(t, `(() => { const s = document.getElementById("f-rule"); s.value = "SEQ-STATE-CHAIN"; s.dispatchEvent(new Event("change")); return true; })()`, nil)
		p.WaitFor(t, 10*time.Second, `(document.querySelector("#events-table tbody tr button") || {}).textContent === "#33"`)
		click(t, p, "#events-table tbody tr button")
		p.WaitFor(t, 10*time.Second, `document.getElementById("inspector-h").textContent.includes("#33")`)
		findings := text(t, p, "#insp-findings")
		if !strings.Contains(findings, "MUST SEQ-STATE-CHAIN") || !strings.Contains(findings, "Each from_state equals the previous to_state") {
			t.Errorf("inspector findings %q: want SEQ-STATE-CHAIN with its rule's doc", findings)
		}
		for _, r := range protocol.ListRules(models.All()) {
			if want := "Stated in: " + r.Spec + "."; r.ID == "SEQ-STATE-CHAIN" && !strings.Contains(findings, want) {
				t.Errorf("inspector findings %q: want the rule's declared Spec (%q)", findings, want)
			}
		}
		if raw := text(t, p, "#insp-raw"); raw != string(recs[33].Payload) {
			t.Errorf("raw payload on the page differs from the capture's record 33:\n%s\n%s", raw, recs[33].Payload)
		}
		if pretty := text(t, p, "#insp-pretty"); !strings.Contains(pretty, "\n  \"from_state\": \"deciding\"") {
			t.Errorf("pretty payload %q is not indented JSON", pretty)
		}
		click(t, p, "#f-clear")
	})

	t.Run("trace selection both ways", func(t *testing.T) {
		// Selecting message #33 selected its step, and the step's edge.
		p.WaitFor(t, 30*time.Second, `document.querySelector("#trace-steps li.selected[data-index='33']") && document.querySelector("#trace-svg g.edge.selected-edge")`)
		var edge, selEdge string
		p.Eval(t, `document.querySelector("#trace-steps li.selected").dataset.edge`, &edge)
		p.Eval(t, `document.querySelector("#trace-svg g.edge.selected-edge").id`, &selEdge)
		if edge == "" || edge != selEdge {
			t.Errorf("selected step's edge %q, highlighted drawing edge %q", edge, selEdge)
		}
		// A step selects its message.
		click(t, p, `#trace-steps li[data-index='38'] button`)
		p.WaitFor(t, 10*time.Second, `document.getElementById("inspector-h").textContent.includes("#38")`)
		// A drawn edge selects the first message of its steps.
		var first struct {
			Edge  string
			Index int64
		}
		p.Eval(t, `(() => { const li = document.querySelector("#trace-steps li"); return {Edge: li.dataset.edge, Index: Number(li.dataset.index)}; })()`, &first)
		var clicked bool
		p.Eval(t, fmt.Sprintf(`(() => { const g = [...document.querySelectorAll("#trace-svg g.edge")].find(g => g.id === %q); if (!g) return false; g.querySelector("path").dispatchEvent(new MouseEvent("click", {bubbles: true})); return true; })()`, first.Edge), &clicked)
		if !clicked {
			t.Fatalf("no drawn edge %q", first.Edge)
		}
		p.WaitFor(t, 10*time.Second, fmt.Sprintf(`document.getElementById("inspector-h").textContent.includes("#%d")`, first.Index))
	})

	t.Run("pause, step and seek steer a subscriber", func(t *testing.T) {
		ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.URL, "http")+"/aaep/v1/ws", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ws.Close()
		p.WaitFor(t, 10*time.Second, `document.querySelector("#rp-subs [data-sub]") && document.getElementById("rp-live").textContent.includes("paused")`)
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
		p.WaitFor(t, 10*time.Second, `document.getElementById("rp-live").textContent.includes("paused after event #0")`)
		// Seek to the confirmation without critical urgency (record 46), step it.
		p.Eval(t, `window.aaepView.selectEvent(46, {focus: false})`, nil)
		p.WaitFor(t, 10*time.Second, `document.getElementById("inspector-h").textContent.includes("#46")`)
		click(t, p, "#rp-seek")
		click(t, p, "#rp-step")
		got := read()
		if !bytes.Equal(got, recs[46].Payload) {
			t.Fatalf("after Seek and Step the subscriber got %s, want record 46", got)
		}
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
		p.WaitFor(t, 10*time.Second, `document.querySelector("#rp-subs [data-sub] ol").textContent.includes("sent confirmation.reply decision=reject (accepted)")`)
		log := text(t, p, "#rp-subs [data-sub] ol")
		if !strings.Contains(log, "received #0") || !strings.Contains(log, "received #46") {
			t.Errorf("subscriber log %q: want records 0 and 46", log)
		}
		// Play at 100x, then pause: what was sent is what the status says.
		p.Eval(t, `(() => { const s = document.getElementById("rp-speed"); s.value = "100"; s.dispatchEvent(new Event("change")); return true; })()`, nil)
		click(t, p, "#rp-play")
		next := read() // the first event after 46 that the replay sends
		if !bytes.Contains(next, []byte(`"type":"aaep:agent.`)) {
			t.Fatalf("after Play: %s", next)
		}
		click(t, p, "#rp-pause")
		p.WaitFor(t, 10*time.Second, `document.getElementById("rp-live").textContent.includes("paused")`)
		if golden.Updating() {
			p.Eval(t, `window.aaepView.selectEvent(46, {focus: false})`, nil)
			p.WaitFor(t, 10*time.Second, `document.querySelector("#trace-svg g.edge.selected-edge")`)
			screenshot(t, p, filepath.Join("..", "..", "docs", "viewer.png"))
		}
	})

	t.Run("keyboard", func(t *testing.T) {
		keyOn := func(p *browsertest.Page, k string) { t.Helper(); p.Do(t, chromedp.KeyEvent(k)) }
		key := func(k string) { t.Helper(); keyOn(p, k) }
		// On a fresh page, Tab reaches the skip link first; Enter on it
		// moves the focus to the inspector.
		p2 := b.NewPage(t)
		p2.Navigate(t, ts.URL+"/")
		keyOn(p2, kb.Tab)
		if got := text(t, p2, ":focus"); !strings.Contains(got, "Skip to the event inspector") {
			t.Errorf("first Tab focuses %q, want the skip link", got)
		}
		keyOn(p2, kb.Enter)
		p2.WaitFor(t, 10*time.Second, `location.hash === "#inspector-h"`)
		// The timeline zooms with + and selects the event at its centre with Enter.
		p.Eval(t, `document.getElementById("tl-canvas").focus(); true`, nil)
		before := text(t, p, "#tl-range")
		key("+")
		p.WaitFor(t, 10*time.Second, fmt.Sprintf(`document.getElementById("tl-range").textContent !== %q`, before))
		heading := text(t, p, "#inspector-h")
		key(kb.Home)
		p.WaitFor(t, 10*time.Second, `document.getElementById("tl-range").textContent.includes("108 events")`)
		key(kb.Enter)
		p.WaitFor(t, 10*time.Second, fmt.Sprintf(`document.getElementById("inspector-h").textContent !== %q`, heading))
	})

	t.Run("axe-core audit", func(t *testing.T) {
		src, err := os.ReadFile(filepath.Join(npmDir(), "node_modules", "axe-core", "axe.min.js"))
		if err != nil {
			t.Fatalf("axe-core (run scripts/testdeps.sh): %v", err)
		}
		p.Eval(t, string(src)+";true", nil)
		var res struct {
			Passes     int
			Violations []struct {
				ID, Impact, Help string
				Targets          []string
			}
		}
		p.Eval(t, `axe.run(document).then(r => ({Passes: r.passes.length, Violations: r.violations.map(v => ({ID: v.id, Impact: v.impact || "", Help: v.help, Targets: v.nodes.slice(0, 5).map(n => n.target.join(" "))}))}))`, &res)
		// The audit really ran: the page has buttons, labels, landmarks,
		// tables and contrast to check.
		if res.Passes < 15 {
			t.Errorf("axe checked only %d rules successfully; did it run on the page?", res.Passes)
		}
		for _, v := range res.Violations {
			if v.Impact == "serious" || v.Impact == "critical" {
				t.Errorf("axe %s (%s): %s at %v", v.ID, v.Impact, v.Help, v.Targets)
			} else {
				t.Logf("axe %s (%s): %s at %v", v.ID, v.Impact, v.Help, v.Targets)
			}
		}
	})
}

// screenshot writes the whole page as a PNG (go test ./viewer -update).
func screenshot(t *testing.T, p *browsertest.Page, path string) {
	t.Helper()
	var png []byte
	p.Do(t, chromedp.EmulateViewport(1280, 900), chromedp.Sleep(500*time.Millisecond),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) (err error) {
			png, err = chromedp.FullScreenshot(100)(ctx, tg)
			return err
		}))
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
}
