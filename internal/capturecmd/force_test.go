package capturecmd

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/aaep-tools/aaepkit/transport/transporttest"
)

// handshakeOnly is a WebSocket producer that accepts the connection, reads
// the subscription.request and then, with abrupt, drops the TCP connection,
// or else closes with code 1000: it never sends a message of its own.
func handshakeOnly(t *testing.T, abrupt bool) string {
	t.Helper()
	up := websocket.Upgrader{Subprotocols: []string{"aaep.v1"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, _, err := c.ReadMessage(); err != nil {
			return
		}
		if abrupt {
			_ = c.NetConn().Close()
			return
		}
		_ = c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "bye"), time.Now().Add(time.Second))
		for {
			if _, _, err := c.ReadMessage(); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/aaep/v1/ws"
}

// TestCaptureForceNeedsAProducerMessage: --force replaces a capture only
// with a recording, one that holds a message the producer sent. What the
// recorder writes itself (connection records, its own subscription.request)
// and the producer's answer to it are not one: a producer that reads the
// request and closes (cleanly or not), one that only answers the handshake,
// and an --exec producer that exits at once all leave the earlier capture
// as it was, exit 1 saying so. A producer that sends events replaces it.
func TestCaptureForceNeedsAProducerMessage(t *testing.T) {
	dir := jsonlDir(t)
	if code, _, stderr := runCapture(t, dir, "events.jsonl", "-o", "session.aaep"); code != 0 {
		t.Fatalf("first recording: exit %d, %s", code, stderr)
	}
	path := filepath.Join(dir, "session.aaep")
	earlier, _ := os.ReadFile(path)
	answers := (&transporttest.WSProducer{}).Start(t)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"request read, close 1000", []string{handshakeOnly(t, false)}},
		{"request read, connection dropped", []string{handshakeOnly(t, true)}},
		{"handshake answered, close 1000", []string{answers}},
		{"--exec -- false", []string{"--exec", "--", "false"}},
	} {
		args := append([]string{"-o", "session.aaep", "--force", "--max-retries", "0"}, c.args...)
		code, _, stderr := runCapture(t, dir, args...)
		if code != 1 || !strings.Contains(stderr, "session.aaep: no message was recorded; the existing file is kept, not replaced") {
			t.Errorf("%s: exit %d, %q; want 1 and the file kept", c.name, code, stderr)
		}
		if got, _ := os.ReadFile(path); !bytes.Equal(got, earlier) {
			t.Fatalf("%s: the earlier capture was replaced", c.name)
		}
		noTemp(t, dir)
	}
	events := (&transporttest.WSProducer{Frames: transporttest.Frames(transporttest.Events(3))}).Start(t)
	code, _, stderr := runCapture(t, dir, events, "-o", "session.aaep", "--force", "--max-retries", "0")
	if code != 0 {
		t.Fatalf("a producer that sends events: exit %d, %s", code, stderr)
	}
	got, _ := os.ReadFile(path)
	if n := received(t, got); n != 4 { // subscription.accepted and 3 events
		t.Errorf("the replacing capture holds %d received messages, want 4", n)
	}
}

// TestCaptureEnumeratedFlagValues: a value an enumerated flag does not have
// (--urgency critcal) is a usage error before anything is opened: exit 2,
// naming the values that exist, and no file is touched, even with --force.
func TestCaptureEnumeratedFlagValues(t *testing.T) {
	dir := jsonlDir(t)
	if code, _, stderr := runCapture(t, dir, "events.jsonl", "-o", "session.aaep"); code != 0 {
		t.Fatalf("first recording: exit %d, %s", code, stderr)
	}
	path := filepath.Join(dir, "session.aaep")
	earlier, _ := os.ReadFile(path)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--urgency", "critcal"}, `--urgency "critcal": want background, normal or critical`},
		{[]string{"--urgency", "critical", "--urgency", "Normal"}, `--urgency "Normal": want background, normal or critical`},
		{[]string{"--framing", "lpx", "--endpoint", "unix:///nowhere.sock"}, `unknown framing "lpx" (want lp, ndjson or auto)`},
	} {
		args := append([]string{"events.jsonl", "-o", "session.aaep", "--force"}, c.args...)
		code, _, stderr := runCapture(t, dir, args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, stderr, c.want)
		}
		if got, _ := os.ReadFile(path); !bytes.Equal(got, earlier) {
			t.Fatalf("%v: the earlier capture was replaced", c.args)
		}
		noTemp(t, dir)
	}
}
