package capedit

import (
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/sample"
	"github.com/aaep-tools/aaepkit/timing"
)

// benchEvents is the size of the benchmark captures: about 8.6 MB of
// 430-byte AAEP events, one every millisecond.
const benchEvents = 20000

func benchCapture(b *testing.B, dir, name string, seed uint64) string {
	b.Helper()
	evs := sample.Events(benchEvents, seed)
	recs := make([]capfile.Record, len(evs))
	for i, e := range evs {
		recs[i] = capfile.Record{Kind: capfile.KindReceived, Time: int64(i) * int64(time.Millisecond), Payload: e}
	}
	path := filepath.Join(dir, name)
	w, err := capfile.Create(path, testHeader(), &capfile.WriterOptions{FlushInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	for i := range recs {
		if err := w.Append(&recs[i]); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

func reportEvents(b *testing.B, n int) {
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

func BenchmarkExport(b *testing.B) {
	src := benchCapture(b, b.TempDir(), "src.aaep", 1)
	for _, meta := range []bool{false, true} {
		name := "plain"
		if meta {
			name = "with-meta"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Export(ctx, src, io.Discard, ExportOptions{WithMeta: meta}); err != nil {
					b.Fatal(err)
				}
			}
			reportEvents(b, benchEvents)
		})
	}
}

func BenchmarkImport(b *testing.B) {
	dir := b.TempDir()
	src := benchCapture(b, dir, "src.aaep", 1)
	for _, meta := range []bool{false, true} {
		name := "plain"
		if meta {
			name = "with-meta"
		}
		jsonl := filepath.Join(dir, name+".jsonl")
		if err := WriteFile(jsonl, nil, func(w io.Writer) error {
			_, err := Export(ctx, src, w, ExportOptions{WithMeta: meta})
			return err
		}); err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			out := filepath.Join(dir, name+".aaep")
			for b.Loop() {
				if _, err := Import(ctx, jsonl, out, ImportOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			reportEvents(b, benchEvents)
		})
	}
}

// BenchmarkCut compares a one-second cut from the middle (an index seek,
// then about 1,000 records) with a cut of the whole capture.
func BenchmarkCut(b *testing.B) {
	dir := b.TempDir()
	src := benchCapture(b, dir, "src.aaep", 1)
	out := filepath.Join(dir, "cut.aaep")
	for _, tc := range []struct {
		name     string
		from, to string
	}{{"1s-window", "10s", "11s"}, {"whole", "", ""}} {
		b.Run(tc.name, func(b *testing.B) {
			var opts CutOptions
			if tc.from != "" {
				f, _ := timing.ParsePosition(tc.from)
				t, _ := timing.ParsePosition(tc.to)
				opts = CutOptions{From: f, To: t}
			}
			for b.Loop() {
				if _, err := Cut(ctx, []string{src}, out, opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkMerge(b *testing.B) {
	dir := b.TempDir()
	a := benchCapture(b, dir, "a.aaep", 1)
	c := benchCapture(b, dir, "b.aaep", 2)
	out := filepath.Join(dir, "m.aaep")
	for b.Loop() {
		if _, err := Merge(ctx, []string{a, c}, out, MergeOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	reportEvents(b, 2*benchEvents)
}

func BenchmarkInfo(b *testing.B) {
	src := benchCapture(b, b.TempDir(), "src.aaep", 1)
	for b.Loop() {
		s, err := Info(ctx, src, InfoOptions{})
		if err != nil || !strings.EqualFold(s.Status, "clean") {
			b.Fatal(err)
		}
	}
	reportEvents(b, benchEvents)
}
