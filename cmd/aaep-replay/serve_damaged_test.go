package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/cli"
)

// damagedCaptures writes a capture of 400 events in frames of about 2 KiB
// and returns damaged copies of it: torn in the middle of a frame, a
// damaged frame in the middle (index intact), and both.
func damagedCaptures(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "whole.aaep")
	w, err := capfile.Create(path, capfile.Header{Start: time.Now(), Tool: "test"}, &capfile.WriterOptions{FrameSize: 2 << 10, FlushInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 400 {
		p := fmt.Sprintf(`{"type":"aaep:agent.state.changed","event_id":"evt_%04d","session_id":"sess_1","producer":{"agent_id":"cli-test"},"payload":{"n":%d,"note":"%s"}}`, i, i, strings.Repeat("x", i%37))
		if err := w.Append(&capfile.Record{Kind: capfile.KindReceived, Time: int64(i) * int64(time.Millisecond), Session: "sess_1", Payload: []byte(p)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := capfile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	x, err := r.FileIndex()
	r.Close()
	if err != nil || len(x.Frames) < 6 {
		t.Fatalf("%v frames, %v; want 6 or more", x, err)
	}
	mid := func(f capfile.FrameInfo) int64 { return f.Offset + f.Size/2 }
	flip := func(b []byte, off int64) []byte { b = bytes.Clone(b); b[off] ^= 0x10; return b }
	damagedAt, tornAt := mid(x.Frames[2]), mid(x.Frames[len(x.Frames)-2])
	out := map[string]string{}
	for name, b := range map[string][]byte{
		"torn":    data[:tornAt],
		"damaged": flip(data, damagedAt),
		"both":    flip(data, damagedAt)[:tornAt],
	} {
		p := filepath.Join(dir, name+".aaep")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		out[name] = p
	}
	return out
}

// readableEvents are the payloads repair keeps of the capture at path: what
// a replay of it must deliver, in order.
func readableEvents(t *testing.T, path string) []string {
	t.Helper()
	fixed := filepath.Join(t.TempDir(), "fixed.aaep")
	f, err := os.Create(fixed)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := capfile.RepairTo(path, f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r, err := capfile.Open(fixed)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []string
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(rec.Payload))
	}
}

// TestServeDamagedCapture: serve and push deliver every readable record of
// a torn or damaged capture, in order (what repair keeps), skip each damaged
// range, end the replay as a clean end would (4000 replay finished), say at
// start what is damaged and where, and announce each gap as the replay
// passes it.
func TestServeDamagedCapture(t *testing.T) {
	t.Parallel() // its replays and pushes, on loopback, mostly wait
	for name, path := range damagedCaptures(t) {
		want := readableEvents(t, path)
		if len(want) == 0 || len(want) >= 400 {
			t.Fatalf("%s: repair keeps %d of 400 events", name, len(want))
		}
		t.Run("serve "+name, func(t *testing.T) {
			srv := startServe(t, "serve", path, "--listen", "127.0.0.1:0", "--no-delay", "--close-at-end")
			d := websocket.Dialer{Subprotocols: []string{"aaep.v1"}, HandshakeTimeout: 10 * time.Second}
			c, _, err := d.Dial("ws://"+srv.addr+"/aaep/v1/ws", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetReadDeadline(time.Now().Add(20 * time.Second))
			var got []string
			var end error
			for {
				_, msg, err := c.ReadMessage()
				if err != nil {
					end = err
					break
				}
				got = append(got, string(msg))
			}
			if !websocket.IsCloseError(end, 4000) {
				t.Errorf("replay ended with %v, want 4000 (replay finished) as at a clean end", end)
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("got %d events, want the %d that repair keeps, in order", len(got), len(want))
			}
			srv.stop(t)
			stderr := srv.errb.String()
			t.Logf("stderr:\n%s", stderr)
			start := stderr[:strings.Index(stderr, "aaep-replay: serving ")]
			if name != "torn" && !strings.Contains(start, "the replay skips bytes ") {
				t.Errorf("nothing said at start of the damaged range; stderr:\n%s", stderr)
			}
			if name != "damaged" && !strings.Contains(start, "torn") {
				t.Errorf("nothing said at start of the torn tail; stderr:\n%s", stderr)
			}
			if !strings.Contains(srv.out.String()+stderr, "damaged capture: bytes ") {
				t.Errorf("no gap announced during the replay; stdout %q, stderr %q", srv.out.String(), stderr)
			}
		})
		t.Run("push "+name, func(t *testing.T) {
			url, frames := listeningSubscriber(t, 20*time.Second)
			var out, errb syncBuffer
			code := run(context.Background(), cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb},
				[]string{"push", path, "--to", url, "--no-delay"})
			if code != 0 {
				t.Errorf("exit %d: %s", code, errb.String())
			}
			if got := <-frames; strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("subscriber got %d events, want the %d that repair keeps, in order", len(got), len(want))
			}
		})
	}
}
