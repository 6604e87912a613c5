package subtest

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/internal/testdeps"
)

// announcer is the native subscriber that reports its announcements on
// descriptor 3 (testdata/announcer.py).
func announcer(t *testing.T, mode string) string {
	t.Helper()
	testdeps.Command(t, "python3", "python3")
	abs, err := filepath.Abs(filepath.Join("testdata", "announcer.py"))
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("python3 %s {url} %s", abs, mode)
}

// announced returns the announce outcomes of a result, by name.
func announced(r *Result) map[string]Outcome {
	out := map[string]Outcome{}
	for _, o := range r.Outcomes {
		if o.Kind == ExpectAnnounce {
			out[o.Name] = o
		}
	}
	return out
}

// heardOutcomes checks a run's verdict and that its announcements were
// observed from the source named, and returns its announce outcomes.
func heardOutcomes(t *testing.T, res *Result, verdict, from string) map[string]Outcome {
	t.Helper()
	if res.Verdict() != verdict {
		t.Errorf("verdict %s, want %s: %s %+v\nheard %+v", res.Verdict(), verdict, res.NotRun, res.Outcomes, res.Heard)
	}
	if res.Heard == nil || res.Heard.From != from {
		t.Fatalf("heard %+v, want the %s", res.Heard, from)
	}
	outs := announced(res)
	if len(outs) == 0 {
		t.Fatalf("no announce expectation in %+v", res.Outcomes)
	}
	return outs
}

