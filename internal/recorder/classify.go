package recorder

import (
	"bytes"
	"fmt"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/transport"
)

// Emit returns the function through which source src delivers its messages.
// Each source must use its own (they hold per-source scratch space).
func (r *Recorder) Emit(src uint16) transport.Emit {
	c := &classifier{r: r, src: src, redact: newRedactor(r.cfg.Redact)}
	return c.emit
}

// classifier does the per-message work in the source's goroutine.
type classifier struct {
	r      *Recorder
	src    uint16
	redact *redactor
	scrub  []byte
	doc    payload.Doc // decodes the message for redaction and the filters
}

func (c *classifier) emit(m *transport.Message) error {
	r := c.r
	msg := m.Payload
	var flags capfile.Flags
	var session string
	// check: JSON validity and UTF-8 are still to be found; scan: the
	// session key is. Unless redaction or the filters need the message
	// decoded here, the writer goroutine finds them with one decoding, so
	// that a message is parsed once, and the reading goroutine stays free
	// to read.
	keep, check, scan, handshake := true, false, false, false
	decoded := false // c.doc holds payload
	if m.Kind == capfile.KindConn {
		msg = c.scrubSecrets(msg)
	} else {
		needFields := !r.cfg.Filter.Empty() || r.cfg.MaxEvents > 0 || r.cfg.MaxBytes > 0
		// What the filters and redaction read of the message: the
		// routing fields, the members.
		var need payload.Need
		if needFields {
			need |= payload.NeedRouting
		}
		if c.redact != nil {
			need |= payload.NeedMembers
		}
		if need != 0 {
			// Validity is that of the message as received, so it is
			// checked before redaction (which could repair it).
			c.doc.DecodeOnly(msg, need)
			decoded = true
			flags |= docFlags(&c.doc)
		} else {
			check = true
		}
		if c.redact != nil {
			var changed bool
			if msg, changed = c.redact.apply(msg, &c.doc); changed {
				flags |= capfile.FlagRedacted
				decoded = false
			}
		}
		if !needFields {
			scan = true
			// The count of events still leaves the handshake out; only
			// a payload that can be a subscription message is decoded
			// for its type.
			if m.Kind == capfile.KindReceived && bytes.Contains(msg, handshakeMarker) {
				c.doc.DecodeOnly(msg, payload.NeedRouting)
				handshake = isHandshake(c.doc.Routing.Type)
			}
		} else {
			// Filters and limits need the type now: handshake messages
			// (subscription.*) are not events, so they are always kept
			// and never counted towards --max-events or --max-bytes.
			if !decoded {
				c.doc.DecodeOnly(msg, payload.NeedRouting)
			}
			f := &c.doc.Routing
			session = f.SessionKey()
			handshake = isHandshake(f.Type)
			if m.Kind == capfile.KindReceived && c.doc.IsObject() && !handshake && !r.cfg.Filter.Match(f) {
				keep = false
			}
		}
	}

	r.mu.Lock()
	if r.err != nil {
		err := r.err
		r.mu.Unlock()
		return err
	}
	if r.closing {
		r.mu.Unlock()
		return fmt.Errorf("%w: recorder closed", ErrWrite)
	}
	stop := ""
	switch m.Kind {
	case capfile.KindReceived:
		switch {
		case r.stats.StopReason != "":
			r.stats.Dropped++
			r.mu.Unlock()
			return nil
		case !keep:
			r.stats.Filtered++
			r.mu.Unlock()
			return nil
		}
		if handshake {
			break
		}
		r.stats.Events++
		r.stats.EventBytes += int64(len(msg))
		switch {
		case r.cfg.MaxEvents > 0 && r.stats.Events >= r.cfg.MaxEvents:
			stop = StopMaxEvents
		case r.cfg.MaxBytes > 0 && r.stats.EventBytes >= r.cfg.MaxBytes:
			stop = StopMaxBytes
		}
		if stop != "" {
			r.stats.StopReason = stop
		}
	case capfile.KindSent:
		r.stats.Sent++
	case capfile.KindConn:
		r.stats.ConnEvents++
		r.countConn(c.src, m.Conn)
	}
	if m.Kind != capfile.KindConn || (m.Conn != nil && m.Conn.Event == capfile.ConnConnected) {
		r.worth = true
	}
	if flags&capfile.FlagInvalidJSON != 0 {
		r.stats.InvalidJSON++
	}
	if flags&capfile.FlagInvalidUTF8 != 0 {
		r.stats.InvalidUTF8++
	}
	if flags&capfile.FlagRedacted != 0 {
		r.stats.Redacted++
	}
	t := m.Time
	if t < r.last {
		t = r.last
	}
	r.last = t
	r.pending.add(m.Kind, flags, check, scan, c.src, t, session, m.Attrs, msg)
	if r.idle {
		r.work.Signal()
	}
	for r.pending.size > maxPending && r.err == nil && !r.closing {
		r.space.Wait()
	}
	r.mu.Unlock()
	if stop != "" && r.cfg.OnStop != nil {
		r.stopOnce.Do(func() { r.cfg.OnStop(stop) })
	}
	return nil
}

func (r *Recorder) countConn(src uint16, ev *transport.ConnEvent) {
	if ev == nil {
		return
	}
	switch ev.Event {
	case capfile.ConnConnected:
		r.connected[src]++
		if r.connected[src] > 1 {
			r.stats.Reconnects++
		}
		r.setUp(src, true)
	case capfile.ConnDisconnected:
		r.stats.Disconnects++
		r.setUp(src, false)
	case capfile.ConnRefused:
		r.stats.Refused++
	case capfile.ConnClosed:
		if ev.Code >= 1000 && ev.Code < 5000 {
			r.stats.CloseCodes[ev.Code]++
		}
		r.setUp(src, false)
	case capfile.ConnGaveUp:
		r.setUp(src, false)
	}
}

// setUp notes whether source src is connected now (Stats.Connected).
func (r *Recorder) setUp(src uint16, up bool) {
	if r.up[src] == up {
		return
	}
	r.up[src] = up
	if up {
		r.stats.Connected++
	} else {
		r.stats.Connected--
	}
}

// scrubSecrets replaces every secret in a connection event's payload.
func (c *classifier) scrubSecrets(p []byte) []byte {
	for _, s := range c.r.cfg.Secrets {
		if len(s) < 3 || !bytes.Contains(p, []byte(s)) {
			continue
		}
		c.scrub = bytes.ReplaceAll(p, []byte(s), []byte(transport.Redacted))
		p = c.scrub
	}
	return p
}
