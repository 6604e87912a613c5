package recording

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/sample"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/models"
	"github.com/aaep-tools/aaepkit/protocol/report"
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
func checkReport(t *testing.T, path string, opts ReadOptions, prepare bool, popts protocol.Options) (string, int) {
	t.Helper()
	var out strings.Builder
	rep := report.New(path)
	rep.View = report.ViewAll
	rep.Stream(&out, true, protocol.Info)
	eng, err := protocol.NewEngine(models.All(), "", &popts, protocol.StreamInfo{}, rep.Sink(nil))
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
	_, err = readSources(context.Background(), []*Part{filePart(path)}, opts, Handler{
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
// work itself (findings of single-message and sequence rules, steps and
// counts alike), in either profile and with rules disabled.
func TestPreparedCheckSameAsUnprepared(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prep.aaep")
	recs := preparedRecords()
	writeRecords(t, path, recs)
	tests := []struct {
		name  string
		popts protocol.Options
		want  []string // findings the stream must exercise
	}{
		{name: "lenient", want: []string{"SEQ-EVENT-ID-REDELIVERED", "SEQ-EVENT-ID-UNIQUE", "ENV-JSON-OBJECT", "ENV-TIMESTAMP-FORMAT", "EVT-"}},
		{name: "strict", popts: protocol.Options{Profile: "strict"}, want: []string{"SEQ-EVENT-ID-UNIQUE", "ENV-TIMESTAMP-FORMAT"}},
		{name: "disabled", popts: protocol.Options{Disabled: []string{"ENV-TIMESTAMP-FORMAT", "SEQ-EVENT-ID-UNIQUE"}}, want: []string{"SEQ-EVENT-ID-REDELIVERED"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want, n := checkReport(t, path, ReadOptions{Sequential: true}, false, tc.popts)
			if n != 0 {
				t.Fatalf("a sequential read prepared %d messages", n)
			}
			for _, f := range tc.want {
				if !strings.Contains(want, `"`+f) {
					t.Fatalf("the report has no %s finding: the test stream does not exercise it", f)
				}
			}
			for _, id := range tc.popts.Disabled {
				if strings.Contains(want, `"`+id+`"`) {
					t.Fatalf("disabled rule %s reported", id)
				}
			}
			got, n := checkReport(t, path, ReadOptions{}, true, tc.popts)
			if n < len(recs)/2 {
				t.Fatalf("%d of about %d messages came prepared", n, len(recs))
			}
			if got != want {
				t.Fatalf("prepared report differs from the unprepared one:\n%s", firstDiff(got, want))
			}
			ahead, _ := checkReport(t, path, ReadOptions{}, false, tc.popts)
			if ahead != want {
				t.Fatalf("read-ahead report differs from the sequential one:\n%s", firstDiff(ahead, want))
			}
		})
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
