package viewer_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/aaep-tools/aaepkit/capfile/capfiletest"
	"github.com/aaep-tools/aaepkit/internal/browsertest"
	"github.com/aaep-tools/aaepkit/internal/viewer"
	"github.com/aaep-tools/aaepkit/serve"
)

// otherPage is a page of another origin that tries to drive and read the
// replay of the view server at ?target=, as any site the user visits could:
// fetch() in each mode, a form's POST, reads of the control and viewer
// APIs; and, as a browser subscriber must be able to, a subscription. Each
// result is "read STATUS" or "blocked" (the browser gave the page nothing).
// With ?allowed=1 it only steps the replay and reads its state.
const otherPage = `<!doctype html><meta charset="utf-8"><title>another site</title><body><script>
const q = new URLSearchParams(location.search), V = q.get("target");
window.results = {}; window.done = false;
async function attempt(name, path, opts) {
  try { const r = await fetch(V + path, opts); await r.text(); window.results[name] = "read " + r.status; }
  catch (e) { window.results[name] = "blocked"; }
}
function formPost(path) {
  return new Promise((resolve) => {
    const frame = document.createElement("iframe");
    frame.name = "sink"; frame.onload = () => resolve();
    document.body.appendChild(frame);
    const form = document.createElement("form");
    form.method = "POST"; form.action = V + path; form.target = "sink";
    document.body.appendChild(form);
    form.submit();
  });
}
(async () => {
  if (q.get("allowed")) {
    await attempt("POST /control/step", "/control/step", {method: "POST"});
    await attempt("GET /control", "/control");
    await attempt("GET /api/capture", "/api/capture");
    window.done = true;
    return;
  }
  await attempt("POST /control/step", "/control/step", {method: "POST"});
  await attempt("POST /control/play (no-cors)", "/control/play", {method: "POST", mode: "no-cors"});
  await attempt("POST /control/seek (JSON, preflighted)", "/control/seek", {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify({index: 40})});
  await attempt("POST /control/speed (credentials)", "/control/speed?value=5", {method: "POST", credentials: "include"});
  await formPost("/control/step?count=3");
  await attempt("GET /control", "/control");
  await attempt("GET /control/log", "/control/log");
  await attempt("GET /stats", "/stats");
  await attempt("GET /api/capture", "/api/capture");
  await attempt("GET /api/event/0", "/api/event/0");
  await attempt("GET /api/export", "/api/export?format=jsonl");
  await attempt("GET /healthz", "/healthz");
  await attempt("POST /aaep/v1/subscriptions", "/aaep/v1/subscriptions", {method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({type: "subscription.request", aaep_version: "1.0.0", subscriber_id: "page", capabilities: {}})});
  window.done = true;
})();
</script>`

