package serve

import (
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gorilla/websocket"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/timing"
)

// frameWire keeps a copy of every frame written, in order (events are
// recycled once written, so their bytes are copied). onEvent, when set, is
// called by the writer as it writes the event of record index i, and may
// hold it there.
type frameWire struct {
	mu      sync.Mutex
	frames  []frame
	code    int
	onEvent func(index int64)
}

type frame struct {
	control bool
	payload []byte
}

func (w *frameWire) write(ev *event) error {
	w.mu.Lock()
	w.frames = append(w.frames, frame{control: ev.Control, payload: append([]byte(nil), ev.Payload...)})
	hook := w.onEvent
	w.mu.Unlock()
	if hook != nil && !ev.Control {
		hook(ev.Index)
	}
	return nil
}

func (w *frameWire) flush() error     { return nil }
func (w *frameWire) interrupt()       {}
func (w *frameWire) keepalive() error { return nil }
func (w *frameWire) close(code int, _ string) {
	w.mu.Lock()
	w.code = code
	w.mu.Unlock()
}

// mixedRecords is a capture of n events 1 ms apart: streamed output, with
// a progress update every 7th and a tool call every 5th.
func mixedRecords(n int) []rec {
	recs := make([]rec, n)
	for i := range recs {
		typ, extra := "output.streaming", fmt.Sprintf(`,"output_id":"out_1","chunk":"part %d","position":%d`, i, i)
		switch {
		case i%7 == 3:
			typ, extra = "progress.updated", `,"urgency":"background"`
		case i%5 == 4:
			typ, extra = "tool.invoked", `,"tool":"fetch"`
		}
		recs[i] = rec{kind: capfile.KindReceived, at: time.Duration(i) * time.Millisecond, payload: ev(i, typ, "sess_a", extra)}
	}
	return recs
}

// Requests used below. noProgress narrows the stream; emptyCaps takes the
// default filter (aaep:agent.*), which needs each event's type: the case
// where a late request used to cost the event being read.
const (
	noProgress = `{"type":"subscription.request","aaep_version":"1.0.0","subscriber_id":"edge","capabilities":{"event_filters":{"include":["*"],"exclude":["aaep:agent.progress.*"]}}}`
	emptyCaps  = `{"type":"subscription.request","aaep_version":"1.0.0","capabilities":{}}`
	badVersion = `{"type":"subscription.request","aaep_version":"9.0.0","capabilities":{}}`
)

// checkSwitch holds frames against the capture: every event in order, an
// answer at most once, the events before it as the old terms let them
// through, the events after it as the new terms do. It returns the answer's
// frame index (-1 when there is none).
func checkSwitch(t *testing.T, frames []frame, capture [][]byte, before, after func(p []byte) bool) int {
	t.Helper()
	at := -1
	next := 0 // next capture event to look for
	for i, f := range frames {
		if f.control {
			if at >= 0 {
				t.Fatalf("second answer at frame %d (first at %d)", i, at)
			}
			at = i
			continue
		}
		allowed := before
		if at >= 0 {
			allowed = after
		}
		for next < len(capture) && !allowed(capture[next]) {
			next++
		}
		if next == len(capture) {
			t.Fatalf("frame %d is not a capture event due there: %.80s", i, f.payload)
		}
		if digest(f.payload) != digest(capture[next]) {
			t.Fatalf("frame %d: got %.80s\nwant %.80s (capture event %d)", i, f.payload, capture[next], next)
		}
		next++
	}
	allowed := before
	if at >= 0 {
		allowed = after
	}
	for ; next < len(capture); next++ {
		if allowed(capture[next]) {
			t.Fatalf("capture event %d never delivered: %.80s", next, capture[next])
		}
	}
	return at
}

func all([]byte) bool { return true }

func typeIs(frag string) func([]byte) bool {
	return func(p []byte) bool { return strings.Contains(payload.Decode(p).Routing.Type, frag) }
}

func not(f func([]byte) bool) func([]byte) bool { return func(p []byte) bool { return !f(p) } }

