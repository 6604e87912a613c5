package recording

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/objstore/s3test"
)

// An object's index is fetched once however often the object is opened,
// as long as the indexes kept stay within indexBudget: past it, those of
// the objects opened least recently are dropped, and fetched again when
// they are opened again.
func TestIndexKeptWithinBudget(t *testing.T) {
	srv := s3test.Start(t, "caps")
	srv.SetEnv(t)
	dir := t.TempDir()
	for _, name := range []string{"a", "b", "c"} {
		path := filepath.Join(dir, name+".aaep")
		w, err := capfile.Create(path, capfile.Header{Start: time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC), Tool: "layouts-test/1"}, &capfile.WriterOptions{FlushInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		// Payloads that do not compress: the object is larger than
		// the tail objstore.Remote fetches for the index (512 KiB), so
		// the index and the first records are two requests.
		rng := rand.New(rand.NewPCG(1, uint64(name[0])))
		for i := 0; i < 300; i++ {
			raw := make([]byte, 2<<10)
			for j := 0; j < len(raw); j += 8 {
				binary.LittleEndian.PutUint64(raw[j:], rng.Uint64())
			}
			pad := []byte(hex.EncodeToString(raw))
			r := capfile.Record{Kind: capfile.KindReceived, Time: int64(i) * int64(10*time.Millisecond), Payload: pad}
			if err := w.Append(&r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Put("caps", "fleet/"+name+".aaep", data); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	recs, err := Open(ctx, []string{"s3://caps/fleet/"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 {
		t.Fatalf("%d recordings, want 3", len(recs))
	}
	// open reads the recording's first record and says how many
	// requests that took.
	open := func(r *Recording) int64 {
		t.Helper()
		p := r.Parts[0]
		before := p.RemoteStats().Requests
		rd, err := r.Records(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer rd.Close()
		if x, err := rd.FileIndex(); err != nil || x.Records != 300 {
			t.Fatalf("%s: index %+v, %v", p.Name, x, err)
		}
		if rec, err := rd.Next(); err != nil || rec.Time != 0 {
			t.Fatalf("%s: first record %+v, %v", p.Name, rec, err)
		}
		return p.RemoteStats().Requests - before
	}
	// Room for the index of one object.
	setBudget := func(b int64) (old int64) {
		keptIndexes.mu.Lock()
		defer keptIndexes.mu.Unlock()
		old, indexBudget = indexBudget, b
		return old
	}
	defer setBudget(setBudget(1))
	// Each object opened once: its index and its first records.
	for _, r := range recs {
		if n := open(r); n != 2 {
			t.Errorf("first open of %s: %d requests, want 2 (the index, the records)", r.Name, n)
		}
	}
	// c's index is kept: the records only.
	if n := open(recs[2]); n != 1 {
		t.Errorf("c again: %d requests, want 1 (its records; the index kept)", n)
	}
	// a's was dropped for b's: fetched again.
	if n := open(recs[0]); n != 2 {
		t.Errorf("a again: %d requests, want 2 (its index was dropped)", n)
	}
	// With room for all three, nothing is fetched twice.
	setBudget(32 << 20)
	for _, r := range recs {
		open(r)
	}
	for _, r := range recs {
		if n := open(r); n != 1 {
			t.Errorf("%s with room for every index: %d requests, want 1", r.Name, n)
		}
	}
}

// A local file's stored index is decoded once while the file stays the
// same (readers share it); a file changed since (rewritten, of the same
// size or not) is read afresh, its new index and records.
func TestLocalIndexReadOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "local.aaep")
	write := func(n int, payload string) {
		t.Helper()
		w, err := capfile.Create(path+".tmp", capfile.Header{Start: time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC), Tool: "layouts-test/1"}, &capfile.WriterOptions{FlushInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			r := capfile.Record{Kind: capfile.KindReceived, Time: int64(i), Session: "s", Payload: []byte(payload)}
			if err := w.Append(&r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".tmp", path); err != nil {
			t.Fatal(err)
		}
	}
	write(10, `{"a":1}`)
	ctx := context.Background()
	recs, err := Open(ctx, []string{path}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// open returns the index a new reader holds and its first payload.
	open := func() (*capfile.Index, string) {
		t.Helper()
		rd, err := recs[0].Records(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer rd.Close()
		x, err := rd.FileIndex()
		if err != nil {
			t.Fatal(err)
		}
		rec, err := rd.Next()
		if err != nil {
			t.Fatal(err)
		}
		return x, string(rec.Payload)
	}
	x1, p1 := open()
	x2, p2 := open()
	if x1 != x2 || p1 != `{"a":1}` || p2 != p1 {
		t.Errorf("the same file opened twice: indexes %p and %p (want one), payloads %q %q", x1, x2, p1, p2)
	}
	// Rewritten, the same size: its own index and records.
	write(10, `{"a":2}`)
	x3, p3 := open()
	if x3 == x1 || p3 != `{"a":2}` || x3.Records != 10 {
		t.Errorf("the file rewritten: index %p (%d records; before %p), payload %q", x3, x3.Records, x1, p3)
	}
	// Grown: likewise.
	write(12, `{"a":3}`)
	x4, p4 := open()
	if x4 == x3 || p4 != `{"a":3}` || x4.Records != 12 {
		t.Errorf("the file grown: index %p (%d records), payload %q", x4, x4.Records, p4)
	}
}
