package capturecmd

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/transport"
)

// watcher sees what every source delivers before the recorder does. It
// prints each failed connection attempt and each lost connection with its
// reason, keeps what the progress line says about connecting (a wait for
// response headers, the last failure), and notes what a producer's
// subscription.accepted withheld from the recording.
type watcher struct {
	print func(format string, args ...any)

	mu       sync.Mutex
	requests map[uint16][]byte    // the subscription.request each source sent
	excluded []string             // what producers withheld, in order first seen
	conns    map[string]*connNote // by endpoint URL
}

// connNote is the connecting state of one endpoint.
type connNote struct {
	waiting bool
	since   time.Time
	problem string    // the last failed attempt or lost connection, until connected
	retryAt time.Time // when the next attempt is due
}

// newWatcher prints through print (nil: prints nothing).
func newWatcher(print func(format string, args ...any)) *watcher {
	if print == nil {
		print = func(string, ...any) {}
	}
	return &watcher{print: print, requests: map[uint16][]byte{}, conns: map[string]*connNote{}}
}

func (w *watcher) note(url string) *connNote {
	n := w.conns[url]
	if n == nil {
		n = &connNote{}
		w.conns[url] = n
	}
	return n
}

// status is transport.Options.Status.
func (w *watcher) status(st transport.Status) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.note(st.URL)
	n.waiting, n.since = st.Waiting, st.Since
	if st.Waiting {
		n.problem = ""
	}
}

// emit wraps the recorder's emit for source src.
func (w *watcher) emit(src uint16, next transport.Emit) transport.Emit {
	var doc payload.Doc // this source's decoding of handshake messages
	return func(m *transport.Message) error {
		switch {
		case m.Kind == capfile.KindConn && m.Conn != nil:
			w.connEvent(m.Conn)
		case m.Kind == capfile.KindSent && hasType(&doc, m.Payload, "subscription.request"):
			w.mu.Lock()
			w.requests[src] = append([]byte(nil), m.Payload...)
			w.mu.Unlock()
		case m.Kind == capfile.KindReceived && hasType(&doc, m.Payload, "subscription.accepted"):
			w.mu.Lock()
			for _, x := range transport.Exclusions(w.requests[src], m.Payload) {
				if !slices.Contains(w.excluded, x) {
					w.excluded = append(w.excluded, x)
				}
			}
			w.mu.Unlock()
		}
		return next(m)
	}
}

// hasType reports whether message p is of AAEP type typ, decoding it
// into d only when it can be: when typ's bytes are in it, or an escape
// sequence could spell them. Events, which are most of a stream, are then
// not decoded here but only once, by the recorder.
func hasType(d *payload.Doc, p []byte, typ string) bool {
	if !bytes.Contains(p, []byte(typ)) && bytes.IndexByte(p, '\\') < 0 {
		return false
	}
	d.DecodeOnly(p, payload.NeedRouting)
	return d.Routing.Type == typ
}

func (w *watcher) connEvent(c *transport.ConnEvent) {
	retry := time.Duration(c.RetryMS) * time.Millisecond
	var msg string
	switch c.Event {
	case capfile.ConnConnected:
		w.mu.Lock()
		*w.note(c.URL) = connNote{}
		w.mu.Unlock()
		return
	case capfile.ConnFailed:
		msg = fmt.Sprintf("attempt %d failed: %s", c.Attempt, reason(c))
	case capfile.ConnDisconnected:
		msg = "connection lost: " + reason(c)
	default:
		return
	}
	w.mu.Lock()
	n := w.note(c.URL)
	n.waiting, n.problem = false, msg
	n.retryAt = time.Time{}
	if retry > 0 {
		n.retryAt = time.Now().Add(retry)
	}
	w.mu.Unlock()
	if retry > 0 {
		msg += fmt.Sprintf("; retrying in %s", retry.Round(time.Millisecond))
	}
	w.print("aaep-capture: %s: %s\n", c.URL, msg)
}

func reason(c *transport.ConnEvent) string {
	switch {
	case c.Error != "":
		return c.Error
	case c.Reason != "":
		return c.Reason
	case c.Code != 0:
		return fmt.Sprintf("code %d", c.Code)
	}
	return "no reason given"
}

// line says, for the progress line, what connecting endpoints are doing:
// waiting for response headers (and for how long), or their last failure.
func (w *watcher) line(now time.Time) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	urls := make([]string, 0, len(w.conns))
	for u := range w.conns {
		urls = append(urls, u)
	}
	sort.Strings(urls)
	var parts []string
	for _, u := range urls {
		n := w.conns[u]
		prefix := ""
		if len(w.conns) > 1 {
			prefix = u + ": "
		}
		switch {
		case n.waiting:
			parts = append(parts, fmt.Sprintf("%swaiting for response headers %s", prefix, now.Sub(n.since).Truncate(time.Second)))
		case n.problem != "":
			s := prefix + n.problem
			if d := n.retryAt.Sub(now); d > 0 {
				s += fmt.Sprintf(" (retry in %s)", d.Round(100*time.Millisecond))
			}
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "; ")
}

// withheld returns what producers' answers withheld from the recording.
func (w *watcher) withheld() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.excluded...)
}
