package bench

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/aaep-tools/aaepkit/internal/headless"
	"github.com/aaep-tools/aaepkit/internal/sample"
)

// ViewLive measures `aaep-replay view --follow` as a user watches a
// recording in progress: aaep-capture records a paced SSE producer (rate
// events per second; its default 100 ms flush), view --follow serves the
// capture it writes, and headless Chromium shows the page. The page notes,
// for each row that comes in, the time from the record's receive time (the
// capture's start plus the record's time, aaep-capture's clock) to the row
// on screen; the result is their median, 95th percentile and maximum over
// span, after the page has caught up.
func ViewLive(ctx context.Context, e *Env, rate float64, span time.Duration) error {
	b, err := headless.Launch(ctx, headless.Options{})
	if err != nil {
		return err
	}
	defer b.Close()
	for run := 0; run < e.Runs; run++ {
		lat, err := e.viewLiveOnce(ctx, b, rate, span, run)
		if err != nil {
			return err
		}
		if len(lat) == 0 {
			return fmt.Errorf("view --follow: no row came in within %v", span)
		}
		slices.Sort(lat)
		q := func(p float64) float64 { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
		e.Emit(Result{Name: fmt.Sprintf("ViewLive/rate=%g", rate), Metrics: []Metric{
			{q(0.5), "p50-ms"}, {q(0.95), "p95-ms"}, {lat[len(lat)-1], "max-ms"}, {float64(len(lat)), "rows"},
		}})
		e.logf("view --follow, %g events/s, run %d: receive to row p50 %.0f ms, p95 %.0f ms, max %.0f ms over %d rows", rate, run+1, q(0.5), q(0.95), lat[len(lat)-1], len(lat))
	}
	return nil
}

func (e *Env) viewLiveOnce(ctx context.Context, b *headless.Browser, rate float64, span time.Duration, run int) ([]float64, error) {
	prod := &PacedSSE{Events: sample.Events(512, 23), Rate: rate, Span: span + time.Minute}
	ts := httptest.NewServer(prod)
	defer ts.Close()
	out := filepath.Join(e.Dir, fmt.Sprintf("live-%d.aaep", run))
	defer os.Remove(out)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	capture := exec.CommandContext(cctx, e.CaptureBin, "--endpoint", ts.URL, "--output", out, "--duration", (span + time.Minute).String())
	var errb strings.Builder
	capture.Stderr = &errb
	if err := capture.Start(); err != nil {
		return nil, err
	}
	defer func() {
		_ = capture.Process.Signal(syscall.SIGINT)
		_ = capture.Wait()
	}()
	// The capture appears once aaep-capture has recorded its first event.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if st, err := os.Stat(out); err == nil && st.Size() > 0 {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("aaep-capture wrote no capture within 30 s: %s", errb.String())
		}
	}
	v, err := startView(ctx, e.ReplayBin, out, "--follow")
	if err != nil {
		return nil, err
	}
	defer v.stop()
	p, err := b.OpenPage(ctx)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	if err := p.Goto(ctx, "http://"+v.addr+"/"); err != nil {
		return nil, err
	}
	if err := p.Evaluate(ctx, untilJS, nil); err != nil {
		return nil, err
	}
	// Caught up: the live mark on and the first rows in; what came before
	// is not counted.
	if err := p.Evaluate(ctx, `__until(() => document.getElementById("live").classList.contains("on") && window.aaepView.latency().length > 0).then(() => { window.aaepView.latency().length = 0; })`, nil); err != nil {
		return nil, fmt.Errorf("%w\npage log:\n%s", err, strings.Join(p.Logs(), "\n"))
	}
	select {
	case <-time.After(span):
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	var lat []float64
	if err := p.Evaluate(ctx, `window.aaepView.latency().slice()`, &lat); err != nil {
		return nil, err
	}
	return lat, nil
}
