package serve

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/msgfilter"
	"github.com/aaep-tools/aaepkit/timing"
)

func TestHundredClients(t *testing.T) {
	recs := standardRecords()
	path := writeCapture(t, recs)
	for _, shared := range []bool{false, true} {
		name := "own timelines"
		if shared {
			name = "shared"
		}
		t.Run(name, func(t *testing.T) {
			const n = 100
			// On a shared timeline a long grace period holds each
			// subscriber back until its request.
			grace := 10 * time.Millisecond
			if shared {
				grace = time.Hour
			}
			srv, ts := startServer(t, Options{CloseAtEnd: true, Open: OpenFile(path), Timing: timing.Config{NoDelay: true}, Shared: shared, Grace: grace})
			conns := make([]*websocket.Conn, n)
			for i := range conns {
				conns[i] = dialWS(t, ts)
			}
			waitFor(t, func() bool { return srv.Stats().Total == n })
			if shared {
				// A subscription.request ends the grace period; send them all.
				for _, c := range conns {
					if err := c.WriteMessage(websocket.TextMessage, []byte(`{"type":"subscription.request","aaep_version":"1.0.0","subscriber_id":"many","capabilities":{"supports_confirmation_reply":true,"supports_clarification_reply":true,"event_filters":{"include":["*"]}}}`)); err != nil {
						t.Fatal(err)
					}
				}
			}
			var wg sync.WaitGroup
			results := make([][][]byte, n)
			codes := make([]int, n)
			for i, c := range conns {
				wg.Add(1)
				go func() {
					defer wg.Done()
					frames, ce := readAllNoFatal(c)
					results[i] = frames
					if ce != nil {
						codes[i] = ce.Code
					}
				}()
			}
			wg.Wait()
			want := received(recs)
			complete := 0
			for i := range results {
				got := results[i]
				if codes[i] != CloseClean {
					t.Fatalf("client %d closed with %d", i, codes[i])
				}
				if !shared {
					sameFrames(t, got, want)
					continue
				}
				// Shared: after subscription.accepted, a live joiner gets
				// the rest of the timeline from where it joined, in order
				// and complete (possibly nothing, if it joined at the very
				// end); the one that started the timeline gets all of it.
				got = got[1:]
				sameFrames(t, got, want[len(want)-len(got):])
				if len(got) == len(want) {
					complete++
				}
			}
			if shared && complete == 0 {
				t.Fatal("no subscriber got the whole shared timeline")
			}
			waitIdle(t, srv)
			if st := srv.Stats(); st.Closes[CauseFinished] != n {
				t.Fatalf("closes %v", st.Closes)
			}
		})
	}
}

