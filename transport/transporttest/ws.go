package transporttest

import (
	"encoding/binary"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// WSProducer serves Frames over WebSocket (subprotocol aaep.v1) on
// 127.0.0.1, at any path.
//
// Each connection reads the client's subscription.request first and answers
// subscription.accepted (subscription_id "sub_test"), or with Reject a
// subscription.rejected followed by close code 4001. Frames then continue
// where the previous connection stopped (a frame counts as sent once it was
// written whole). After the last frame the producer sends a close frame
// with CloseCode (default 1000) and CloseReason, or with Hold waits for the
// client to leave.
type WSProducer struct {
	Frames []Frame
	// NoHandshake skips reading the subscription.request and answering it.
	NoHandshake bool
	// Reject answers subscription.rejected and closes with code 4001.
	Reject bool
	// CloseCode and CloseReason are sent after the last frame (default
	// 1000, "done").
	CloseCode   int
	CloseReason string
	// DropAt > 0: on the first connection, after DropAt frames, write a
	// frame header and half of the next frame's payload, then drop the TCP
	// connection.
	DropAt int
	// Hold keeps the connection open after the last frame until the client
	// closes it.
	Hold bool
	// RequireHeader, when set ("Name", "value"), answers 401 to handshakes
	// without that header.
	RequireHeader [2]string
	// Accepted, when set, replaces the subscription.accepted answer.
	Accepted []byte

	srv      *httptest.Server
	mu       sync.Mutex
	next     int
	dropped  bool
	headers  []http.Header
	received [][]byte
	conns    sync.WaitGroup
}

// Start serves on a loopback server closed at the end of the test and
// returns its ws:// URL with the path /aaep/v1/ws.
func (p *WSProducer) Start(tb testing.TB) string {
	tb.Helper()
	p.srv = httptest.NewServer(p)
	tb.Cleanup(func() {
		p.srv.CloseClientConnections()
		p.srv.Close()
		p.conns.Wait()
	})
	return "ws" + strings.TrimPrefix(p.srv.URL, "http") + "/aaep/v1/ws"
}

// Headers returns the handshake request headers received so far.
func (p *WSProducer) Headers() []http.Header {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]http.Header(nil), p.headers...)
}

// Received returns the messages the clients sent, in order.
func (p *WSProducer) Received() [][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([][]byte(nil), p.received...)
}

var upgrader = websocket.Upgrader{
	Subprotocols: []string{"aaep.v1"},
	CheckOrigin:  func(*http.Request) bool { return true },
}

