package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/gorilla/websocket"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/wsdial"
	"github.com/aaep-tools/aaepkit/payload"
)

// Subprotocol is the WebSocket subprotocol of AAEP (Appendix B.2.1).
const Subprotocol = "aaep.v1"

// closeWait bounds how long the recorder waits to send its goodbye
// (subscription.close and a close frame) when the capture stops.
const closeWait = time.Second

// wsSource reads a WebSocket (AAEP Appendix B.2).
type wsSource struct {
	opts   Options
	u      *url.URL
	dialer *websocket.Dialer
}

func newWebSocket(u *url.URL, opts Options) *wsSource {
	return &wsSource{opts: opts, u: u, dialer: &websocket.Dialer{
		Proxy:            http.ProxyFromEnvironment,
		HandshakeTimeout: 15 * time.Second,
		Subprotocols:     []string{Subprotocol},
		TLSClientConfig:  opts.TLS,
		ReadBufferSize:   readBufferSize,
		WriteBufferSize:  4096,
	}}
}

func (s *wsSource) Info() Info {
	return Info{Transport: "websocket", Endpoint: safeURL(s.u), Subprotocol: Subprotocol}
}

func (s *wsSource) Run(ctx context.Context, emit Emit) error {
	e := newEmitter(s.opts.Clock, emit)
	e.url = safeURL(s.u)
	return runRetrying(ctx, e, s.opts.Retry, nil, func(ctx context.Context, n int) outcome {
		return s.attempt(ctx, e, n)
	})
}

func (s *wsSource) attempt(ctx context.Context, e *emitter, n int) outcome {
	// A stop ends the handshake at once, not at HandshakeTimeout (wsdial).
	conn, resp, err := wsdial.Dial(ctx, s.dialer, s.u.String(), s.opts.Header)
	if err != nil {
		o := outcome{err: err}
		if resp != nil {
			o.ev.Code = resp.StatusCode
			switch {
			case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
				o.err = fmt.Errorf("%w: HTTP %s", ErrRejected, resp.Status)
				o.permanent = true
			case resp.StatusCode < 400:
				// A 200 (a web page, an SSE stream) or a redirect: no
				// WebSocket there, and asking again will not make one.
				o.err = fmt.Errorf("websocket handshake: the server answered HTTP %s (%s) instead of switching to the WebSocket protocol (101): not a WebSocket endpoint; an SSE stream is recorded from its http:// URL",
					resp.Status, describeAnswer(resp))
				o.permanent = true
			case resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusRequestTimeout:
				o.err = fmt.Errorf("websocket handshake: HTTP %s", resp.Status)
				o.permanent = true
			default:
				o.err = fmt.Errorf("websocket handshake: HTTP %s", resp.Status)
			}
		}
		return o
	}
	defer conn.Close()
	if err := e.conn(ConnEvent{Event: capfile.ConnConnected, Attempt: n, Subprotocol: conn.Subprotocol()}); err != nil {
		return outcome{err: err}
	}
	o := outcome{connected: true}

	// Stopping unblocks the read; the goodbye is sent below.
	stopRead := context.AfterFunc(ctx, func() { _ = conn.SetReadDeadline(time.Now()) })
	defer stopRead()

	req := s.opts.request()
	if err := conn.WriteMessage(websocket.TextMessage, req); err != nil {
		o.err = fmt.Errorf("send subscription.request: %w", err)
		return o
	}
	if err := e.message(capfile.KindSent, e.clock.Now(), req, nil); err != nil {
		return outcome{err: err}
	}

	limit := s.opts.maxMessageSize()
	var (
		buf          = make([]byte, 0, 4096)
		handshake    = true // still looking for the subscription reply
		subscription string
		rejected     bool
		binaryAttr   = []capfile.Attr{{Key: "opcode", Value: "binary"}}
	)
	for {
		mt, r, err := conn.NextReader()
		if err != nil {
			return s.ended(ctx, e, conn, o, err, subscription, rejected)
		}
		var size int64
		buf, size, err = readLimited(r, buf[:0], limit)
		t := e.clock.Now()
		if err != nil {
			o.ev.Partial = int64(len(buf))
			return s.ended(ctx, e, conn, o, err, subscription, rejected)
		}
		if size > limit {
			if err := e.conn(ConnEvent{Event: capfile.ConnRefused, Size: size, Limit: limit, Reason: "message too large"}); err != nil {
				return outcome{err: err}
			}
			continue
		}
		var attrs []capfile.Attr
		if mt == websocket.BinaryMessage {
			attrs = binaryAttr
		}
		if err := e.message(capfile.KindReceived, t, buf, attrs); err != nil {
			return outcome{err: err}
		}
		// Messages after the handshake reply prove the connection useful
		// (and reset the retry count); the reply alone does not.
		o.delivered = o.delivered || !handshake
		if handshake {
			handshake = false
			switch d := payload.Decode(buf); d.Routing.Type {
			default:
				o.delivered = true
			case "subscription.accepted":
				if d.IsObject() {
					subscription, _ = d.Get("subscription_id").Str()
				}
			case "subscription.rejected":
				// Wait briefly for the producer's close frame (4001), then give up.
				rejected = true
				_ = conn.SetReadDeadline(time.Now().Add(closeWait))
			}
		}
	}
}

