package serve

import (
	"bufio"
	"encoding/binary"
	"errors"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/aaep-tools/aaepkit/payload"
)

// Subprotocol is the WebSocket subprotocol of AAEP (Appendix B.2.1).
const Subprotocol = "aaep.v1"

// closeWait is how long a closing WebSocket waits for the peer's close frame.
const closeWait = 2 * time.Second

// newUpgrader accepts WebSocket subscribers from the origins the CORS
// policy allows (any by default: browser-based subscribers are served from
// their own origin; the listener is loopback unless the operator says
// otherwise, and is warned).
func newUpgrader(cors corsPolicy) websocket.Upgrader {
	return websocket.Upgrader{
		Subprotocols:     []string{Subprotocol},
		CheckOrigin:      cors.checkOrigin,
		HandshakeTimeout: 10 * time.Second,
	}
}

// batchConn sits under a gorilla WebSocket connection and turns the one
// write per frame that gorilla makes into one write per batch: while a batch
// is open, writes are buffered, and the batch is sent in one go when it is
// flushed (or when the buffer grows past batchLimit). Outside a batch,
// writes (handshake responses, control frames) go straight through.
//
// A batch write fails only when no byte could be written for the write
// timeout (a slow subscriber that keeps reading is not stalled), or when
// interrupt is called.
type batchConn struct {
	net.Conn
	mu          sync.Mutex
	buf         []byte
	batching    bool
	timeout     time.Duration
	interrupted atomic.Bool
}

const batchLimit = 64 << 10

