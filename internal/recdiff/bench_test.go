package recdiff

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/aaep-tools/aaepkit/internal/bench"
)

// BenchmarkRun diffs a capture of 50,000 messages of interleaved sessions
// with itself (make bench measures a million each side end to end: e2e/Diff).
//
//	go test -run '^$' -bench Run -benchtime 3x ./internal/recdiff
func BenchmarkRun(b *testing.B) {
	const n = 50_000
	path := filepath.Join(b.TempDir(), "bulk.aaep")
	if err := bench.WriteBulkCapture(path, n, 1); err != nil {
		b.Fatal(err)
	}
	a, other := openSide(b, path), openSide(b, path)
	opts := defaults()
	opts.KeepSame = false
	for b.Loop() {
		res, err := Run(context.Background(), a, other, opts)
		if err != nil {
			b.Fatal(err)
		}
		if !res.Same() {
			b.Fatal("a capture differs from itself")
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
