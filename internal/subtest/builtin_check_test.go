package subtest

import (
	"context"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/check"
	"github.com/aaep-tools/aaepkit/protocol/models"
	"github.com/aaep-tools/aaepkit/recording"
)

// injected are the findings a built-in's capture makes on purpose (level
// and rule id, in order); every other built-in capture checks clean.
var injected = map[string]string{
	// A line that is not JSON, between two valid events.
	"malformed-event": "MUST ENV-JSON-OBJECT",
	// A type of the aaep: namespace the subscriber cannot know.
	"unknown-event-type": "MUST ENV-TYPE-CORE-KNOWN",
	// A withdrawal delivered before the confirmation it withdraws.
	"out-of-order": "MUST SEQ-DELIVERY-ORDER",
}

// captureFindings checks a built-in's capture as check does.
func captureFindings(t *testing.T, sc *Scenario) string {
	t.Helper()
	ctx := context.Background()
	path, err := prepareCapture(ctx, sc, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	recs, err := recording.Open(ctx, []string{path}, recording.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	res, err := check.Run(ctx, recording.Join(recs), check.Config{Models: models.All}, protocol.Sink{Finding: func(f protocol.Finding) {
		if f.Level != protocol.Info {
			ids = append(ids, f.Level.String()+" "+f.RuleID)
		}
	}}, nil)
	if err == nil {
		err = res.Err
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(ids, ", ")
}

// TestBuiltinCapturesCheckClean: every built-in capture checks clean but
// for the findings its scenario injects on purpose, and what a scenario
// tests (a critical event, a prompt, an unknown type or extension, a
// malformed line) is never its last event: a subscriber that gives up
// on it is seen to.
func TestBuiltinCapturesCheckClean(t *testing.T) {
	for _, sc := range Builtins() {
		t.Run(sc.Name, func(t *testing.T) {
			if got := captureFindings(t, sc); got != injected[sc.Name] {
				t.Errorf("check finds %q, want %q", got, injected[sc.Name])
			}
			lines := strings.Split(strings.TrimSpace(string(sc.jsonl)), "\n")
			last := lines[len(lines)-1]
			if !strings.Contains(last, `"type":"aaep:agent.session.completed"`) {
				t.Errorf("the last event is no session.completed: %s", last)
			}
			for _, tested := range []string{`"critical"`, `"reply_token"`, `memory.compacted`, `"extensions"`, `"session_id":"sess_b2"`, `"session_id":"sess_c3"`} {
				if strings.Contains(last, tested) {
					t.Errorf("the last event carries %s, what the scenario tests: %s", tested, last)
				}
			}
		})
	}
}
