package subtest

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestPageAnnouncements opens a web subscriber of our own
// (testdata/announce-page.html) in headless Chromium, from another origin,
// and judges what its ARIA live regions announce: the page that behaves
// passes §9.3.2's duties, with its announcements as the evidence of the
// checks passed by absence; one that puts a critical event in its polite
// log gets a SHOULD; one that never shows it fails a MUST; an alert
// element added as it happens is heard assertively; one that writes
// to a plain list is heard saying nothing, and its accessibility tree
// shows the live regions it left empty. One browser serves every case, a
// tab each, the cases side by side (their runs take turns: main_test.go).
func TestPageAnnouncements(t *testing.T) {
	t.Parallel()
	pages := httptest.NewServer(http.FileServer(http.Dir("testdata")))
	t.Cleanup(pages.Close)
	_, port, _ := net.SplitHostPort(pages.Listener.Addr().String())
	b := &Browser{}
	t.Cleanup(func() { _ = b.Close() })
	const critical = "announce session.errored in session sess_a1 assertive"
	for _, tc := range []struct {
		scenario, mode, verdict string
		// name and word of the announce outcome that fails (required) or
		// warns (should).
		fails, warns, word string
	}{
		{scenario: "announce-lifecycle", mode: "good", verdict: VerdictPass},
		{scenario: "terminal-events", mode: "good", verdict: VerdictPass},
		{scenario: "critical-urgency", mode: "good", verdict: VerdictPass},
		{scenario: "critical-urgency", mode: "newalert", verdict: VerdictPass},
		{scenario: "critical-urgency", mode: "polite", verdict: VerdictPass, warns: critical,
			word: `SHOULD (our reading of §9.3.2(7), "appropriate prominence"): the critical event #`},
		{scenario: "critical-urgency", mode: "suppress", verdict: VerdictFail, fails: critical,
			word: "MUST (§9.3.2(7): never suppress a critical event): the critical event #"},
		{scenario: "announce-lifecycle", mode: "nolive", verdict: VerdictFail, fails: "announce session.started in session sess_a1",
			word: "was never announced (0 announcements heard in the page's live regions); the page's accessibility tree has live regions (log (polite), alert (assertive)), and nothing was added to them"},
	} {
		t.Run(tc.scenario+"/"+tc.mode, func(t *testing.T) {
			t.Parallel()
			page := "http://localhost:" + port + "/announce-page.html?base={url}&mode=" + tc.mode
			res, _ := run(t, builtinT(t, tc.scenario), Options{Page: page, Browser: b})
			outs := heardOutcomes(t, res, tc.verdict, "page")
			for name, o := range outs {
				switch name {
				case tc.fails:
					if o.Passed || !o.Required || !strings.Contains(o.Message, tc.word) {
						t.Errorf("%s: %+v, want a required failure saying %q", name, o, tc.word)
					}
				case tc.warns:
					if o.Passed || o.Required || !strings.HasPrefix(o.Message, tc.word) || !strings.Contains(o.Message, "role=log #log") {
						t.Errorf("%s: %+v, want a SHOULD warning starting %q, naming the log", name, o, tc.word)
					}
				default:
					if tc.mode == "nolive" {
						continue
					}
					if !o.Passed || !strings.Contains(o.Message, "announced \"") {
						t.Errorf("%s: %+v, want it passed, saying what was announced", name, o)
					}
					if heardIn := map[string]string{"good": "assertive, role=alert #alert", "newalert": "assertive, role=alert, at"}[tc.mode]; strings.Contains(name, "assertive") && !strings.Contains(o.Message, heardIn) {
						t.Errorf("%s: %s, want it heard in the alert", name, o.Message)
					}
				}
			}
			for _, o := range res.Outcomes {
				if byAbsence[o.Kind] && (o.Unverified || o.Passed != (tc.mode != "nolive")) {
					t.Errorf("%s: %+v: the page's announcements are its evidence", o.Name, o)
				}
			}
		})
	}
	// A page that plays the scripted user takes the decisions from its
	// URL: {decisions} (and {url}) are replaced.
	t.Run("decisions", func(t *testing.T) {
		t.Parallel()
		web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte(webSubscriber))
		}))
		defer web.Close()
		_, port, _ := net.SplitHostPort(web.Listener.Addr().String())
		res, _ := run(t, builtinT(t, "confirmation-default-reject"), Options{Page: "http://localhost:" + port + "/?base={url}&decisions={decisions}", Browser: b})
		if o := outcome(t, res, ExpectReply); !res.Passed() || !o.Passed {
			t.Errorf("%s: %+v", res.Verdict(), res.Outcomes)
		}
		if res.Heard == nil || len(res.Heard.Announcements) == 0 || res.Heard.Announcements[0].Region != "aria-live=polite #log" {
			t.Errorf("heard %+v, want the page's polite log", res.Heard)
		}
	})
}
