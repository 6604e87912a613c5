package recording

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/protocol"
)

// rotated writes recs as the recorder's rotation does: part k (from 1)
// holds recs[cuts[k-2]:cuts[k-1]], starts at its first record's time and
// names its number and the part before it in its header. It returns the
// parts' paths.
func rotated(t *testing.T, dir, stem, endpoint string, start time.Time, recs []capfile.Record, cuts []int) []string {
	t.Helper()
	bounds := append(append([]int{0}, cuts...), len(recs))
	var paths []string
	for k := 0; k+1 < len(bounds); k++ {
		part := recs[bounds[k]:bounds[k+1]]
		var shift int64
		if k > 0 && len(part) > 0 {
			shift = part[0].Time
		}
		meta := map[string]string{MetaPart: strconv.Itoa(k + 1)}
		if k > 0 {
			meta[MetaPrevious] = filepath.Base(paths[k-1])
		}
		p := filepath.Join(dir, fmt.Sprintf("%s-%06d.aaep", stem, k+1))
		w, err := capfile.Create(p, capfile.Header{Start: start.Add(time.Duration(shift)), Tool: "test",
			Origins: []capfile.Origin{{ID: 0, Transport: "sse", Endpoint: endpoint}}, Meta: meta}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range part {
			r.Time -= shift
			if err := w.Append(&r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// numbered is n records, one every 10 ms, with their number as payload.
func numbered(n int) []capfile.Record {
	recs := make([]capfile.Record, n)
	for i := range recs {
		recs[i] = capfile.Record{Kind: capfile.KindReceived, Time: int64(i) * int64(10*time.Millisecond), Payload: []byte(strconv.Itoa(i))}
	}
	return recs
}

// TestOpenChainsRotatedParts: the parts of two rotated recordings, named in
// any order and mixed, are two recordings, each its parts in order; a
// capture of its own is a third.
func TestOpenChainsRotatedParts(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	a := rotated(t, dir, "a", "http://a/events", start, numbered(30), []int{10, 20})
	b := rotated(t, dir, "b", "http://b/events", start, numbered(12), []int{6})
	solo := filepath.Join(dir, "solo.aaep")
	w, err := capfile.Create(solo, capfile.Header{Start: start, Tool: "test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	for name, names := range map[string][]string{
		"directory": {dir},
		"reversed":  {a[2], b[1], solo, a[1], b[0], a[0]},
		"glob":      {filepath.Join(dir, "*.aaep")},
	} {
		t.Run(name, func(t *testing.T) {
			recs, err := Open(context.Background(), names, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]string{}
			for _, r := range recs {
				if len(r.Problems) > 0 {
					t.Errorf("%s: problems %q", r.Name, r.Problems)
				}
				got[r.Parts[0].Name] = Names([]*Recording{r})
			}
			want := map[string][]string{a[0]: a, b[0]: b, solo: {solo}}
			if fmt.Sprint(got) != fmt.Sprint(want) || len(recs) != 3 {
				t.Errorf("recordings %v, want %v", got, want)
			}
		})
	}
}

// TestOpenNamesMissingAndForeignParts: a part whose previous part was not
// given, and a part that names as its previous part one of another
// recording, are named in the recording's problems.
func TestOpenNamesMissingAndForeignParts(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	run := rotated(t, dir, "run", "http://a/events", start, numbered(30), []int{10, 20})
	recs, err := Open(context.Background(), []string{run[0], run[2]}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || len(recs[1].Problems) != 1 || !strings.Contains(recs[1].Problems[0], run[2]) ||
		!strings.Contains(recs[1].Problems[0], "part 2 (run-000002.aaep) was not given") {
		t.Errorf("part 2 missing: %d recordings, problems %q", len(recs), problemsOf(recs))
	}

	// Another host's part 2 that names run-000001.aaep as its previous part.
	other := t.TempDir()
	stray := rotated(t, other, "run", "http://b/events", start, numbered(20), []int{10})[1]
	moved := filepath.Join(dir, "stray-000002.aaep")
	if err := os.Rename(stray, moved); err != nil {
		t.Fatal(err)
	}
	recs, err = Open(context.Background(), []string{filepath.Join(dir, "*.aaep")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	problems := problemsOf(recs)
	if len(recs) != 2 || len(recs[0].Parts) != 3 || len(problems) != 1 || !strings.Contains(problems[0], moved) ||
		!strings.Contains(problems[0], "foreign part") || !strings.Contains(problems[0], "different sources") {
		t.Errorf("foreign part: %d recordings, problems %q", len(recs), problems)
	}
}

func problemsOf(recs []*Recording) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.Problems...)
	}
	return out
}

// TestRecordsReadsPartsAsOneCapture: the cursor over a rotated
// recording's parts gives the whole capture's records, numbers and times,
// and seeks across parts by record and by time, with one index for all.
func TestRecordsReadsPartsAsOneCapture(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	all := numbered(45)
	parts := rotated(t, dir, "run", "http://a/events", start, all, []int{10, 25, 40})
	recs, err := Open(context.Background(), []string{parts[3], parts[1], parts[0], parts[2]}, Options{})
	if err != nil || len(recs) != 1 {
		t.Fatalf("%d recordings, %v", len(recs), err)
	}
	r, err := recs[0].Records(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.Header().Start.Equal(start) {
		t.Errorf("start %v, want %v", r.Header().Start, start)
	}
	for i := 0; ; i++ {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			if i != len(all) {
				t.Fatalf("%d records, want %d", i, len(all))
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if r.Index() != int64(i) || rec.Time != all[i].Time || string(rec.Payload) != string(all[i].Payload) {
			t.Fatalf("record %d: index %d, time %d, payload %s; want %d, %d, %s", i, r.Index(), rec.Time, rec.Payload, i, all[i].Time, all[i].Payload)
		}
	}
	x, err := r.FileIndex()
	if err != nil || x.Records != int64(len(all)) || x.LastTime() != all[len(all)-1].Time {
		t.Fatalf("index: %v records to %d (%v); want %d to %d", x.Records, x.LastTime(), err, len(all), all[len(all)-1].Time)
	}
	for _, i := range []int64{0, 9, 10, 24, 25, 39, 40, 44} {
		if err := r.SeekRecord(i); err != nil {
			t.Fatal(err)
		}
		rec, err := r.Next()
		if err != nil || string(rec.Payload) != strconv.Itoa(int(i)) || r.Index() != i {
			t.Errorf("seek to record %d: got %s (index %d, %v)", i, rec.Payload, r.Index(), err)
		}
		if err := r.SeekTime(all[i].Time); err != nil {
			t.Fatal(err)
		}
		rec, err = r.Next()
		if err != nil || string(rec.Payload) != strconv.Itoa(int(i)) || r.Index() != i {
			t.Errorf("seek to %v: got %s (index %d, %v)", time.Duration(all[i].Time), rec.Payload, r.Index(), err)
		}
	}
}

// TestReadFromPart: a recording opened with the headers of its first parts
// known (Options.Known) reads none of those parts, and read from a later
// part (ReadOptions.From) numbers and times its messages as a read of every
// part does.
func TestReadFromPart(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	all := numbered(45)
	parts := rotated(t, dir, "run", "http://a/events", start, all, []int{10, 25, 40})
	ctx := context.Background()
	type seen struct {
		index  int64
		offset time.Duration
		raw    string
	}
	read := func(rec *Recording, from From) []seen {
		t.Helper()
		var out []seen
		if _, err := rec.Read(ctx, ReadOptions{From: from}, Handler{Message: func(m *protocol.Message) error {
			out = append(out, seen{m.Index, m.Offset, string(m.Raw)})
			return nil
		}}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	recs, err := Open(ctx, parts, Options{})
	if err != nil || len(recs) != 1 {
		t.Fatalf("%d recordings, %v", len(recs), err)
	}
	full := read(recs[0], From{})
	headers := map[string]capfile.Header{}
	for _, p := range recs[0].Parts[:2] {
		headers[p.Name] = p.Header
		// A read of either part would now fail.
		if err := os.WriteFile(p.Name, []byte("not a capture any more"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	recs, err = Open(ctx, parts, Options{
		Changed: func(name string, _ Stamp) bool { return name == parts[3] },
		Known: func(name string, _ Stamp) (capfile.Header, bool) {
			h, ok := headers[name]
			return h, ok
		},
	})
	if err != nil || len(recs) != 1 || len(recs[0].Parts) != 4 || len(recs[0].Problems) > 0 {
		t.Fatalf("opened with known headers: %d recordings, %v", len(recs), err)
	}
	got := read(recs[0], From{Part: 2, Index: 25})
	if fmt.Sprint(got) != fmt.Sprint(full[25:]) {
		t.Errorf("read from part 3:\n%v\nwant\n%v", got, full[25:])
	}
	if _, err := recs[0].Read(ctx, ReadOptions{From: From{Part: 4}}, Handler{Message: func(*protocol.Message) error { return nil }}); err == nil {
		t.Errorf("a read from a part past the last was not refused")
	}
}
