package transport_test

import (
	"context"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/transport"
	"github.com/aaep-tools/aaepkit/transport/transporttest"
)

// The source benchmarks read b.N events of 430 bytes from a loopback bulk
// producer and drop them in emit: the cost of the transport alone, next to
// the recorder's (source/recorder's BenchmarkCapture*).
var benchEvents = transporttest.Events(20000)

func BenchmarkSourceWebSocket(b *testing.B) {
	p := &transporttest.WSBench{Events: benchEvents, N: b.N}
	benchSource(b, p.Start(b))
}

func BenchmarkSourceSSE(b *testing.B) {
	p := &transporttest.SSEBench{Events: benchEvents, N: b.N}
	benchSource(b, p.Start(b))
}

func benchSource(b *testing.B, url string) {
	src, err := transport.New(url, transport.Options{Clock: transport.NewClock(), Retry: transport.Retry{Initial: time.Millisecond, MaxRetries: 2}})
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	b.SetBytes(transporttest.EventSize)
	b.ReportAllocs()
	b.ResetTimer()
	err = src.Run(context.Background(), func(m *transport.Message) error {
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
