package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/sample"
	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/transport/transporttest"
)

// Discard reads the stream at url ("websocket", "sse" or "grpc" transport) and
// throws it away, as the ceiling client of the capture measurement; it
// returns how many messages it read. The benche2e tool runs it in a child
// process so that it pays the same process costs as aaep-capture.
func Discard(transport, url string) (int, error) {
	switch transport {
	case "websocket":
		return transporttest.WSDiscard(url)
	case "sse":
		return transporttest.SSEDiscard(url)
	case "grpc":
		return grpcDiscard(url)
	}
	return 0, fmt.Errorf("unknown transport %q: want websocket, sse or grpc", transport)
}

// producer serves n events (pool cycled) once, as fast as the connection
// takes them, on a new loopback server.
func producer(transport string, pool [][]byte, n int) (url string, stop func(), err error) {
	if transport == "grpc" {
		return grpcProducer(pool, n)
	}
	var h http.Handler
	switch transport {
	case "websocket":
		h = &transporttest.WSBench{Events: pool, N: n}
	default:
		h = &transporttest.SSEBench{Events: pool, N: n}
	}
	srv := httptest.NewServer(h)
	if transport == "websocket" {
		url = "ws" + strings.TrimPrefix(srv.URL, "http") + "/aaep/v1/ws"
	} else {
		url = srv.URL + "/aaep/v1/events"
	}
	return url, func() {
		srv.CloseClientConnections()
		srv.Close()
	}, nil
}

// Capture measures aaep-capture recording n events over WebSocket, SSE and
// gRPC from the project's throughput producers, beside a client that reads
// the same stream from the same kind of producer and discards it. Both are
// child processes timed from start to exit. Results: Capture/<transport>
// with events/s, ceiling events/s and their ratio.
func Capture(ctx context.Context, e *Env, n int) error {
	pool := sample.Events(4096, 7)
	var total int
	for _, p := range pool {
		total += len(p)
	}
	meanSize := float64(total) / float64(len(pool))
	e.logf("capture: %d events of %.0f bytes on average, %d runs", n, meanSize, e.Runs)
	for run := -1; run < e.Runs; run++ {
		for _, transport := range []string{"websocket", "sse", "grpc"} {
			count := n
			if run < 0 {
				count = max(1, n/10) // warm-up, not reported
			}
			// Alternate which goes first so that warm-up and drift cancel.
			var capRate, ceilRate float64
			steps := []func() error{
				func() (err error) { ceilRate, err = e.discardOnce(ctx, transport, pool, count); return err },
				func() (err error) { capRate, err = e.captureOnce(ctx, transport, pool, count, run); return err },
			}
			if run < 0 {
				for _, step := range steps {
					if err := step(); err != nil {
						return err
					}
				}
				continue
			}
			if run%2 == 1 {
				steps[0], steps[1] = steps[1], steps[0]
			}
			for _, step := range steps {
				if err := step(); err != nil {
					return err
				}
			}
			e.logf("capture %s run %d: %.0f events/s, ceiling %.0f events/s", transport, run+1, capRate, ceilRate)
			e.Emit(Result{Name: "Capture/" + transport, Metrics: []Metric{
				{capRate, "events/s"}, {ceilRate, "ceiling-events/s"}, {capRate / ceilRate, "ratio"}, {meanSize, "B/event"},
			}})
		}
	}
	return nil
}

func (e *Env) discardOnce(ctx context.Context, transport string, pool [][]byte, n int) (float64, error) {
	url, stop, err := producer(transport, pool, n)
	if err != nil {
		return 0, err
	}
	defer stop()
	cctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	res, err := RunProc(cctx, nil, e.Self, "discard", transport, url)
	if err != nil {
		return 0, err
	}
	got, perr := strconv.Atoi(strings.TrimSpace(string(res.Stdout)))
	if res.ExitCode != 0 || perr != nil || got != n {
		return 0, fmt.Errorf("discard %s: exit %d, read %q messages, want %d: %s", transport, res.ExitCode, res.Stdout, n, tail(res.Stderr))
	}
	return perSecond(int64(n), res.Wall), nil
}

func (e *Env) captureOnce(ctx context.Context, transport string, pool [][]byte, n, run int) (float64, error) {
	url, stop, err := producer(transport, pool, n)
	if err != nil {
		return 0, err
	}
	defer stop()
	out := filepath.Join(e.Dir, fmt.Sprintf("capture-%s-%d.aaep", transport, run))
	defer os.Remove(out)
	cctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	res, err := RunProc(cctx, nil, e.CaptureBin, "--endpoint", url, "--output", out, "--json", "--duration", "150s")
	if err != nil {
		return 0, err
	}
	var sum struct {
		Events int64 `json:"events"`
	}
	if res.ExitCode != 0 || json.Unmarshal(res.Stdout, &sum) != nil {
		return 0, fmt.Errorf("aaep-capture %s: exit %d: %s %s", transport, res.ExitCode, tail(res.Stdout), tail(res.Stderr))
	}
	// Count what the file holds: the figure is only valid if every event is there.
	got, err := countReceived(out)
	if err != nil {
		return 0, fmt.Errorf("aaep-capture %s: reading its capture: %w", transport, err)
	}
	if got != int64(n) {
		return 0, fmt.Errorf("aaep-capture %s: capture holds %d received events (summary says %d), want %d", transport, got, sum.Events, n)
	}
	return perSecond(int64(n), res.Wall), nil
}

// countReceived counts the received records of a capture whose payload is
// an AAEP event (the subscription answer is received too, but is no event).
func countReceived(path string) (int64, error) {
	r, err := capfile.Open(path)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	var n int64
	for {
		rec, err := r.Next()
		if err != nil {
			if isEOF(err) {
				return n, nil
			}
			return n, err
		}
		if rec.Kind == capfile.KindReceived && payload.Decode(rec.Payload).Routing.EventID != "" {
			n++
		}
	}
}
