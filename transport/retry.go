package transport

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"syscall"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
)

// Retry says how a source reconnects after a lost connection or a failed
// attempt: exponential backoff from Initial, doubled per consecutive
// failure up to Max, with jitter (each wait is drawn uniformly between half
// the backoff and the full backoff).
type Retry struct {
	// Initial is the first wait (default 250 ms). An SSE "retry:" field
	// replaces it for that stream.
	Initial time.Duration
	// Max caps a wait (default 30 s).
	Max time.Duration
	// MaxRetries is how many consecutive failed attempts are retried before
	// the source gives up; negative means forever. A connection that
	// delivered a message resets the count.
	MaxRetries int
	// Wait keeps retrying when the very first attempt is refused (nothing
	// listens at the address yet). Without it, such a source gives up at
	// once: a wrong address is not a quiet producer.
	Wait bool
}

// ErrRefusedAtFirst is wrapped by the error of a source whose very first
// connection attempt was refused (without Retry.Wait).
var ErrRefusedAtFirst = errors.New("connection refused on the first attempt")

// refused reports whether err is a dial that found nothing listening: a
// refused TCP connection, or a Unix socket path that does not exist or has
// no listener.
func refused(err error) bool {
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "dial" {
		return false
	}
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT)
}

// DefaultRetry is used for the zero Retry fields.
var DefaultRetry = Retry{Initial: 250 * time.Millisecond, Max: 30 * time.Second, MaxRetries: 10}

func (r Retry) withDefaults() Retry {
	if r.Initial <= 0 {
		r.Initial = DefaultRetry.Initial
	}
	if r.Max <= 0 {
		r.Max = DefaultRetry.Max
	}
	if r.Max < r.Initial {
		r.Initial = r.Max
	}
	return r
}

// Delay returns the wait before retry number n (1 for the first retry).
func (r Retry) Delay(n int) time.Duration {
	r = r.withDefaults()
	d := r.Initial
	for i := 1; i < n && d < r.Max; i++ {
		d *= 2
	}
	if d > r.Max {
		d = r.Max
	}
	half := d / 2
	return half + rand.N(d-half+1)
}

// outcome is how one connection attempt ended.
type outcome struct {
	// ev describes the end; the retry loop fills Event (when empty), Error,
	// Attempt and RetryMS.
	ev ConnEvent
	// connected: a connection was established (its "connected" event emitted).
	connected bool
	// delivered: at least one message was received on it.
	delivered bool
	// stop: the stream ended cleanly or the capture is stopping; no retry.
	stop bool
	// permanent: retrying cannot help (authentication, rejection, bad URL).
	permanent bool
	err       error
}

// runRetrying runs attempt until it stops, fails permanently, exhausts the
// retries, or ctx ends. Every end of an attempt becomes a connection event.
func runRetrying(ctx context.Context, e *emitter, r Retry, initial func() time.Duration, attempt func(ctx context.Context, n int) outcome) error {
	r = r.withDefaults()
	failures := 0 // for the backoff: a lost connection counts as one
	attempts := 0 // connection attempts since the last delivered message, from 1
	first := true // no attempt has been made yet
	for {
		attempts++
		o := attempt(ctx, attempts)
		if e.err != nil {
			return e.err
		}
		if first && !o.connected && !r.Wait && o.err != nil && refused(o.err) {
			o.permanent = true
			o.err = fmt.Errorf("%w (is the address right? --wait keeps retrying until the producer is up): %w", ErrRefusedAtFirst, o.err)
		}
		first = false
		if o.ev.Event == "" {
			if o.connected {
				o.ev.Event = capfile.ConnDisconnected
			} else {
				o.ev.Event = capfile.ConnFailed
			}
		}
		if o.err != nil && o.ev.Error == "" {
			o.ev.Error = errText(o.err)
		}
		if ctx.Err() != nil {
			// The capture is stopping: a connection that was open ends as
			// closed by us, whatever error the interrupted read returned.
			if !o.connected {
				return nil
			}
			if o.ev.Event == capfile.ConnDisconnected {
				o.ev = ConnEvent{Event: capfile.ConnClosed, Partial: o.ev.Partial}
			}
			if o.ev.Reason == "" {
				o.ev.Reason = "capture stopped"
			}
			return e.conn(o.ev)
		}
		if o.stop {
			return e.conn(o.ev)
		}
		if o.delivered {
			failures, attempts = 0, 0
		}
		failures++
		if !o.connected {
			o.ev.Attempt = attempts
		}
		if o.permanent || (r.MaxRetries >= 0 && failures > r.MaxRetries) {
			if err := e.conn(o.ev); err != nil {
				return err
			}
			cause := o.err
			if cause == nil {
				cause = errors.New(o.ev.Event)
			}
			why := "giving up"
			if !o.permanent {
				why = "giving up after 1 attempt"
				if n := max(attempts, 1); n > 1 {
					why = fmt.Sprintf("giving up after %d attempts", n)
				}
			}
			if err := e.conn(ConnEvent{Event: capfile.ConnGaveUp, Error: errText(cause), Reason: why}); err != nil {
				return err
			}
			return fmt.Errorf("%w: %s: %s: %w", ErrFailed, e.url, why, cause)
		}
		rr := r
		if initial != nil {
			if d := initial(); d > 0 {
				rr.Initial = d
			}
		}
		wait := rr.Delay(failures)
		o.ev.RetryMS = wait.Milliseconds()
		if err := e.conn(o.ev); err != nil {
			return err
		}
		if !sleep(ctx, wait) {
			return nil
		}
	}
}

// sleep waits d or until ctx ends; it reports whether the wait completed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
