package capturecmd

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/transport/transporttest"
)

// freePort returns a loopback address nothing listens on (just closed).
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// headerWaitQuiet is how long the producer of
// TestCaptureWaitsForResponseHeaders keeps its response headers back.
const headerWaitQuiet = 32 * time.Second

// headerWait is the recording TestCaptureWaitsForResponseHeaders checks. It
// is made once per test binary, started by TestMain before the tests run:
// most of its time is the producer's silence, which it sits out beside the
// other tests instead of after them (a parallel test only starts once the
// serial ones are done).
var headerWait struct {
	once    sync.Once
	started bool
	done    chan struct{}
	cancel  context.CancelFunc
	dir     string // holds the recording
	events  [][]byte
	res     result
	setup   error // the producer could not be started
	timeout bool  // the bound ended the recording, not the recorder itself
}

// startHeaderWait starts headerWait's recording in the background: a
// producer that, like Node's HTTP server, sends no response headers until
// its first event, headerWaitQuiet after the request, recorded as
// captureWithin would with a bound of headerWaitQuiet+30 s.
func startHeaderWait() {
	headerWait.once.Do(func() {
		hw := &headerWait
		hw.started = true
		hw.done = make(chan struct{})
		hw.events = transporttest.Events(3)
		ctx, cancel := context.WithTimeout(context.Background(), headerWaitQuiet+30*time.Second)
		hw.cancel = cancel
		fail := func(err error) { hw.setup = err; cancel(); close(hw.done) }
		dir, err := os.MkdirTemp("", "aaep-capture-headerwait")
		if err != nil {
			fail(err)
			return
		}
		hw.dir = dir
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-time.After(headerWaitQuiet):
			case <-r.Context().Done():
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			for _, e := range hw.events {
				fmt.Fprintf(w, "data: %s\n\n", e)
			}
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		})}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fail(err)
			return
		}
		go srv.Serve(ln)
		args := []string{"http://" + ln.Addr().String() + "/events", "-o", filepath.Join(dir, "idle.aaep"), "--max-events", "3"}
		go func() {
			defer close(hw.done)
			defer srv.Close()
			var out, errb syncBuffer
			code := run(ctx, cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb, ErrIsTTY: true}, args)
			hw.timeout = ctx.Err() == context.DeadlineExceeded
			hw.res = result{code, out.String(), errb.String()}
		}()
	})
}

// stopHeaderWait ends headerWait's recording if it still runs (its test
// was not run) and removes it; TestMain calls it after the tests.
func stopHeaderWait() {
	if !headerWait.started {
		return
	}
	headerWait.cancel()
	<-headerWait.done
	if headerWait.dir != "" {
		os.RemoveAll(headerWait.dir)
	}
}

// TestCaptureWaitsForResponseHeaders records a producer that, like Node's
// HTTP server, sends no response headers until its first event, 32 s after
// the request (beyond the 30 s after which the recorder used to give up):
// the recording waits, shows the wait on its progress line, and gets every
// event. The recording is headerWait's, started by TestMain.
func TestCaptureWaitsForResponseHeaders(t *testing.T) {
	t.Parallel()
	startHeaderWait() // already started, unless the test binary has another TestMain
	<-headerWait.done // bounded by the recording's own timeout
	if headerWait.setup != nil {
		t.Fatal(headerWait.setup)
	}
	res := headerWait.res
	if headerWait.timeout {
		t.Fatalf("aaep-capture did not stop by itself; stderr:\n%s", res.stderr)
	}
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	_, recs := readCapture(t, filepath.Join(headerWait.dir, "idle.aaep"))
	checkEvents(t, recs, headerWait.events)
	if !strings.Contains(res.stderr, "waiting for response headers 31s") {
		t.Errorf("the progress line never showed the wait; stderr %q", res.stderr)
	}
	if strings.Contains(res.stderr, "failed") {
		t.Errorf("the wait counted as a failure: %q", res.stderr)
	}
}

