package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/aaep-tools/aaepkit/capfile"
)

var listeningRE = regexp.MustCompile(`on ws://([0-9.:]+)/aaep/v1/ws`)

// startReplayBinary runs the real aaep-replay with args (which must make it
// listen on 127.0.0.1:0) and returns its address once it says where it
// listens; the process is interrupted at the end of the test.
func startReplayBinary(t *testing.T, args ...string) (addr string, cmd *exec.Cmd, stderr *syncBuffer) {
	t.Helper()
	cmd = exec.Command(replayBin.Path(t), args...)
	stderr = &syncBuffer{}
	cmd.Stderr, cmd.Stdout = stderr, &syncBuffer{}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		if m := listeningRE.FindStringSubmatch(stderr.String()); m != nil {
			return m[1], cmd, stderr
		}
		if time.Now().After(deadline) {
			t.Fatalf("aaep-replay did not start listening: %q", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// pauseCapture is a session with a 33 s pause (a user thinking before a
// confirmation) between its second and third events.
func pauseCapture(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pause.aaep")
	w, err := capfile.Create(path, capfile.Header{Start: time.Now(), Tool: "test",
		Origins: []capfile.Origin{{ID: 0, Transport: "sse", Endpoint: "http://127.0.0.1:9/events"}}}, &capfile.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, at := range []time.Duration{0, 500 * time.Millisecond, 33500 * time.Millisecond, 34 * time.Second} {
		p := fmt.Sprintf(`{"type":"aaep:agent.state.changed","event_id":"evt_%d","session_id":"s","timestamp":"2026-05-24T14:22:00Z","producer":{"agent_id":"a"}}`, i+1)
		if err := w.Append(&capfile.Record{Kind: capfile.KindReceived, Time: int64(at), Session: "s", Payload: []byte(p)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// readWithTimeout reads an SSE stream the way the NVDA add-on's client
// does: a blocking read that fails after timeout without a byte. It returns
// the events' data lines until want of them arrived, or the read error.
func readWithTimeout(addr string, timeout time.Duration, want int) (data []string, comments int, err error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, 0, err
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /events HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n", addr)
	br := bufio.NewReader(conn)
	for len(data) < want {
		_ = conn.SetReadDeadline(time.Now().Add(timeout))
		line, err := br.ReadString('\n')
		if err != nil {
			return data, comments, err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case strings.HasPrefix(line, "data: "):
			data = append(data, line)
		case strings.HasPrefix(line, ":"):
			comments++
		}
	}
	return data, comments, nil
}

// TestServeKeepsATimeoutClientAcrossAPause replays a 33 s pause at 10x
// (3.3 s) to a client with the NVDA add-on's 30 s read timeout scaled the
// same way (3 s): keepalives carry it across, on one connection; without
// them it times out. Afterwards the stream stays open and /stats says the
// subscriber has the whole replay.
//
// The two replays, with keepalives and without, play at the same time:
// each mostly waits out its pause.
func TestServeKeepsATimeoutClientAcrossAPause(t *testing.T) {
	path := pauseCapture(t)
	addr, _, _ := startReplayBinary(t, "serve", path, "--listen", "127.0.0.1:0", "--speed", "10", "--keepalive", "1.5s")
	addr0, _, _ := startReplayBinary(t, "serve", path, "--listen", "127.0.0.1:0", "--speed", "10", "--keepalive", "0")
	type read struct {
		data     []string
		comments int
		err      error
	}
	without := make(chan read, 1)
	go func() {
		data, comments, err := readWithTimeout(addr0, 3*time.Second, 4)
		without <- read{data, comments, err}
	}()
	data, comments, err := readWithTimeout(addr, 3*time.Second, 4)
	w := <-without
	if err != nil || len(data) != 4 || comments == 0 {
		t.Fatalf("with keepalives: %d events, %d comments, err %v; want 4 events over one connection", len(data), comments, err)
	}
	resp, err := http.Get("http://" + addr + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Complete int   `json:"complete"`
		Active   int   `json:"active"`
		Total    int64 `json:"total"`
	}
	err = json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if err != nil || st.Total != 1 {
		t.Fatalf("/stats: %+v %v: want one subscription (no reconnect)", st, err)
	}

	data, err = w.data, w.err
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || len(data) != 2 {
		t.Fatalf("without keepalives: %d events, err %v; want a read timeout after 2", len(data), err)
	}
}

// TestServeRecordListsEverySource records a replay to a WebSocket and an
// SSE subscriber and checks that the header lists every source a record
// uses, as info shows it.
func TestServeRecordListsEverySource(t *testing.T) {
	in, payloads := replayCapture(t)
	record := filepath.Join(t.TempDir(), "wire.aaep")
	addr, cmd, stderr := startReplayBinary(t, "serve", in, "--listen", "127.0.0.1:0", "--no-delay", "--close-at-end", "--record", record)
	d := websocket.Dialer{Subprotocols: []string{"aaep.v1"}, HandshakeTimeout: 10 * time.Second}
	c, _, err := d.Dial("ws://"+addr+"/aaep/v1/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for i := 0; ; i++ {
		if _, _, err := c.ReadMessage(); err != nil {
			if i != len(payloads) {
				t.Fatalf("WebSocket: %d frames, then %v", i, err)
			}
			break
		}
	}
	c.Close()
	resp, err := http.Get("http://" + addr + "/events")
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	n := 0
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data: ") {
			n++
		}
	}
	resp.Body.Close()
	if n != len(payloads) {
		t.Fatalf("SSE: %d events, want %d", n, len(payloads))
	}
	_ = cmd.Process.Signal(os.Interrupt)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve: %v; %s", err, stderr.String())
	}

	r, err := capfile.Open(record)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	listed := map[uint16]string{}
	for _, s := range r.Header().Origins {
		listed[s.ID] = s.Transport
	}
	used := map[uint16]bool{}
	for {
		rec, err := r.Next()
		if err != nil {
			break
		}
		used[rec.Origin] = true
		if _, ok := listed[rec.Origin]; !ok {
			t.Fatalf("record of source %d, not in the header %v", rec.Origin, r.Header().Origins)
		}
	}
	if !used[1] || !used[2] || listed[1] != "websocket" || listed[2] != "sse" {
		t.Errorf("sources used %v, listed %v: want 1 websocket and 2 sse", used, listed)
	}
	_, out, _ := replay(t, "info", record)
	if strings.Contains(out, "not in the header") {
		t.Errorf("info:\n%s", out)
	}
}

// TestServeInteropFlagErrors checks the new flags' usage errors.
func TestServeInteropFlagErrors(t *testing.T) {
	in, _ := replayCapture(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--cors-origin", "localhost:3000"}, "--cors-origin"},
		{[]string{"--keepalive", "-1s"}, "--keepalive"},
		{[]string{"--keepalive", "1ms"}, "want 0 (off) or a duration of at least 1s"},
		{[]string{"--sse-event", "a\nb"}, "--sse-event"},
	} {
		code, _, errb := replay(t, append([]string{"serve", in, "--listen", "127.0.0.1:0"}, tt.args...)...)
		if code != 2 || !strings.Contains(errb, tt.want) {
			t.Errorf("%q: exit %d, stderr %q", tt.args, code, errb)
		}
	}
}
