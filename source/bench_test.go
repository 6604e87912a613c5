package source_test

import (
	"context"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/source"
	"github.com/aaep-tools/aaepkit/source/sourcetest"
)

// The source benchmarks read b.N events of 430 bytes from a loopback bulk
// producer and drop them in emit: the cost of the transport alone, next to
// the recorder's (source/recorder's BenchmarkCapture*).
var benchEvents = sourcetest.Events(20000)

func BenchmarkSourceWebSocket(b *testing.B) {
	p := &sourcetest.WSBench{Events: benchEvents, N: b.N}
	benchSource(b, p.Start(b))
}

func BenchmarkSourceSSE(b *testing.B) {
	p := &sourcetest.SSEBench{Events: benchEvents, N: b.N}
	benchSource(b, p.Start(b))
}

func benchSource(b *testing.B, url string) {
	src, err := source.New(url, source.Options{Clock: source.NewClock(), Retry: source.Retry{Initial: time.Millisecond, MaxRetries: 2}})
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	b.SetBytes(sourcetest.EventSize)
	b.ReportAllocs()
	b.ResetTimer()
	err = src.Run(context.Background(), func(m *source.Message) error {
		if m.Kind == 1 {
			n++
		}
		return nil
	})
	b.StopTimer()
	if err != nil || n != b.N {
		b.Fatalf("%d events, %v", n, err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