// TestCaptureRefusedFirstAttempt runs the real aaep-capture against an
// address nothing listens on: it fails at once (exit 1) saying why; with
// --wait it retries, printing each attempt, until the producer is up.
func TestCaptureRefusedFirstAttempt(t *testing.T) {
	addr := freePort(t)
	out := filepath.Join(t.TempDir(), "none.aaep")
	cmd := exec.Command(binary(t), "http://"+addr, "-o", out)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit %v, want 1; stderr %q", err, stderr.String())
	}
	for _, want := range []string{"attempt 1 failed:", "connection refused", "--wait"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q: %q", want, stderr.String())
		}
	}
	if strings.Contains(stderr.String(), "attempt 2") {
		t.Errorf("retried without --wait: %q (took %v)", stderr.String(), took)
	}

	// With --wait: attempts are retried and shown until the producer comes.
	out = filepath.Join(t.TempDir(), "later.aaep")
	cmd, errb := startBinary(t, "ws://"+addr+"/aaep/v1/ws", "-o", out, "--wait", "--max-retries", "-1", "--retry-max-wait", "100ms", "--max-events", "4")
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(errb.String(), "attempt 3 failed") {
		if time.Now().After(deadline) {
			t.Fatalf("no third attempt shown: %q", errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the port was taken meanwhile: %v", err)
	}
	srv := &http.Server{Handler: &transporttest.WSProducer{Frames: transporttest.Frames(transporttest.Events(4)), Hold: true}}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("aaep-capture --wait: %v; stderr %q", err, errb.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("aaep-capture --wait did not record the producer; stderr %q", errb.String())
	}
	_, recs := readCapture(t, out)
	if n := len(kinds(recs, capfile.KindReceived)); n < 4 {
		t.Errorf("recorded %d messages, want the 4 events", n)
	}
}

// TestCaptureAttemptsOnProgressLine checks that a failing attempt and its
// reason are on the progress line as well as on stderr.
func TestCaptureAttemptsOnProgressLine(t *testing.T) {
	addr := freePort(t)
	res := capture(t, true, "http://"+addr+"/events", "-o", filepath.Join(t.TempDir(), "x.aaep"),
		"--wait", "--max-retries", "3", "--retry-max-wait", "400ms")
	if res.code != 1 {
		t.Fatalf("exit %d, want 1: %s", res.code, res.stderr)
	}
	if !strings.Contains(res.stderr, "\r\x1b[K0 events") || !strings.Contains(res.stderr, "connection refused (retry in") {
		t.Errorf("progress line without the failed attempt: %q", res.stderr)
	}
	for i := 1; i <= 4; i++ {
		if !strings.Contains(res.stderr, fmt.Sprintf("attempt %d failed: ", i)) {
			t.Errorf("attempt %d not printed: %q", i, res.stderr)
		}
	}
}

// TestCaptureWebSocketSubscribesToEverything checks the default
// subscription.request (reply support claimed, so that the producer sends
// awaiting.confirmation/clarification) and that the summary says what a
// producer's answer withheld anyway.
func TestCaptureWebSocketSubscribesToEverything(t *testing.T) {
	p := &transporttest.WSProducer{
		Frames:   transporttest.Frames(transporttest.Events(3)),
		Accepted: []byte(`{"type":"subscription.accepted","subscription_id":"sub_x","aaep_version":"1.0.0","producer":{"agent_id":"a"},"honored_capabilities":{"supports_confirmation_reply":false,"supports_clarification_reply":true,"event_filters":{"include":["aaep:agent.*"],"exclude":["aaep:agent.progress.updated"]}}}`),
	}
	url := p.Start(t)
	res := capture(t, false, url, "-o", filepath.Join(t.TempDir(), "ws.aaep"), "--json")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	got := p.Received()
	if len(got) == 0 {
		t.Fatal("the producer received no subscription.request")
	}
	var req struct {
		Type string `json:"type"`
		Caps struct {
			Confirm *bool `json:"supports_confirmation_reply"`
			Clarify *bool `json:"supports_clarification_reply"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(got[0], &req); err != nil || req.Type != "subscription.request" || req.Caps.Confirm == nil || !*req.Caps.Confirm || req.Caps.Clarify == nil || !*req.Caps.Clarify {
		t.Fatalf("request %s: want reply support claimed", got[0])
	}
	for _, want := range []string{"the producer withheld: agent.awaiting.confirmation (supports_confirmation_reply: false)", "aaep:agent.progress.updated (event_filters exclude)"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("summary lacks %q: %q", want, res.stderr)
		}
	}
	var sum summary
	if err := json.Unmarshal([]byte(res.stdout), &sum); err != nil || len(sum.Withheld) != 2 {
		t.Errorf("JSON summary withheld %q (%v)", sum.Withheld, err)
	}

	// A producer that honours everything: nothing is said.
	p2 := &transporttest.WSProducer{Frames: transporttest.Frames(transporttest.Events(3))}
	res = capture(t, false, p2.Start(t), "-o", filepath.Join(t.TempDir(), "ws2.aaep"))
	if res.code != 0 || strings.Contains(res.stderr, "withheld") {
		t.Errorf("exit %d, stderr %q", res.code, res.stderr)
	}
}
