package capfile

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// liveRead is one result of a live reader's Next, its record copied.
type liveRead struct {
	rec Record
	err error
}

// readLive reads r on a goroutine of its own until an error, sending each
// record and the final error.
func readLive(r *Reader) <-chan liveRead {
	out := make(chan liveRead, 1024)
	go func() {
		defer close(out)
		for {
			rec, err := r.Next()
			if err != nil {
				out <- liveRead{err: err}
				return
			}
			out <- liveRead{rec: cloneRecord(rec)}
		}
	}()
	return out
}

// followFile reads path with a live reader until the test ends (readLive).
func followFile(t *testing.T, path string) <-chan liveRead {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r, err := OpenLive(ctx, path, &LiveOptions{Poll: 2 * time.Millisecond})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	c := readLive(r)
	t.Cleanup(func() {
		cancel()
		for range c {
		}
		r.Close()
	})
	return c
}

// expect receives n records from c within a bound and returns them.
func expect(t *testing.T, c <-chan liveRead, n int) []Record {
	t.Helper()
	var got []Record
	deadline := time.After(20 * time.Second)
	for len(got) < n {
		select {
		case x, ok := <-c:
			if !ok || x.err != nil {
				t.Fatalf("live reader ended after %d of %d records: %v", len(got), n, x.err)
			}
			got = append(got, x.rec)
		case <-deadline:
			t.Fatalf("live reader returned %d of %d records", len(got), n)
		}
	}
	return got
}

// nothingFor asserts that c yields nothing for d (the reader waits).
func nothingFor(t *testing.T, c <-chan liveRead, d time.Duration) {
	t.Helper()
	select {
	case x := <-c:
		t.Fatalf("live reader returned %+v (error %v) before the writer wrote it", x.rec.Payload, x.err)
	case <-time.After(d):
	}
}

func TestLiveReaderFollowsWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live.aaep")
	// Small frames, so that the capture grows by several frames.
	w, err := Create(path, testHeader(), &WriterOptions{FrameSize: 4 << 10, FlushInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	if !BeingWritten(path) {
		t.Fatal("BeingWritten = false for a capture its writer holds open")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The index is read where Next runs: in Report, each time the reader
	// has caught up.
	var (
		mu   sync.Mutex
		last *Index
		r    *Reader
	)
	r, err = OpenLive(ctx, path, &LiveOptions{Poll: 5 * time.Millisecond, Report: func() {
		x, err := r.FileIndex()
		if err != nil {
			t.Error(err)
		}
		mu.Lock()
		last = x
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	index := func() *Index {
		mu.Lock()
		defer mu.Unlock()
		return last
	}
	defer r.Close()
	c := readLive(r)
	want := genRecords(3, 300, 4, time.Millisecond)
	var got []Record
	for i := 0; i < len(want); i += 50 {
		for k := i; k < i+50; k++ {
			if err := w.Append(&want[k]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		got = append(got, expect(t, c, 50)...)
	}
	equalRecords(t, got, want)
	var x *Index
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if x = index(); x != nil && x.Records == 300 || time.Now().After(deadline) {
			break
		}
	}
	if x == nil {
		t.Fatal("Report was never called")
	}
	if x.Records != 300 || len(x.Frames) < 3 || len(x.Sessions) != 4 {
		t.Fatalf("live index: %d records, %d frames, %d sessions; want 300, at least 3, 4", x.Records, len(x.Frames), len(x.Sessions))
	}
	var inSessions int64
	for _, s := range x.Sessions {
		inSessions += s.Records
	}
	if inSessions != 300 || x.LastTime() != want[299].Time || x.FirstTime() != want[0].Time {
		t.Errorf("live index: sessions hold %d records, times %d..%d; want 300, %d..%d", inSessions, x.FirstTime(), x.LastTime(), want[0].Time, want[299].Time)
	}
	// The index serves a plain reader of the file as it is now: it seeks
	// with it instead of rebuilding one.
	pr, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	pr.UseIndex(x)
	if err := pr.SeekRecord(250); err != nil {
		t.Fatal(err)
	}
	rec, err := pr.Next()
	if err != nil || pr.Index() != 250 || string(rec.Payload) != string(want[250].Payload) {
		t.Fatalf("seek through the live index: record %d, %v", pr.Index(), err)
	}
	// A plain reader meets the end of what was written: being written,
	// not torn.
	for err == nil {
		_, err = pr.Next()
	}
	if !IsTorn(err) || !IsLive(err) {
		t.Fatalf("plain reader's end of a capture being written: %v, want one that IsLive", err)
	}
	if s := err.Error(); s != "capfile: capture being written (its recorder holds it open): 300 records so far, the rest still to come" {
		t.Errorf("its message: %q", s)
	}
	if fail, warn := (ReadPolicy{}).Judge(err, 0); fail != nil || warn == nil {
		t.Errorf("Judge(being written) = %v, %v; want a warning", fail, warn)
	}
	pr.Close()

	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if BeingWritten(path) {
		t.Error("BeingWritten = true after Close")
	}
	select {
	case x := <-c:
		if x.err != io.EOF || !r.Clean() {
			t.Fatalf("live reader after Close: %v, clean %v; want io.EOF, clean", x.err, r.Clean())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("live reader did not see the clean end")
	}
}

// splitFile is a capture's file that writes each write in two halves,
// waiting between them until released: a write in progress, torn at any
// byte, as a reader sees it.
type splitFile struct {
	f       *os.File
	held    chan struct{} // receives when a first half is written
	release chan struct{}
	split   bool
}

func (s *splitFile) Write(p []byte) (int, error) {
	if !s.split || len(p) < 2 {
		return s.f.Write(p)
	}
	h := len(p) / 2
	if n, err := s.f.Write(p[:h]); err != nil {
		return n, err
	}
	s.held <- struct{}{}
	<-s.release
	n, err := s.f.Write(p[h:])
	return h + n, err
}

func (s *splitFile) SyscallConn() (syscall.RawConn, error) { return s.f.SyscallConn() }

func TestLiveReaderWaitsOutTornWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live.aaep")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sf := &splitFile{f: f, held: make(chan struct{}), release: make(chan struct{})}
	w, err := NewWriter(sf, testHeader(), &WriterOptions{FlushInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	c := followFile(t, path)
	want := genRecords(9, 20, 2, time.Millisecond)
	for i := range 10 {
		if err := w.Append(&want[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	got := expect(t, c, 10)
	// The next flush is written in two halves: the reader sees half a
	// block, which is not yet a record and not damage.
	sf.split = true
	for i := 10; i < 20; i++ {
		if err := w.Append(&want[i]); err != nil {
			t.Fatal(err)
		}
	}
	flushed := make(chan error, 1)
	go func() { flushed <- w.Flush() }()
	<-sf.held
	nothingFor(t, c, 100*time.Millisecond)
	close(sf.release)
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	got = append(got, expect(t, c, 10)...)
	equalRecords(t, got, want)
	sf.split = false
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if x := <-c; x.err != io.EOF {
		t.Fatalf("after Close: %v, want io.EOF", x.err)
	}
}

func TestLiveReaderWriterGone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live.aaep")
	w, err := Create(path, testHeader(), &WriterOptions{FlushInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	want := genRecords(5, 30, 3, time.Millisecond)
	for i := range want {
		if err := w.Append(&want[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	c := followFile(t, path)
	equalRecords(t, expect(t, c, 30), want)
	nothingFor(t, c, 50*time.Millisecond)
	// The writer's file closes without Close (as a killed process's does):
	// the mark goes, and the end is a torn tail.
	w.file.Close()
	x := <-c
	if !IsTorn(x.err) || IsLive(x.err) {
		t.Fatalf("live reader's end once the writer is gone: %v, want a torn tail, not live", x.err)
	}
	if BeingWritten(path) {
		t.Error("BeingWritten = true for a file nobody writes")
	}
}

func TestLiveReaderCancelled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live.aaep")
	w, err := Create(path, testHeader(), &WriterOptions{FlushInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	r, err := OpenLive(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c := readLive(r)
	nothingFor(t, c, 20*time.Millisecond)
	cancel()
	if x := <-c; !errors.Is(x.err, context.Canceled) {
		t.Fatalf("live reader after its context ended: %v", x.err)
	}
	if _, err := OpenLive(ctx, path, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("OpenLive with an ended context: %v", err)
	}
}
