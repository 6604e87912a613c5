package otlpexport

import (
	"context"
	"path/filepath"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"

	"github.com/aaep-tools/aaepkit/internal/bench"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/check"
	"github.com/aaep-tools/aaepkit/protocol/models"
)

// BenchmarkExport exports a capture of 50,000 messages of interleaved
// sessions (make bench's check input, smaller) beside a check of it: the
// export's events/s against check's, in the same run.
//
//	go test -run XXX -bench Export ./otlpexport
func BenchmarkExport(b *testing.B) {
	const n = 50_000
	path := filepath.Join(b.TempDir(), "bulk.aaep")
	if err := bench.WriteBulkCapture(path, n, 1); err != nil {
		b.Fatal(err)
	}
	cfg := check.Config{Models: models.All}
	b.Run("check", func(b *testing.B) {
		for b.Loop() {
			recs := open(b, path)
			if _, err := check.Run(context.Background(), recs[0], cfg, protocol.Sink{}, nil); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	})
	for _, format := range []string{"otlp", "otlp-json"} {
		b.Run(format, func(b *testing.B) {
			for b.Loop() {
				recs := open(b, path)
				_, err := Export(context.Background(), recs, Options{Check: cfg}, func(r *coltracepb.ExportTraceServiceRequest) error {
					var err error
					if format == "otlp" {
						_, err = MarshalProto(nil, r)
					} else {
						_, err = MarshalJSON(r)
					}
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkMarshalProto encodes the first request (2,048 spans) of an
// export of make bench's check input into a buffer kept from one encoding
// to the next, as Client.Send does.
//
//	go test -run XXX -bench MarshalProto ./otlpexport
func BenchmarkMarshalProto(b *testing.B) {
	path := filepath.Join(b.TempDir(), "bulk.aaep")
	if err := bench.WriteBulkCapture(path, 20_000, 1); err != nil {
		b.Fatal(err)
	}
	var req *coltracepb.ExportTraceServiceRequest
	_, err := Export(context.Background(), open(b, path), Options{Check: check.Config{Models: models.All}}, func(r *coltracepb.ExportTraceServiceRequest) error {
		if req == nil {
			req = r
		}
		return nil
	})
	if err != nil || req == nil {
		b.Fatal(err, req)
	}
	var buf []byte
	for b.Loop() {
		if buf, err = MarshalProto(buf[:0], req); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(buf)))
}
