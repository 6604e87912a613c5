package input

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/inputs"
	"github.com/aaep-tools/aaepkit/internal/sample"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/models"
)

// preparedRecords is a capture's worth of interleaved sessions with their
// protocol violations, a reconnect after which the producer re-sends
// events (identical redeliveries), events re-sent with other content under
// the same event_id, and messages that are not JSON objects: everything
// the checker treats differently.
func preparedRecords() []capfile.Record {
	msgs := sample.Stream(sample.Options{Sessions: 300, Seed: 9, Violations: true})
	var recs []capfile.Record
	at := int64(0)
	add := func(r capfile.Record) {
		at += int64(time.Millisecond)
		r.Time = at
		recs = append(recs, r)
	}
	add(capfile.Record{Kind: capfile.KindConn, Payload: []byte(`{"event":"connected"}`)})
	for i, m := range msgs {
		kind := capfile.KindReceived
		if m.FromSubscriber {
			kind = capfile.KindSent
		}
		add(capfile.Record{Kind: kind, Session: m.Session, Payload: m.JSON})
		switch {
		case i%997 == 0 && i > 0:
			add(capfile.Record{Kind: capfile.KindConn, Payload: []byte(`{"event":"connected"}`)})
			for _, old := range msgs[max(0, i-20):i] {
				if !old.FromSubscriber {
					add(capfile.Record{Kind: capfile.KindReceived, Session: old.Session, Payload: old.JSON})
				}
			}
		case i%613 == 0 && !m.FromSubscriber:
			changed := bytes.Replace(m.JSON, []byte(`"timestamp":"`), []byte(`"timestamp":"x`), 1)
			add(capfile.Record{Kind: capfile.KindReceived, Session: m.Session, Payload: changed})
		case i%401 == 0:
			add(capfile.Record{Kind: capfile.KindReceived, Payload: []byte(`{"type": @@@}`)})
			add(capfile.Record{Kind: capfile.KindReceived, Payload: []byte(`[1,2]`)})
		}
	}
	return recs
}

// checkReport checks path as aaep-replay check --json does, reading with
// opts, and returns the report and how many messages came prepared.
func checkReport(t *testing.T, path string, opts Options, prepare bool) (string, int) {
	t.Helper()
	var out strings.Builder
	rep := protocol.NewReport(path)
	rep.View = protocol.ViewAll
	rep.Stream(&out, true, protocol.Info)
	eng, err := protocol.NewEngine(models.All(), "", &protocol.Options{}, rep.Sink(nil))
	if err != nil {
		t.Fatal(err)
	}
	if prepare {
		opts.Prepare = eng.Preparation()
		if opts.Prepare == nil {
			t.Fatal("the engine of every model has no preparation")
		}
	}
	prepared := 0
	_, err = ReadSources(context.Background(), []inputs.Source{inputs.File(path)}, opts, Handler{
		Header: func(_ Format, h capfile.Header) { eng.Begin(protocol.StreamInfo{Tool: h.Tool}) },
		Message: func(m *protocol.Message) error {
			if m.Prep != nil {
				prepared++
			}
			eng.Feed(m)
			return nil
		},
		Conn: eng.Connection,
	})
	if err != nil {
		t.Fatal(err)
	}
	eng.Finish()
	rep.Stats = eng.Stats()
	if err := rep.Close(); err != nil {
		t.Fatal(err)
	}
	return out.String(), prepared
}

// TestPreparedCheckSameAsUnprepared: messages prepared on the reading
// goroutine give the very report the checker gives when it does all the
// work itself, findings, steps and counts alike.
func TestPreparedCheckSameAsUnprepared(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prep.aaep")
	recs := preparedRecords()
	writeRecords(t, path, recs)
	want, n := checkReport(t, path, Options{Sequential: true}, false)
	if n != 0 {
		t.Fatalf("a sequential read prepared %d messages", n)
	}
	for _, f := range []string{"SEQ-EVENT-ID-REDELIVERED", "SEQ-EVENT-ID-UNIQUE", "ENV-JSON-OBJECT"} {
		if !strings.Contains(want, f) {
			t.Fatalf("the report has no %s finding: the test stream does not exercise it", f)
		}
	}
	got, n := checkReport(t, path, Options{}, true)
	if n < len(recs)/2 {
		t.Fatalf("%d of about %d messages came prepared", n, len(recs))
	}
	if got != want {
		t.Fatalf("prepared report differs from the unprepared one:\n%s", firstDiff(got, want))
	}
	ahead, _ := checkReport(t, path, Options{}, false)
	if ahead != want {
		t.Fatalf("read-ahead report differs from the sequential one:\n%s", firstDiff(ahead, want))
	}
}

// firstDiff shows where two texts first differ.
func firstDiff(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-200)
	return "got:  …" + a[from:min(len(a), i+200)] + "\nwant: …" + b[from:min(len(b), i+200)]
}