func TestRangeAndFilters(t *testing.T) {
	recs := standardRecords()
	path := writeCapture(t, recs)
	all := received(recs)
	ms := time.Millisecond
	pos := func(s string) timing.Position {
		p, err := timing.ParsePosition(s)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name   string
		rng    Range
		filter msgfilter.Filter
		want   [][]byte
	}{
		{"all", Range{}, msgfilter.Filter{}, all},
		{"from record index", Range{From: pos("#5")}, msgfilter.Filter{}, all[3:]},
		{"to record index", Range{To: pos("5")}, msgfilter.Filter{}, all[:4]},
		{"from time", Range{From: pos("20ms")}, msgfilter.Filter{}, all[3:]},
		{"time window inclusive", Range{From: timing.Position{Set: true, Time: 15 * ms}, To: timing.Position{Set: true, Time: 30 * ms}}, msgfilter.Filter{}, all[2:6]},
		{"session", Range{}, msgfilter.Filter{Sessions: []string{"sess_b"}}, [][]byte{all[2], all[4], all[6], all[9]}},
		{"session and type", Range{}, msgfilter.Filter{Sessions: []string{"sess_a"}, Types: []string{"session.completed", "tool.invoked"}}, [][]byte{all[3], all[8]}},
		{"session with from", Range{From: pos("#6")}, msgfilter.Filter{Sessions: []string{"sess_a"}}, [][]byte{all[5], all[7], all[8]}},
		{"past the end", Range{From: pos("#13")}, msgfilter.Filter{}, nil},
		{"unknown session", Range{}, msgfilter.Filter{Sessions: []string{"sess_none"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, ts := startServer(t, Options{CloseAtEnd: true, Open: OpenFile(path), Timing: timing.Config{NoDelay: true}, Range: tt.rng, Filter: tt.filter, Grace: time.Millisecond})
			c := dialWS(t, ts)
			frames, ce := readAll(t, c)
			if ce.Code != CloseClean {
				t.Fatalf("close %d", ce.Code)
			}
			sameFrames(t, frames, tt.want)
			waitIdle(t, srv)
		})
	}
}

func TestLoop(t *testing.T) {
	recs := standardRecords()
	path := writeCapture(t, recs)
	all := received(recs)
	t.Run("three passes", func(t *testing.T) {
		srv, ts := startServer(t, Options{CloseAtEnd: true, Open: OpenFile(path), Timing: timing.Config{Speed: 1000}, Passes: 3, Range: Range{From: timing.Position{Set: true, ByIndex: true, Index: 9}}, Grace: time.Millisecond})
		c := dialWS(t, ts)
		frames, ce := readAll(t, c)
		if ce.Code != CloseClean {
			t.Fatalf("close %d", ce.Code)
		}
		part := all[7:]
		var want [][]byte
		for range 3 {
			want = append(want, part...)
		}
		sameFrames(t, frames, want)
		waitIdle(t, srv)
		if p := srv.Stats().Subscribers[0].Pass; p != 3 {
			t.Errorf("pass %d, want 3", p)
		}
	})
	t.Run("forever until the subscriber leaves", func(t *testing.T) {
		srv, ts := startServer(t, Options{CloseAtEnd: true, Open: OpenFile(path), Timing: timing.Config{NoDelay: true}, Passes: -1, Grace: time.Millisecond})
		c := dialWS(t, ts)
		c.SetReadDeadline(time.Now().Add(testTimeout))
		const n = 5
		for i := 0; i < n*len(all); i++ {
			_, msg, err := c.ReadMessage()
			if err != nil {
				t.Fatalf("frame %d: %v", i, err)
			}
			if digest(msg) != digest(all[i%len(all)]) {
				t.Fatalf("frame %d = %q, want %q", i, msg, all[i%len(all)])
			}
		}
		c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(CloseSubscriber, "enough"), time.Now().Add(time.Second))
		// Read on until the server answers the close.
		if _, ce := readAll(t, c); ce.Code != CloseSubscriber {
			t.Errorf("server answered close with %d", ce.Code)
		}
		waitIdle(t, srv)
		st := srv.Stats()
		if st.Closes[CauseSubscriber] != 1 || st.Subscribers[0].Pass < n {
			t.Fatalf("closes %v pass %d", st.Closes, st.Subscribers[0].Pass)
		}
	})
}

