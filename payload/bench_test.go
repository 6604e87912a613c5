package payload

import (
	"encoding/json"
	"testing"

	"github.com/aaep-tools/aaepkit/internal/sample"
)

// benchEvents returns the realistic ~430-byte AAEP events every benchmark
// here decodes, with the benchmark's bytes per op set to their mean size
// and its allocations reported.
func benchEvents(b *testing.B) [][]byte {
	events := sample.Events(4096, 42)
	size := 0
	for _, e := range events {
		size += len(e)
	}
	b.SetBytes(int64(size / len(events)))
	b.ReportAllocs()
	return events
}

// BenchmarkDecode measures the front end alone: Decode into a reused Doc
// over realistic ~430-byte AAEP events, in MB/s, events/s and allocations.
func BenchmarkDecode(b *testing.B) {
	events := benchEvents(b)
	var d Doc
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d.Decode(events[i%len(events)])
		if !d.IsObject() {
			b.Fatal(d.Err())
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkDecodeBaseline is what BenchmarkDecode is measured against:
// encoding/json validating and splitting the same events into
// map[string]json.RawMessage.
func BenchmarkDecodeBaseline(b *testing.B) {
	events := benchEvents(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(events[i%len(events)], &m); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkDecodeSession measures what the recorder's writer asks of the
// front end for every message: validity, UTF-8 and the session key
// (DecodeOnly with NeedSession), over the same events as BenchmarkDecode.
func BenchmarkDecodeSession(b *testing.B) {
	events := benchEvents(b)
	var d Doc
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d.DecodeOnly(events[i%len(events)], NeedSession)
		if !d.JSONValid() || d.Routing.SessionKey() == "" {
			b.Fatal(d.Err())
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
