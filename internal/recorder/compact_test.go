package recorder

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/transport/transporttest"
)

// TestSlowFileCompactedAtClose: a file whose flushes held a record each is
// written again compactly when it closes (smaller, every record kept, the
// stats' bytes its size); a file written without flushes is left as it was
// (the same file).
func TestSlowFileCompactedAtClose(t *testing.T) {
	for _, tc := range []struct {
		name    string
		flush   time.Duration
		compact bool
	}{{"flushed-each-record", time.Millisecond, true}, {"unflushed", -1, false}} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "slow.aaep")
			r, _ := newTest(t, Config{Path: path, Writer: capfile.WriterOptions{FlushInterval: tc.flush}})
			emit := r.Emit(0)
			if err := emit(connEvent(0, capfile.ConnConnected)); err != nil {
				t.Fatal(err)
			}
			const n = 60
			var want [][]byte
			for i := 1; i <= n; i++ {
				ev := transporttest.Event(i)
				want = append(want, ev)
				if err := emit(msg(capfile.KindReceived, int64(i)*int64(time.Millisecond), string(ev))); err != nil {
					t.Fatal(err)
				}
				waitWritten(t, r, int64(i+1))
				if tc.flush > 0 {
					time.Sleep(4 * tc.flush) // a timed flush per record
				}
			}
			live, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			flushed := r.Stats().FileBytes
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Stats().FileBytes; got != st.Size() {
				t.Errorf("stats say %d bytes, the file has %d", got, st.Size())
			}
			if compacted := !os.SameFile(live, st); compacted != tc.compact {
				t.Errorf("written again: %v, want %v (%d bytes flushed, %d at the end)", compacted, tc.compact, flushed, st.Size())
			}
			if tc.compact && st.Size() >= flushed {
				t.Errorf("compacted to %d bytes, %d as flushed", st.Size(), flushed)
			}
			t.Logf("%d bytes flushed, %d at the end", flushed, st.Size())
			_, recs := readAll(t, path)
			if len(recs) != n+1 {
				t.Fatalf("%d records, want %d", len(recs), n+1)
			}
			for i, rec := range recs[1:] {
				if !bytes.Equal(rec.Payload, want[i]) || rec.Time != int64(i+1)*int64(time.Millisecond) {
					t.Fatalf("record %d: %s at %d", i+1, rec.Payload, rec.Time)
				}
			}
		})
	}
}

// TestCompactedPartCollected: when a rotation closes a part that was
// written again compactly, the recorder has the collector run (and return
// the pages it freed) once the next part is open, instead of letting a
// slow recorder's heap grow to twice what is live.
func TestCompactedPartCollected(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.aaep")
	r, _ := newTest(t, Config{Path: path, RotateEvery: time.Second, Writer: capfile.WriterOptions{FlushInterval: time.Millisecond}})
	emit := r.Emit(0)
	for i := 0; i < 10; i++ { // the first part: a timed flush per record
		if err := emit(msg(capfile.KindReceived, int64(i)*int64(100*time.Millisecond), string(transporttest.Event(i)))); err != nil {
			t.Fatal(err)
		}
		waitWritten(t, r, int64(i+1))
		time.Sleep(4 * time.Millisecond)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	forced := ms.NumForcedGC
	// A record of the next second closes the first part, which is compacted.
	if err := emit(msg(capfile.KindReceived, int64(time.Second), string(transporttest.Event(10)))); err != nil {
		t.Fatal(err)
	}
	waitWritten(t, r, 11)
	if n := len(r.Stats().Files); n != 2 {
		t.Fatalf("%d files, want 2", n)
	}
	deadline := time.Now().Add(30 * time.Second)
	for runtime.ReadMemStats(&ms); ms.NumForcedGC == forced; runtime.ReadMemStats(&ms) {
		if time.Now().After(deadline) {
			t.Fatal("no collection after the compacted part closed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}
