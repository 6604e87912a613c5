package capedit

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
)

// TestSplitRoundTrip splits by count and by duration; every part is a
// complete capture, and merging the parts back gives the input.
func TestSplitRoundTrip(t *testing.T) {
	recs := sampleRecords()
	h := testHeader()
	src := writeCapture(t, t.TempDir(), "src.aaep", h, recs)
	want := absolute(h, recs)
	for _, tc := range []struct {
		name  string
		opts  SplitOptions
		parts int
	}{
		{"records", SplitOptions{Records: 20}, (len(recs) + 19) / 20},
		{"one part", SplitOptions{Records: int64(len(recs))}, 1},
		{"duration", SplitOptions{Duration: 5 * time.Second}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			res, err := Split(ctx, []string{src}, filepath.Join(dir, "part.aaep"), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if tc.parts > 0 && len(res.Parts) != tc.parts {
				t.Errorf("%d parts, want %d", len(res.Parts), tc.parts)
			}
			if res.Read != int64(len(recs)) || res.Written != int64(len(recs)) {
				t.Errorf("read %d, wrote %d; want %d", res.Read, res.Written, len(recs))
			}
			var got []capfile.Record
			var paths []string
			for i, p := range res.Parts {
				if want := PartName(filepath.Join(dir, "part.aaep"), i+1, ""); p.Path != want {
					t.Errorf("part %d at %s, want %s", i, p.Path, want)
				}
				ph, prs := readCapture(t, p.Path)
				if int64(len(prs)) != p.Records || p.Records == 0 {
					t.Errorf("%s: %d records, result says %d", p.Path, len(prs), p.Records)
				}
				if ph.Meta["split"] == "" || ph.Meta["derived_from"] != "src.aaep" {
					t.Errorf("%s: meta %v", p.Path, ph.Meta)
				}
				if tc.opts.Duration > 0 {
					// Parts start at their interval, as rotation's do.
					if off := ph.Start.Sub(h.Start); off%tc.opts.Duration != 0 || prs[len(prs)-1].Time >= int64(tc.opts.Duration) {
						t.Errorf("%s starts %v after the input, last record at %v", p.Path, off, time.Duration(prs[len(prs)-1].Time))
					}
				}
				got = append(got, absolute(ph, prs)...)
				paths = append(paths, p.Path)
			}
			sameRecords(t, got, want)
			back := filepath.Join(dir, "back.aaep")
			if _, err := Merge(ctx, paths, back, MergeOptions{JoinSources: true}); err != nil {
				t.Fatal(err)
			}
			bh, brs := readCapture(t, back)
			sameRecords(t, absolute(bh, brs), want)
		})
	}
}

func TestSplitBySession(t *testing.T) {
	recs := sampleRecords()
	h := testHeader()
	src := writeCapture(t, t.TempDir(), "src.aaep", h, recs)
	dir := t.TempDir()
	res, err := Split(ctx, []string{src}, filepath.Join(dir, "s.aaep"), SplitOptions{BySession: true})
	if err != nil {
		t.Fatal(err)
	}
	// Four sessions, and the two flagged messages outside any session.
	if len(res.Parts) != 5 || !strings.HasSuffix(res.Parts[4].Path, "s-no-session.aaep") {
		t.Fatalf("parts %+v; want 4 sessions and no-session", res.Parts)
	}
	messages := 0
	for _, p := range res.Parts {
		ph, prs := readCapture(t, p.Path)
		if !ph.Start.Equal(h.Start) {
			t.Errorf("%s: start moved", p.Path)
		}
		var want []capfile.Record
		for _, r := range recs {
			key, isMsg := sessionOf(&r)
			label := key
			if label == "" {
				label = noSession
			}
			if !isMsg || label == p.Session {
				want = append(want, r)
			}
			if isMsg && label == p.Session {
				messages++
			}
		}
		sameRecords(t, prs, want)
	}
	// Every message is in exactly one part.
	n := 0
	for _, r := range recs {
		if r.Kind == capfile.KindReceived || r.Kind == capfile.KindSent {
			n++
		}
	}
	if messages != n || res.Written != int64(n) {
		t.Errorf("parts hold %d messages (result %d), input %d", messages, res.Written, n)
	}
}

