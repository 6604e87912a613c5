package recorder

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/outfile"
	"github.com/aaep-tools/aaepkit/transport"
)

func connEvent(t int64, event string) *transport.Message {
	return &transport.Message{Kind: capfile.KindConn, Time: t, Payload: []byte(`{"event":"` + event + `"}`), Conn: &transport.ConnEvent{Event: event}}
}

// TestNothingRecordedLeavesNoFile: a capture whose sources never connected
// (only failures were recorded) leaves no file, and no temporary one.
func TestNothingRecordedLeavesNoFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.aaep")
	r, _ := newTest(t, Config{Path: path})
	emit := r.Emit(0)
	for i, ev := range []string{capfile.ConnFailed, capfile.ConnFailed, capfile.ConnGaveUp} {
		if err := emit(connEvent(int64(i), ev)); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("files left: %v", ents)
	}
	if st := r.Stats(); len(st.Files) != 0 {
		t.Errorf("stats list files %v", st.Files)
	}
}

// TestFileAppearsWithFirstConnection: the file is at its path from the first
// connection on (so a killed recorder leaves it), not before.
func TestFileAppearsWithFirstConnection(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.aaep")
	r, _ := newTest(t, Config{Path: path, Writer: capfile.WriterOptions{FlushInterval: -1}})
	emit := r.Emit(0)
	emit(connEvent(0, capfile.ConnFailed))
	waitWritten(t, r, 1)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the file appeared before anything was recorded: %v", err)
	}
	emit(connEvent(1, capfile.ConnConnected))
	waitWritten(t, r, 2)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no file after a connection: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, recs := readAll(t, path); len(recs) != 2 {
		t.Errorf("%d records", len(recs))
	}
}

func waitWritten(t *testing.T, r *Recorder, n int64) {
	t.Helper()
	for i := 0; i < 2000 && r.Stats().Records < n; i++ {
		time.Sleep(5 * time.Millisecond)
	}
	if r.Stats().Records < n {
		t.Fatalf("%d records written, want %d", r.Stats().Records, n)
	}
}

// TestEarlierRecordingKept: an existing non-empty file is refused without
// Force; with Force it is replaced once something is recorded, and kept
// when nothing is.
func TestEarlierRecordingKept(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.aaep")
	os.WriteFile(path, []byte("earlier"), 0o640)
	_, err := New(Config{Path: path, Clock: transport.NewClock()})
	if !errors.Is(err, outfile.ErrExists) || !errors.Is(err, ErrWrite) {
		t.Fatalf("New over an earlier recording: %v, want ErrExists", err)
	}
	r, _ := newTest(t, Config{Path: path, Force: true})
	r.Emit(0)(connEvent(0, capfile.ConnFailed))
	r.Close()
	if got, _ := os.ReadFile(path); string(got) != "earlier" {
		t.Fatalf("a capture that recorded nothing replaced the earlier file")
	}
	r, _ = newTest(t, Config{Path: path, Force: true})
	r.Emit(0)(msg(capfile.KindReceived, 1, `{"type":"x"}`))
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, recs := readAll(t, path); len(recs) != 1 {
		t.Errorf("%d records in the replacing capture", len(recs))
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want the replaced file's 0640", st.Mode().Perm())
	}
	// An input of the capture is never written over, even with Force.
	in := filepath.Join(dir, "in.jsonl")
	os.WriteFile(in, []byte("{}\n"), 0o644)
	if _, err := New(Config{Path: in, Inputs: []string{in}, Force: true, Clock: transport.NewClock()}); !errors.Is(err, outfile.ErrSameFile) {
		t.Errorf("New over its input: %v", err)
	}
}

// TestEarlierRotatedPartsKept: a rotated capture refuses to start over the
// parts of an earlier one (its later parts would be replaced mid-capture).
func TestEarlierRotatedPartsKept(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "run-000003.aaep"), []byte("part 3 of an earlier capture"), 0o644)
	os.WriteFile(filepath.Join(dir, "run-notes.aaep"), []byte("not a part"), 0o644)
	_, err := New(Config{Path: filepath.Join(dir, "run.aaep"), RotateSize: 1 << 20, Clock: transport.NewClock()})
	if !errors.Is(err, outfile.ErrExists) || !strings.Contains(err.Error(), "run-000003.aaep") {
		t.Fatalf("New: %v, want ErrExists naming run-000003.aaep", err)
	}
	r, err := New(Config{Path: filepath.Join(dir, "other.aaep"), RotateSize: 1 << 20, Clock: transport.NewClock()})
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
}

// TestStreamOutputAlwaysFinished: standard output already carries the
// capture's header, so even a capture that recorded nothing is finished
// there (a reader gets a complete, empty capture).
func TestStreamOutputAlwaysFinished(t *testing.T) {
	var buf bytes.Buffer
	r, err := New(Config{Path: "-", Stdout: &buf, Clock: transport.NewClock()})
	if err != nil {
		t.Fatal(err)
	}
	r.Emit(0)(connEvent(0, capfile.ConnFailed))
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	cr, err := capfile.NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		_, err := cr.Next()
		if err != nil {
			if err != io.EOF {
				t.Errorf("end of the capture on stdout: %v", err)
			}
			break
		}
		n++
	}
	if n != 1 {
		t.Errorf("%d records on stdout, want the one failure", n)
	}
}
