package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/cli"
)

// syncBuffer is a bytes.Buffer safe for the command and the test at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// replayCapture writes a three-event capture.
func replayCapture(t *testing.T) (string, []string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "in.aaep")
	w, err := capfile.Create(path, capfile.Header{Start: time.Now(), Tool: "test"}, &capfile.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var payloads []string
	for i, typ := range []string{"session.started", "state.changed", "session.completed"} {
		p := `{"type":"aaep:agent.` + typ + `","event_id":"evt_` + string(rune('a'+i)) + `","session_id":"sess_1","producer":{"agent_id":"cli-test"}}`
		payloads = append(payloads, p)
		if err := w.Append(&capfile.Record{Kind: capfile.KindReceived, Time: int64(i) * int64(time.Millisecond), Session: "sess_1", Payload: []byte(p)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path, payloads
}

var servingRE = regexp.MustCompile(`on ws://([0-9.:]+)/aaep/v1/ws`)

// servingCmd is an aaep-replay serve run in the background.
type servingCmd struct {
	addr      string
	out, errb *syncBuffer
	done      chan int
	cancel    context.CancelFunc
}

// startServe runs aaep-replay with args (which must make it serve on
// 127.0.0.1:0) and waits for the line that says where it listens.
func startServe(t *testing.T, args ...string) *servingCmd {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s := &servingCmd{out: &syncBuffer{}, errb: &syncBuffer{}, done: make(chan int, 1), cancel: cancel}
	go func() {
		s.done <- run(ctx, cli.Streams{In: strings.NewReader(""), Out: s.out, Err: s.errb}, args)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for s.addr == "" {
		if m := servingRE.FindStringSubmatch(s.errb.String()); m != nil {
			s.addr = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("no serving line; stderr %q", s.errb.String())
		} else {
			time.Sleep(5 * time.Millisecond)
		}
	}
	return s
}

// stop cancels the command (as SIGINT would) and returns its exit status.
func (s *servingCmd) stop(t *testing.T) int {
	t.Helper()
	s.cancel()
	select {
	case code := <-s.done:
		return code
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop after cancel")
		return -1
	}
}

func TestServeCommand(t *testing.T) {
	in, payloads := replayCapture(t)
	record := filepath.Join(t.TempDir(), "wire.aaep")
	// The documented short form, rewritten by root to "serve".
	srv := startServe(t, "--input", in, "--listen", "127.0.0.1:0", "--no-delay", "--close-at-end", "--record", record)
	addr, out, errb := srv.addr, srv.out, srv.errb
	deadline := time.Now().Add(10 * time.Second)
	d := websocket.Dialer{Subprotocols: []string{"aaep.v1"}, HandshakeTimeout: 10 * time.Second}
	c, _, err := d.Dial("ws://"+addr+"/aaep/v1/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var got []string
	for {
		_, msg, err := c.ReadMessage()
		if err != nil {
			if !websocket.IsCloseError(err, 4000) {
				t.Fatalf("read: %v", err)
			}
			break
		}
		got = append(got, string(msg))
	}
	if strings.Join(got, "\n") != strings.Join(payloads, "\n") {
		t.Fatalf("got %q, want %q", got, payloads)
	}
	for !strings.Contains(out.String(), "closed (4000 replay finished): 3 events") {
		if time.Now().After(deadline) {
			t.Fatalf("no summary line; stdout %q", out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if code := srv.stop(t); code != 0 {
		t.Fatalf("exit %d; stderr %q", code, errb.String())
	}
	r, err := capfile.Open(record)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if m := r.Header().Meta; m["replay_of"] != "in.aaep" || m["replay_speed"] != "no-delay" || m["replay_of_start"] == "" {
		t.Errorf("recording meta %v", m)
	}
	var events int
	for {
		rec, err := r.Next()
		if err != nil {
			break
		}
		if rec.Kind == capfile.KindReceived {
			events++
		}
	}
	if events != 3 {
		t.Fatalf("recording holds %d events, want 3", events)
	}
}

func TestPushCommand(t *testing.T) {
	in, payloads := replayCapture(t)
	url, got := listeningSubscriber(t, 10*time.Second)
	var out, errb syncBuffer
	code := run(context.Background(), cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb},
		[]string{"push", in, "--to", url, "--speed", "100", "--json"})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if frames := <-got; strings.Join(frames, "\n") != strings.Join(payloads, "\n") {
		t.Fatalf("subscriber got %q", frames)
	}
	if !strings.Contains(out.String(), `"kind":"closed"`) {
		t.Errorf("no JSON summary in %q", out.String())
	}
}

func TestReplayCommandErrors(t *testing.T) {
	in, _ := replayCapture(t)
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := "ws" + strings.TrimPrefix(closed.URL, "http")
	closed.Close()
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"speed too high", []string{"serve", in, "--speed", "5000"}, 2, `invalid argument "5000" for "--speed" flag: want a number from 0.01 to 1000`},
		{"speed NaN", []string{"serve", in, "--speed", "NaN"}, 2, `invalid argument "NaN" for "--speed" flag: want a number from 0.01 to 1000`},
		{"speed Inf", []string{"serve", in, "--speed", "+Inf"}, 2, `invalid argument "+Inf" for "--speed" flag`},
		{"speed zero", []string{"serve", in, "--speed", "0"}, 2, `invalid argument "0" for "--speed" flag`},
		{"push speed NaN", []string{"push", in, "--to", "ws://127.0.0.1:1/", "--speed", "nan"}, 2, `invalid argument "nan" for "--speed" flag`},
		{"info speed NaN", []string{"info", in, "--speed", "NaN"}, 2, `invalid argument "NaN" for "--speed" flag`},
		{"info speed zero", []string{"info", in, "--speed", "0"}, 2, `invalid argument "0" for "--speed" flag`},
		{"info negative gap", []string{"info", in, "--gap", "-1s"}, 2, `invalid argument "-1s" for "--gap" flag: want a positive duration`},
		{"negative max-idle", []string{"serve", in, "--max-idle", "-2s"}, 2, `"--max-idle" flag: want 0 (no cap) or a positive duration`},
		{"negative loop", []string{"serve", in, "--loop", "-1"}, 2, `invalid argument "-1" for "--loop" flag: want 0 (forever) or a positive whole number`},
		{"zero max findings", []string{"check", in, "--max-findings", "0"}, 2, `invalid argument "0" for "--max-findings" flag`},
		{"wrong argument count", []string{"serve"}, 2, "serve needs the capture FILE"},
		{"bad from", []string{"serve", in, "--from", "soon"}, 2, "--from"},
		{"record over input", []string{"serve", in, "--record", in}, 2, "same file as an input"},
		{"missing capture", []string{"serve", filepath.Join(t.TempDir(), "none.aaep")}, 2, "none.aaep"},
		{"busy port", []string{"serve", in, "--listen", "256.0.0.1:1"}, 1, "listen on"},
		{"push without ws url", []string{"push", in, "--to", "http://x"}, 2, "want a ws:// or wss:// URL"},
		{"push nobody listening", []string{"push", in, "--to", closedURL}, 1, "connect to"},
		{"push bad until", []string{"push", in, "--to", "ws://127.0.0.1:1/", "--until", "x"}, 2, "--until"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb syncBuffer
			code := run(context.Background(), cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, tt.args)
			if code != tt.code || !strings.Contains(errb.String(), tt.msg) {
				t.Fatalf("exit %d stderr %q, want %d and %q", code, errb.String(), tt.code, tt.msg)
			}
		})
	}
}

// TestServeStopsWithOpenSSE checks that an interrupt ends a serve whose SSE
// subscriber is still connected, with exit status 0 and the subscriber's
// summary.
func TestServeStopsWithOpenSSE(t *testing.T) {
	path := filepath.Join(t.TempDir(), "long.aaep")
	w, err := capfile.Create(path, capfile.Header{Start: time.Now(), Tool: "test"}, &capfile.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, at := range []time.Duration{0, time.Hour} {
		p := `{"type":"aaep:agent.session.started","event_id":"evt_` + string(rune('a'+i)) + `","session_id":"sess_1"}`
		if err := w.Append(&capfile.Record{Kind: capfile.KindReceived, Time: int64(at), Payload: []byte(p)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, "serve", path, "--listen", "127.0.0.1:0")
	addr, out, errb := srv.addr, srv.out, srv.errb
	resp, err := http.Get("http://" + addr + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 1)
	if _, err := resp.Body.Read(buf); err != nil { // the first event arrived
		t.Fatal(err)
	}
	if code := srv.stop(t); code != 0 {
		t.Fatalf("exit %d; stderr %q", code, errb.String())
	}
	if !strings.Contains(out.String(), "closed (1001 server shutting down)") {
		t.Errorf("stdout %q lacks the shutdown summary", out.String())
	}
}

// listeningSubscriber is a WebSocket subscriber that listens, for push: it
// reads the frames of one connection for at most readFor and sends them on
// the channel once the connection ends.
func listeningSubscriber(t *testing.T, readFor time.Duration) (url string, frames <-chan []string) {
	t.Helper()
	got := make(chan []string, 1)
	up := websocket.Upgrader{Subprotocols: []string{"aaep.v1"}}
	l := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		var frames []string
		c.SetReadDeadline(time.Now().Add(readFor))
		for {
			_, msg, err := c.ReadMessage()
			if err != nil {
				break
			}
			frames = append(frames, string(msg))
		}
		got <- frames
	}))
	t.Cleanup(l.Close)
	return "ws" + strings.TrimPrefix(l.URL, "http") + "/sub", got
}
