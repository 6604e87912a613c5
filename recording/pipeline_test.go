package recording

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/sample"
	"github.com/aaep-tools/aaepkit/protocol"
)

// pipelineRecords is a stream of several thousand records: messages both
// ways, some with attributes, connection records and markers between them,
// and one message of 700 KiB (more than a batch's payload bound).
func pipelineRecords(t *testing.T) []capfile.Record {
	t.Helper()
	msgs := sample.Stream(sample.Options{Sessions: 120, Seed: 21})
	var recs []capfile.Record
	at := int64(0)
	add := func(r capfile.Record) {
		at += int64(time.Millisecond)
		r.Time = at
		recs = append(recs, r)
	}
	for i, m := range msgs {
		kind := capfile.KindReceived
		if m.FromSubscriber {
			kind = capfile.KindSent
		}
		r := capfile.Record{Kind: kind, Session: m.Session, Payload: m.JSON}
		if i%7 == 0 {
			r.Attrs = []capfile.Attr{{Key: "event", Value: "message"}, {Key: "id", Value: fmt.Sprint(i)}}
		}
		add(r)
		switch {
		case i%500 == 0:
			add(capfile.Record{Kind: capfile.KindConn, Payload: []byte(`{"event":"connected"}`)})
		case i%333 == 0:
			add(capfile.Record{Kind: capfile.KindMarker, Payload: []byte(`{"note":"here"}`)})
		case i == len(msgs)/2:
			big := `{"type":"aaep:agent.output","session_id":"sess_big","text":"` + strings.Repeat("x", 700<<10) + `"}`
			add(capfile.Record{Kind: capfile.KindReceived, Session: "sess_big", Payload: []byte(big)})
		}
	}
	if len(recs) < 4*batchItems {
		t.Fatalf("only %d records: the test needs several batches", len(recs))
	}
	return recs
}

// writeRecords writes recs as a capture in small frames.
func writeRecords(t *testing.T, path string, recs []capfile.Record) {
	t.Helper()
	w, err := capfile.Create(path, capfile.Header{Start: time.Unix(1700000000, 0), Tool: "test",
		Origins: []capfile.Origin{{ID: 0, Transport: "sse", Endpoint: "http://127.0.0.1:1/events"}}},
		&capfile.WriterOptions{FlushInterval: -1, FrameSize: 16 << 10})
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
}

// trace is everything a handler saw, one line per call, and the summary.
type trace struct {
	lines []string
	sum   Summary
	err   error
	// decoded counts the messages that came with Doc decoded from Raw.
	decoded int
}

func (tr *trace) handler() Handler {
	return Handler{
		Message: func(m *protocol.Message) error {
			var attrs []string
			for k, v := range m.Attrs {
				attrs = append(attrs, k+"="+v)
			}
			sort.Strings(attrs)
			if d := m.Doc; d != nil && len(m.Raw) > 0 && len(d.Raw()) == len(m.Raw) && &d.Raw()[0] == &m.Raw[0] {
				tr.decoded++
			}
			tr.lines = append(tr.lines, fmt.Sprintf("M %d %d %d %v %v %s", m.Index, m.Offset, m.Source, m.Dir, attrs, m.Raw))
			return nil
		},
		Conn: func(c *protocol.Conn) {
			tr.lines = append(tr.lines, fmt.Sprintf("C %d %d %d %s", c.Index, c.Offset, c.Source, c.Raw))
		},
	}
}

func readTrace(t *testing.T, ctx context.Context, args []string, opts ReadOptions) trace {
	t.Helper()
	srcs := expandParts(t, args...)
	var tr trace
	tr.sum, tr.err = readSources(ctx, srcs, opts, tr.handler())
	return tr
}

