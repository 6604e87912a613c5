package viewer_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/internal/bench"
	"github.com/aaep-tools/aaepkit/internal/sample"
	"github.com/aaep-tools/aaepkit/internal/viewer"
)

// BenchmarkLongSession measures the API on one session of 100,000 events
// once the background check is done: the whole timeline (density), the
// list of steps (built once, then cached: the first iteration is the one
// that counts; run with -benchtime=1x).
func BenchmarkLongSession(b *testing.B) {
	msgs, err := bench.LongSession(100_000, 7)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "long.aaep")
	if err := sample.WriteCapture(path, msgs, time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC), "bench"); err != nil {
		b.Fatal(err)
	}
	v, err := viewer.New(viewer.Options{Path: path})
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	for !v.CheckDone() {
		time.Sleep(10 * time.Millisecond)
	}
	ts := httptest.NewServer(v)
	defer ts.Close()
	get := func(p string) time.Duration {
		t := time.Now()
		resp, err := http.Get(ts.URL + p)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("GET %s: %s", p, resp.Status)
		}
		return time.Since(t)
	}
	for b.Loop() {
		b.ReportMetric(float64(get("/api/timeline?px=1000").Microseconds())/1000, "whole-timeline-ms")
		b.ReportMetric(float64(get("/api/trace/"+msgs[0].Session+"/steps?limit=200").Microseconds())/1000, "steps-ms")
	}
}
