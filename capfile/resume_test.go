package capfile

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// readResuming reads every record of r, going on after damage with Resume,
// and returns the records and the gaps skipped.
func readResuming(t *testing.T, r *Reader) ([]Record, []DroppedRange) {
	t.Helper()
	var recs []Record
	var gaps []DroppedRange
	for {
		rec, err := r.Next()
		if err == nil {
			recs = append(recs, cloneRecord(rec))
			continue
		}
		if err == io.EOF {
			return recs, gaps
		}
		gap, rerr := r.Resume()
		if rerr != nil && rerr != io.EOF {
			t.Fatalf("Resume after %v: %v", err, rerr)
		}
		gaps = append(gaps, gap)
		if rerr == io.EOF {
			return recs, gaps
		}
		if len(gaps) > 100 {
			t.Fatal("Resume makes no progress")
		}
	}
}

// TestResumeAsRepair: reading on with Resume after damage yields the
// records repair keeps, in order, and skips the byte ranges repair drops,
// for damage in the middle of a closed file, in a file without its index,
// and a torn tail (which ends the reading as a clean end would).
func TestResumeAsRepair(t *testing.T) {
	data, recs, x, _ := goldenLayout(t)
	if len(x.Frames) < 4 {
		t.Fatalf("the golden file has %d frames, want 4 or more", len(x.Frames))
	}
	last := x.Frames[len(x.Frames)-1]
	indexOff := last.Offset + last.Size
	f2, f3 := x.Frames[1], x.Frames[2]
	mid := func(f FrameInfo) int64 { return f.Offset + f.Size/2 }
	for _, c := range []struct {
		name string
		data []byte
		gaps int
	}{
		{"damage in a frame, index intact", flipBit(data, mid(f2)), 1},
		{"two damaged frames", flipBit(flipBit(data, mid(f2)), mid(f3)), 2},
		{"damage in a frame, no index", flipBit(data[:indexOff], mid(f2)), 2}, // and the missing index
		{"torn inside a frame", data[:mid(f3)], 1},
		{"damaged index", flipBit(data, indexOff+20), 1}, // no record lost
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "src.aaep")
			if err := os.WriteFile(src, c.data, 0o644); err != nil {
				t.Fatal(err)
			}
			rep, err := Repair(src, filepath.Join(dir, "fixed.aaep"))
			if err != nil {
				t.Fatal(err)
			}
			want, err := readAll(openers["file"](t, filepath.Join(dir, "fixed.aaep")))
			if err != nil {
				t.Fatal(err)
			}
			got, gaps := readResuming(t, openers["file"](t, src))
			equalRecords(t, got, want)
			if len(got) >= len(recs) && c.name != "damaged index" {
				t.Errorf("read all %d records of a damaged file", len(got))
			}
			if len(gaps) != c.gaps {
				t.Errorf("%d gaps %+v, want %d", len(gaps), gaps, c.gaps)
			}
			for i, g := range gaps {
				if i >= len(rep.Dropped) || g.Offset != rep.Dropped[i].Offset || g.Length != rep.Dropped[i].Length {
					t.Errorf("gap %d: %+v; repair dropped %+v", i, g, rep.Dropped)
				}
				if g.Reason == "" {
					t.Errorf("gap %d says nothing of what was wrong", i)
				}
			}
		})
	}
}

// A streaming reader cannot skip: Resume returns the damage again.
func TestResumeStreamCannotSkip(t *testing.T) {
	data, _, x, _ := goldenLayout(t)
	f := x.Frames[1]
	path := filepath.Join(t.TempDir(), "c.aaep")
	if err := os.WriteFile(path, flipBit(data, f.Offset+f.Size/2), 0o644); err != nil {
		t.Fatal(err)
	}
	r := openers["stream"](t, path)
	_, err := readAll(r)
	if err == nil {
		t.Fatal("no damage found")
	}
	if _, rerr := r.Resume(); rerr != err {
		t.Errorf("Resume of a stream: %v, want the damage %v", rerr, err)
	}
}
