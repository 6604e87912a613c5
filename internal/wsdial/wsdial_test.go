package wsdial

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// limit bounds each wait of these tests; the dials themselves are given an
// hour, so that only the context can end them.
const limit = 20 * time.Second

// silent listens on 127.0.0.1, accepts a connection and reads from it
// without ever answering; got reports each byte read first (the request
// has begun to arrive).
func silent(t *testing.T) (addr string, got <-chan struct{}) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	ch := make(chan struct{}, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		t.Cleanup(func() { c.Close() })
		buf := make([]byte, 1)
		if _, err := c.Read(buf); err == nil {
			ch <- struct{}{}
		}
	}()
	return l.Addr().String(), ch
}

// TestCancelEndsHandshake: a peer that accepts the connection and never
// answers the upgrade; cancelling the context ends the dial at once, with
// an error that says so, whether the dialer makes its connections itself
// or through NetDialContext or NetDial.
func TestCancelEndsHandshake(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    websocket.Dialer
	}{
		{"default dial", websocket.Dialer{HandshakeTimeout: time.Hour}},
		{"NetDialContext", websocket.Dialer{HandshakeTimeout: time.Hour, NetDialContext: (&net.Dialer{}).DialContext}},
		{"NetDial", websocket.Dialer{HandshakeTimeout: time.Hour, NetDial: net.Dial}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, got := silent(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				ws, _, err := Dial(ctx, &tc.d, "ws://"+addr+"/", nil)
				if ws != nil {
					ws.Close()
				}
				done <- err
			}()
			select {
			case <-got:
			case <-time.After(limit):
				t.Fatal("the dial never sent its request")
			}
			cancel()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("Dial cancelled in the handshake: %v, want an error wrapping context.Canceled", err)
				}
			case <-time.After(limit):
				t.Fatalf("Dial still in the handshake %v after its context ended", limit)
			}
		})
	}
}

// TestDialAnswered: a peer that answers connects as d.DialContext does,
// and the connection works once the dial is over (no deadline left on it).
func TestDialAnswered(t *testing.T) {
	up := websocket.Upgrader{Subprotocols: []string{"aaep.v1"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		_, msg, err := c.ReadMessage()
		if err == nil {
			c.WriteMessage(websocket.TextMessage, append([]byte("echo "), msg...))
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	d := websocket.Dialer{Subprotocols: []string{"aaep.v1"}, HandshakeTimeout: limit}
	ws, resp, err := Dial(ctx, &d, "ws"+strings.TrimPrefix(srv.URL, "http")+"/", nil)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer ws.Close()
	cancel() // the dial is over: ending its context changes nothing now
	if resp.StatusCode != http.StatusSwitchingProtocols || ws.Subprotocol() != "aaep.v1" {
		t.Fatalf("answer %s, subprotocol %q", resp.Status, ws.Subprotocol())
	}
	if err := ws.WriteMessage(websocket.TextMessage, []byte("hi")); err != nil {
		t.Fatalf("write after the dial: %v", err)
	}
	ws.SetReadDeadline(time.Now().Add(limit))
	if _, msg, err := ws.ReadMessage(); err != nil || string(msg) != "echo hi" {
		t.Fatalf("read after the dial: %q, %v", msg, err)
	}
}

// TestDialerUnchanged: Dial leaves the caller's dialer as it was.
func TestDialerUnchanged(t *testing.T) {
	d := websocket.Dialer{HandshakeTimeout: time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	Dial(ctx, &d, "ws://127.0.0.1:1/", nil)
	if d.NetDialContext != nil {
		t.Fatal("Dial set the caller's NetDialContext")
	}
}