func (c *batchConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.batching {
		return c.Conn.Write(p)
	}
	c.buf = append(c.buf, p...)
	if len(c.buf) >= batchLimit {
		if err := c.flushLocked(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// appendFrame adds one unmasked, unfragmented WebSocket frame (a server's
// data frame, RFC 6455 §5.2) to the open batch. It takes the same lock as
// Write, so frames gorilla writes meanwhile (pongs) stay whole.
func (c *batchConn) appendFrame(opcode byte, p []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	b0 := 0x80 | opcode // FIN
	switch n := len(p); {
	case n < 126:
		c.buf = append(c.buf, b0, byte(n))
	case n <= 0xffff:
		c.buf = append(c.buf, b0, 126, byte(n>>8), byte(n))
	default:
		c.buf = append(c.buf, b0, 127)
		c.buf = binary.BigEndian.AppendUint64(c.buf, uint64(n))
	}
	c.buf = append(c.buf, p...)
	if !c.batching || len(c.buf) >= batchLimit {
		return c.flushLocked()
	}
	return nil
}

// SetWriteDeadline applies gorilla's per-frame deadline outside a batch
// only; inside one, the write timeout rules.
func (c *batchConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.batching {
		return nil
	}
	return c.Conn.SetWriteDeadline(t)
}

func (c *batchConn) begin(timeout time.Duration) {
	c.mu.Lock()
	c.batching, c.timeout = true, timeout
	c.mu.Unlock()
}

func (c *batchConn) end() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	err := c.flushLocked()
	c.batching = false
	return err
}

// discard drops the open batch.
func (c *batchConn) discard() {
	c.mu.Lock()
	c.buf, c.batching = c.buf[:0], false
	c.mu.Unlock()
}

// interrupt makes a write in progress (or the next one) fail at once.
func (c *batchConn) interrupt() {
	c.interrupted.Store(true)
	_ = c.Conn.SetWriteDeadline(time.Now())
}

// flushLocked writes the buffer, renewing the deadline whenever the peer
// accepts bytes.
func (c *batchConn) flushLocked() error {
	p := c.buf
	var err error
	for len(p) > 0 {
		if c.interrupted.Load() {
			err = os.ErrDeadlineExceeded
			break
		}
		if err = c.Conn.SetWriteDeadline(time.Now().Add(c.timeout)); err != nil {
			break
		}
		var n int
		n, err = c.Conn.Write(p)
		p = p[n:]
		if err == nil || n == 0 || !isTimeout(err) {
			break
		}
	}
	if cap(c.buf) > 4*batchLimit {
		c.buf = nil
	} else {
		c.buf = c.buf[:0]
	}
	return err
}

// hijackWriter hands gorilla's Upgrade a batchConn instead of the raw
// connection.
type hijackWriter struct {
	http.ResponseWriter
	conn *batchConn
}

func (h *hijackWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	limitUnsent(c)
	h.conn = &batchConn{Conn: c}
	return h.conn, brw, nil
}

// wsWire is a subscriber's WebSocket connection.
type wsWire struct {
	conn       *websocket.Conn
	bc         *batchConn
	server     bool // frames go out unmasked, framed here rather than by gorilla
	timeout    time.Duration
	inBatch    bool
	broken     bool // a write failed: the stream may end inside a frame
	readerDone chan struct{}
	// pongWait is how long a ping may stay unanswered; unanswered is when
	// the oldest ping the peer has not answered went out (writer only;
	// zero when it has answered them all); heard is when the peer last
	// sent anything, pongs included (UnixNano).
	pongWait   time.Duration
	unanswered time.Time
	heard      atomic.Int64
}

// keepalive pings the peer, after checking that it has answered (or sent
// anything) within pongWait of the oldest ping it has not answered. The
// deadline is its own: pings that follow one another on a short interval
// do not shorten it.
func (w *wsWire) keepalive() error {
	now := time.Now()
	if !w.unanswered.IsZero() && w.heard.Load() >= w.unanswered.UnixNano() {
		w.unanswered = time.Time{}
	}
	if !w.unanswered.IsZero() && now.Sub(w.unanswered) >= w.pongWait {
		return errUnresponsive
	}
	if w.unanswered.IsZero() {
		w.unanswered = now
	}
	err := w.conn.WriteControl(websocket.PingMessage, nil, now.Add(w.timeout))
	if err != nil {
		w.broken = true
	}
	return err
}

// heardNow notes that the peer sent something.
func (w *wsWire) heardNow() { w.heard.Store(time.Now().UnixNano()) }

func (w *wsWire) write(ev *event) error {
	if !w.inBatch {
		w.bc.begin(w.timeout)
		w.inBatch = true
	}
	typ := websocket.TextMessage
	if ev.Binary {
		typ = websocket.BinaryMessage
	}
	var err error
	if w.server {
		err = w.bc.appendFrame(byte(typ), ev.Payload)
	} else {
		err = w.conn.WriteMessage(typ, ev.Payload)
	}
	if err != nil {
		w.broken = true
	}
	return err
}

func (w *wsWire) flush() error {
	w.inBatch = false
	err := w.bc.end()
	if err != nil {
		w.broken = true
	}
	return err
}

func (w *wsWire) interrupt() { w.bc.interrupt() }

func (w *wsWire) close(code int, reason string) {
	// The writer flushes every batch it completes; a batch still open here
	// belongs to a failed write and is dropped.
	w.inBatch = false
	w.bc.discard()
	err := errors.New("stream broken")
	if !w.broken {
		err = w.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(time.Second))
	}
	if err == nil {
		// Wait for the peer's close frame, so that it reads ours before
		// the connection goes away.
		_ = w.bc.Conn.SetReadDeadline(time.Now().Add(closeWait))
		t := time.NewTimer(closeWait)
		select {
		case <-w.readerDone:
		case <-t.C:
		}
		t.Stop()
	}
	_ = w.conn.Close()
}

// serveWS handles GET /aaep/v1/ws.
func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	hw := &hijackWriter{ResponseWriter: w}
	conn, err := s.upgrader.Upgrade(hw, r, nil)
	if err != nil {
		return // Upgrade has answered with an HTTP error
	}
	s.runWebSocket(conn, hw.conn, TransportWebSocket, r.RemoteAddr)
}

// runWebSocket runs one subscription over an open WebSocket connection,
// whichever side dialled: handshake (or grace period), timeline, writer.
func (s *Server) runWebSocket(conn *websocket.Conn, bc *batchConn, transport, remote string) *subscriber {
	conn.SetReadLimit(MaxMessage)
	// The writer answers a close frame itself (with the peer's code), after
	// whole frames; gorilla's default would write it from the reader.
	conn.SetCloseHandler(func(int, string) error { return nil })
	ww := &wsWire{conn: conn, bc: bc, server: transport != TransportPush, timeout: s.opts.WriteTimeout, pongWait: s.opts.PongWait, readerDone: make(chan struct{})}
	conn.SetPongHandler(func(string) error { ww.heardNow(); return nil })
	sub, err := s.newSubscriber(transport, remote, "", ww, nil)
	if err != nil {
		_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(CloseGoingAway, "server shutting down"), time.Now().Add(time.Second))
		_ = conn.Close()
		return nil
	}
	g := newGreeting()
	// The reader is waited for by Shutdown too: a message it is handling
	// when the connection closes is printed and recorded before Shutdown
	// returns (and the recording is closed).
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.readWebSocket(sub, conn, ww, g)
	}()
	s.runSubscription(sub, g)
	return sub
}

