package serve

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/timing"
)

// bigRecords returns n events of about size bytes each.
func bigRecords(n, size int) []rec {
	pad := strings.Repeat("x", size)
	recs := make([]rec, n)
	for i := range recs {
		recs[i] = rec{kind: capfile.KindReceived, at: time.Duration(i) * time.Microsecond,
			payload: ev(i, "output.streaming", "sess_big", fmt.Sprintf(`,"chunk":"%s"`, pad))}
	}
	return recs
}

// dialStalled opens a WebSocket that is never read, with a small receive buffer.
func dialStalled(t *testing.T, url string) *websocket.Conn {
	t.Helper()
	d := websocket.Dialer{
		Subprotocols:     []string{Subprotocol},
		HandshakeTimeout: testTimeout,
		NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err == nil {
				c.(*net.TCPConn).SetReadBuffer(4096)
			}
			return c, err
		},
	}
	c, _, err := d.Dial(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestStalledBesideHealthy checks that a subscriber that stops reading is
// closed and counted, while a healthy one beside it gets every event.
func TestStalledBesideHealthy(t *testing.T) {
	recs := bigRecords(200, 64<<10) // about 13 MB: more than the socket buffers hold
	path := writeCapture(t, recs)
	tests := []struct {
		name   string
		shared bool
		causes []string // either may win the race on a shared timeline
	}{
		{"own timelines", false, []string{CauseStalled}},
		{"shared timeline", true, []string{CauseTooSlow, CauseStalled}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, ts := startServer(t, Options{
				Open: OpenFile(path), Timing: timing.Config{NoDelay: true}, Shared: tt.shared, CloseAtEnd: true,
				// The bounds leave a healthy reader starved of CPU by a
				// loaded machine time to catch up (at 8 events and 300 ms
				// it was closed at load 12); the stalled one still fills
				// them many times over (13 MB).
				Grace: time.Millisecond, QueueSize: 32, WriteTimeout: 2 * time.Second,
			})
			// The healthy subscriber comes first, so that on the shared
			// timeline it sees every event; it reads while the stalled one joins.
			healthy := dialWS(t, ts)
			type result struct {
				frames [][]byte
				ce     *websocket.CloseError
			}
			done := make(chan result, 1)
			go func() {
				frames, ce := readAllNoFatal(healthy)
				done <- result{frames, ce}
			}()
			waitFor(t, func() bool { st := srv.Stats(); return st.Active == 1 && st.Subscribers[0].Sent > 0 })
			dialStalled(t, wsURL(ts, "/aaep/v1/ws"))
			r := <-done
			if r.ce == nil || r.ce.Code != CloseClean {
				t.Fatalf("healthy closed with %v after %d frames", r.ce, len(r.frames))
			}
			sameFrames(t, r.frames, received(recs))
			waitIdle(t, srv)
			st := srv.Stats()
			var violations int64
			for _, c := range tt.causes {
				violations += st.Closes[c]
			}
			if violations != 1 || st.Closes[CauseFinished] != 1 || st.Total != 2 {
				t.Fatalf("closes %v, want one of %v and one finished", st.Closes, tt.causes)
			}
			for _, s := range st.Subscribers {
				if s.Close.Cause != CauseFinished {
					if s.Close.Code != CloseViolation || s.Sent >= int64(len(recs)) || s.State != "closed" {
						t.Errorf("stalled subscriber: %+v", s)
					}
				}
			}
		})
	}
}
