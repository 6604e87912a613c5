package recording

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/protocol"
)

// TestFollowing reads a capture while a capfile.Writer appends to it: each
// message is handed on once as it is flushed, Idle runs when reading has
// caught up, readers of the recording itself seek with the follower's
// index, and the read ends when the writer closes the capture.
func TestFollowing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live.aaep")
	w, err := capfile.Create(path, capfile.Header{Start: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Tool: "test"}, &capfile.WriterOptions{FlushInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	appendN := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			p := fmt.Sprintf(`{"aaep_version":"1.0","session_id":"sess_%d","seq":%d}`, i%2, i)
			if err := w.Append(&capfile.Record{Kind: capfile.KindReceived, Time: int64(i) * int64(time.Millisecond), Session: fmt.Sprintf("sess_%d", i%2), Payload: []byte(p)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	appendN(0, 5)
	recs, err := Open(context.Background(), []string{path}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := recs[0]
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	idle := make(chan int64, 16)
	var n int64
	live, err := rec.Following(Follow{Poll: 2 * time.Millisecond, Idle: func() { idle <- n }})
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		sum Summary
		err error
	}
	done := make(chan result, 1)
	var seen []int64
	go func() {
		sum, err := live.Read(ctx, ReadOptions{}, Handler{Message: func(m *protocol.Message) error {
			seen = append(seen, m.Index)
			n++
			return nil
		}})
		done <- result{sum, err}
	}()
	caught := func(want int64) {
		t.Helper()
		for {
			select {
			case got := <-idle:
				if got == want {
					return
				}
				if got > want {
					t.Fatalf("caught up at %d messages, want %d", got, want)
				}
			case <-ctx.Done():
				t.Fatalf("never caught up at %d messages", want)
			}
		}
	}
	caught(5)
	// A reader of the recording itself seeks with the follower's index.
	rd, err := rec.Records(ctx)
	if err != nil {
		t.Fatal(err)
	}
	x, err := rd.FileIndex()
	if err != nil || x.Records != 5 || len(x.Sessions) != 2 {
		t.Fatalf("index while followed: %+v, %v", x, err)
	}
	if err := rd.SeekRecord(3); err != nil {
		t.Fatal(err)
	}
	if _, err := rd.Next(); err != nil || rd.Index() != 3 {
		t.Fatalf("seek to record 3: %d, %v", rd.Index(), err)
	}
	rd.Close()
	appendN(5, 12)
	caught(12)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.err != nil || res.sum.Messages != 12 || res.sum.Torn != nil {
		t.Fatalf("followed read: %+v, %v", res.sum, res.err)
	}
	for i, k := range seen {
		if k != int64(i) {
			t.Fatalf("message %d has index %d: each once, in order", i, k)
		}
	}
}

// TestFollowingRefused: only one local capture can be followed.
func TestFollowingRefused(t *testing.T) {
	dir := t.TempDir()
	jl := filepath.Join(dir, "a.jsonl")
	if err := os.WriteFile(jl, []byte(`{"aaep_version":"1.0"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	recs, err := Open(context.Background(), []string{jl}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := recs[0].Following(Follow{}); err == nil {
		t.Error("Following a JSON Lines file: no error")
	}
}
