package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aaep-tools/aaepkit/internal/sample"
	"github.com/aaep-tools/aaepkit/objstore/s3test"
)

// PacedSSE serves events (cycled) over SSE at a steady rate of Rate events
// per second to every client, until the client leaves or Span has passed;
// then the stream ends (and reconnections get 204). It is the producer of
// the recorder cost measurement: a live agent at a given event rate.
type PacedSSE struct {
	Events [][]byte
	Rate   float64
	Span   time.Duration
	sent   atomic.Int64
	served atomic.Bool
}

// Sent is the number of events written so far.
func (p *PacedSSE) Sent() int64 { return p.sent.Load() }

func (p *PacedSSE) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p.served.Swap(true) {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	// Events go out on a 1 ms grid (or one per period below 1,000/s), as
	// many per tick as keep the running total on the rate.
	tick := time.Millisecond
	if period := time.Duration(float64(time.Second) / p.Rate); period > tick {
		tick = period
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	start := time.Now()
	var buf []byte
	var n int64
	for {
		select {
		case <-r.Context().Done():
			return
		case now := <-t.C:
			el := now.Sub(start)
			if el >= p.Span {
				return
			}
			want := int64(el.Seconds()*p.Rate) + 1
			buf = buf[:0]
			for ; n < want; n++ {
				ev := p.Events[n%int64(len(p.Events))]
				buf = append(buf, "data: "...)
				buf = append(buf, ev...)
				buf = append(buf, "\n\n"...)
			}
			if len(buf) == 0 {
				continue
			}
			if _, err := w.Write(buf); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
			p.sent.Store(n)
		}
	}
}

// RecorderCost measures what aaep-capture costs beside an agent: for each
// rate, it records a paced SSE producer for span and reports the peak
// resident memory (VmHWM), the CPU time (user + system) per recorded event
// over the whole run (start-up and shutdown included), and the CPU time per
// event in the steady state (read from /proc from 2 s after the start to the
// end of the stream, against the events sent meanwhile). The flush interval
// is the default 100 ms, so the durability bound is the one users get.
// The run to s3:// (with /metrics scraped every 5 s) lasts s3Span: a
// recorder's memory grows with the parts it has uploaded and the scrapes
// it has answered, so a short run understates it.
func RecorderCost(ctx context.Context, e *Env, rates []float64, span, s3Span time.Duration) error {
	pool := sample.Events(4096, 17)
	// The same recorder writing to s3:// on a local S3 server (spooled,
	// a part uploaded every 5 s) at the lowest rate.
	srv, err := s3test.New("bench")
	if err != nil {
		return err
	}
	defer srv.Close()
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	for run := 0; run < e.Runs; run++ {
		for _, rate := range rates {
			if err := e.recorderOnce(ctx, pool, rate, span, run, "", e.CaptureBin); err != nil {
				return err
			}
		}
		if err := e.recorderOnce(ctx, pool, rates[0], s3Span, run, "s3://bench/cost/run.aaep", e.CaptureBin); err != nil {
			return err
		}
		if e.CaptureGRPCBin != "" {
			// The same recorder with the gRPC source linked in
			// (aaep-capture-grpc): what linking gRPC would cost a recorder
			// that does not use it.
			if err := e.recorderOnce(ctx, pool, rates[0], span, run, "", e.CaptureGRPCBin); err != nil {
				return err
			}
		}
	}
	return nil
}

// LiveBytes measures what a live capture costs on disk: aaep-capture
// records an SSE producer at rate events per second for span to a file,
// with the default 100 ms flush, and the row LiveBytes/rate=R reports the
// file's size per event (header and index included) beside the recorder's
// cost; suffix, when not empty, is appended to the row's name (another
// span). `benche2e -only livebytes` runs it alone.
func LiveBytes(ctx context.Context, e *Env, rate float64, span time.Duration, suffix string) error {
	pool := sample.Events(4096, 17)
	for run := 0; run < e.Runs; run++ {
		if err := e.recorderOnce(ctx, pool, rate, span, run, "", e.CaptureBin, fmt.Sprintf("LiveBytes/rate=%g%s", rate, suffix)); err != nil {
			return err
		}
	}
	return nil
}

func (e *Env) recorderOnce(ctx context.Context, pool [][]byte, rate float64, span time.Duration, run int, remote, bin string, label ...string) error {
	p := &PacedSSE{Events: pool, Rate: rate, Span: span}
	srv := httptest.NewServer(p)
	defer srv.Close()
	defer srv.CloseClientConnections()
	out := filepath.Join(e.Dir, fmt.Sprintf("cost-%g-%d.aaep", rate, run))
	defer os.Remove(out)
	cctx, cancel := context.WithTimeout(ctx, span+time.Minute)
	defer cancel()
	var steady struct {
		sync.Mutex
		cpu0, cpu1   time.Duration
		sent0, sent1 int64
		ok           bool
	}
	args := []string{"--endpoint", srv.URL + "/aaep/v1/events", "--output", out, "--json", "--max-retries", "0", "--duration", (span + 30*time.Second).String()}
	name := fmt.Sprintf("Recorder/rate=%g", rate)
	if len(label) > 0 {
		name = label[0]
	}
	if bin == e.CaptureGRPCBin && bin != "" {
		name += "/grpc-linked"
	}
	if remote != "" {
		// With --metrics scraped every 5 s, as an operator runs it.
		addr, err := freeAddr()
		if err != nil {
			return err
		}
		args[3] = remote
		args = append(args, "--spool", filepath.Join(e.Dir, "spool"), "--rotate-every", "5s", "--metrics", addr)
		name += "/s3"
		stop := scrapeEvery(cctx, "http://"+addr+"/metrics", 5*time.Second)
		defer stop()
	}
	started := time.Now()
	res, err := RunProcWatch(cctx, func(pid int) {
		cpu, ok := procCPU(pid)
		if !ok || time.Since(started) < 2*time.Second {
			return
		}
		sent := p.Sent()
		steady.Lock()
		defer steady.Unlock()
		if !steady.ok {
			steady.cpu0, steady.sent0, steady.ok = cpu, sent, true
		}
		if sent > steady.sent1 || steady.sent1 == 0 {
			steady.cpu1, steady.sent1 = cpu, sent
		}
	}, bin, args...)
	if err != nil {
		return err
	}
	var sum struct {
		Events int64 `json:"events"`
	}
	if res.ExitCode > 1 || json.Unmarshal(res.Stdout, &sum) != nil || sum.Events == 0 {
		return fmt.Errorf("aaep-capture at %g events/s: exit %d: %s %s", rate, res.ExitCode, tail(res.Stdout), tail(res.Stderr))
	}
	total := us(res.CPU()) / float64(sum.Events)
	steady.Lock()
	var steadyUS float64
	if n := steady.sent1 - steady.sent0; n > 0 {
		steadyUS = us(steady.cpu1-steady.cpu0) / float64(n)
	}
	steady.Unlock()
	e.logf("recorder %s run %d: %d events, peak RSS %.1f MiB, CPU per event %.1f µs (steady state %.1f µs)", name, run+1, sum.Events, float64(res.MaxRSS)/(1<<20), total, steadyUS)
	metrics := []Metric{
		{float64(res.MaxRSS) / (1 << 20), "peak-MiB"},
		{total, "cpu-µs/event"},
		{steadyUS, "steady-cpu-µs/event"},
		{float64(sum.Events), "events"},
	}
	if st, err := os.Stat(out); remote == "" && err == nil {
		// The capture as the live recorder wrote it, flushed every 100 ms.
		metrics = append(metrics, Metric{float64(st.Size()) / float64(sum.Events), "file-B/event"})
	}
	e.Emit(Result{Name: name, Metrics: metrics})
	return nil
}

// procCPU reads the user plus system time of process pid from
// /proc/PID/stat (in clock ticks of 10 ms).
func procCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name (field 2) may hold spaces; fields count from after it.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(ut+st) * 10 * time.Millisecond, true
}

// freeAddr returns a loopback address with a port free at the moment.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// scrapeEvery reads url every period until stop.
func scrapeEvery(ctx context.Context, url string, period time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if resp, err := http.Get(url); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}
