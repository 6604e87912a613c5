package visualize_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/aaep-tools/aaepkit/visualize"
	"github.com/aaep-tools/aaepkit/visualize/internal/fixture"
)

var benchSizes = []int{100, 1_000, 10_000}

// BenchmarkCollect measures building one session's trace from its steps
// and findings (what a check run adds when it also draws).
func BenchmarkCollect(b *testing.B) {
	for _, n := range benchSizes {
		events := fixture.Long("sess_long", n)
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c := visualize.NewCollector(visualize.CollectorOptions{})
				fixture.Feed(events, c.Sink())
				if len(c.Traces()) != 1 {
					b.Fatal("no trace")
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkDOT measures DOT generation for one session's trace.
func BenchmarkDOT(b *testing.B) {
	for _, n := range benchSizes {
		c := visualize.NewCollector(visualize.CollectorOptions{})
		fixture.Feed(fixture.Long("sess_long", n), c.Sink())
		traces := c.Traces()
		opts := visualize.DOTOptions{Title: "long.aaep", Machines: fixture.Machines()}
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var size int
			for b.Loop() {
				size = len(visualize.DOT(traces, opts))
			}
			b.ReportMetric(float64(size), "dot-bytes")
		})
	}
}

// BenchmarkDrawSVG measures the whole path aaep-replay takes for one
// session: collect the trace, write DOT, and render SVG with the
// aaep-render helper process (its start-up included; the first run on a
// machine also compiles Graphviz's WebAssembly into a cache, which this
// benchmark's warm-up absorbs).
func BenchmarkDrawSVG(b *testing.B) {
	helper := buildHelperB(b)
	r := &visualize.Renderer{Path: helper}
	for _, n := range benchSizes {
		events := fixture.Long("sess_long", n)
		opts := visualize.DOTOptions{Title: "long.aaep", Machines: fixture.Machines()}
		draw := func() int {
			c := visualize.NewCollector(visualize.CollectorOptions{})
			fixture.Feed(events, c.Sink())
			svg, err := r.SVG(context.Background(), visualize.DOT(c.Traces(), opts))
			if err != nil {
				b.Fatal(err)
			}
			return len(svg)
		}
		draw() // warm the helper's compilation cache
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			var size int
			for b.Loop() {
				size = draw()
			}
			b.ReportMetric(float64(size), "svg-bytes")
		})
	}
}
