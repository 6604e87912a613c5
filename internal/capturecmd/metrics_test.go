package capturecmd

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/objstore/s3test"
	"github.com/aaep-tools/aaepkit/transport/transporttest"
)

// scrape reads /metrics and parses it with Prometheus's own text parser.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type %q", ct)
	}
	var p expfmt.TextParser
	families, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	out := map[string]float64{}
	for name, f := range families {
		if !strings.HasPrefix(name, "aaep_capture_") {
			t.Errorf("metric %s is not named aaep_capture_*", name)
		}
		if f.GetHelp() == "" {
			t.Errorf("metric %s has no help", name)
		}
		m := f.GetMetric()[0]
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			out[name] = m.GetCounter().GetValue()
		case dto.MetricType_GAUGE:
			out[name] = m.GetGauge().GetValue()
		default:
			t.Errorf("metric %s has type %v", name, f.GetType())
		}
	}
	return out
}

// scrapeText reads /metrics as it is written.
func scrapeText(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	return string(b)
}

// --metrics while uploads are refused and after they are allowed: the
// parts waiting, their age, the errors and the stderr warning, then the
// uploads and their time.
func TestMetricsScraped(t *testing.T) {
	_, p := proxiedS3(t)
	p.SetFault(s3test.ForbidWrites)
	// An event every 100 ms: a part closes every second.
	url := pacedURL(t, 100*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, cli.Streams{In: strings.NewReader(""), Out: &syncBuffer{}, Err: &stderr}, []string{url,
			"-o", "s3://caps/m/run.aaep", "--spool", t.TempDir(), "--rotate-every", "1s", "--s3-timeout", "1s",
			"--metrics", "127.0.0.1:0", "--upload-warn-after", "1s", "--upload-wait", "10s"})
	}()
	addr := regexp.MustCompile(`metrics at (http://\S+/metrics)`)
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("%s never happened; stderr: %s", what, stderr.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitFor("metrics address on stderr", func() bool { return addr.MatchString(stderr.String()) })
	murl := addr.FindStringSubmatch(stderr.String())[1]
	waitFor("the no-upload warning", func() bool { return strings.Contains(stderr.String(), "no upload has succeeded for") })
	m := scrape(t, murl)
	if m["aaep_capture_sources"] != 1 || m["aaep_capture_sources_connected"] != 1 || m["aaep_capture_build_info"] != 1 {
		t.Errorf("sources %v, connected %v, build_info %v: want 1, 1, 1", m["aaep_capture_sources"], m["aaep_capture_sources_connected"], m["aaep_capture_build_info"])
	}
	if text := scrapeText(t, murl); !strings.Contains(text, `aaep_capture_build_info{version="`+version+`",goversion="`+runtime.Version()+`"} 1`+"\n") {
		t.Errorf("build_info does not name version %q and %s:\n%s", version, runtime.Version(), text)
	}
	for _, name := range []string{"events_total", "event_bytes_total", "file_bytes_total", "parts_closed_total",
		"parts_uploaded_total", "parts_waiting", "oldest_waiting_part_age_seconds", "last_upload_time_seconds",
		"upload_retries_total", "upload_errors_total", "spool_bytes", "reconnects_total", "start_time_seconds"} {
		if _, ok := m["aaep_capture_"+name]; !ok {
			t.Errorf("aaep_capture_%s missing", name)
		}
	}
	if m["aaep_capture_events_total"] < 10 || m["aaep_capture_parts_waiting"] < 1 || m["aaep_capture_parts_uploaded_total"] != 0 ||
		m["aaep_capture_oldest_waiting_part_age_seconds"] < 1 || m["aaep_capture_upload_errors_total"] < 1 ||
		m["aaep_capture_last_upload_time_seconds"] != 0 || m["aaep_capture_spool_bytes"] <= 0 {
		t.Errorf("metrics while uploads are refused: %v", m)
	}
	p.SetFault(s3test.Pass)
	waitFor("an upload", func() bool { return scrape(t, murl)["aaep_capture_parts_uploaded_total"] > 0 })
	m = scrape(t, murl)
	if last := m["aaep_capture_last_upload_time_seconds"]; last < float64(time.Now().Add(-time.Minute).Unix()) {
		t.Errorf("last upload time %v", last)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d: %s", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the recorder did not stop")
	}
	if _, err := http.Get(murl); err == nil {
		t.Error("/metrics still served after the recorder ended")
	}
}

// A --metrics address that cannot be bound is a usage error before
// anything is recorded.
func TestMetricsAddressTaken(t *testing.T) {
	prod := &transporttest.WSProducer{Frames: transporttest.Frames(transporttest.Events(1))}
	url := prod.Start(t)
	res := capture(t, false, url, "-o", t.TempDir()+"/x.aaep", "--metrics", "256.0.0.1:1")
	if res.code != 2 || !strings.Contains(res.stderr, "--metrics") {
		t.Errorf("exit %d: %s", res.code, res.stderr)
	}
}