func TestSplitRefusesExistingFiles(t *testing.T) {
	recs := sampleRecords()
	src := writeCapture(t, t.TempDir(), "src.aaep", testHeader(), recs)
	dir := t.TempDir()
	prefix := filepath.Join(dir, "run.aaep")
	taken := PartName(prefix, 2, "")
	writeFileBytes(t, taken, []byte("an earlier recording"))
	_, err := Split(ctx, []string{src}, prefix, SplitOptions{Records: 20})
	if !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), taken) {
		t.Fatalf("err = %v, want one naming %s", err, taken)
	}
	if names := dirNames(t, dir); len(names) != 1 {
		t.Errorf("files written before refusing: %v", names)
	}
	if string(readFile(t, taken)) != "an earlier recording" {
		t.Error("the existing file was changed")
	}
	if _, err := Split(ctx, []string{src}, prefix, SplitOptions{Records: 20, Force: true}); err != nil {
		t.Fatalf("--force: %v", err)
	}
	if _, err := Split(ctx, []string{src}, prefix, SplitOptions{Records: 20, BySession: true}); err == nil {
		t.Error("two split modes accepted")
	}
	// The input itself is never a part.
	inDir := filepath.Dir(src)
	os.Rename(src, filepath.Join(inDir, "x-000001.aaep"))
	if _, err := Split(ctx, []string{filepath.Join(inDir, "x-000001.aaep")}, filepath.Join(inDir, "x.aaep"), SplitOptions{Records: 1000, Force: true}); !errors.Is(err, ErrSameFile) {
		t.Errorf("split over its input: %v", err)
	}
}

func TestTimeShift(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want TimeShift
	}{
		{"+1.5s", TimeShift{By: 1500 * time.Millisecond}},
		{"-200ms", TimeShift{By: -200 * time.Millisecond}},
		{"2h", TimeShift{By: 2 * time.Hour}},
		{"2026-11-02T10:00:00Z", TimeShift{To: time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)}},
	} {
		got, err := ParseTimeShift(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseTimeShift(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "yesterday", "1.5"} {
		if _, err := ParseTimeShift(bad); err == nil {
			t.Errorf("ParseTimeShift(%q) accepted", bad)
		}
	}
	// A start no capture can hold is refused, never ignored (Go's zero
	// time read as "no shift") nor clamped (issue 34).
	for _, bad := range []string{"0001-01-01T00:00:00Z", "1600-01-01T00:00:00Z", "2300-01-01T00:00:00Z"} {
		if _, err := ParseTimeShift(bad); !errors.Is(err, ErrTimeRange) || !strings.Contains(err.Error(), bad) {
			t.Errorf("ParseTimeShift(%q) = %v, want ErrTimeRange naming it", bad, err)
		}
	}
	// Two machines, one clock 3 s ahead: shifting it back interleaves the
	// merge as the events happened.
	dir := t.TempDir()
	h := testHeader()
	recA := []capfile.Record{{Kind: capfile.KindReceived, Time: 0, Payload: []byte(`{"m":"a0"}`)}, {Kind: capfile.KindReceived, Time: int64(2 * time.Second), Payload: []byte(`{"m":"a2"}`)}}
	hb := h
	hb.Start = h.Start.Add(3 * time.Second) // really 1 s after a's start
	hb.Origins = []capfile.Origin{{ID: 0, Transport: "sse", Endpoint: "http://other/"}}
	recB := []capfile.Record{{Kind: capfile.KindReceived, Time: 0, Payload: []byte(`{"m":"b1"}`)}}
	a := writeCapture(t, dir, "a.aaep", h, recA)
	b := writeCapture(t, dir, "b.aaep", hb, recB)
	out := filepath.Join(dir, "both.aaep")
	if _, err := Merge(ctx, []string{a, b}, out, MergeOptions{TimeShifts: []TimeShift{{}, {By: -2 * time.Second}}}); err != nil {
		t.Fatal(err)
	}
	mh, mrs := readCapture(t, out)
	var order []string
	for _, r := range mrs {
		order = append(order, string(r.Payload))
	}
	if strings.Join(order, " ") != `{"m":"a0"} {"m":"b1"} {"m":"a2"}` || mrs[1].Time != int64(time.Second) || !strings.Contains(mh.Meta["time_shift"], "b.aaep -2s") {
		t.Errorf("merge order %v (b at %v), meta %v", order, time.Duration(mrs[1].Time), mh.Meta)
	}
	// On one capture: the start moves, the records' times do not.
	shifted := filepath.Join(dir, "shifted.aaep")
	if _, err := Filter(ctx, []string{b}, shifted, FilterOptions{MessagesOnly: true, TimeShift: TimeShift{By: -2 * time.Second}}); err != nil {
		t.Fatal(err)
	}
	sh, srs := readCapture(t, shifted)
	if !sh.Start.Equal(hb.Start.Add(-2*time.Second)) || sh.Meta["time_shift"] != "-2s" {
		t.Errorf("shifted start %v, meta %v", sh.Start, sh.Meta)
	}
	sameRecords(t, srs, recB)
	to := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := Cut(ctx, []string{a}, filepath.Join(dir, "cut.aaep"), CutOptions{TimeShift: TimeShift{To: to}}); err != nil {
		t.Fatal(err)
	}
	if ch, _ := readCapture(t, filepath.Join(dir, "cut.aaep")); !ch.Start.Equal(to) {
		t.Errorf("cut --time-shift to %v: start %v", to, ch.Start)
	}
}
