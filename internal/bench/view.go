package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"time"

	"github.com/aaep-tools/aaepkit/internal/sample"
)

var viewAddr = regexp.MustCompile(` at http://([0-9.:\[\]a-f]+)/`)

// viewProc is a running `aaep-replay view`.
type viewProc struct {
	cmd  *exec.Cmd
	addr string
	done chan struct{}
	mu   sync.Mutex
	errb []byte
}

// startView runs `aaep-replay view FILE [FLAGS]` on a loopback port and
// waits for the line that says where the page is.
func startView(ctx context.Context, bin, file string, flags ...string) (*viewProc, error) {
	cmd := exec.Command(bin, append([]string{"view", file, "--listen", "127.0.0.1:0"}, flags...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s view: %w", bin, err)
	}
	v := &viewProc{cmd: cmd, done: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := viewAddr.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
			v.mu.Lock()
			if len(v.errb) < 1<<16 {
				v.errb = append(v.errb, sc.Text()+"\n"...)
			}
			v.mu.Unlock()
		}
		_ = cmd.Wait()
		close(v.done)
	}()
	select {
	case v.addr = <-addr:
		return v, nil
	case <-v.done:
		return nil, fmt.Errorf("aaep-replay view exited: %s", v.errb)
	case <-time.After(time.Minute):
		v.stop()
		return nil, fmt.Errorf("aaep-replay view did not start within a minute")
	case <-ctx.Done():
		v.stop()
		return nil, context.Cause(ctx)
	}
}

func (v *viewProc) stop() {
	_ = v.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-v.done:
		return
	case <-time.After(10 * time.Second):
	}
	_ = v.cmd.Process.Kill()
	<-v.done
}

// get fetches path and checks the status; it decodes JSON into out when set.
func (v *viewProc) get(path string, out any) error {
	resp, err := http.Get("http://" + v.addr + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", path, resp.Status, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// firstPage requests what the page asks for when it opens: the page, the
// capture's summary, the sessions and the first 200 messages.
func (v *viewProc) firstPage() error {
	var events struct {
		Events []json.RawMessage `json:"events"`
	}
	for _, p := range []string{"/", "/assets/app.js", "/api/capture", "/api/sessions"} {
		if err := v.get(p, nil); err != nil {
			return err
		}
	}
	if err := v.get("/api/events?from=0&limit=200", &events); err != nil {
		return err
	}
	if len(events.Events) != 200 {
		return fmt.Errorf("first page: %d messages, want 200", len(events.Events))
	}
	return nil
}

// View measures `aaep-replay view` on the capture at path (already written,
// page cache warm), per run: from starting the process to its first page
// answered (the page, capture summary, sessions and the first 200 messages:
// what the browser asks for first), and a timeline window of window from
// the capture's middle. The background check of the whole capture is
// running meanwhile, as it is for a user.
func View(ctx context.Context, e *Env, path, name string, middle, window time.Duration) error {
	for run := 0; run < e.Runs; run++ {
		t0 := time.Now()
		v, err := startView(ctx, e.ReplayBin, path)
		if err != nil {
			return err
		}
		ready := time.Since(t0)
		if err := v.firstPage(); err != nil {
			v.stop()
			return err
		}
		first := time.Since(t0)
		t1 := time.Now()
		var tl struct {
			Count int64 `json:"count"`
		}
		err = v.get(fmt.Sprintf("/api/timeline?from_ns=%d&to_ns=%d&px=1000", middle, middle+window), &tl)
		timeline := time.Since(t1)
		v.stop()
		if err != nil {
			return err
		}
		e.Emit(Result{Name: name, Metrics: []Metric{
			{ms(ready), "listening-ms"},
			{ms(first), "first-page-ms"},
			{ms(timeline), "timeline-window-ms"},
			{float64(tl.Count), "window-events"},
		}})
		e.logf("view run %d: listening %v, first page %v, timeline window (%d events) %v", run+1, ready, first, tl.Count, timeline)
	}
	return nil
}

// ViewSession measures the timeline of one session of n events in `view`:
// the whole session drawn as density (the first thing the page asks for),
// a window of about 5,000 events (zoomed in, drawn one by one), and the
// session's list of steps for the trace.
func ViewSession(ctx context.Context, e *Env, n int) error {
	msgs, err := LongSession(n, uint64(n))
	if err != nil {
		return err
	}
	path := filepath.Join(e.Dir, fmt.Sprintf("view-session-%d.aaep", n))
	if err := sample.WriteCapture(path, msgs, captureStart, "benche2e"); err != nil {
		return err
	}
	span := msgs[len(msgs)-1].Offset - msgs[0].Offset
	window := span * 5000 / time.Duration(n)
	session := msgs[0].Session
	name := fmt.Sprintf("ViewSession/events=%d", n)
	for run := 0; run < e.Runs; run++ {
		v, err := startView(ctx, e.ReplayBin, path)
		if err != nil {
			return err
		}
		var whole, zoomed, steps time.Duration
		var count int64
		err = func() error {
			t := time.Now()
			if err := v.get("/api/timeline?px=1000", nil); err != nil {
				return err
			}
			whole = time.Since(t)
			var tl struct {
				Count int64 `json:"count"`
			}
			t = time.Now()
			mid := msgs[0].Offset + span/2
			if err := v.get(fmt.Sprintf("/api/timeline?from_ns=%d&to_ns=%d&px=1000", mid, mid+window), &tl); err != nil {
				return err
			}
			zoomed, count = time.Since(t), tl.Count
			t = time.Now()
			if err := v.get("/api/trace/"+session+"/steps?limit=200", nil); err != nil {
				return err
			}
			steps = time.Since(t)
			return nil
		}()
		v.stop()
		if err != nil {
			return err
		}
		e.Emit(Result{Name: name, Metrics: []Metric{
			{ms(whole), "whole-ms"},
			{ms(zoomed), "window-ms"},
			{float64(count), "window-events"},
			{ms(steps), "steps-ms"},
		}})
		e.logf("view session of %d events, run %d: whole timeline %v, window of %d events %v, steps %v", n, run+1, whole, count, zoomed, steps)
	}
	return nil
}