// TestNoWebPageDrivesTheReplay runs, in headless Chromium, a page of another
// origin against a view server (the viewer in front of a paused, controlled
// replay feeding a subscriber under test): it can neither steer the replay
// (fetch in any mode, a form's POST) nor read the control API, /stats or
// the viewer's API, while a browser subscriber's endpoints still answer it.
// A page of an origin given with --allow-origin (AllowOrigins) can. A page
// loaded under a name that resolves to 127.0.0.1 (DNS rebinding, made with
// Chromium's host resolver rules) gets nothing, its same-origin requests
// included: the Host header does not name the server.
func TestNoWebPageDrivesTheReplay(t *testing.T) {
	_, recs := capfiletest.ReadAll(t, demo)
	pages := func() (*httptest.Server, string) {
		ps := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, otherPage)
		}))
		t.Cleanup(ps.Close)
		_, port, _ := net.SplitHostPort(ps.Listener.Addr().String())
		return ps, "http://localhost:" + port // localhost, another port: another origin
	}
	_, evil := pages()
	_, friend := pages()

	ts := startViewAllowing(t, serve.OpenFile(demo), viewer.Options{Path: demo}, []string{friend})
	status := func() serve.ControlStatus {
		t.Helper()
		resp, err := http.Get(ts.URL + "/control")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var st serve.ControlStatus
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /control (a program): %d, %v", resp.StatusCode, err)
		}
		return st
	}
	// The subscriber under test, fed by the paused replay.
	ws, _, err := websocket.DefaultDialer.Dial("ws"+ts.URL[len("http"):]+"/aaep/v1/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	deadline := time.Now().Add(10 * time.Second)
	for st := status(); (len(st.Subscribers) == 0 || st.State != serve.StatePaused) && time.Now().Before(deadline); st = status() {
		time.Sleep(20 * time.Millisecond)
	}
	before := status()
	if len(before.Subscribers) != 1 || before.State != serve.StatePaused || before.Released != 0 {
		t.Fatalf("before: %+v; want one subscriber, paused, nothing released", before)
	}

	b := browsertest.NewWith(t, browsertest.Options{Args: []string{"host-resolver-rules=MAP rebind.test 127.0.0.1"}})
	p := b.NewPage(t)
	p.Navigate(t, evil+"/?target="+url.QueryEscape(ts.URL))
	p.WaitFor(t, 30*time.Second, "window.done === true")
	var got map[string]string
	p.Eval(t, "window.results", &got)
	for _, name := range []string{"POST /control/step", "POST /control/seek (JSON, preflighted)", "POST /control/speed (credentials)",
		"GET /control", "GET /control/log", "GET /stats", "GET /api/capture", "GET /api/event/0", "GET /api/export"} {
		if got[name] != "blocked" {
			t.Errorf("another origin's %s: %s, want blocked", name, got[name])
		}
	}
	for name, want := range map[string]string{"GET /healthz": "read 200", "POST /aaep/v1/subscriptions": "read 201"} {
		if got[name] != want {
			t.Errorf("another origin's %s (a browser subscriber's): %q, want %q", name, got[name], want)
		}
	}
	after := status()
	if after.State != serve.StatePaused || after.Released != 0 || after.StepsPending != 0 || after.Speed != before.Speed || after.Position.Index != -1 {
		t.Fatalf("another origin's page steered the replay: %+v, was %+v", after, before)
	}

	// An origin the user allowed steps the replay and reads the answers.
	p.Navigate(t, friend+"/?allowed=1&target="+url.QueryEscape(ts.URL))
	p.WaitFor(t, 30*time.Second, "window.done === true")
	got = nil
	p.Eval(t, "window.results", &got)
	for _, name := range []string{"POST /control/step", "GET /control", "GET /api/capture"} {
		if got[name] != "read 200" {
			t.Errorf("allowed origin's %s: %q, want read 200", name, got[name])
		}
	}
	ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, msg, err := ws.ReadMessage(); err != nil || !bytes.Equal(msg, recs[0].Payload) {
		t.Fatalf("after the allowed origin's step the subscriber got %q, %v; want record 0", msg, err)
	}
	if st := status(); st.Released != 1 {
		t.Fatalf("after the allowed origin's step: released %d, want 1", st.Released)
	}

	// DNS rebinding: rebind.test resolves to the server; the page loaded
	// under that name is same-origin with the API it calls.
	_, port, _ := net.SplitHostPort(ts.Listener.Addr().String())
	p.Navigate(t, "http://rebind.test:"+port+"/")
	var title string
	p.Eval(t, "document.title", &title)
	var statuses map[string]int
	p.Eval(t, `(async () => {
	  const out = {};
	  for (const [method, path] of [["GET", "/"], ["GET", "/assets/app.js"], ["GET", "/api/capture"], ["GET", "/api/event/0"],
	                                ["GET", "/control"], ["GET", "/control/log"], ["GET", "/stats"], ["POST", "/control/step"], ["POST", "/control/play"]]) {
	    const r = await fetch(path, {method});
	    out[method + " " + path] = r.status;
	  }
	  return out;
	})()`, &statuses)
	if len(statuses) != 9 {
		t.Fatalf("rebinding: %v", statuses)
	}
	for name, code := range statuses {
		if code != http.StatusForbidden {
			t.Errorf("rebinding (Host rebind.test): %s answered %d, want 403", name, code)
		}
	}
	if title == "aaep-replay view" {
		t.Errorf("rebinding: the viewer's page was served")
	}
	if st := status(); st.Released != 1 || st.State != serve.StatePaused || st.StepsPending != 0 {
		t.Fatalf("a rebinding page steered the replay: %+v", st)
	}
}
