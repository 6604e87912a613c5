package transport

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/aaep-tools/aaepkit/capfile"
)

// A transport binding that lives in a package of its own (gRPC, which
// links a large library into whoever imports it) plugs in here: it
// registers its URL schemes with RegisterScheme, and its Run delivers
// messages through an Emitter inside RunRetrying, so that it reconnects,
// gives up and reports connection events exactly as the sources of this
// package do.

// NewFunc makes the source of an endpoint of a registered scheme.
type NewFunc func(endpoint string, opts Options) (Source, error)

var schemes struct {
	sync.RWMutex
	m     map[string]NewFunc
	names []string
}

// RegisterScheme makes New hand endpoints of the given URL schemes
// ("grpc", "grpcs") to newSource. It panics on a scheme this package or an
// earlier registration already serves: that is a programming error.
func RegisterScheme(newSource NewFunc, names ...string) {
	schemes.Lock()
	defer schemes.Unlock()
	if schemes.m == nil {
		schemes.m = map[string]NewFunc{}
	}
	for _, n := range names {
		n = strings.ToLower(n)
		switch n {
		case "http", "https", "ws", "wss", "unix", "exec":
			panic("transport: scheme " + n + " is built in")
		}
		if _, dup := schemes.m[n]; dup {
			panic("transport: scheme " + n + " registered twice")
		}
		schemes.m[n] = newSource
		schemes.names = append(schemes.names, n)
	}
}

// registered returns the source maker of scheme, if one is registered.
func registered(scheme string) (NewFunc, bool) {
	schemes.RLock()
	defer schemes.RUnlock()
	f, ok := schemes.m[strings.ToLower(scheme)]
	return f, ok
}

// registeredNames lists the registered schemes, for error messages.
func registeredNames() []string {
	schemes.RLock()
	defer schemes.RUnlock()
	return append([]string(nil), schemes.names...)
}

// MaxMessage is the size limit of one message (MaxMessageSize or its
// default).
func (o *Options) MaxMessage() int64 { return o.maxMessageSize() }

// SubscriptionBytes is the subscription.request to send (Request or the
// default one).
func (o *Options) SubscriptionBytes() []byte { return o.request() }

// Emitter delivers the messages and connection events of a source built
// outside this package; it is handed to each attempt by RunRetrying.
type Emitter struct{ e *emitter }

// Now is the current time on the source's clock.
func (e *Emitter) Now() int64 { return e.e.clock.Now() }

// Message delivers a received (capfile.KindReceived) or sent
// (capfile.KindSent) payload stamped at t. An error stops the source: the
// attempt returns at once.
func (e *Emitter) Message(kind capfile.Kind, t int64, payload []byte, attrs []capfile.Attr) error {
	return e.e.message(kind, t, payload, attrs)
}

// Conn delivers a connection event stamped now; its URL defaults to the
// source's.
func (e *Emitter) Conn(ev ConnEvent) error { return e.e.conn(ev) }

// Outcome is how one connection attempt ended (see RunRetrying).
type Outcome struct {
	// Event describes the end; RunRetrying fills Event (disconnected or
	// failed when empty), Error, Attempt and RetryMS.
	Event ConnEvent
	// Connected: a connection was established and its "connected" event
	// emitted.
	Connected bool
	// Delivered: a message beyond the handshake was received on it, which
	// resets the retry count.
	Delivered bool
	// Stop: the stream ended cleanly; the source does not reconnect.
	Stop bool
	// Permanent: retrying cannot help (rejection, authentication, a peer
	// that does not speak the protocol).
	Permanent bool
	// Err is what ended or failed the attempt. A refused dial should be (or
	// wrap) the dial's *net.OpError, so that a first attempt refused is
	// reported as such (Retry.Wait).
	Err error
}

// RunRetrying runs attempt, numbered from 1, until the stream stops, an
// attempt fails permanently, the retries of r are exhausted (the error
// wraps ErrFailed), emit fails, or ctx ends (nil). Every end of an attempt
// becomes a connection event for url (credential-free, see SafeURL), with
// the backoff, retry count and no-progress rules of every other source.
func RunRetrying(ctx context.Context, clock *Clock, emit Emit, url string, r Retry, attempt func(ctx context.Context, e *Emitter, n int) Outcome) error {
	if clock == nil {
		return fmt.Errorf("source %s: no clock", url)
	}
	em := newEmitter(clock, emit)
	em.url = url
	pub := &Emitter{e: em}
	return runRetrying(ctx, em, r, nil, func(ctx context.Context, n int) outcome {
		o := attempt(ctx, pub, n)
		return outcome{ev: o.Event, connected: o.Connected, delivered: o.Delivered, stop: o.Stop, permanent: o.Permanent, err: o.Err}
	})
}

// Registered reports whether a source is registered for scheme (see
// RegisterScheme).
func Registered(scheme string) bool {
	_, ok := registered(scheme)
	return ok
}