// runEdge runs one WebSocket subscription over a frameWire inside a
// synctest bubble: request arrives at the given time after connecting (or,
// with atIndex ≥ 0, while the writer is held on that event), through the
// same path a WebSocket reader takes.
func runEdge(t *testing.T, opts Options, request string, at time.Duration, atIndex int64) (*Server, *frameWire) {
	t.Helper()
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	w := &frameWire{}
	sub, err := srv.newSubscriber(TransportWebSocket, "memory", "", w, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := newGreeting()
	if atIndex >= 0 {
		// Hold the writer on that event until the request has been
		// handled, as a reader on another goroutine would have.
		w.onEvent = func(i int64) {
			if i == atIndex {
				srv.receive(sub, g, []byte(request), true)
			}
		}
	} else {
		go func() {
			time.Sleep(at)
			srv.receive(sub, g, []byte(request), true)
		}()
	}
	srv.runSubscription(sub, g)
	synctest.Wait()
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	return srv, w
}

// TestLateHandshakeLosesNothing places a subscription.request just before,
// at and just after the grace period, and in the middle of fast replays;
// every frame is compared with the capture.
func TestLateHandshakeLosesNothing(t *testing.T) {
	recs := mixedRecords(300)
	capture := received(recs)
	progress := typeIs("progress.")
	tests := []struct {
		name    string
		timing  timing.Config
		request string
		at      time.Duration // after connecting (with atIndex -1)
		atIndex int64         // or while this event is being written
		after   func([]byte) bool
		// answerAt is the frame the answer must be (-2: any, the order of
		// two things due at the same instant being open).
		answerAt int
	}{
		{name: "before the grace", request: noProgress, at: DefaultGrace - time.Nanosecond, atIndex: -1, after: not(progress), answerAt: 0},
		{name: "at the grace", request: noProgress, at: DefaultGrace, atIndex: -1, after: not(progress), answerAt: -2},
		{name: "just after the grace", request: noProgress, at: DefaultGrace + time.Nanosecond, atIndex: -1, after: not(progress), answerAt: 1},
		{name: "after the grace, default filter", request: emptyCaps, at: DefaultGrace + 20*time.Millisecond + time.Nanosecond, atIndex: -1, after: all, answerAt: 21},
		{name: "middle of a no-delay replay", timing: timing.Config{NoDelay: true}, request: noProgress, atIndex: 150, after: not(progress), answerAt: 151},
		{name: "middle of a no-delay replay, default filter", timing: timing.Config{NoDelay: true}, request: emptyCaps, atIndex: 150, after: all, answerAt: 151},
		{name: "middle of a 100x replay", timing: timing.Config{Speed: 100}, request: noProgress, atIndex: 77, after: not(progress), answerAt: 78},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv, w := runEdge(t, Options{CloseAtEnd: true, Open: memOpener(recs), Timing: tt.timing}, tt.request, tt.at, tt.atIndex)
				at := checkSwitch(t, w.frames, capture, all, tt.after)
				if at < 0 || tt.answerAt >= 0 && at != tt.answerAt {
					t.Fatalf("answer at frame %d, want %d", at, tt.answerAt)
				}
				if !strings.Contains(string(w.frames[at].payload), `"subscription.accepted"`) || w.code != CloseClean {
					t.Fatalf("answer %s, close %d", w.frames[at].payload, w.code)
				}
				s := srv.Stats().Subscribers[0]
				if !s.Negotiated || s.Dropped != 0 || int(s.Sent)+1 != len(w.frames) {
					t.Fatalf("stats %+v", s)
				}
			})
		})
	}
}

// TestMidStreamRenegotiation: a renegotiation that widens the filter, a
// rejected late request and an SSE renegotiation by POST all take effect at
// a frame boundary without losing or reordering an event.
func TestMidStreamRenegotiation(t *testing.T) {
	recs := mixedRecords(200)
	capture := received(recs)
	progress := typeIs("progress.")
	t.Run("widened", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			srv, err := New(Options{CloseAtEnd: true, Open: memOpener(recs), Timing: timing.Config{NoDelay: true}})
			if err != nil {
				t.Fatal(err)
			}
			w := &frameWire{}
			sub, _ := srv.newSubscriber(TransportWebSocket, "memory", "", w, nil)
			g := newGreeting()
			w.onEvent = func(i int64) {
				if i == 120 {
					srv.receive(sub, g, []byte(`{"type":"subscription.renegotiate","capabilities":{"event_filters":{"include":["*"],"exclude":[]}}}`), false)
				}
			}
			go srv.receive(sub, g, []byte(noProgress), true)
			srv.runSubscription(sub, g)
			_ = srv.Shutdown(context.Background())
			// The first answer narrows, the second widens: check each span.
			var first, second []frame
			n := 0
			for i, f := range w.frames {
				if f.control {
					n++
					if n == 2 {
						first, second = w.frames[:i], w.frames[i:]
					}
				}
			}
			if n != 2 || !first[0].control {
				t.Fatalf("%d answers; first frame control %v", n, w.frames[0].control)
			}
			// Up to the renegotiation: no progress events.
			if at := checkSwitch(t, first, capture[:120+1], all, not(progress)); at != 0 {
				t.Fatalf("first answer at %d", at)
			}
			if at := checkSwitch(t, second, capture[121:], not(progress), all); at != 0 {
				t.Fatalf("renegotiation answered at %d, want right after event 120", at)
			}
		})
	})
	t.Run("rejected", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			srv, w := runEdge(t, Options{CloseAtEnd: true, Open: memOpener(recs), Timing: timing.Config{NoDelay: true}}, badVersion, 0, 60)
			last := w.frames[len(w.frames)-1]
			if !last.control || !strings.Contains(string(last.payload), "subscription.rejected") || w.code != CloseRejected {
				t.Fatalf("last frame %s, close %d", last.payload, w.code)
			}
			checkSwitch(t, w.frames[:len(w.frames)-1], capture[:61], all, all)
			if st := srv.Stats(); st.Closes[CauseRejected] != 1 {
				t.Fatalf("closes %v", st.Closes)
			}
		})
	})
	t.Run("SSE by POST", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			srv, err := New(Options{CloseAtEnd: true, Open: memOpener(recs), Timing: timing.Config{NoDelay: true}})
			if err != nil {
				t.Fatal(err)
			}
			w := &frameWire{}
			sub, _ := srv.newSubscriber(TransportSSE, "memory", "", w, nil)
			w.onEvent = func(i int64) {
				if i == 99 {
					// The POST's answer is its response; the stream
					// switches terms after the event being written.
					code, _ := srv.handleInbound(nil, []byte(`{"type":"subscription.request","subscription_id":"`+sub.id+`","capabilities":{"event_filters":{"include":["*"],"exclude":["aaep:agent.progress.*"]}}}`), TransportHTTP)
					if code != 200 {
						t.Errorf("POST answered %d", code)
					}
					// Mark the switch in the frames for checkSwitch.
					w.mu.Lock()
					w.frames = append(w.frames, frame{control: true})
					w.mu.Unlock()
				}
			}
			srv.start(sub, "")
			sub.writeLoop()
			_ = srv.Shutdown(context.Background())
			if at := checkSwitch(t, w.frames, capture, all, not(progress)); at != 100 {
				t.Fatalf("switch at %d", at)
			}
		})
	})
}