// TestPush replays into a subscriber that listens: it sends its
// subscription.request on connect and a reply to the confirmation.
func TestPush(t *testing.T) {
	recs := standardRecords()
	path := writeCapture(t, recs)
	type got struct {
		frames   [][]byte
		code     int
		protocol string
	}
	results := make(chan got, 1)
	up := websocket.Upgrader{Subprotocols: []string{Subprotocol}}
	listener := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		c.WriteMessage(websocket.TextMessage, []byte(`{"type":"subscription.request","aaep_version":"1.0.0","subscriber_id":"listener","capabilities":{"supports_confirmation_reply":true,"supports_clarification_reply":true}}`))
		var g got
		g.protocol = c.Subprotocol()
		c.SetReadDeadline(time.Now().Add(testTimeout))
		for {
			_, msg, err := c.ReadMessage()
			if err != nil {
				if ce, ok := err.(*websocket.CloseError); ok {
					g.code = ce.Code
				}
				break
			}
			g.frames = append(g.frames, msg)
			if len(g.frames) == 7 { // the confirmation
				c.WriteMessage(websocket.TextMessage, []byte(`{"type":"confirmation.reply","reply_token":"rpl_conf1","decision":"reject","timestamp":"2026-05-24T14:22:24.812Z"}`))
			}
		}
		results <- g
	}))
	defer listener.Close()
	var seen notices
	var record memRecord
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	st, err := Push(ctx, wsURL(listener, "/subscriber"), Options{CloseAtEnd: true, Open: OpenFile(path), Timing: timing.Config{Speed: 100}, Notify: seen.add, Record: &record}, PushOptions{})
	if err != nil {
		t.Fatalf("Push: %v", err)
	}
	g := <-results
	if g.code != CloseClean || g.protocol != Subprotocol {
		t.Fatalf("listener saw close %d subprotocol %q", g.code, g.protocol)
	}
	if st.Sent != int64(len(received(recs))) || st.Transport != TransportPush || !st.Negotiated {
		t.Fatalf("stats %+v", st)
	}
	sameFrames(t, g.frames[1:], received(recs))
	waitFor(t, func() bool { return len(seen.kind(NoticeReply)) == 1 })
	if r := seen.kind(NoticeReply)[0]; r.Verdict != VerdictAccepted || r.Decision != "reject" {
		t.Fatalf("reply notice %+v", r)
	}

	t.Run("nobody listening", func(t *testing.T) {
		l := httptest.NewServer(http.NotFoundHandler())
		url := wsURL(l, "/")
		l.Close()
		_, err := Push(ctx, url, Options{CloseAtEnd: true, Open: OpenFile(path)}, PushOptions{DialTimeout: time.Second})
		var ce *ConnectError
		if !errors.As(err, &ce) {
			t.Fatalf("Push to a closed port: %v, want a ConnectError", err)
		}
	})
	t.Run("not a websocket", func(t *testing.T) {
		l := httptest.NewServer(http.NotFoundHandler())
		defer l.Close()
		_, err := Push(ctx, wsURL(l, "/"), Options{CloseAtEnd: true, Open: OpenFile(path)}, PushOptions{DialTimeout: time.Second})
		var ce *ConnectError
		if !errors.As(err, &ce) || ce.Status != "404 Not Found" {
			t.Fatalf("Push to a plain HTTP server: %v, want a ConnectError with status 404", err)
		}
	})
	t.Run("no handshake answer, cancelled", func(t *testing.T) {
		// A subscriber that takes the connection and never answers the
		// handshake: ending the context (a signal) ends the push at once,
		// not at the end of its dial timeout, which is an hour here.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		accepted := make(chan net.Conn, 1)
		go func() {
			if c, err := l.Accept(); err == nil {
				accepted <- c
			}
		}()
		pctx, pcancel := context.WithCancel(ctx)
		defer pcancel()
		done := make(chan error, 1)
		go func() {
			_, err := Push(pctx, "ws://"+l.Addr().String()+"/", Options{CloseAtEnd: true, Open: OpenFile(path)}, PushOptions{DialTimeout: time.Hour})
			done <- err
		}()
		var c net.Conn
		select {
		case c = <-accepted:
			defer c.Close()
		case <-time.After(testTimeout):
			t.Fatal("push never connected")
		}
		// The request has been sent once the listener reads it.
		buf := make([]byte, 1)
		if _, err := c.Read(buf); err != nil {
			t.Fatalf("reading the handshake request: %v", err)
		}
		pcancel()
		select {
		case err := <-done:
			var ce *ConnectError
			if !errors.As(err, &ce) || !errors.Is(err, context.Canceled) {
				t.Fatalf("Push cancelled in the handshake: %v, want a ConnectError for context.Canceled", err)
			}
		case <-time.After(testTimeout):
			t.Fatalf("Push still in the handshake %v after its context ended", testTimeout)
		}
	})
	_ = capfile.KindReceived
}

// TestEmptyRange: a range without events ends at once, even looping forever.
func TestEmptyRange(t *testing.T) {
	path := writeCapture(t, standardRecords())
	for _, shared := range []bool{false, true} {
		srv, ts := startServer(t, Options{CloseAtEnd: true, Open: OpenFile(path), Range: Range{From: timing.Position{Set: true, ByIndex: true, Index: 13}},
			Passes: -1, Shared: shared, Grace: time.Millisecond})
		c := dialWS(t, ts)
		frames, ce := readAll(t, c)
		if len(frames) != 0 || ce.Code != CloseClean {
			t.Fatalf("shared=%v: %d frames, close %d", shared, len(frames), ce.Code)
		}
		waitIdle(t, srv)
	}
}
