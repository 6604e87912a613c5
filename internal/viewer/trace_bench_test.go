package viewer

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/internal/bench"
	"github.com/aaep-tools/aaepkit/internal/cputime"
	"github.com/aaep-tools/aaepkit/internal/sample"
)

// BenchmarkTraceSteps times building the trace of one session (its steps
// list and its DOT drawing) as `view` does the first time the page asks
// for them: reading the session's frames, checking them alone and
// collecting the steps. The background check is done before it starts.
// cpu-ms/op is the process's CPU time (every goroutine's) per build: the
// work, which the machine's load inflates less than the wall time.
func BenchmarkTraceSteps(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			msgs, err := bench.LongSession(n, uint64(n))
			if err != nil {
				b.Fatal(err)
			}
			path := filepath.Join(b.TempDir(), "long.aaep")
			if err := sample.WriteCapture(path, msgs, time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC), "bench"); err != nil {
				b.Fatal(err)
			}
			s, err := New(Options{Path: path})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			for !s.CheckDone() {
				time.Sleep(10 * time.Millisecond)
			}
			id := msgs[0].Session
			b.ReportAllocs()
			var t *sessionTrace
			cpu0 := cputime.Used()
			for b.Loop() {
				t = &sessionTrace{}
				t.build(s, id, "", false)
				if t.err != nil {
					b.Fatal(t.err)
				}
			}
			if len(t.steps) == 0 || t.dot == nil {
				b.Fatalf("%d steps, %d bytes of DOT", len(t.steps), len(t.dot))
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(cputime.Used()-cpu0)/1e6/float64(b.N), "cpu-ms/op")
		})
	}
}
