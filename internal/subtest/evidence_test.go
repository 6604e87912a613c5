package subtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/internal/testdeps"
)

// TestPassedByAbsenceIsUnverified: a subscriber that takes in nothing
// (curl writing the stream away) passes the "no reply" and "stays
// connected" checks only by absence: each is reported "passed, unverified"
// in the text, the JSON and the JUnit, and the run still passes; with
// RequireEvidence (--require-evidence) they fail.
func TestPassedByAbsenceIsUnverified(t *testing.T) {
	t.Parallel()
	testdeps.Command(t, "curl", "curl")
	const curl = "curl -sN {url}/events -o /dev/null"
	const says = "passed, unverified: nothing shows the subscriber took in the events"
	t.Run("unverified", func(t *testing.T) {
		t.Parallel()
		res, _ := run(t, builtinT(t, "unknown-extensions"), Options{Exec: curl})
		if res.Verdict() != VerdictPass {
			t.Fatalf("verdict %s: %+v", res.Verdict(), res.Outcomes)
		}
		for _, k := range []ExpectKind{ExpectStaysConnected, ExpectNoReply} {
			if o := outcome(t, res, k); !o.Passed || !o.Unverified || !strings.HasPrefix(o.Message, says) {
				t.Errorf("%s: %+v", k, o)
			}
		}
		if s := Summarize([]*Result{res}); s.Unverified != 2 || s.Verdict != VerdictPass {
			t.Errorf("summary %+v", s)
		}
		var text, js, junit strings.Builder
		if err := WriteText(&text, []*Result{res}); err != nil {
			t.Fatal(err)
		}
		if err := WriteJSON(&js, []*Result{res}); err != nil {
			t.Fatal(err)
		}
		if err := WriteJUnit(&junit, []*Result{res}); err != nil {
			t.Fatal(err)
		}
		for name, doc := range map[string]string{"text": text.String(), "json": js.String(), "junit": junit.String()} {
			if strings.Count(doc, says) != 2 {
				t.Errorf("%s says %q %d times, want 2:\n%s", name, says, strings.Count(doc, says), doc)
			}
		}
		if !strings.Contains(js.String(), `"unverified": true`) || !strings.Contains(text.String(), "2 checks passed unverified") {
			t.Errorf("json or text summary lacks the unverified:\n%s\n%s", js.String(), text.String())
		}
	})
	t.Run("required", func(t *testing.T) {
		t.Parallel()
		res, _ := run(t, builtinT(t, "unknown-extensions"), Options{Exec: curl, RequireEvidence: true})
		if res.Verdict() != VerdictFail {
			t.Errorf("verdict %s, want FAIL under --require-evidence", res.Verdict())
		}
		if o := outcome(t, res, ExpectNoReply); o.Passed || !strings.HasPrefix(o.Message, "unverified, and --require-evidence asks for evidence") {
			t.Errorf("no_reply %+v", o)
		}
	})
}

// TestEveryUserActionIsMachineReadable: every scripted user action of a
// built-in is in AAEP_TEST_DECISIONS and the JSON verdict, not only in
// words: each reply expected has its reply decision, a renegotiation its
// renegotiate action, a subscription.close its shutdown action, each
// acting after an event of the capture. The environment an exec'd
// subscriber gets holds them as the verdict does.
func TestEveryUserActionIsMachineReadable(t *testing.T) {
	triggers := map[string]string{"subscription.renegotiate": ActionRenegotiate, "subscription.close": ActionShutdown}
	for _, sc := range Builtins() {
		ids := map[string]bool{}
		for line := range strings.SplitSeq(string(sc.jsonl), "\n") {
			if id := eventID([]byte(line)); id != "" {
				ids[id] = true
			}
		}
		has := func(action, token string) bool {
			for _, d := range sc.Decisions {
				if d.Action == action && d.Token == token {
					return true
				}
			}
			return false
		}
		for _, e := range sc.Expect {
			switch {
			case e.Kind == ExpectReply && !has(ActionReply, e.Token):
				t.Errorf("%s expects a reply to %s, but the user has no decision for it", sc.Name, e.Token)
			case e.Kind == ExpectSends && triggers[e.Type] != "" && !has(triggers[e.Type], ""):
				t.Errorf("%s expects %s, but the user has no %s action", sc.Name, e.Type, triggers[e.Type])
			}
		}
		for _, d := range sc.Decisions {
			if d.Action == "" || (d.After != "" && !ids[d.After]) || (d.Action != ActionReply && d.After == "") {
				t.Errorf("%s: decision %+v: no action, or after no event of the capture", sc.Name, d)
			}
		}
	}
	testdeps.Command(t, "curl", "curl")
	t.Parallel()
	env := filepath.Join(t.TempDir(), "decisions.json")
	sc := builtinT(t, "renegotiation")
	res, _ := run(t, sc, Options{Exec: `printf %s "$AAEP_TEST_DECISIONS" > ` + env + `; exec curl -sN {url}/events -o /dev/null`})
	got, err := os.ReadFile(env)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"action":"renegotiate","after":"evt_a10000","capabilities":{"preferred_verbosity":"terse"}}]`
	if string(got) != want {
		t.Errorf("AAEP_TEST_DECISIONS=%s, want %s", got, want)
	}
	var js strings.Builder
	if err := WriteJSON(&js, []*Result{res}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"action": "renegotiate"`) || !strings.Contains(js.String(), `"after": "evt_a10000"`) {
		t.Errorf("the JSON verdict lacks the user's action:\n%s", js.String())
	}
}
