package subtest

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/protocol"
)

// TestFailOnAndJUnitTimes: a SHOULD finding (a reply to a withdrawn
// prompt, §6.8) warns, and fails the run under FailOn SHOULD (--fail-on
// should, as check's); each JUnit testcase has the time it took; the
// summary lists what was not applicable beside what passed and failed.
func TestFailOnAndJUnitTimes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "c.jsonl"), builtinT(t, "confirmation-withdrawn").jsonl, 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "s.yaml")
	const yaml = "capture: c.jsonl\nlevel: 2\ndecisions:\n  - {token: rpl_rename5, decision: accept, delay: 1250ms}\nexpect:\n  - stays_connected: {}\n    required: true\n"
	if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		failOn  protocol.Level
		verdict string
	}{{0, VerdictPass}, {protocol.Should, VerdictFail}} {
		t.Run(tc.failOn.String(), func(t *testing.T) {
			t.Parallel()
			res, _ := run(t, sc, Options{Exec: subPy(t, "stale"), FailOn: tc.failOn})
			if ruleIDs(res) != "SHOULD SEQ-REPLY-AFTER-CANCEL" || res.Verdict() != tc.verdict {
				t.Errorf("fail on %v: %s with %q, want %s", tc.failOn, res.Verdict(), ruleIDs(res), tc.verdict)
			}
			na := &Result{Name: "handshake-sse", NotApplicable: "the subscriber uses websocket; this scenario tests sse only"}
			var junit, text strings.Builder
			if err := WriteJUnit(&junit, []*Result{res, na}); err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Suites []struct {
					Cases []struct {
						Name string `xml:"name,attr"`
						Time string `xml:"time,attr"`
					} `xml:"testcase"`
				} `xml:"testsuite"`
			}
			if err := xml.Unmarshal([]byte(junit.String()), &doc); err != nil {
				t.Fatal(err)
			}
			for _, c := range doc.Suites[0].Cases {
				if secs, err := strconv.ParseFloat(c.Time, 64); err != nil || secs <= 0 {
					t.Errorf("testcase %q time %q, want its time", c.Name, c.Time)
				}
			}
			if err := WriteText(&text, []*Result{res, na}); err != nil {
				t.Fatal(err)
			}
			want := "2 scenarios, 1 passed, 0 failed, 1 not applicable, 0 not run"
			if tc.verdict == VerdictFail {
				want = "2 scenarios, 0 passed, 1 failed, 1 not applicable, 0 not run"
			}
			if !strings.Contains(text.String(), want) || !strings.Contains(text.String(), "NOT APPLICABLE  the subscriber uses websocket") {
				t.Errorf("text lacks %q:\n%s", want, text.String())
			}
		})
	}
}
