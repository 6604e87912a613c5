package recording

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/internal/cputime"
	"github.com/aaep-tools/aaepkit/internal/sample"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/models"
)

// BenchmarkReadSourcesIntoEngine times ReadSources over a capture file
// with every message fed to the protocol engine (what aaep-replay check
// does, report aside), reading on the caller's goroutine (sequential) and
// ahead on a goroutine of its own (read-ahead). One op is the whole
// capture; events/s counts its messages per wall second.
func BenchmarkReadSourcesIntoEngine(b *testing.B) {
	// Realistic interleaved AAEP sessions (the sample stream, with its
	// protocol violations).
	path := filepath.Join(b.TempDir(), "bench.aaep")
	msgs := sample.Stream(sample.Options{Sessions: 2000, Seed: 5, Violations: true})
	if err := sample.WriteCapture(path, msgs, time.Unix(1700000000, 0), "aaep-capture/bench"); err != nil {
		b.Fatal(err)
	}
	for _, mode := range []struct {
		name string
		opts ReadOptions
	}{{"sequential", ReadOptions{Sequential: true}}, {"read-ahead", ReadOptions{}}} {
		b.Run(mode.name, func(b *testing.B) {
			var msgs int64
			cpu0 := cputime.Used()
			for b.Loop() {
				eng, err := protocol.NewEngine(models.All(), "", &protocol.Options{}, protocol.StreamInfo{}, protocol.Sink{})
				if err != nil {
					b.Fatal(err)
				}
				sum, err := readSources(context.Background(), []*Part{filePart(path)}, mode.opts, Handler{
					Message: func(m *protocol.Message) error { eng.Feed(m); return nil },
					Conn:    eng.Connection,
				})
				if err != nil {
					b.Fatal(err)
				}
				eng.Finish()
				msgs += sum.Messages
			}
			b.ReportMetric(float64(msgs)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(msgs)/(cputime.Used()-cpu0).Seconds(), "events/cpu-s")
		})
	}
}