// TestLateHandshakeOverWebSocket is the reported case end to end: a
// subscriber that reads nothing at first (the server fills the socket and
// queues ahead), then sends its request while a no-delay replay is in full
// flow, gets one answer between two events and every event. Both ends of
// the connection keep small socket buffers and the subscriber reads
// nothing until the server has taken its request, so the replay is still
// under way (its writer blocked, its queue full) when the request comes.
func TestLateHandshakeOverWebSocket(t *testing.T) {
	recs := mixedRecords(5000)
	capture := received(recs)
	path := writeCapture(t, recs)
	for _, req := range []string{emptyCaps, noProgress} {
		taken := make(chan struct{}, 1)
		notify := func(n Notice) {
			if n.Kind == NoticeMessage && n.MessageType == "subscription.request" {
				signal(taken)
			}
		}
		srv, err := New(Options{CloseAtEnd: true, Open: OpenFile(path), Timing: timing.Config{NoDelay: true}, Grace: time.Millisecond, Notify: notify})
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewUnstartedServer(srv)
		ts.Listener = smallBuffers{ts.Listener}
		ts.Start()
		d := websocket.Dialer{Subprotocols: []string{Subprotocol}, HandshakeTimeout: testTimeout,
			NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
				if err == nil {
					err = c.(*net.TCPConn).SetReadBuffer(smallBuffer)
				}
				return c, err
			}}
		c, _, err := d.Dial(wsURL(ts, "/aaep/v1/ws"), nil)
		if err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(testTimeout))
		var frames []frame
		for len(frames) < 100 {
			_, msg, err := c.ReadMessage()
			if err != nil {
				t.Fatal(err)
			}
			frames = append(frames, frame{payload: msg})
		}
		if err := c.WriteMessage(websocket.TextMessage, []byte(req)); err != nil {
			t.Fatal(err)
		}
		select {
		case <-taken:
		case <-time.After(testTimeout):
			t.Fatal("the server did not take the request")
		}
		rest, ce := readAll(t, c)
		if ce.Code != CloseClean {
			t.Fatalf("close %d %s", ce.Code, ce.Text)
		}
		for _, p := range rest {
			frames = append(frames, frame{control: strings.HasPrefix(string(p), `{"type":"subscription.`), payload: p})
		}
		after := all
		if req == noProgress {
			after = not(typeIs("progress."))
		}
		if at := checkSwitch(t, frames, capture, all, after); at < 100 || at == len(frames)-1 {
			t.Fatalf("answer at frame %d of %d", at, len(frames))
		}
		c.Close()
		waitIdle(t, srv)
		_ = srv.Shutdown(context.Background())
		ts.Close()
	}
}

// smallBuffer is the socket buffer size of smallBuffers (the kernel
// doubles it): a few dozen events.
const smallBuffer = 64 << 10

// smallBuffers gives each accepted connection a small send buffer.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		err = c.(*net.TCPConn).SetWriteBuffer(smallBuffer)
	}
	return c, err
}
