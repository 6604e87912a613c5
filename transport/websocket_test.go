package transport_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/transport"
	"github.com/aaep-tools/aaepkit/transport/transporttest"
)

const acceptedWS = `{"type":"subscription.accepted","subscription_id":"sub_test","aaep_version":"1.0.0","producer":{"agent_id":"retirement-planner"},"honored_capabilities":{}}`

func TestWebSocketByteExactAndHandshake(t *testing.T) {
	events := transporttest.Events(40)
	frames := transporttest.Frames(events)
	badUTF8 := []byte("{\"type\":\"aaep:agent.output.streaming\",\"chunk\":\"\xff\xfe\"}")
	badJSON := []byte(`not json at all`)
	bin := []byte(`{"type":"aaep:agent.state.changed","binary":true}`)
	frames = append(frames,
		transporttest.Frame{Data: badUTF8, Binary: true}, // text frames must be UTF-8; binary frames carry anything
		transporttest.Frame{Data: badJSON},
		transporttest.Frame{Data: bin, Binary: true},
	)
	p := &transporttest.WSProducer{Frames: frames, CloseCode: 4000, CloseReason: "session over"}
	url := p.Start(t)
	opts := testOpts()
	opts.Header = http.Header{"Authorization": {"Bearer ws-secret"}}
	src, err := transport.New(url, opts)
	if err != nil {
		t.Fatal(err)
	}
	if info := src.Info(); info.Transport != "websocket" || info.Subprotocol != "aaep.v1" {
		t.Fatalf("info %+v", info)
	}
	c := &collector{}
	if err := run(t, src, c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := append([][]byte{[]byte(acceptedWS)}, events...)
	want = append(want, badUTF8, badJSON, bin)
	checkPayloads(t, c, want)
	checkMonotonic(t, c.all())

	all := c.all()
	if all[0].Kind != capfile.KindConn || all[0].Conn.Event != capfile.ConnConnected || all[0].Conn.Subprotocol != "aaep.v1" {
		t.Fatalf("first message %+v, want connected with subprotocol", all[0].Conn)
	}
	if all[1].Kind != capfile.KindSent || !strings.Contains(string(all[1].Payload), `"subscription.request"`) {
		t.Fatalf("second message kind %d %q, want the sent subscription.request", all[1].Kind, all[1].Payload)
	}
	if rcv := p.Received(); len(rcv) == 0 || string(rcv[0]) != string(all[1].Payload) {
		t.Fatalf("producer received %q, recorded %q", rcv, all[1].Payload)
	}
	rec := c.kind(capfile.KindReceived)
	if rec[len(rec)-1].attr("opcode") != "binary" || rec[1].attr("opcode") != "" {
		t.Errorf("opcode attrs: last %v, first event %v", rec[len(rec)-1].Attrs, rec[1].Attrs)
	}
	last := all[len(all)-1]
	if last.Conn == nil || last.Conn.Event != capfile.ConnClosed || last.Conn.Code != 4000 || last.Conn.Reason != "session over" {
		t.Fatalf("last message %+v, want closed 4000", last.Conn)
	}
	if h := p.Headers()[0]; h.Get("Authorization") != "Bearer ws-secret" || h.Get("Sec-WebSocket-Protocol") != "aaep.v1" {
		t.Errorf("handshake headers %v", h)
	}
}

func TestWebSocketCloseCodes(t *testing.T) {
	for _, tc := range []struct {
		name      string
		producer  func() *transporttest.WSProducer
		wantErr   error
		wantCode  int
		wantConns int
	}{
		{"4003 authorization denied is final", func() *transporttest.WSProducer {
			return &transporttest.WSProducer{CloseCode: 4003, CloseReason: "denied"}
		}, transport.ErrRejected, 4003, 1},
		{"rejected subscription is final", func() *transporttest.WSProducer { return &transporttest.WSProducer{Reject: true} }, transport.ErrRejected, 4001, 1},
		{"1000 ends cleanly", func() *transporttest.WSProducer { return &transporttest.WSProducer{} }, nil, 1000, 1},
		{"1001 going away reconnects", func() *transporttest.WSProducer { return &transporttest.WSProducer{CloseCode: 1001} }, transport.ErrFailed, 1001, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.producer()
			p.Frames = transporttest.Frames(transporttest.Events(3))
			url := p.Start(t)
			src, _ := transport.New(url, testOpts())
			c := &collector{}
			err := run(t, src, c)
			if tc.wantErr == nil && err != nil || tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Fatalf("Run error %v, want %v", err, tc.wantErr)
			}
			var closed []*transport.ConnEvent
			for _, g := range c.kind(capfile.KindConn) {
				if g.Conn.Event == capfile.ConnClosed {
					closed = append(closed, g.Conn)
				}
			}
			if len(closed) == 0 || closed[0].Code != tc.wantCode {
				t.Fatalf("closed events %+v, want code %d (events %v)", closed, tc.wantCode, c.events())
			}
			if n := len(p.Headers()); n != tc.wantConns {
				t.Errorf("%d connections, want %d", n, tc.wantConns)
			}
		})
	}
}

