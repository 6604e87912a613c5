package visualize

import (
	"sort"

	"github.com/aaep-tools/aaepkit/protocol"
)

// Collector gathers the traces of an engine run: use Sink as (part of) the
// engine's sink, then Traces. It traces at most MaxSessions sessions (the
// first ones seen), so its memory is bounded whatever the input.
type Collector struct {
	session     string
	limits      Limits
	maxSessions int
	dropped     int64
	traces      map[traceKey]*Trace
	// bySession finds a trace by stream and session ID, for stream-level
	// findings.
	bySession map[[2]string]*Trace
	// last is the trace used last (sessions come in runs).
	last *Trace
}

type traceKey struct{ stream, protocol, session string }

// CollectorOptions configure a Collector.
type CollectorOptions struct {
	// Session keeps only the session with this ID (all when empty).
	Session string
	// Limits bound each trace.
	Limits Limits
	// MaxSessions is how many sessions are traced (default
	// DefaultMaxSessions; negative: no limit). Later sessions are only
	// counted (Collector.Dropped).
	MaxSessions int
}

// DefaultMaxSessions is how many sessions a Collector traces by default:
// more would make a drawing no one can read (draw them one at a time).
const DefaultMaxSessions = 100

// NewCollector returns an empty collector.
func NewCollector(opts CollectorOptions) *Collector {
	max := opts.MaxSessions
	if max == 0 {
		max = DefaultMaxSessions
	}
	return &Collector{session: opts.Session, limits: opts.Limits.withDefaults(), maxSessions: max,
		traces: map[traceKey]*Trace{}, bySession: map[[2]string]*Trace{}}
}

// Sink returns a sink that feeds the collector.
func (c *Collector) Sink() protocol.Sink {
	return protocol.Sink{Finding: c.AddFinding, Step: c.AddStep, SessionDone: c.SessionDone}
}

func (c *Collector) trace(stream, proto, session string) *Trace {
	if c.last != nil && c.last.Session == session && c.last.Protocol == proto && c.last.Stream == stream {
		return c.last
	}
	k := traceKey{stream, proto, session}
	t := c.traces[k]
	if t == nil {
		if c.maxSessions > 0 && len(c.traces) >= c.maxSessions {
			return nil
		}
		t = newTrace(proto, session, c.limits)
		t.Stream = stream
		c.traces[k] = t
		if _, ok := c.bySession[[2]string{stream, session}]; !ok && proto != protocol.StreamProtocol {
			c.bySession[[2]string{stream, session}] = t
		}
	}
	c.last = t
	return t
}

func (c *Collector) keep(session string) bool { return c.session == "" || session == c.session }

// AddStep adds a step to its session's trace.
func (c *Collector) AddStep(s protocol.Step) {
	if c.keep(s.Session) {
		if t := c.trace(s.Stream, s.Protocol, s.Session); t != nil {
			t.AddStep(s)
		}
	}
}

// AddFinding adds a finding to its session's trace. Findings of the stream
// itself (protocol.StreamProtocol) go to the trace of the session they name
// when there is one.
func (c *Collector) AddFinding(f protocol.Finding) {
	if !c.keep(f.Session) {
		return
	}
	if f.Protocol == protocol.StreamProtocol {
		if t, ok := c.bySession[[2]string{f.Stream, f.Session}]; ok && f.Session != "" {
			t.AddFinding(f)
			return
		}
	}
	if t := c.trace(f.Stream, f.Protocol, f.Session); t != nil {
		t.AddFinding(f)
	}
}

// SessionDone records a session's summary.
func (c *Collector) SessionDone(s protocol.SessionSummary) {
	if !c.keep(s.Session) {
		return
	}
	if t := c.trace(s.Stream, s.Protocol, s.Session); t != nil {
		t.SetSummary(s)
		return
	}
	c.dropped++
}

// Dropped is the number of sessions that ended without being traced,
// because MaxSessions sessions were traced already.
func (c *Collector) Dropped() int64 { return c.dropped }

// Len is the number of traces collected.
func (c *Collector) Len() int { return len(c.traces) }

// Traces returns the traces sorted by stream, protocol, then session ID.
func (c *Collector) Traces() []*Trace {
	out := make([]*Trace, 0, len(c.traces))
	for _, t := range c.traces {
		t.finish()
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Stream != out[j].Stream {
			return out[i].Stream < out[j].Stream
		}
		if out[i].Protocol != out[j].Protocol {
			return out[i].Protocol < out[j].Protocol
		}
		return out[i].Session < out[j].Session
	})
	return out
}
