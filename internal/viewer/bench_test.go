package viewer_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
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

// BenchmarkSessionFilterFirstPage measures the first page (100 rows) of
// `session == X` on the short-session shape (bench.WriteBulkCapture: about
// n/11.5 sessions of about 11.5 messages, interleaved, so that a session's
// records lie in several frames), once the check is done; each iteration
// asks for another session, as a user choosing one does (a list once made
// is cached). AAEP_BENCH_EVENTS sets n (default 300,000).
func BenchmarkSessionFilterFirstPage(b *testing.B) {
	n := 300_000
	if s := os.Getenv("AAEP_BENCH_EVENTS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	path := filepath.Join(b.TempDir(), "short.aaep")
	if err := bench.WriteBulkCapture(path, n, 11); err != nil {
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
	get := func(p string, into any) {
		resp, err := http.Get(ts.URL + p)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("GET %s: %s", p, resp.Status)
		}
		if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
			b.Fatal(err)
		}
	}
	var ss struct {
		Sessions []struct {
			ID string `json:"id"`
		} `json:"sessions"`
	}
	get("/api/sessions?sort=messages&desc=1&limit=1000", &ss)
	page := func(i int) {
		if i >= len(ss.Sessions) {
			b.Fatal("more iterations than sessions asked for")
		}
		var r struct {
			Rows  []json.RawMessage `json:"rows"`
			Total int64             `json:"total"`
		}
		get("/api/rows?limit=100&filter="+url.QueryEscape("session == "+ss.Sessions[i].ID), &r)
		if r.Total == 0 || len(r.Rows) == 0 {
			b.Fatalf("session == %s: no rows", ss.Sessions[i].ID)
		}
	}
	// The first list the viewer is asked for (the one make bench times).
	t := time.Now()
	page(0)
	first := time.Since(t)
	i := 1
	for b.Loop() {
		page(i)
		i++
	}
	b.ReportMetric(float64(first.Microseconds())/1000, "first-ms")
}
