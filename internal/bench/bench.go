// Package bench holds the end-to-end measurements of `make bench`: each one
// drives the real aaep-capture and aaep-replay binaries (or the public API
// of a package, where a binary would measure process start-up instead) on
// loopback, bounded in time and count, against inputs made by the project's
// own generators (package sample and the long sessions of LongSession).
//
// A measurement emits one Result per run, printed in the format of
// `go test -bench` so that the benchtable tool takes medians and spreads of
// them together with the Go benchmarks. Figures that are compared (capture
// against a client that only reads, seek against a full read) are measured
// in the same run, one after the other, and their ratio is a metric of that
// run.
package bench

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Metric is one figure of a run.
type Metric struct {
	Value float64
	Unit  string
}

// Result is one run of one measurement.
type Result struct {
	// Name is the benchmark name without the "Benchmark" prefix, such as
	// "Capture/websocket".
	Name    string
	Metrics []Metric
}

// metric returns the value of r's metric with the given unit (0 if none).
func (r Result) metric(unit string) float64 {
	for _, m := range r.Metrics {
		if m.Unit == unit {
			return m.Value
		}
	}
	return 0
}

// Line formats r as a `go test -bench` result line.
func (r Result) Line() string {
	var b strings.Builder
	b.WriteString("Benchmark")
	b.WriteString(strings.ReplaceAll(r.Name, " ", "_"))
	b.WriteString("\t1")
	for _, m := range r.Metrics {
		b.WriteByte('\t')
		b.WriteString(strconv.FormatFloat(m.Value, 'g', 6, 64))
		b.WriteByte(' ')
		b.WriteString(m.Unit)
	}
	return b.String()
}

// Env is what every measurement needs.
type Env struct {
	// CaptureBin and ReplayBin are the tools under test.
	CaptureBin, ReplayBin string
	// CaptureGRPCBin, when set, is aaep-capture-grpc (aaep-capture with the
	// gRPC source linked in): the recorder cost on SSE is measured with it
	// too, to show what aaep-capture saves by leaving gRPC to it.
	CaptureGRPCBin string
	// Self is this program, started again as a reading client (see
	// Discard).
	Self string
	// Dir is a scratch directory; the caller removes it.
	Dir string
	// Runs is how many times each figure is measured. Where a run is
	// cheap, one more unreported run warms caches first.
	Runs int
	// Log receives progress lines.
	Log io.Writer
	// Emit receives every result.
	Emit func(Result)
}

func (e *Env) logf(format string, args ...any) {
	if e.Log != nil {
		fmt.Fprintf(e.Log, "  "+format+"\n", args...)
	}
}

func perSecond(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
