// Package wsdial opens WebSocket connections whose opening handshake ends
// as soon as the dial's context does.
//
// gorilla/websocket ends a handshake at the dialer's HandshakeTimeout or
// the context's deadline, not when the context is cancelled: a peer that
// accepts the TCP connection and never answers the upgrade held the dial
// (a push to a subscriber, aaep-capture's WebSocket source) past a
// SIGINT until that timeout. Dial sets the connection's deadline in the
// past when the context ends, which ends the handshake at once.
package wsdial

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// past is a deadline that has passed.
var past = time.Unix(1, 0)

// Dial is d.DialContext(ctx, url, header), ending the handshake when ctx
// is cancelled. d is not changed; its NetDialContext (else its NetDial,
// else a net.Dialer) makes the connection, and d must not set
// NetDialTLSContext, which would bypass it. The error of a dial that ctx
// cancelled is context.Cause(ctx).
func Dial(ctx context.Context, d *websocket.Dialer, url string, header http.Header) (*websocket.Conn, *http.Response, error) {
	var (
		mu    sync.Mutex
		conn  net.Conn // the connection being opened
		ended bool     // ctx ended
	)
	dialer := *d
	next := d.NetDialContext
	switch {
	case next != nil:
	case d.NetDial != nil:
		next = func(_ context.Context, network, addr string) (net.Conn, error) { return d.NetDial(network, addr) }
	default:
		next = (&net.Dialer{}).DialContext
	}
	dialer.NetDialContext = func(dctx context.Context, network, addr string) (net.Conn, error) {
		c, err := next(dctx, network, addr)
		if err != nil {
			return nil, err
		}
		mu.Lock()
		conn = c
		if ended {
			c.SetDeadline(past)
		}
		mu.Unlock()
		return c, nil
	}
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		ended = true
		if conn != nil {
			conn.SetDeadline(past)
		}
		mu.Unlock()
	})
	ws, resp, err := dialer.DialContext(ctx, url, header)
	if !stop() && err == nil {
		// Answered just as ctx ended: the connection's deadline is past.
		ws.Close()
		return nil, resp, context.Cause(ctx)
	}
	if err != nil && errors.Is(ctx.Err(), context.Canceled) {
		// The dial's own error is then the deadline Dial set (an i/o
		// timeout), which would only mislead.
		err = context.Cause(ctx)
	}
	return ws, resp, err
}
