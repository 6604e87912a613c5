package capfile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/aaep-tools/aaepkit/internal/testdeps"
)

// writeLive writes a capture as a live recorder at 10 events/s does (a
// timed flush after each record) to path and returns its records.
func writeLive(t *testing.T, path string, n int) []Record {
	t.Helper()
	if err := os.WriteFile(path, liveLayout(t, n, true), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	recs, err := readAll(r)
	if err != nil || len(recs) != n {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	return recs
}

func TestCompactKeepsEveryRecord(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "live.aaep")
	want := writeLive(t, path, 300)
	r0, _ := Open(path)
	hdr := r0.Header()
	r0.Close()
	before, after, err := Compact(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() != after || after >= before-before/compactWorth {
		t.Errorf("sizes %d -> %d, the file has %d", before, after, st.Size())
	}
	if st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", st.Mode().Perm())
	}
	t.Logf("%d records: %d -> %d bytes (%.1f -> %.1f B/record)", len(want), before, after, float64(before)/300, float64(after)/300)
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := readAll(r)
	if err != nil {
		t.Fatalf("compacted capture: %v", err)
	}
	equalRecords(t, got, want)
	if !r.Clean() {
		t.Error("the compacted capture does not end cleanly")
	}
	if h := r.Header(); !reflect.DeepEqual(h, hdr) {
		t.Errorf("header %+v, want %+v", h, hdr)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("directory holds %d entries, want the capture alone", len(ents))
	}
}

// TestCompactFramesOfAMegabyte: records past the 256 KiB window stay in
// one frame (history runs on; a new frame would start without any), and
// the frame's window is still the spare low-rate encoder's 256 KiB, so
// compacting takes no encoder of its own.
func TestCompactFramesOfAMegabyte(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live.aaep")
	want := writeLive(t, path, 1500)
	if _, _, err := Compact(path); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := readAll(r)
	if err != nil {
		t.Fatalf("compacted capture: %v", err)
	}
	equalRecords(t, got, want)
	lay, indexed := r.Layout()
	if !indexed {
		t.Fatal("the compacted capture has no stored index")
	}
	frames := lay.Index().Frames
	var raw int64
	for _, f := range frames {
		raw += f.RawSize
	}
	if raw <= lowRateWindow || raw >= DefaultFrameSize {
		t.Fatalf("the records take %d bytes; the test needs more than the window, less than a frame", raw)
	}
	if len(frames) != 1 {
		t.Errorf("%d frames for %d bytes of records, want 1", len(frames), raw)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	head := make([]byte, zstd.HeaderMaxSize)
	if _, err := f.ReadAt(head, frames[0].Offset); err != nil {
		t.Fatal(err)
	}
	var zh zstd.Header
	if err := zh.Decode(head); err != nil {
		t.Fatal(err)
	}
	if zh.WindowSize > lowRateWindow {
		t.Errorf("the frame's window is %d bytes, want at most %d (the spare encoder's)", zh.WindowSize, lowRateWindow)
	}
}

func TestCompactFollowsLink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.aaep")
	want := writeLive(t, real, 100)
	link := filepath.Join(dir, "link.aaep")
	if err := os.Symlink("real.aaep", link); err != nil {
		testdeps.Missing(t, "symbolic links (os.Symlink; on Windows, Developer Mode or the create-symlink privilege)", err)
	}
	if _, _, err := Compact(link); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link is no longer a link: %v %v", st, err)
	}
	r, err := Open(real)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := readAll(r)
	if err != nil {
		t.Fatal(err)
	}
	equalRecords(t, got, want)
}

// TestCompactLeavesAlone: a capture that would not get smaller, a torn
// one and one being written are left byte for byte as they were, and no
// temporary file stays.
func TestCompactLeavesAlone(t *testing.T) {
	dir := t.TempDir()
	bulk := filepath.Join(dir, "bulk.aaep")
	if err := os.WriteFile(bulk, liveLayout(t, 300, false), 0o644); err != nil {
		t.Fatal(err)
	}
	torn := filepath.Join(dir, "torn.aaep")
	writeLive(t, torn, 100)
	b, _ := os.ReadFile(torn)
	if err := os.WriteFile(torn, b[:len(b)-100], 0o644); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(dir, "open.aaep")
	w, err := Create(open, testHeader(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Append(&Record{Kind: KindReceived, Payload: []byte(`{"type":"x"}`)}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path, want string
	}{{bulk, "would not save"}, {torn, "torn"}, {open, "being written"}} {
		old, _ := os.ReadFile(c.path)
		_, _, err := Compact(c.path)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", filepath.Base(c.path), err, c.want)
		}
		if c.path == bulk && !errors.Is(err, ErrNotWorth) {
			t.Errorf("bulk: %v is not ErrNotWorth", err)
		}
		if now, _ := os.ReadFile(c.path); !bytes.Equal(now, old) {
			t.Errorf("%s changed", filepath.Base(c.path))
		}
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("%s left behind", e.Name())
		}
	}
}

// TestCompactLeavesItsDecoder: Compact closes the reader it reads with, so
// that its decoder (about 1 MiB with its buffers, once used) goes back to
// the pool for the next: a recorder compacts a part every few seconds.
// With one P and the collector off, what the pool holds is deterministic,
// except that the race detector drops a quarter of what is put in a pool:
// so up to 10 tries, of which one must leave it (never, without the close).
func TestCompactLeavesItsDecoder(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.aaep")
	writeLive(t, src, 50)
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "part.aaep")
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	for range 10 {
		if err := os.WriteFile(p, b, 0o640); err != nil {
			t.Fatal(err)
		}
		for decoders.Get() != nil { // empty the pool
		}
		if _, _, err := Compact(p); err != nil {
			t.Fatal(err)
		}
		if d, _ := decoders.Get().(*decoder); d != nil {
			return
		}
	}
	t.Fatal("Compact left no decoder in the pool")
}