func TestWebSocketMidMessageDropReconnects(t *testing.T) {
	events := transporttest.Events(12)
	p := &transporttest.WSProducer{Frames: transporttest.Frames(events), DropAt: 5}
	url := p.Start(t)
	src, _ := transport.New(url, testOpts())
	c := &collector{}
	if err := run(t, src, c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := append([][]byte{[]byte(acceptedWS)}, events[:5]...)
	want = append(want, []byte(acceptedWS))
	want = append(want, events[5:]...)
	checkPayloads(t, c, want)
	checkMonotonic(t, c.all())
	wantEv := []string{"connected", "disconnected", "connected", "closed"}
	if got := c.events(); !slices.Equal(got, wantEv) {
		t.Fatalf("events %v, want %v", got, wantEv)
	}
	if d := c.kind(capfile.KindConn)[1].Conn; d.Partial == 0 {
		t.Errorf("disconnect reports no partial bytes: %+v", d)
	}
	// WebSocket has no resumption: a fresh subscription.request each time.
	if n := c.countKind(capfile.KindSent); n != 2 {
		t.Errorf("%d sent messages, want 2 subscription requests", n)
	}
}

func TestWebSocketOversizedFrameRefused(t *testing.T) {
	events := transporttest.Events(6)
	big := []byte(`{"type":"aaep:agent.output.streaming","chunk":"` + strings.Repeat("y", 300_000) + `"}`)
	frames := transporttest.Frames(events[:2])
	frames = append(frames, transporttest.Frame{Data: big})
	frames = append(frames, transporttest.Frames(events[2:])...)
	p := &transporttest.WSProducer{Frames: frames}
	url := p.Start(t)
	opts := testOpts()
	opts.MaxMessageSize = 64 << 10
	src, _ := transport.New(url, opts)
	c := &collector{}
	if err := run(t, src, c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkPayloads(t, c, append([][]byte{[]byte(acceptedWS)}, events...))
	wantEv := []string{"connected", "refused", "closed"}
	if got := c.events(); !slices.Equal(got, wantEv) {
		t.Fatalf("events %v, want %v", got, wantEv)
	}
	if r := c.kind(capfile.KindConn)[1].Conn; r.Size != int64(len(big)) || r.Limit != 64<<10 {
		t.Errorf("refused %+v, want size %d", r, len(big))
	}
}

func TestWebSocketStopSaysGoodbye(t *testing.T) {
	events := transporttest.Events(4)
	p := &transporttest.WSProducer{Frames: transporttest.Frames(events), Hold: true}
	url := p.Start(t)
	src, _ := transport.New(url, testOpts())
	c := &collector{}
	err := runUntil(t, src, c, func(c *collector) bool { return c.countKind(capfile.KindReceived) == 5 })
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	sent := c.kind(capfile.KindSent)
	if len(sent) != 2 || !strings.Contains(string(sent[1].Payload), `"subscription.close"`) || !strings.Contains(string(sent[1].Payload), `"sub_test"`) {
		t.Fatalf("sent %d messages (%+v), want the request then a subscription.close for sub_test", len(sent), sent)
	}
	last := c.all()[len(c.all())-1]
	if last.Conn == nil || last.Conn.Event != capfile.ConnClosed || last.Conn.Reason != "capture stopped" {
		t.Fatalf("last %+v", last.Conn)
	}
}

// TestWebSocketStopDuringHandshake: a producer that accepts the connection
// and never answers the upgrade; stopping the capture ends the dial at
// once, not at the 15 s handshake timeout.
func TestWebSocketStopDuringHandshake(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	reading := make(chan struct{}, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 1)
		if _, err := c.Read(buf); err == nil {
			reading <- struct{}{}
		}
		io.Copy(io.Discard, c) // never answers
	}()
	src, err := transport.New("ws://"+l.Addr().String()+"/aaep/v1/ws", testOpts())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx, (&collector{}).emit) }()
	select {
	case <-reading:
	case <-time.After(20 * time.Second):
		t.Fatal("the source never sent its upgrade request")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the source still waits for the upgrade's answer 10 s after it was stopped")
	}
}
