package recording

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/sample"
	"github.com/aaep-tools/aaepkit/protocol"
)

type item struct {
	raw    string
	offset time.Duration
	index  int64
	source int
	dir    protocol.Direction
}

func readAll(t *testing.T, args ...string) ([]item, Summary) {
	t.Helper()
	srcs := expandParts(t, args...)
	var out []item
	sum, err := readSources(context.Background(), srcs, ReadOptions{}, Handler{Message: func(m *protocol.Message) error {
		out = append(out, item{string(m.Raw), m.Offset, m.Index, m.Source, m.Dir})
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	return out, sum
}

// writeParts writes recs as a rotated set: part k holds the records from
// cuts[k-1] and starts at the time of its first record, as the recorder's
// rotation does.
func writeParts(t *testing.T, dir string, start time.Time, recs []capfile.Record, cuts []int) []string {
	t.Helper()
	return rotated(t, dir, "run", "http://127.0.0.1:1/events", start, recs, cuts)
}

func TestRotatedSetReadsAsOneCapture(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	var recs []capfile.Record
	for i, m := range sample.Stream(sample.Options{Sessions: 6, Seed: 9}) {
		kind := capfile.KindReceived
		if m.FromSubscriber {
			kind = capfile.KindSent
		}
		recs = append(recs, capfile.Record{Kind: kind, Time: int64(m.Offset), Session: m.Session, Payload: m.JSON})
		if i == 10 {
			recs = append(recs, capfile.Record{Kind: capfile.KindConn, Time: int64(m.Offset), Payload: []byte(`{"event":"disconnected"}`)})
		}
	}
	whole := filepath.Join(t.TempDir(), "whole.aaep")
	w, err := capfile.Create(whole, capfile.Header{Start: start, Tool: "test",
		Origins: []capfile.Origin{{ID: 0, Transport: "sse", Endpoint: "http://127.0.0.1:1/events"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		if err := w.Append(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	writeParts(t, dir, start, recs, []int{len(recs) / 3, 2 * len(recs) / 3})
	want, _ := readAll(t, whole)
	for name, args := range map[string][]string{
		"glob":      {filepath.Join(dir, "run-*.aaep")},
		"directory": {dir},
		"reversed":  {filepath.Join(dir, "run-000003.aaep"), filepath.Join(dir, "run-000002.aaep"), filepath.Join(dir, "run-000001.aaep")},
	} {
		t.Run(name, func(t *testing.T) {
			got, sum := readAll(t, args...)
			if sum.Files != 3 || sum.Format != FormatCapture || sum.Skipped != 1 {
				t.Errorf("summary %+v, want 3 capture files and the one connection record skipped", sum)
			}
			if len(got) != len(want) {
				t.Fatalf("%d messages, want %d", len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("message %d:\n got %+v\nwant %+v", i, got[i], want[i])
				}
			}
		})
	}
}

func TestCapturesOfTwoMachinesInterleave(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	write := func(name, endpoint string, start time.Time, times ...time.Duration) string {
		p := filepath.Join(dir, name)
		w, err := capfile.Create(p, capfile.Header{Start: start, Tool: "test",
			Origins: []capfile.Origin{{ID: 0, Transport: "websocket", Endpoint: endpoint}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range times {
			rec := capfile.Record{Kind: capfile.KindReceived, Time: int64(d), Payload: []byte(`{"from":"` + name + `","at":"` + d.String() + `"}`)}
			if err := w.Append(&rec); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.aaep", "ws://a/", start, 0, 2*time.Second, 4*time.Second)
	b := write("b.aaep", "ws://b/", start.Add(-time.Second), 0, 2*time.Second, 4*time.Second)
	got, _ := readAll(t, a, b)
	want := []item{
		{`{"from":"b.aaep","at":"0s"}`, 0, 0, 1, 0},
		{`{"from":"a.aaep","at":"0s"}`, time.Second, 1, 0, 0},
		{`{"from":"b.aaep","at":"2s"}`, 2 * time.Second, 2, 1, 0},
		{`{"from":"a.aaep","at":"2s"}`, 3 * time.Second, 3, 0, 0},
		{`{"from":"b.aaep","at":"4s"}`, 4 * time.Second, 4, 1, 0},
		{`{"from":"a.aaep","at":"4s"}`, 5 * time.Second, 5, 0, 0},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d messages, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("message %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

func TestStdinAndJSONLMixed(t *testing.T) {
	dir := t.TempDir()
	jsonl := filepath.Join(dir, "late.jsonl")
	if err := os.WriteFile(jsonl, []byte(`{"type":"aaep:agent.session.started","session_id":"s2","timestamp":"2026-11-02T09:00:05Z"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	early := `{"type":"aaep:agent.session.started","session_id":"s1","timestamp":"2026-11-02T09:00:01Z"}` + "\n\n" +
		`{"type":"aaep:agent.session.ended","session_id":"s1","timestamp":"2026-11-02T09:00:09Z"}` + "\n"
	srcs := []*Part{filePart(jsonl), stdinPart(strings.NewReader(early))}
	var got []string
	var offs []time.Duration
	sum, err := readSources(context.Background(), srcs, ReadOptions{}, Handler{Message: func(m *protocol.Message) error {
		got = append(got, peekSession(string(m.Raw)))
		offs = append(offs, m.Offset)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "s1,s2,s1" || sum.Skipped != 1 || sum.Format != FormatJSONL {
		t.Errorf("order %v, summary %+v; want s1,s2,s1 with the blank line skipped", got, sum)
	}
	if offs[0] != 0 || offs[1] != 4*time.Second || offs[2] != 8*time.Second {
		t.Errorf("offsets %v, want 0s 4s 8s", offs)
	}
}

func peekSession(raw string) string {
	_, rest, _ := strings.Cut(raw, `"session_id":"`)
	id, _, _ := strings.Cut(rest, `"`)
	return id
}
