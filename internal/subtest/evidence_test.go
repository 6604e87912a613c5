package subtest

import (
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
