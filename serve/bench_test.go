package serve

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/timing"
)

// Benchmark sizes, overridable from the environment for the README figures:
//
//	AAEP_BENCH_EVENTS  events in the fan-out capture (default 5000)
//	AAEP_BENCH_PACE    wall-clock length of the paced replays (default 500ms)
//	AAEP_BENCH_CAPTURE_MB  payload MiB of the capture for BenchmarkStartMiddle
//	                       (default 32; the file is smaller, compressed)
func envInt(b *testing.B, name string, def int) int {
	if v := os.Getenv(name); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			b.Fatalf("%s=%q: want a positive integer", name, v)
		}
		return n
	}
	return def
}

func envDuration(b *testing.B, name string, def time.Duration) time.Duration {
	if v := os.Getenv(name); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			b.Fatalf("%s=%q: want a positive duration", name, v)
		}
		return d
	}
	return def
}

// realisticPayload is an AAEP event of about 430 bytes. Its identifiers vary
// like real ones (random hex), so it compresses about as well as real
// traffic rather than as a repeated template.
func realisticPayload(i int) []byte {
	r := rand.New(rand.NewPCG(uint64(i), 7))
	return []byte(fmt.Sprintf(`{"@context":"https://aaep-protocol.org/context/v1","type":"aaep:agent.tool.invoked","event_id":"evt_%016x%016x","session_id":"sess_2c91a7b4d23f1e88","sequence_number":%d,"timestamp":"2026-05-24T14:%02d:%02d.%03dZ","producer":{"agent_id":"travel-assistant","agent_version":"2.4.1"},"urgency":"normal","tool":"search_flights","tool_call_id":"call_%012x","summary_normal":"Searching flights from Lisbon to Oslo for 12 to 19 December.","risk_level":"low"}`,
		r.Uint64(), r.Uint64(), i, i/60000%60, i/1000%60, i%1000, r.Uint64()>>16))
}