// runSubscription runs a WebSocket subscription once connected: the
// handshake (or its grace period), then the timeline and the writer.
func (s *Server) runSubscription(sub *subscriber, g *greeting) {
	ok := s.handshake(sub, g)
	close(g.over)
	if ok {
		s.start(sub, "")
	}
	sub.writeLoop()
}

// greeting hands a WebSocket subscriber's first message to the handshake
// while it waits for one (the grace period).
type greeting struct {
	first chan []byte   // unbuffered: only a waiting handshake takes a message
	over  chan struct{} // closed when the handshake has stopped waiting
	// require is set for a stream that must open with a
	// subscription.request (gRPC, B.5.2): the handshake waits for it up
	// to RequestWait instead of the grace period, and never starts the
	// stream without it.
	require bool
	// noRequest is set when such a stream was refused for sending none.
	noRequest atomic.Bool
}

// refuse ends a stream that had to open with a subscription.request and
// sent none (ErrNoRequest), saying why.
func (g *greeting) refuse(s *Server, sub *subscriber, why string) {
	g.noRequest.Store(true)
	reason := ErrNoRequest.Error() + ": " + why
	s.notify(Notice{Kind: NoticeMessage, Subscription: sub.id, Transport: sub.transport, Remote: sub.remote, Reason: reason})
	sub.stop(CloseRejected, reason, CauseRejected)
}

func newGreeting() *greeting {
	return &greeting{first: make(chan []byte), over: make(chan struct{})}
}

// receive handles a message the subscriber sent: its first one goes to
// the handshake if it is still waiting (first reports that it was the
// first); any other is handled as replies and requests are.
func (s *Server) receive(sub *subscriber, g *greeting, msg []byte, first bool) {
	if first {
		select {
		case g.first <- msg:
			return
		case <-g.over:
		}
	}
	s.handleInbound(sub, msg, sub.transport)
}

// readWebSocket reads what the subscriber sends until the connection ends.
func (s *Server) readWebSocket(sub *subscriber, conn *websocket.Conn, ww *wsWire, g *greeting) {
	defer close(ww.readerDone)
	for first := true; ; first = false {
		_, msg, err := conn.ReadMessage()
		ww.heardNow()
		if err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				sub.stop(ce.Code, "closed by subscriber", CauseSubscriber)
			} else {
				sub.stop(CloseNormal, "connection lost", CauseDisconnected)
			}
			return
		}
		s.receive(sub, g, msg, first)
	}
}

// handshake waits up to the grace period for the subscriber's first
// message. A subscription.request is answered (a late one is answered too,
// by handleInbound, the same way: see renegotiate); anything else is
// handled as usual and the stream starts unnegotiated, as it does when
// nothing comes. It reports whether the stream should start.
func (s *Server) handshake(sub *subscriber, g *greeting) bool {
	wait := s.opts.Grace
	if g.require {
		wait = max(wait, RequestWait)
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case msg := <-g.first:
		if payload.Decode(msg).Routing.Type != "subscription.request" {
			s.handleInbound(sub, msg, sub.transport)
			return true
		}
		s.recordMessage(sub, msg, "")
		n := sub.renegotiate(msg, true)
		notice := Notice{Kind: NoticeHandshake, Subscription: sub.id, Transport: sub.transport, Remote: sub.remote,
			MessageType: "subscription.request", Verdict: VerdictAccepted, Payload: msg}
		if n.Rejected != nil {
			notice.Verdict, notice.Reason = "rejected", n.Rejected.Error()
		}
		s.notify(notice)
		return n.Rejected == nil
	case <-t.C:
		if g.require {
			g.refuse(s, sub, "none within "+wait.String())
			return false
		}
		return true
	case <-sub.ctx.Done():
		return false
	}
}

// start begins feeding a subscriber: its own timeline, or the shared one.
func (s *Server) start(sub *subscriber, resumeAfter string) {
	if s.opts.Shared {
		s.shared.join(sub)
		return
	}
	st, first, err := s.openTimeline(resumeAfter)
	if err != nil && !errors.Is(err, errResumeNotFound) {
		s.notify(Notice{Kind: NoticeMessage, Subscription: sub.id, Transport: sub.transport, Reason: err.Error()})
		sub.stop(CloseInternal, "capture read error", CauseCaptureError)
		return
	}
	s.launch(sub, st, first)
}

// launch runs the feeder of a subscriber's own timeline.
func (s *Server) launch(sub *subscriber, st *stream, first *event) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.feed(sub, st, first)
	}()
}