// TestAnnouncementsFromExec plays the built-ins of §9.3.2's duties to a
// native subscriber that writes its announcements to descriptor 3: the
// one that behaves passes each, with its announcements as the evidence of
// the checks passed by absence; each misbehaviour fails the duty it
// breaks, at its level, and only that.
func TestAnnouncementsFromExec(t *testing.T) {
	t.Parallel()
	type want struct {
		verdict string
		// failed are the announce outcomes that fail (by name), with a
		// word of their message; warn those that fail without failing
		// the run (a SHOULD).
		failed, warn map[string]string
	}
	const (
		completed = "announce session.completed in session sess_a1 saying complete|done|finished|success"
		errored   = "announce session.errored in session sess_b2 saying error|fail|problem assertive"
		critical  = "announce session.errored in session sess_a1 assertive"
	)
	cases := []struct {
		scenario, mode string
		want           want
	}{
		{"announce-lifecycle", "good", want{verdict: VerdictPass}},
		{"terminal-events", "good", want{verdict: VerdictPass}},
		{"unknown-event-type", "good", want{verdict: VerdictPass}},
		{"unknown-extension-type", "good", want{verdict: VerdictPass}},
		{"critical-urgency", "good", want{verdict: VerdictPass}},
		{"terminal-events", "summary", want{verdict: VerdictFail, failed: map[string]string{
			completed: `which says none of "complete", "done"`, errored: `which says none of "error"`}}},
		{"critical-urgency", "polite", want{verdict: VerdictPass, warn: map[string]string{
			critical: "SHOULD (our reading of §9.3.2(7), \"appropriate prominence\"): the critical event #"}}},
		{"critical-urgency", "suppress", want{verdict: VerdictFail, failed: map[string]string{
			critical: "MUST (§9.3.2(7): never suppress a critical event): the critical event #"}}},
		{"announce-lifecycle", "silent", want{verdict: VerdictFail, failed: map[string]string{
			"announce session.started in session sess_a1":   "was never announced (0 announcements reported on --announcements)",
			"announce tool.invoked in session sess_a1":      "was never announced",
			"announce session.completed in session sess_a1": "was never announced",
		}}},
	}
	for _, tc := range cases {
		t.Run(tc.scenario+"/"+tc.mode, func(t *testing.T) {
			t.Parallel()
			res, _ := run(t, builtinT(t, tc.scenario), Options{Exec: announcer(t, tc.mode), Announcements: true})
			outs := heardOutcomes(t, res, tc.want.verdict, "announcements")
			for name, o := range outs {
				failWord, fails := tc.want.failed[name]
				warnWord, warns := tc.want.warn[name]
				switch {
				case fails:
					if o.Passed || !o.Required || !strings.Contains(o.Message, failWord) {
						t.Errorf("%s: %+v, want a required failure saying %q", name, o, failWord)
					}
				case warns:
					if o.Passed || o.Required || !strings.HasPrefix(o.Message, warnWord) {
						t.Errorf("%s: %+v, want a SHOULD warning starting %q", name, o, warnWord)
					}
				case !o.Passed || o.NotObservable || !strings.Contains(o.Message, "announced \""):
					t.Errorf("%s: %+v, want it passed, saying what was announced", name, o)
				}
			}
			for name := range tc.want.failed {
				if _, ok := outs[name]; !ok {
					t.Errorf("no outcome %q among %v", name, outs)
				}
			}
			// A subscriber heard announcing is not said to be silent.
			if (res.Silence == "") != (tc.mode != "silent") {
				t.Errorf("silence note %q for mode %s", res.Silence, tc.mode)
			}
			// The announcements are the evidence of the checks passed by
			// absence: required, never unverified.
			for _, o := range res.Outcomes {
				if !byAbsence[o.Kind] {
					continue
				}
				switch {
				case o.Unverified:
					t.Errorf("%s unverified though the announcements are observed: %+v", o.Name, o)
				case tc.mode == "silent" && (o.Passed || !strings.Contains(o.Message, "it announced none of the")):
					t.Errorf("%s: %+v, want a failure: nothing shows the subscriber took in the events", o.Name, o)
				case tc.mode != "silent" && (!o.Passed || !strings.Contains(o.Message, "evidence: the subscriber announced")):
					t.Errorf("%s: %+v, want passed with the announcements as evidence", o.Name, o)
				}
			}
		})
	}
	t.Run("problems", func(t *testing.T) {
		t.Parallel()
		res, _ := run(t, builtinT(t, "announce-lifecycle"), Options{Exec: announcer(t, "garbage"), Announcements: true})
		if res.Verdict() != VerdictPass || res.Heard == nil {
			t.Fatalf("verdict %s (not run: %q): %+v, heard %+v", res.Verdict(), res.NotRun, res.Outcomes, res.Heard)
		}
		if got := strings.Join(res.Heard.Problems, "\n"); !strings.Contains(got, "line 1: not a JSON object") || !strings.Contains(got, `line 2: urgency "loud": want assertive or polite`) {
			t.Errorf("problems %q", got)
		}
		var text strings.Builder
		if err := WriteText(&text, []*Result{res}); err != nil {
			t.Fatal(err)
		}
		var js strings.Builder
		if err := WriteJSON(&js, []*Result{res}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(js.String(), `"from": "announcements"`) || !strings.Contains(js.String(), `"mapped_by": "content"`) || !strings.Contains(js.String(), `"text": "Calling a tool: Renaming 212 photos by date."`) {
			t.Errorf("JSON report lacks what was heard:\n%s", js.String())
		}
		if !strings.Contains(text.String(), "warn  announcements: line 1: not a JSON object") || !strings.Contains(text.String(), "heard 6 announcements on --announcements, 6 mapped to events") {
			t.Errorf("text report:\n%s", text.String())
		}
	})
}

// TestAnnouncementsNotObservable: without --page or --announcements, an
// announce check is neither passed nor failed but reported not observable
// in the text, the JSON and the JUnit (a skipped testcase); the run
// passes, and fails under --require-evidence.
func TestAnnouncementsNotObservable(t *testing.T) {
	t.Parallel()
	testdeps.Command(t, "curl", "curl")
	const curl = "curl -sN {url}/events -o /dev/null"
	t.Run("reported", func(t *testing.T) {
		t.Parallel()
		res, _ := run(t, builtinT(t, "announce-lifecycle"), Options{Exec: curl})
		if res.Verdict() != VerdictPass || res.Heard != nil {
			t.Fatalf("verdict %s, heard %+v: %+v", res.Verdict(), res.Heard, res.Outcomes)
		}
		outs := announced(res)
		for name, o := range outs {
			if !o.NotObservable || o.Passed || !strings.HasPrefix(o.Message, "not observable: nothing shows what the subscriber told the user") {
				t.Errorf("%s: %+v", name, o)
			}
		}
		if s := Summarize([]*Result{res}); s.NotObservable != 3 || s.Verdict != VerdictPass {
			t.Errorf("summary %+v, want 3 not observable", s)
		}
		var text, js, junit strings.Builder
		for _, w := range []func() error{
			func() error { return WriteText(&text, []*Result{res}) },
			func() error { return WriteJSON(&js, []*Result{res}) },
			func() error { return WriteJUnit(&junit, []*Result{res}) },
		} {
			if err := w(); err != nil {
				t.Fatal(err)
			}
		}
		for what, says := range map[string][]string{
			text.String():  {"n/o   announce session.started in session sess_a1 (required): not observable", "3 checks of what the user was told not observable"},
			js.String():    {`"not_observable": true`, `"not_observable": 3`},
			junit.String(): {`<skipped message="not observable: nothing shows what the subscriber told the user`},
		} {
			for _, s := range says {
				if !strings.Contains(what, s) {
					t.Errorf("report lacks %q:\n%s", s, what)
				}
			}
		}
	})
	t.Run("require evidence", func(t *testing.T) {
		t.Parallel()
		res, _ := run(t, builtinT(t, "announce-lifecycle"), Options{Exec: curl, RequireEvidence: true})
		if res.Verdict() != VerdictFail {
			t.Errorf("verdict %s, want FAIL under --require-evidence", res.Verdict())
		}
		for name, o := range announced(res) {
			if o.NotObservable || o.Passed || !strings.HasPrefix(o.Message, "not observable, and --require-evidence asks for evidence") {
				t.Errorf("%s: %+v", name, o)
			}
		}
	})
}

// TestParseAnnounce reads announce expectations, and says what is wrong
// with a bad one.
func TestParseAnnounce(t *testing.T) {
	const head = "level: 1\nexpect:\n"
	sc, err := Parse("s.yaml", []byte(head+
		"  - announce: {type: session.errored, session: sess_b2, contains: [error, failed], politeness: assertive}\n"+
		"  - announce: {event: evt_a10003, contains: Started}\n"+
		"    required: false\n"))
	if err != nil {
		t.Fatal(err)
	}
	a, b := sc.Expect[0], sc.Expect[1]
	if a.Kind != ExpectAnnounce || a.Type != "session.errored" || a.Session != "sess_b2" || strings.Join(a.Contains, ",") != "error,failed" || a.Politeness != Assertive || !a.Required {
		t.Errorf("first: %+v", a)
	}
	if b.Event != "evt_a10003" || strings.Join(b.Contains, ",") != "Started" || b.Required {
		t.Errorf("second: %+v", b)
	}
	if got := a.Name(); got != "announce session.errored in session sess_b2 saying error|failed assertive" {
		t.Errorf("name %q", got)
	}
	for _, tc := range []struct{ src, err string }{
		{"  - announce: {}\n", "s.yaml:3: announce: say which event (event: EVENT_ID, or type: session.started with an optional session:)"},
		{"  - announce: {event: e1, type: session.started}\n", "s.yaml:3: announce: event names one event: not with type or session"},
		{"  - announce: {type: session.started, politeness: loud}\n", `s.yaml:3: announce.politeness: want assertive or polite, got "loud"`},
		{"  - announce: {type: session.started, contains: []}\n", "s.yaml:3: announce.contains: an empty list: give the words (one of which the announcement must hold)"},
		{"  - announce: {type: session.started, contains: [\" \"]}\n", "s.yaml:3: announce.contains: an empty word matches anything"},
		{"  - announce: {type: session.started, contains: {a: 1}}\n", "s.yaml:3: announce.contains: want a string, got a mapping"},
		{"  - announce: {type: session.started, colour: red}\n", `s.yaml:3: announce: unknown key "colour" (known: event, type, session, contains, politeness)`},
	} {
		_, err := Parse("s.yaml", []byte(head+tc.src))
		var se *ScenarioError
		if !errors.As(err, &se) || err.Error() != tc.err {
			t.Errorf("%s: error %v, want %q", strings.TrimSpace(tc.src), err, tc.err)
		}
	}
}
