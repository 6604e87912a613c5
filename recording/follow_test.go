package recording

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/protocol"
)

// TestFollowing reads a capture while a capfile.Writer appends to it: each
// message is handed on once as it is flushed, Report runs when reading has
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
	live, err := rec.Following(Follow{Poll: 2 * time.Millisecond, Report: func() { idle <- n }})
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

// TestFollowingReportsWhileBehind: a reader slower than the recorder (a
// handler that takes its time over a backlog) still reports now and then,
// before it has caught up.
func TestFollowingReportsWhileBehind(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live.aaep")
	w, err := capfile.Create(path, capfile.Header{Start: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Tool: "test"}, &capfile.WriterOptions{FlushInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// 300 messages of 2 KiB that zstd cannot shrink: the reader reads
	// them in several reads of the file.
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 300
	for i := range n {
		junk := make([]byte, 1024)
		for k := range junk {
			junk[k] = byte(rng.Uint32())
		}
		p := fmt.Sprintf(`{"session_id":"sess_1","seq":%d,"junk":"%x"}`, i, junk)
		if err := w.Append(&capfile.Record{Kind: capfile.KindReceived, Time: int64(i), Session: "sess_1", Payload: []byte(p)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	recs, err := Open(context.Background(), []string{path}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var read int64
	var behind []int64 // reports made before every message was handled
	caught := make(chan struct{})
	live, err := recs[0].Following(Follow{Poll: 2 * time.Millisecond, Report: func() {
		if read < n {
			behind = append(behind, read)
		} else {
			select {
			case caught <- struct{}{}:
			default:
			}
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := live.Read(ctx, ReadOptions{}, Handler{Message: func(m *protocol.Message) error {
			time.Sleep(time.Millisecond) // slower than the recorder
			read++
			return nil
		}})
		done <- err
	}()
	select {
	case <-caught:
	case <-time.After(30 * time.Second):
		t.Fatal("never caught up")
	}
	cancel()
	<-done
	if len(behind) == 0 {
		t.Fatal("no report while behind the recorder")
	}
	t.Logf("reports while behind, at %v messages", behind)
}
