package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// PushOptions are the options of Push beyond the replay's.
type PushOptions struct {
	// Header is sent with the WebSocket handshake (e.g. Authorization).
	Header http.Header
	// DialTimeout bounds connecting and the WebSocket handshake (default 10s).
	DialTimeout time.Duration
}

// ConnectError is Push's error when the subscriber cannot be reached.
type ConnectError struct {
	URL    string
	Status string // the HTTP status when the server refused the upgrade
	Err    error
}

func (e *ConnectError) Error() string {
	if e.Status != "" {
		return fmt.Sprintf("connect to %s: %v (HTTP %s)", e.URL, e.Err, e.Status)
	}
	return fmt.Sprintf("connect to %s: %v", e.URL, e.Err)
}

func (e *ConnectError) Unwrap() error { return e.Err }

// ErrNotFinished is wrapped by Push's error when the subscriber went away
// (or the connection failed) before the replay finished.
var ErrNotFinished = errors.New("replay did not finish")

// Push connects to a subscriber listening for WebSocket connections at url
// (ws:// or wss://), offering the aaep.v1 subprotocol, and replays to it as
// the server would to a subscriber that connected: a subscription.request
// sent within the grace period is answered, replies are handled, and the
// replay is paced the same way (it always closes at the end: CloseAtEnd). It returns the subscription's figures when
// the replay ends; the error is nil only when the replay finished (or ctx
// was cancelled, which stops it early).
func Push(ctx context.Context, url string, opts Options, popts PushOptions) (SubscriberStats, error) {
	// A push is one replay to one subscriber: it ends with the replay.
	opts.CloseAtEnd = true
	srv, err := New(opts)
	if err != nil {
		return SubscriberStats{}, err
	}
	conn, bc, err := dialSubscriber(ctx, url, popts)
	if err != nil {
		return SubscriberStats{}, err
	}
	stop := context.AfterFunc(ctx, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	})
	defer stop()
	sub := srv.runWebSocket(conn, bc, TransportPush, url)
	if sub == nil {
		return SubscriberStats{}, fmt.Errorf("push to %s: %w", url, context.Cause(ctx))
	}
	<-sub.done
	sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
	_ = srv.Shutdown(sctx)
	scancel()
	st := sub.stats()
	if err := srv.RecordError(); err != nil {
		return st, err
	}
	if ctx.Err() != nil {
		return st, nil
	}
	if c := st.Close; c == nil || c.Cause != CauseFinished {
		reason := "unknown"
		if c != nil {
			reason = fmt.Sprintf("%s (%d %s)", c.Cause, c.Code, c.Reason)
		}
		return st, fmt.Errorf("push to %s: %w after %d events: %s", url, ErrNotFinished, st.Sent, reason)
	}
	return st, nil
}