// benchCapture writes n events spaced by gap (plus jitter) to a capture.
func benchCapture(b *testing.B, n int, gap time.Duration) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "bench.aaep")
	w, err := capfile.Create(path, capfile.Header{Start: time.Now(), Tool: "bench"}, &capfile.WriterOptions{})
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	var at time.Duration
	for i := 0; i < n; i++ {
		if err := w.Append(&capfile.Record{Kind: capfile.KindReceived, Time: int64(at), Session: "sess_2c91a7b4d23f1e88", Payload: realisticPayload(i)}); err != nil {
			b.Fatal(err)
		}
		if gap > 0 {
			at += time.Duration(r.Int64N(int64(2 * gap)))
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// drain reads frames until the connection closes and returns how many.
func drain(c *websocket.Conn) int {
	n := 0
	c.SetReadDeadline(time.Now().Add(5 * time.Minute))
	for {
		_, r, err := c.NextReader()
		if err != nil {
			return n
		}
		if _, err := io.Copy(io.Discard, r); err != nil {
			return n
		}
		n++
	}
}

// BenchmarkFanout replays a capture with --no-delay to 1, 10 and 100
// WebSocket subscribers on loopback (the clients run in the same process, on
// the same cores) and reports the aggregate rate; "+stalled" adds one
// subscriber that never reads.
func BenchmarkFanout(b *testing.B) {
	n := envInt(b, "AAEP_BENCH_EVENTS", 5000)
	path := benchCapture(b, n, 0)
	for _, shared := range []bool{false, true} {
		for _, subs := range []int{1, 10, 100} {
			for _, stalled := range []bool{false, true} {
				if stalled && subs != 100 {
					continue
				}
				mode := "own"
				if shared {
					mode = "shared"
				}
				name := fmt.Sprintf("%s/%d", mode, subs)
				if stalled {
					name += "+stalled"
				}
				b.Run(name, func(b *testing.B) { benchFanout(b, path, n, subs, shared, stalled) })
			}
		}
	}
}

func benchFanout(b *testing.B, path string, n, subs int, shared, stalled bool) {
	var total int64
	var elapsed time.Duration
	for b.Loop() {
		srv, err := New(Options{CloseAtEnd: true, Open: OpenFile(path), Timing: timing.Config{NoDelay: true}, Shared: shared, Grace: time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		hs := &httpServer{ln: ln, h: srv}
		hs.start()
		url := "ws://" + ln.Addr().String() + "/aaep/v1/ws"
		d := websocket.Dialer{Subprotocols: []string{Subprotocol}}
		var conns []*websocket.Conn
		if stalled {
			c, _, err := d.Dial(url, nil)
			if err != nil {
				b.Fatal(err)
			}
			conns = append(conns, c)
		}
		healthy := make([]*websocket.Conn, subs)
		for i := range healthy {
			c, _, err := d.Dial(url, nil)
			if err != nil {
				b.Fatal(err)
			}
			healthy[i] = c
		}
		req := []byte(`{"type":"subscription.request","aaep_version":"1.0.0","subscriber_id":"bench","capabilities":{"event_filters":{"include":["*"]}}}`)
		start := time.Now()
		for _, c := range append(conns, healthy...) {
			if err := c.WriteMessage(websocket.TextMessage, req); err != nil {
				b.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		counts := make([]int, subs)
		for i, c := range healthy {
			wg.Add(1)
			go func() { defer wg.Done(); counts[i] = drain(c) }()
		}
		wg.Wait()
		elapsed += time.Since(start)
		for i, got := range counts {
			total += int64(got - 1) // minus subscription.accepted
			if !shared && got-1 != n {
				for _, ss := range srv.Stats().Subscribers {
					if ss.Close != nil && ss.Close.Cause != CauseFinished {
						b.Logf("%s sent %d started %v closed %v after start: %+v", ss.Subscription, ss.Sent, ss.Started.Sub(start), ss.Close.Time.Sub(start), ss.Close)
					}
				}
				b.Fatalf("subscriber %d got %d events, want %d; closes %v (after %v)", i, got-1, n, srv.Stats().Closes, time.Since(start))
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_ = srv.Shutdown(ctx)
		cancel()
		hs.stop()
		for _, c := range append(conns, healthy...) {
			c.Close()
		}
	}
	b.ReportMetric(float64(total)/elapsed.Seconds(), "msgs/s")
	b.ReportMetric(0, "ns/op")
}

// httpServer runs a handler on a listener for benchmarks.
type httpServer struct {
	ln   net.Listener
	h    http.Handler
	srv  *http.Server
	done chan struct{}
}

func (s *httpServer) start() {
	s.srv = &http.Server{Handler: s.h}
	s.done = make(chan struct{})
	go func() {
		_ = s.srv.Serve(s.ln)
		close(s.done)
	}()
}

func (s *httpServer) stop() {
	_ = s.srv.Close()
	<-s.done
}

// BenchmarkPacingWebSocket replays a paced capture to one WebSocket
// subscriber at 1x and 10x and reports the server's lateness figures
// (measured after each flush), with the default and the precise clock.
func BenchmarkPacingWebSocket(b *testing.B) {
	wall := envDuration(b, "AAEP_BENCH_PACE", 500*time.Millisecond)
	for _, bc := range []struct {
		name    string
		speed   float64
		precise bool
	}{
		{"1x/default", 1, false},
		{"1x/precise", 1, true},
		{"10x/default", 10, false},
		{"10x/precise", 10, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			gap := 5 * time.Millisecond
			n := int(float64(wall)*bc.speed/float64(gap)) + 1
			path := benchCapture(b, n, gap)
			opts := Options{CloseAtEnd: true, Open: OpenFile(path), Timing: timing.Config{Speed: bc.speed}, Grace: time.Millisecond}
			if bc.precise {
				opts.Clock = timing.Precise(0)
			}
			var last timing.Summary
			for b.Loop() {
				srv, err := New(opts)
				if err != nil {
					b.Fatal(err)
				}
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					b.Fatal(err)
				}
				hs := &httpServer{ln: ln, h: srv}
				hs.start()
				d := websocket.Dialer{Subprotocols: []string{Subprotocol}}
				c, _, err := d.Dial("ws://"+ln.Addr().String()+"/aaep/v1/ws", nil)
				if err != nil {
					b.Fatal(err)
				}
				drain(c)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				_ = srv.Wait(ctx)
				last = srv.Stats().Subscribers[0].Lateness
				_ = srv.Shutdown(ctx)
				cancel()
				hs.stop()
				c.Close()
			}
			b.ReportMetric(float64(last.Count), "events")
			b.ReportMetric(float64(last.P50)/1e3, "p50-µs")
			b.ReportMetric(float64(last.P99)/1e3, "p99-µs")
			b.ReportMetric(float64(last.Max)/1e3, "max-µs")
			b.ReportMetric(float64(last.Drift)/1e3, "drift-µs")
		})
	}
}

// BenchmarkStartMiddle measures how long a replay takes to produce its first
// event when it starts from the middle of a large capture (--from at half the
// records, through the capture's index).
func BenchmarkStartMiddle(b *testing.B) {
	mb := envInt(b, "AAEP_BENCH_CAPTURE_MB", 32)
	n := mb << 20 / len(realisticPayload(0))
	path := benchCapture(b, n, time.Millisecond)
	opts := Options{CloseAtEnd: true, Open: OpenFile(path), Range: Range{From: timing.Position{Set: true, ByIndex: true, Index: int64(n / 2)}}}
	if err := opts.withDefaults(); err != nil {
		b.Fatal(err)
	}
	srv := &Server{opts: opts}
	b.ResetTimer()
	for b.Loop() {
		st, first, err := srv.openTimeline("")
		if err != nil || first == nil || first.Index != int64(n/2) {
			b.Fatalf("first %+v: %v", first, err)
		}
		st.close()
	}
	b.ReportMetric(float64(n), "records")
	if fi, err := os.Stat(path); err == nil {
		b.ReportMetric(float64(fi.Size())/(1<<20), "file-MiB")
	}
}
