package protocol_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/protocol"
)

// TestReportTextCountsPerParty: the text report's summary counts the
// findings per party under the counts per level.
func TestReportTextCountsPerParty(t *testing.T) {
	rep, _ := run(t, "", nil, `{"toy":"open","session":"s1"}`, `{"toy":"bad","session":"s1"}`, `{"x":1}`)
	var buf bytes.Buffer
	if err := rep.WriteText(&buf, protocol.Must); err != nil {
		t.Fatal(err)
	}
	want := "toy.jsonl: 3 messages (toy 2), 1 session; 1 MUST, 2 SHOULD, 0 INFO\nby party: producer 1 MUST, 0 SHOULD, 0 INFO; subscriber 0 MUST, 1 SHOULD, 0 INFO; either 0 MUST, 1 SHOULD, 0 INFO\n"
	if !strings.Contains(buf.String(), want) {
		t.Errorf("text report lacks the per-party summary %q:\n%s", want, buf.String())
	}
	clean, _ := run(t, "", nil, `{"toy":"open","session":"s1"}`, `{"toy":"close","session":"s1"}`)
	buf.Reset()
	if err := clean.WriteText(&buf, protocol.Must); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "by party:") {
		t.Errorf("a clean report counts parties:\n%s", buf.String())
	}
}
