package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/protocol"
)

// TestSummaryNamesTheStream: in a recording of a replay every subscriber
// has its own copy of a session; the summary's worst sessions and first
// occurrences name each one's stream, as the listing does ("[sub_…] aaep
// session sess_…"), so that the copies can be told apart (issue 34: the
// summary listed one session id three times, each without its subscriber).
func TestSummaryNamesTheStream(t *testing.T) {
	r := New("rec.aaep")
	r.View = ViewSummary
	for _, stream := range []string{"sub_one", "sub_two"} {
		r.AddFinding(protocol.Finding{Stream: stream, Protocol: "aaep", Session: "sess_x", RuleID: "SEQ-STATE-CHAIN", Level: protocol.Must, Index: 3, Message: "broken chain"})
		r.AddSession(protocol.SessionSummary{Stream: stream, Protocol: "aaep", Session: "sess_x", Messages: 8, State: "completed", Complete: true})
	}
	var b bytes.Buffer
	if err := r.WriteText(&b, protocol.Must); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	worst := out[strings.Index(out, "worst sessions:"):strings.Index(out, "first occurrence")]
	for _, stream := range []string{"sub_one", "sub_two"} {
		if !strings.Contains(worst, "["+stream+"] aaep session sess_x") {
			t.Errorf("worst sessions do not name [%s]:\n%s", stream, worst)
		}
	}
	first := out[strings.Index(out, "first occurrence"):]
	if !strings.Contains(first, "[sub_one] aaep session sess_x") {
		t.Errorf("first occurrence does not name its stream:\n%s", first)
	}
}
