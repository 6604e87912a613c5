package bench

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/internal/sample"
	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/models"
	"github.com/aaep-tools/aaepkit/recording"
)

// findings checks a capture with every protocol model and returns what
// it found.
func findings(t *testing.T, path string) []protocol.Finding {
	t.Helper()
	var got []protocol.Finding
	eng, err := protocol.NewEngine(models.All(), "", nil, protocol.StreamInfo{}, protocol.Sink{Finding: func(f protocol.Finding) { got = append(got, f) }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := recording.Each(context.Background(), path, func(m *protocol.Message) error { eng.Feed(m); return nil }); err != nil {
		t.Fatal(err)
	}
	eng.Finish()
	return got
}

func TestLongSession(t *testing.T) {
	for _, n := range []int{MinLongSession, 7, 8, 9, 10, 100, 1001} {
		msgs, err := LongSession(n, 1)
		if err != nil {
			t.Fatalf("LongSession(%d): %v", n, err)
		}
		if len(msgs) != n {
			t.Fatalf("LongSession(%d) has %d events", n, len(msgs))
		}
		ids := map[string]bool{}
		for i, m := range msgs {
			d := payload.Decode(m.JSON)
			p := &d.Routing
			if !d.IsObject() || p.SessionID != msgs[0].Session || ids[p.EventID] || p.EventID == "" {
				t.Fatalf("LongSession(%d) event %d: object %v, session %q, id %q (dup %v)", n, i, d.IsObject(), p.SessionID, p.EventID, ids[p.EventID])
			}
			ids[p.EventID] = true
			if i > 0 && m.Offset <= msgs[i-1].Offset {
				t.Fatalf("LongSession(%d) event %d at %v, not after %v", n, i, m.Offset, msgs[i-1].Offset)
			}
		}
		if first, last := payload.Decode(msgs[0].JSON).Routing.Type, payload.Decode(msgs[n-1].JSON).Routing.Type; first != "aaep:agent.session.started" || last != "aaep:agent.session.completed" {
			t.Errorf("LongSession(%d) runs from %s to %s", n, first, last)
		}
		// The session must be valid: the trace measurement draws a clean path.
		path := filepath.Join(t.TempDir(), "long.aaep")
		if err := sample.WriteCapture(path, msgs, captureStart, "test"); err != nil {
			t.Fatal(err)
		}
		for _, f := range findings(t, path) {
			if f.Level >= protocol.Should {
				t.Errorf("LongSession(%d): %s %s at %d: %s", n, f.Level, f.RuleID, f.Index, f.Message)
			}
		}
	}
	if _, err := LongSession(MinLongSession-1, 1); err == nil || !strings.Contains(err.Error(), "at least") {
		t.Errorf("LongSession(%d) error = %v, want a minimum", MinLongSession-1, err)
	}
}

func TestWriteBulkCapture(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bulk.aaep")
	const n = 4000 // more than one round of sessions
	if err := WriteBulkCapture(path, n, 1); err != nil {
		t.Fatal(err)
	}
	got, err := countRecords(path)
	if err != nil || got != n {
		t.Fatalf("capture holds %d records (%v), want %d", got, err, n)
	}
	// Every fourth session breaks the protocol on purpose.
	must := 0
	for _, f := range findings(t, path) {
		if f.Level == protocol.Must {
			must++
		}
	}
	if must == 0 {
		t.Error("the bulk capture holds no MUST violation; the check measurement should find some")
	}
}

func TestOffsets(t *testing.T) {
	const span, mean = 2 * time.Second, 5 * time.Millisecond
	offs := Offsets(span, mean, 1)
	if offs[0] != 0 || offs[len(offs)-1] > span {
		t.Fatalf("offsets run from %v to %v, want 0 to at most %v", offs[0], offs[len(offs)-1], span)
	}
	bursts := 0
	for i := 1; i < len(offs); i++ {
		if offs[i] < offs[i-1] {
			t.Fatalf("offset %d (%v) before offset %d (%v)", i, offs[i], i-1, offs[i-1])
		}
		if offs[i] == offs[i-1] {
			bursts++
		}
	}
	// About 1.3 mean gaps per event.
	if n := len(offs); n < 200 || n > 450 || bursts == 0 {
		t.Errorf("%d offsets with %d bursts over %v at mean %v", n, bursts, span, mean)
	}
}

func TestWriteSizedCapture(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sized.aaep")
	const size = 256 << 10
	sc, err := WriteSizedCapture(path, size, time.Millisecond, sample.Events(500, 1))
	if err != nil {
		t.Fatal(err)
	}
	if sc.Bytes < size {
		t.Errorf("file of %d bytes, want at least %d", sc.Bytes, size)
	}
	got, err := countRecords(path)
	if err != nil || got != sc.Records {
		t.Errorf("file holds %d records (%v), WriteSizedCapture says %d", got, err, sc.Records)
	}
	if want := time.Duration(sc.Records-1) * time.Millisecond; sc.LastTime != want {
		t.Errorf("last time %v, want %v", sc.LastTime, want)
	}
}

func TestResultLine(t *testing.T) {
	r := Result{Name: "Fanout/subs=10 x", Metrics: []Metric{{412345.678, "msgs/s"}, {0.5, "ratio"}}}
	if got, want := r.Line(), "BenchmarkFanout/subs=10_x\t1\t412346 msgs/s\t0.5 ratio"; got != want {
		t.Errorf("Line() = %q, want %q", got, want)
	}
}
