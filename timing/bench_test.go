package timing

import (
	"context"
	"math/rand/v2"
	"os"
	"testing"
	"time"
)

// benchPaceDuration is the wall-clock length of one paced replay in
// BenchmarkPacing. Set AAEP_BENCH_PACE (a Go duration such as 60s) for the
// figures the README reports; the default keeps `go test -bench` short.
func benchPaceDuration(b *testing.B) time.Duration {
	if v := os.Getenv("AAEP_BENCH_PACE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			b.Fatalf("AAEP_BENCH_PACE=%q: want a positive Go duration", v)
		}
		return d
	}
	return 500 * time.Millisecond
}

// syntheticOffsets returns capture offsets spanning about span, with gaps
// drawn around mean (a bursty mix: many short gaps, some long ones).
func syntheticOffsets(span, mean time.Duration) []time.Duration {
	r := rand.New(rand.NewPCG(1, 2))
	var offs []time.Duration
	for t := time.Duration(0); t <= span; {
		offs = append(offs, t)
		switch r.IntN(10) {
		case 0:
			t += 0 // same instant, like a burst
		case 1:
			t += 5 * mean
		default:
			t += time.Duration(r.Int64N(int64(mean)))
		}
	}
	return offs
}

// BenchmarkPacing replays a synthetic capture against the real clock and
// reports per-event lateness (time between a deadline and the wake-up) and
// total drift. Nothing is asserted: the figures are the result.
func BenchmarkPacing(b *testing.B) {
	wall := benchPaceDuration(b)
	for _, bc := range []struct {
		name  string
		speed float64
		clock Clock
	}{
		{"1x/default", 1, System()},
		{"1x/precise", 1, Precise(0)},
		{"10x/default", 10, System()},
		{"10x/precise", 10, Precise(0)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			offs := syntheticOffsets(time.Duration(float64(wall)*bc.speed), 5*time.Millisecond)
			var last Summary
			for b.Loop() {
				var lat Lateness
				p := NewPacer(bc.clock, Config{Speed: bc.speed})
				for _, off := range offs {
					d, err := p.Wait(context.Background(), off)
					if err != nil {
						b.Fatal(err)
					}
					lat.Observe(p.Late(d))
				}
				last = lat.Summary()
			}
			b.ReportMetric(float64(len(offs)), "events")
			b.ReportMetric(float64(last.P50)/1e3, "p50-µs")
			b.ReportMetric(float64(last.P99)/1e3, "p99-µs")
			b.ReportMetric(float64(last.P999)/1e3, "p99.9-µs")
			b.ReportMetric(float64(last.Max)/1e3, "max-µs")
			b.ReportMetric(float64(last.Drift)/1e3, "drift-µs")
		})
	}
}