// goroutinesSettle fails the test unless the number of goroutines comes
// back to at most before: a reading goroutine left behind would keep it up.
func goroutinesSettle(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines, %d before reading:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestReadAheadSameAsSequential reads every kind of input both ways and
// wants the same calls in the same order, the same summary and the same
// error.
func TestReadAheadSameAsSequential(t *testing.T) {
	dir := t.TempDir()
	recs := pipelineRecords(t)
	whole := filepath.Join(dir, "whole.aaep")
	writeRecords(t, whole, recs)
	data, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	rd, err := capfile.Open(whole)
	if err != nil {
		t.Fatal(err)
	}
	x, err := rd.FileIndex()
	rd.Close()
	if err != nil || len(x.Frames) < 6 {
		t.Fatalf("index %v, %v: want several frames", x, err)
	}
	mid := x.Frames[len(x.Frames)/2]
	damaged := bytes.Clone(data)
	damaged[mid.Offset+mid.Size/2] ^= 0x10
	parts := writeParts(t, t.TempDir(), time.Unix(1700000000, 0), recs, []int{len(recs) / 3, 2 * len(recs) / 3})
	var jsonl strings.Builder
	for i, m := range sample.Stream(sample.Options{Sessions: 60, Seed: 3}) {
		jsonl.Write(m.JSON)
		jsonl.WriteString("\n")
		if i%100 == 0 {
			jsonl.WriteString("\n   \n")
		}
	}

	tests := []struct {
		name    string
		args    []string
		wantErr string // "" for none
		torn    bool
	}{
		{name: "capture", args: []string{whole}},
		{name: "damaged frame", args: []string{write("damaged.aaep", damaged)}, wantErr: "repair can save"},
		{name: "torn tail", args: []string{write("torn.aaep", data[:mid.Offset+mid.Size/2])}, torn: true},
		{name: "rotated set, merged", args: parts},
		{name: "json lines", args: []string{write("s.jsonl", []byte(jsonl.String()))}},
		{name: "capture and json lines, merged", args: []string{parts[0], filepath.Join(dir, "s.jsonl")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			seq := readTrace(t, context.Background(), tc.args, ReadOptions{Sequential: true})
			ahead := readTrace(t, context.Background(), tc.args, ReadOptions{})
			goroutinesSettle(t, before)
			if tc.wantErr == "" && seq.err != nil || tc.wantErr != "" && (seq.err == nil || !strings.Contains(seq.err.Error(), tc.wantErr)) {
				t.Fatalf("sequential read: error %v, want %q", seq.err, tc.wantErr)
			}
			if (seq.sum.Torn != nil) != tc.torn {
				t.Fatalf("sequential read: torn %v, want %v", seq.sum.Torn, tc.torn)
			}
			if len(seq.lines) < 2*batchItems {
				t.Fatalf("only %d calls: want several batches", len(seq.lines))
			}
			if n := ahead.sum.Messages; int64(ahead.decoded) != n {
				t.Fatalf("read ahead: %d of %d messages came decoded, want all", ahead.decoded, n)
			}
			if fmt.Sprint(ahead.err) != fmt.Sprint(seq.err) {
				t.Fatalf("read ahead: error %v, sequential %v", ahead.err, seq.err)
			}
			if len(ahead.lines) != len(seq.lines) {
				t.Fatalf("read ahead: %d calls, sequential %d", len(ahead.lines), len(seq.lines))
			}
			for i := range seq.lines {
				if ahead.lines[i] != seq.lines[i] {
					t.Fatalf("call %d:\nread ahead %.200s\nsequential %.200s", i, ahead.lines[i], seq.lines[i])
				}
			}
			if got, want := fmt.Sprintf("%+v", ahead.sum), fmt.Sprintf("%+v", seq.sum); got != want {
				t.Fatalf("read ahead: summary\n%s\nsequential\n%s", got, want)
			}
		})
	}
}

// TestReadAheadStopsEarly stops reading from the handler, by an error or
// by cancelling the context, at several points: ReadSources returns that
// error once the reading goroutine has ended, having passed on exactly the
// messages a sequential read passes on.
func TestReadAheadStopsEarly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.aaep")
	recs := pipelineRecords(t)
	writeRecords(t, path, recs)
	stopErr := errors.New("handler had enough")
	var messages int64
	for _, r := range recs {
		if r.Kind == capfile.KindReceived || r.Kind == capfile.KindSent {
			messages++
		}
	}
	for _, at := range []int64{0, 1, batchItems - 1, batchItems, 3*batchItems + 17, int64(len(recs)) - 50} {
		for _, how := range []string{"error", "cancel"} {
			t.Run(fmt.Sprintf("%s at message %d", how, at), func(t *testing.T) {
				before := runtime.NumGoroutine()
				run := func(opts ReadOptions) (int64, Summary, error) {
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					var seen int64
					sum, err := readSources(ctx, []*Part{filePart(path)}, opts, Handler{
						Message: func(m *protocol.Message) error {
							seen++
							if m.Index < at {
								return nil
							}
							if how == "cancel" {
								cancel()
								return nil
							}
							return stopErr
						},
						Conn: func(*protocol.Conn) {},
					})
					return seen, sum, err
				}
				seen, sum, err := run(ReadOptions{})
				goroutinesSettle(t, before)
				want := error(stopErr)
				if how == "cancel" {
					want = context.Canceled
				}
				// A cancellation too near the end may find every message
				// already read and passed on, as a sequential read may.
				lateCancel := how == "cancel" && err == nil && seen == messages
				if !errors.Is(err, want) && !lateCancel {
					t.Fatalf("error %v, want %v", err, want)
				}
				if sum.Messages != seen {
					t.Fatalf("Summary.Messages %d, handler saw %d", sum.Messages, seen)
				}
				if how == "error" {
					sseen, ssum, serr := run(ReadOptions{Sequential: true})
					if !errors.Is(serr, stopErr) || sseen != seen || ssum.Messages != sum.Messages || ssum.Skipped != sum.Skipped {
						t.Fatalf("read ahead: %d messages (summary %d, skipped %d); sequential %d (%d, %d), %v",
							seen, sum.Messages, sum.Skipped, sseen, ssum.Messages, ssum.Skipped, serr)
					}
				} else if seen > int64(at)+1+batchesInFlight*batchItems {
					// The handler side notices the cancellation at the next batch.
					t.Fatalf("%d messages passed on after cancelling at %d", seen-at-1, at)
				}
			})
		}
	}
}