// ended turns the error that ended a read into the attempt's outcome, and
// says goodbye when the capture is stopping.
func (s *wsSource) ended(ctx context.Context, e *emitter, conn *websocket.Conn, o outcome, err error, subscription string, rejected bool) outcome {
	var ce *websocket.CloseError
	switch {
	case ctx.Err() != nil:
		s.goodbye(e, conn, subscription)
		o.ev = ConnEvent{Event: capfile.ConnClosed, Code: websocket.CloseNormalClosure, Reason: "capture stopped"}
		return o
	case errors.As(err, &ce) && ce.Code == websocket.CloseAbnormalClosure:
		// 1006 is never sent: gorilla reports a connection lost without a
		// close frame this way.
		o.err = fmt.Errorf("connection lost: %s", ce.Text)
		return o
	case errors.As(err, &ce):
		o.ev = ConnEvent{Event: capfile.ConnClosed, Code: ce.Code, Reason: ce.Text}
		o.err = nil
		switch {
		case ce.Code >= 4001 && ce.Code <= 4004:
			name := CloseCodeName(ce.Code)
			o.err = fmt.Errorf("%w: close code %d (%s) %s", ErrRejected, ce.Code, name, ce.Text)
			o.permanent = true
		case rejected:
			o.err = fmt.Errorf("%w: subscription.rejected", ErrRejected)
			o.permanent = true
		case ce.Code == websocket.CloseNormalClosure || ce.Code == 4000 || ce.Code == websocket.CloseNoStatusReceived:
			o.stop = true
		default:
			o.err = fmt.Errorf("closed with code %d", ce.Code)
		}
		return o
	case rejected:
		o.err = fmt.Errorf("%w: subscription.rejected", ErrRejected)
		o.permanent = true
		return o
	default:
		o.err = err
		return o
	}
}

// goodbye sends subscription.close (when a subscription id is known) and a
// normal close frame, recording the message it sent.
func (s *wsSource) goodbye(e *emitter, conn *websocket.Conn, subscription string) {
	deadline := time.Now().Add(closeWait)
	_ = conn.SetWriteDeadline(deadline)
	if subscription != "" {
		msg, _ := json.Marshal(struct {
			Type           string `json:"type"`
			SubscriptionID string `json:"subscription_id"`
			ReasonCode     string `json:"reason_code"`
			ReasonMessage  string `json:"reason_message"`
		}{"subscription.close", subscription, "subscriber_shutdown", "capture stopped"})
		if conn.WriteMessage(websocket.TextMessage, msg) == nil {
			_ = e.message(capfile.KindSent, e.clock.Now(), msg, nil)
		}
	}
	_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "capture stopped"), deadline)
}

// readLimited reads r to its end into buf. When the message exceeds limit
// it keeps reading (discarding) to count its size, so the connection stays
// usable; size is then above limit and buf holds no message.
func readLimited(r io.Reader, buf []byte, limit int64) ([]byte, int64, error) {
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) > limit {
				n, err := io.Copy(io.Discard, r)
				return buf[:0], int64(len(buf)) + n, err
			}
			grow := cap(buf)
			if int64(cap(buf)+grow) > limit+1 {
				grow = int(limit+1) - cap(buf)
				if grow < 512 {
					grow = 512
				}
			}
			buf = append(buf, make([]byte, grow)...)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			size := int64(len(buf))
			if size > limit {
				return buf[:0], size, nil
			}
			return buf, size, nil
		}
		if err != nil {
			return buf, int64(len(buf)), err
		}
	}
}

// describeAnswer says what an HTTP answer that is not a handshake carried.
func describeAnswer(resp *http.Response) string {
	if loc := resp.Header.Get("Location"); loc != "" {
		return "redirecting to " + loc
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		return "content type " + ct
	}
	return "no content type"
}
