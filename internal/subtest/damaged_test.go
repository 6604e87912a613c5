package subtest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
)

// The events a test plays from a damaged capture are those a replay
// delivers: every readable one, in order, the damaged frame skipped as
// repair skips it, and the skip said before the run (was: the scenario
// was not run at all).
func TestReadEventsSkipsDamage(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.aaep")
	w, err := capfile.Create(path, capfile.Header{Start: time.Now(), Tool: "test"}, &capfile.WriterOptions{FrameSize: 1 << 10, FlushInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		p := fmt.Sprintf(`{"type":"aaep:agent.state.changed","event_id":"evt_%03d","session_id":"s","payload":{"pad":"%s"}}`, i, strings.Repeat("y", i%23))
		if err := w.Append(&capfile.Record{Kind: capfile.KindReceived, Time: int64(i), Session: "s", Payload: []byte(p)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := capfile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	x, err := r.FileIndex()
	r.Close()
	if err != nil || len(x.Frames) < 4 {
		t.Fatalf("index %v, %v", x, err)
	}
	data, _ := os.ReadFile(path)
	f := x.Frames[1]
	data[f.Offset+f.Size/2] ^= 0x10
	bad := filepath.Join(dir, "bad.aaep")
	if err := os.WriteFile(bad, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var warn bytes.Buffer
	events, _, err := readEvents(bad, &warn)
	if err != nil {
		t.Fatalf("readEvents: %v", err)
	}
	lost := int(f.Records)
	if len(events) != 200-lost {
		t.Errorf("%d events, want the %d outside the damaged frame", len(events), 200-lost)
	}
	for i := 1; i < len(events); i++ {
		if events[i].ID <= events[i-1].ID {
			t.Fatalf("events out of order: %s after %s", events[i].ID, events[i-1].ID)
		}
	}
	if !strings.Contains(warn.String(), "the replay skips bytes ") {
		t.Errorf("the skip is not said: %q", warn.String())
	}
}
