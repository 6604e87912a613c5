package recorder_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/cputime"
	"github.com/aaep-tools/aaepkit/internal/recorder"
	"github.com/aaep-tools/aaepkit/transport"
	"github.com/aaep-tools/aaepkit/transport/transporttest"
)

// The capture benchmarks record b.N events of 430 bytes from a loopback
// producer that writes pre-framed events in large chunks, through the real
// source, recorder and capture file, and report events/s. Each also times a
// client that reads the same stream and discards it (the ceiling) and
// reports the ratio. Run with, for example:
//
//	go test -run XXX -bench Capture -benchtime 400000x ./source/recorder/

func BenchmarkCaptureWebSocket(b *testing.B) {
	benchCapture(b, func(tb testing.TB, n int) string {
		p := &transporttest.WSBench{Events: benchEvents, N: n}
		return p.Start(tb)
	}, func(url string) (int, error) { return transporttest.WSDiscard(url) })
}

// BenchmarkCaptureWebSocketPerMessage uses a producer that writes one
// frame per system call, like a typical producer: the discard client then
// measures the producer's pace, and the ratio says whether capture keeps up.
func BenchmarkCaptureWebSocketPerMessage(b *testing.B) {
	benchCapture(b, func(tb testing.TB, n int) string {
		p := &transporttest.WSBench{Events: benchEvents, N: n, PerMessage: true}
		return p.Start(tb)
	}, func(url string) (int, error) { return transporttest.WSDiscard(url) })
}

func BenchmarkCaptureSSE(b *testing.B) {
	benchCapture(b, func(tb testing.TB, n int) string {
		p := &transporttest.SSEBench{Events: benchEvents, N: n}
		return p.Start(tb)
	}, transporttest.SSEDiscard)
}

// benchEvents cycle through 8.6 MB: more than a zstd window, so the stream
// compresses like real traffic (events that differ in ids, times and
// sequence numbers), not like a short loop.
var benchEvents = transporttest.Events(20000)

func benchCapture(b *testing.B, start func(testing.TB, int) string, discard func(string) (int, error)) {
	// The ceiling: read and discard the same stream.
	url := start(b, b.N)
	t0, c0 := time.Now(), cputime.Used()
	got, err := discard(url)
	if err != nil || got != b.N {
		b.Fatalf("discard client: %d events, %v", got, err)
	}
	discardRate := float64(b.N) / time.Since(t0).Seconds()
	discardCPU := cputime.Used() - c0

	url = start(b, b.N)
	out := filepath.Join(b.TempDir(), "bench.aaep")
	clock := transport.NewClock()
	src, err := transport.New(url, transport.Options{Clock: clock, Retry: transport.Retry{Initial: time.Millisecond, MaxRetries: 2}})
	if err != nil {
		b.Fatal(err)
	}
	rec, err := recorder.New(recorder.Config{
		Path:   out,
		Header: capfile.Header{Tool: "bench", Origins: []capfile.Origin{{Transport: src.Info().Transport, Endpoint: src.Info().Endpoint}}},
		Clock:  clock,
	})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(transporttest.EventSize)
	b.ReportAllocs()
	b.ResetTimer()
	t1, c1 := time.Now(), cputime.Used()
	runErr := src.Run(context.Background(), rec.Emit(0))
	closeErr := rec.Close()
	elapsed := time.Since(t1)
	captureCPU := cputime.Used() - c1
	b.StopTimer()
	if runErr != nil || closeErr != nil {
		b.Fatalf("capture: %v, %v", runErr, closeErr)
	}
	st := rec.Stats()
	// WebSocket adds no handshake reply here (the bench producer ignores
	// the request); every received message is an event.
	if st.Events != int64(b.N) {
		b.Fatalf("recorded %d events, want %d", st.Events, b.N)
	}
	rate := float64(b.N) / elapsed.Seconds()
	b.ReportMetric(rate, "events/s")
	b.ReportMetric(discardRate, "discard-events/s")
	b.ReportMetric(rate/discardRate, "ratio")
	// Process CPU time (producer included) per event: unlike rates, it
	// hardly depends on what else the machine is running.
	b.ReportMetric(float64(captureCPU.Nanoseconds())/float64(b.N), "cpu-ns/event")
	b.ReportMetric(float64(discardCPU.Nanoseconds())/float64(b.N), "discard-cpu-ns/event")
	if fi, err := os.Stat(out); err == nil {
		b.ReportMetric(float64(fi.Size())/float64(b.N), "file-B/event")
	}
}

// BenchmarkRecorder measures the recorder alone: b.N events emitted by one
// goroutine (UTF-8 check, batch copy) and written by the writer goroutine
// (decoding by the JSON front end for validity and session, compression)
// into a file.
func BenchmarkRecorder(b *testing.B) {
	clock := transport.NewClock()
	rec, err := recorder.New(recorder.Config{Path: filepath.Join(b.TempDir(), "r.aaep"), Header: capfile.Header{Tool: "bench"}, Clock: clock})
	if err != nil {
		b.Fatal(err)
	}
	emit := rec.Emit(0)
	m := transport.Message{Kind: capfile.KindReceived}
	b.SetBytes(transporttest.EventSize)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Payload = benchEvents[i%len(benchEvents)]
		m.Time = clock.Now()
		if err := emit(&m); err != nil {
			b.Fatal(err)
		}
	}
	if err := rec.Close(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