// TestReadAheadCancelledBeforeReading gives ReadSources a context that has
// already ended: nothing is passed on.
func TestReadAheadCancelledBeforeReading(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.aaep")
	writeRecords(t, path, pipelineRecords(t))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	before := runtime.NumGoroutine()
	tr := readTrace(t, ctx, []string{path}, ReadOptions{})
	goroutinesSettle(t, before)
	if !errors.Is(tr.err, context.Canceled) || len(tr.lines) != 0 || tr.sum.Messages != 0 {
		t.Fatalf("error %v, %d calls, %d messages; want context.Canceled and nothing", tr.err, len(tr.lines), tr.sum.Messages)
	}
}

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// TestReadAheadIsBounded holds the first message in the handler and
// watches how far reading gets meanwhile: a few batches, not the input.
func TestReadAheadIsBounded(t *testing.T) {
	const lines = 100_000
	var in bytes.Buffer
	for i := range lines {
		fmt.Fprintf(&in, `{"type":"aaep:agent.output","session_id":"sess_%d","text":"line %d"}`+"\n", i%10, i)
	}
	size := int64(in.Len())
	cr := &countingReader{r: &in}
	release := make(chan struct{})
	stalled := make(chan int64)
	var n int64
	done := make(chan error)
	go func() {
		_, err := readSources(context.Background(), []*Part{stdinPart(cr)}, ReadOptions{}, Handler{Message: func(m *protocol.Message) error {
			if m.Index != n {
				return fmt.Errorf("message %d arrived as number %d", m.Index, n)
			}
			n++
			if n == 1 {
				<-release
			}
			return nil
		}})
		done <- err
	}()
	go func() {
		// Wait until reading stops making progress while the handler holds.
		last := int64(-1)
		for {
			time.Sleep(100 * time.Millisecond)
			cur := cr.n.Load()
			if cur == last {
				stalled <- cur
				return
			}
			last = cur
		}
	}()
	read := <-stalled
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n != lines {
		t.Fatalf("%d messages, want %d", n, lines)
	}
	// The batches hold at most batchesInFlight*batchItems lines, plus what
	// the line reader buffers.
	bound := int64(batchesInFlight*batchItems*(len(`{"type":"aaep:agent.output","session_id":"sess_0","text":"line 100000"}`)+1)) + 1<<20
	if read > bound || read >= size {
		t.Fatalf("read %d of %d bytes while the handler held the first message; want at most %d", read, size, bound)
	}
}

// TestReadAheadOfOwnReader: ReadAhead passes on what a caller's own reader
// gives it as it gave it, every message decoded, then the reader's error;
// a handler that fails stops the reader, and no goroutine is left.
func TestReadAheadOfOwnReader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.aaep")
	writeRecords(t, path, pipelineRecords(t))
	seq := readTrace(t, context.Background(), []string{path}, ReadOptions{Sequential: true})
	if seq.err != nil || len(seq.lines) < 2*batchItems {
		t.Fatalf("sequential read: %d lines, %v", len(seq.lines), seq.err)
	}
	readErr := errors.New("the reader's own error")
	before := runtime.NumGoroutine()
	own := func(stopAfter int64) func(context.Context, Handler) error {
		return func(ctx context.Context, h Handler) error {
			var n int64
			inner := h
			inner.Message = func(m *protocol.Message) error {
				if n++; n > stopAfter {
					return readErr
				}
				return h.Message(m)
			}
			_, err := readSources(ctx, []*Part{filePart(path)}, ReadOptions{Sequential: true}, inner)
			return err
		}
	}
	var tr trace
	err := ReadAhead(context.Background(), nil, tr.handler(), own(seq.sum.Messages))
	if err != nil || strings.Join(tr.lines, "\n") != strings.Join(seq.lines, "\n") || int64(tr.decoded) != seq.sum.Messages {
		t.Fatalf("ReadAhead: %d lines (%d decoded), %v; sequential: %d lines, %d messages", len(tr.lines), tr.decoded, err, len(seq.lines), seq.sum.Messages)
	}
	// The reader's error comes after everything it read before it.
	tr = trace{}
	if err := ReadAhead(context.Background(), nil, tr.handler(), own(300)); !errors.Is(err, readErr) || tr.decoded != 300 {
		t.Fatalf("reader failing after 300 messages: %d passed on, %v", tr.decoded, err)
	}
	// A handler that fails stops the reading.
	stopErr := errors.New("handler had enough")
	var seen int
	err = ReadAhead(context.Background(), nil, Handler{
		Message: func(*protocol.Message) error {
			if seen++; seen == 10 {
				return stopErr
			}
			return nil
		},
	}, own(seq.sum.Messages))
	if !errors.Is(err, stopErr) || seen != 10 {
		t.Fatalf("handler failing at 10: %d seen, %v", seen, err)
	}
	goroutinesSettle(t, before)
}