// ServeHTTP implements the producer.
func (p *WSProducer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.conns.Add(1)
	defer p.conns.Done()
	p.mu.Lock()
	p.headers = append(p.headers, r.Header.Clone())
	p.mu.Unlock()
	if name := p.RequireHeader[0]; name != "" && r.Header.Get(name) != p.RequireHeader[1] {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer conn.Close()
	if !p.NoHandshake {
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, msg, err := conn.ReadMessage()
		if err != nil {
			return
		}
		_ = conn.SetReadDeadline(time.Time{})
		p.record(msg)
		if p.Reject {
			_ = conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"subscription.rejected","reason_code":"authorization_denied","reason_message":"not allowed"}`))
			_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4001, "subscription rejected"), time.Now().Add(time.Second))
			drain(conn)
			return
		}
		accepted := p.Accepted
		if accepted == nil {
			accepted = []byte(`{"type":"subscription.accepted","subscription_id":"sub_test","aaep_version":"1.0.0","producer":{"agent_id":"retirement-planner"},"honored_capabilities":{}}`)
		}
		if err := conn.WriteMessage(websocket.TextMessage, accepted); err != nil {
			return
		}
	}
	// Client messages (subscription.close, close frames) are read aside.
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		for {
			_, msg, err := conn.ReadMessage()
			if err != nil {
				return
			}
			p.record(msg)
		}
	}()
	p.mu.Lock()
	drop := p.DropAt > 0 && !p.dropped
	p.dropped = p.dropped || drop
	p.mu.Unlock()
	sent := 0
	for {
		p.mu.Lock()
		i := p.next
		p.mu.Unlock()
		if i >= len(p.Frames) {
			break
		}
		f := &p.Frames[i]
		if drop && sent == p.DropAt {
			raw := appendWSFrame(nil, f.Data, f.Binary)
			_, _ = conn.NetConn().Write(raw[:len(raw)-len(f.Data)/2])
			_ = conn.NetConn().Close()
			<-readDone
			return
		}
		mt := websocket.TextMessage
		if f.Binary {
			mt = websocket.BinaryMessage
		}
		if err := conn.WriteMessage(mt, f.Data); err != nil {
			return
		}
		sent++
		p.mu.Lock()
		p.next = i + 1
		p.mu.Unlock()
	}
	if !p.Hold {
		code, reason := p.CloseCode, p.CloseReason
		if code == 0 {
			code, reason = websocket.CloseNormalClosure, "done"
		}
		_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(time.Second))
		select {
		case <-readDone:
		case <-time.After(2 * time.Second):
		}
		return
	}
	<-readDone
}

func (p *WSProducer) record(msg []byte) {
	p.mu.Lock()
	p.received = append(p.received, msg)
	p.mu.Unlock()
}

func drain(conn *websocket.Conn) {
	_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	for {
		if _, _, err := conn.ReadMessage(); err != nil {
			return
		}
	}
}

// appendWSFrame appends an unmasked (server-to-client) final frame.
func appendWSFrame(dst, payload []byte, binary bool) []byte {
	op := byte(0x1)
	if binary {
		op = 0x2
	}
	dst = append(dst, 0x80|op)
	switch n := len(payload); {
	case n < 126:
		dst = append(dst, byte(n))
	case n <= 0xFFFF:
		dst = append(dst, 126)
		dst = binary16(dst, uint16(n))
	default:
		dst = append(dst, 127)
		dst = binaryBE64(dst, uint64(n))
	}
	return append(dst, payload...)
}

func binary16(dst []byte, v uint16) []byte   { return binary.BigEndian.AppendUint16(dst, v) }
func binaryBE64(dst []byte, v uint64) []byte { return binary.BigEndian.AppendUint64(dst, v) }

// WSBench sends N events (Events cycled) as text frames as fast as the
// connection takes them, written in large pre-framed chunks, then closes
// with code 1000. It ignores what the client sends (a subscription.request
// included). It is the producer of the throughput benchmarks.
//
// With PerMessage the producer writes each event with its own
// WriteMessage call, as a typical gorilla producer does: a system call per
// event, so the producer rather than the reader sets the pace.
type WSBench struct {
	Events     [][]byte
	N          int
	PerMessage bool

	srv    *httptest.Server
	conns  sync.WaitGroup
	once   sync.Once
	framed []byte
}

func (b *WSBench) chunk() []byte {
	b.once.Do(func() {
		for _, ev := range b.Events {
			b.framed = appendWSFrame(b.framed, ev, false)
		}
	})
	return b.framed
}

// Start serves on a loopback server and returns its ws:// URL.
func (b *WSBench) Start(tb testing.TB) string {
	tb.Helper()
	b.chunk()
	b.srv = httptest.NewServer(b)
	tb.Cleanup(func() {
		b.srv.CloseClientConnections()
		b.srv.Close()
		b.conns.Wait()
	})
	return "ws" + strings.TrimPrefix(b.srv.URL, "http") + "/aaep/v1/ws"
}

// ServeHTTP implements the producer.
func (b *WSBench) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.conns.Add(1)
	defer b.conns.Done()
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer conn.Close()
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		drainAll(conn)
	}()
	if b.PerMessage {
		for i := 0; i < b.N; i++ {
			if err := conn.WriteMessage(websocket.TextMessage, b.Events[i%len(b.Events)]); err != nil {
				return
			}
		}
	}
	chunk := b.chunk()
	nc := conn.NetConn()
	for sent := 0; sent < b.N && !b.PerMessage; {
		part := chunk
		if left := b.N - sent; left < len(b.Events) {
			part = nil
			for _, ev := range b.Events[:left] {
				part = appendWSFrame(part, ev, false)
			}
			sent += left
		} else {
			sent += len(b.Events)
		}
		if _, err := nc.Write(part); err != nil {
			return
		}
	}
	_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "done"), time.Now().Add(time.Second))
	select {
	case <-readDone:
	case <-time.After(5 * time.Second):
	}
}

func drainAll(conn *websocket.Conn) {
	for {
		if _, _, err := conn.NextReader(); err != nil {
			return
		}
	}
}

// WSDiscard reads a WebSocket stream and discards it, counting messages:
// the ceiling a recorder is compared with. It returns at the close frame.
func WSDiscard(url string) (messages int, err error) {
	d := websocket.Dialer{ReadBufferSize: 64 << 10, Subprotocols: []string{"aaep.v1"}}
	conn, _, err := d.Dial(url, nil)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	for {
		_, r, err := conn.NextReader()
		if err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				return messages, nil
			}
			return messages, err
		}
		if _, err := io.Copy(io.Discard, r); err != nil {
			return messages, err
		}
		messages++
	}
}
