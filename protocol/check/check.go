// Package check is the one analysis driver: it runs the protocol models over
// a recording and reports findings per stream, as go/analysis has one
// checker under singlechecker, multichecker and analysistest. Every front
// end gets its findings from here: aaep-replay check (one recording, or
// many with RunEach), show and the viewer's trace (the incremental Pass),
// the viewer's table, visualize and the models' test harness
// (protocol/protocoltest). So one recording gets one verdict through every
// door.
//
// A recording (package recording) is one or more streams: a recording of a
// replay (aaep-replay serve --record, push --record) has one stream per
// subscription, each subscriber's replies judged against its own copy of
// the replay; any other recording is one stream, whatever its sources.
// Several recordings read joined (recording.Join: view, visualize) are
// judged each on its own, as RunEach judges them: each recording's streams
// are named after it (recording.Recording.StreamOf).
// Each stream gets an engine of its own, made here with the stream's
// information (protocol.StreamInfo: its name, its sources and which of
// them recorded a replay), which the engine requires. Connection records
// go to the engines too: the redelivery rules need them.
//
// Run reads the recording on a goroutine of its own, a few batches ahead,
// decoding and preparing each message there (recording.Recording.Read), and
// checks on the caller's: the two cores balance batch by batch.
package check

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/progress"
	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/recording"
)

// Config says which models check and how.
type Config struct {
	// Models returns fresh instances of the models to run (each stream's
	// engine gets its own): models.All for every known model. Required.
	// (The driver does not import the models, so that the models' own
	// tests can run through it, by protocoltest.)
	Models func() []protocol.Model
	// Protocol, when set, hands every message to the model of that name
	// without recognition (--protocol).
	Protocol string
	// Options are the profile and the rules left out.
	Options protocol.Options
}

// newEngine makes the engine of one stream.
func (c *Config) newEngine(info protocol.StreamInfo, sink protocol.Sink) (*protocol.Engine, error) {
	if c.Models == nil {
		return nil, errors.New("check: no models (Config.Models)")
	}
	opts := c.Options
	return protocol.NewEngine(c.Models(), c.Protocol, &opts, info, sink)
}

// Validate reports a configuration no engine accepts (an unknown protocol,
// profile or rule), so that a front end can refuse it before reading.
func (c Config) Validate() error {
	if c.Models == nil {
		return errors.New("check: no models (Config.Models)")
	}
	opts := c.Options
	return protocol.CheckOptions(c.Models(), c.Protocol, &opts)
}

// Observer sees what a Run reads, each message and connection record after
// its stream's engine has checked it (so the findings about it, if any,
// have reached the sink). Any field may be nil.
type Observer struct {
	// Before is called for every message, in order, with its stream,
	// before its engine checks it (a front end that files findings under
	// what it learned of their message). The message is decoded (Doc) and
	// valid only during the call.
	Before func(stream string, m *protocol.Message)
	// Message is called for every message, in order, with its stream. The
	// message (Raw, Doc, Attrs) is valid only during the call.
	Message func(stream string, m *protocol.Message)
	// Conn is called for every connection record, in order.
	Conn func(stream string, c *protocol.Conn)
	// Progress counts the records read (nil: no progress display).
	Progress *progress.Meter
	// Resume, when set, goes on from an earlier run of the recording, or
	// keeps what the next run needs to (see Resume, Snapshot).
	Resume *Resume
}

// Result is what a Run read and found, besides what went to the sink.
type Result struct {
	// Recording is the recording checked.
	Recording *recording.Recording
	// Streams names the streams checked, in order of their first record.
	Streams []string
	// Stats counts the messages of every stream, by protocol and level.
	Stats protocol.Stats
	// Read says what reading found besides the messages.
	Read recording.Summary
	// Err is the error that stopped reading part-way (nil when the whole
	// recording was read; the findings are those of what was read).
	Err error
	// Incomplete says why part of the recording was not read or is not
	// there, one sentence each: missing or foreign parts, damage, a torn
	// tail, lines over the size limit, no message at all. Empty when the
	// verdict may be PASS or FAIL.
	Incomplete []string
	// Snapshot is what the next run needs to go on where this one ended
	// (Resume.Keep), nil when not asked for, when reading stopped
	// part-way, or when the open sessions hold more than KeepBudget.
	Snapshot *Snapshot
}

// Complete reports whether the whole recording was read.
func (r *Result) Complete() bool { return len(r.Incomplete) == 0 }

// Run checks every stream of rec, reporting findings, steps and session
// summaries to sink (each carries its stream), and returns what was read.
// obs may be nil. Damage part-way is not an error: the findings of what
// was read are reported and Result says why the rest was not. The error is
// for a configuration no engine accepts and for a recording nothing could
// be read of (a part that cannot be opened, a file that is neither a
// capture nor JSON Lines).
func Run(ctx context.Context, rec *recording.Recording, cfg Config, sink protocol.Sink, obs *Observer) (*Result, error) {
	if obs == nil {
		obs = &Observer{}
	}
	rs := obs.Resume
	if rs == nil {
		rs = &Resume{}
	}
	p, err := newPass(cfg, rec, sink, rs.Keep || rs.From != nil)
	if err != nil {
		return nil, err
	}
	if rs.Keep {
		p.keep = newKeeper()
	}
	ropts := recording.ReadOptions{Progress: obs.Progress, Prepare: p.Preparation()}
	if rs.From != nil {
		p.restore(rs.From)
		ropts.From = recording.From{Part: rs.Part, Index: rs.From.Next}
	}
	h := recording.Handler{
		Message: func(m *protocol.Message) error {
			if obs.Before != nil {
				if m.Doc == nil {
					m.Decode(&p.doc)
				}
				obs.Before(p.streamOf(m), m)
			}
			s := p.Message(m)
			if obs.Message != nil {
				obs.Message(s, m)
			}
			return nil
		},
		Conn: func(c *protocol.Conn) {
			s := p.Conn(c)
			if obs.Conn != nil {
				obs.Conn(s, c)
			}
		},
	}
	sum, rerr := rec.Read(ctx, ropts, h)
	if rerr != nil && sum.Format == "" {
		// Not even recognised as a capture or JSON lines: nothing to report.
		return nil, rerr
	}
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	var snap *Snapshot
	if p.keep != nil && rerr == nil && sum.Torn == nil {
		snap = p.keep.snapshot(ropts.From.Index + sum.Messages + sum.Skipped)
	}
	p.Finish()
	res := &Result{Recording: rec, Streams: p.Streams(), Stats: p.Stats(), Read: sum, Err: rerr, Snapshot: snap}
	res.Incomplete = append(append([]string(nil), rec.Problems...), unread(sum, rerr)...)
	return res, nil
}

// unread says why part of the input was not read (nothing when all of it was).
func unread(sum recording.Summary, err error) []string {
	var out []string
	if err != nil {
		out = append(out, fmt.Sprintf("reading stopped after %d messages: %v", sum.Messages, err))
	}
	switch {
	case capfile.IsLive(sum.Torn):
		out = append(out, fmt.Sprintf("the capture is being written (its recorder holds it open): %d messages so far", sum.Messages))
	case sum.Torn != nil:
		out = append(out, fmt.Sprintf("the capture ends in a torn record after %d messages (%v)", sum.Messages, sum.Torn))
	}
	out = append(out, sum.Gaps()...)
	if len(out) == 0 && sum.Messages == 0 {
		out = append(out, "the input holds no messages")
	}
	return out
}

// Outcome is the Run of one recording of RunEach.
type Outcome struct {
	Result *Result
	Err    error
}

// RunEach runs each recording on its own, at most parallel at once (1 when
// parallel < 1), each into the sink sinks(i) returns for recording i, and
// returns the outcomes in the order of recs. A recording's sink is called
// from one goroutine at a time.
func RunEach(ctx context.Context, recs []*recording.Recording, cfg Config, parallel int, sinks func(i int) (protocol.Sink, *Observer)) []Outcome {
	out := make([]Outcome, len(recs))
	sem := make(chan struct{}, max(parallel, 1))
	var wg sync.WaitGroup
	for i, rec := range recs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			sink, obs := sinks(i)
			res, err := Run(ctx, rec, cfg, sink, obs)
			out[i] = Outcome{res, err}
		}()
	}
	wg.Wait()
	return out
}

// Pass is the incremental form of the driver, for a front end that reads
// the records itself (show --follow, the viewer's trace of one session,
// tests): it takes messages and connection records in order and routes each
// to the engine of its stream. A Pass is not safe for concurrent use.
type Pass struct {
	cfg     Config
	rec     *recording.Recording
	sink    protocol.Sink
	engines map[string]*protocol.Engine
	order   []string
	prep    *protocol.Preparation
	last    string // the stream of the last message, and its engine
	lastEng *protocol.Engine
	doc     payload.Doc // decodes a message an Observer sees undecoded
	keep    *keeper     // what a Snapshot keeps (Resume.Keep), or nil
	muted   bool        // a Snapshot is being restored: the sink hears nothing
}

// NewPass starts a pass over rec (nil: a stream of live sources, as a test
// feeds it). The error is for a configuration no engine accepts.
func NewPass(cfg Config, rec *recording.Recording, sink protocol.Sink) (*Pass, error) {
	return newPass(cfg, rec, sink, false)
}

// newPass is NewPass; with resuming, the sink is muted while a Snapshot is
// restored and tells the keeper of sessions done.
func newPass(cfg Config, rec *recording.Recording, sink protocol.Sink, resuming bool) (*Pass, error) {
	p := &Pass{cfg: cfg, rec: rec, sink: sink, engines: map[string]*protocol.Engine{}}
	if resuming {
		p.sink = p.muteSink(sink)
	}
	// The configuration is checked, and the preparation made, once.
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	opts := cfg.Options
	p.prep = protocol.PreparationOf(cfg.Models(), &opts)
	if rec == nil || !rec.Replay() && rec.Joined() == nil {
		// A recording that is one stream has it from the start (a
		// replay's streams are its subscriptions, and those of joined
		// recordings their recordings, found as they come).
		p.engine("")
	}
	return p, nil
}

// engine returns the engine of stream name, made on first use.
func (p *Pass) engine(name string) (*protocol.Engine, error) {
	if name == p.last && p.lastEng != nil {
		return p.lastEng, nil
	}
	eng := p.engines[name]
	if eng == nil {
		info := protocol.StreamInfo{Stream: name}
		if p.rec != nil {
			info = p.rec.StreamInfo(name)
		}
		var err error
		if eng, err = p.cfg.newEngine(info, p.sink); err != nil {
			return nil, err
		}
		p.engines[name] = eng
		p.order = append(p.order, name)
	}
	p.last, p.lastEng = name, eng
	return eng, nil
}

// Preparation prepares messages for the pass's engines ahead of them (on a
// reading goroutine; see protocol.Preparation), or is nil.
func (p *Pass) Preparation() *protocol.Preparation { return p.prep }

// streamOf is the stream of message m.
func (p *Pass) streamOf(m *protocol.Message) string {
	if p.rec == nil {
		return ""
	}
	return p.rec.StreamOf(m)
}

// Message checks m with the engine of its stream and returns the stream.
func (p *Pass) Message(m *protocol.Message) string {
	s := p.streamOf(m)
	if p.keep != nil {
		// Kept before it is checked: the checker may be done with its
		// session on it (a terminal event), and says so while checking.
		if m.Doc == nil {
			m.Decode(&p.doc)
		}
		p.keep.message(s, m)
	}
	if eng, _ := p.engine(s); eng != nil {
		eng.Feed(m)
	}
	return s
}

// Conn passes a connection record to the engine of its stream and returns
// the stream.
func (p *Pass) Conn(c *protocol.Conn) string {
	s := ""
	if p.rec != nil {
		s = p.rec.StreamOfConn(c)
	}
	if eng, _ := p.engine(s); eng != nil {
		eng.Connection(c)
	}
	if p.keep != nil {
		// After the engine, which reads the record's event (c.Event).
		p.keep.conn(s, c)
	}
	return s
}

// Finish ends every stream: the checkers report what is left open.
func (p *Pass) Finish() {
	for _, s := range p.order {
		p.engines[s].Finish()
	}
}

// Streams names the streams seen so far, in order of their first record.
func (p *Pass) Streams() []string { return append([]string(nil), p.order...) }

// Stats sums the counts of every stream's engine.
func (p *Pass) Stats() protocol.Stats {
	st := protocol.Stats{ByProtocol: map[string]int64{}, Findings: map[protocol.Level]int64{}}
	for _, s := range p.order {
		e := p.engines[s].Stats()
		st.Messages += e.Messages
		for k, n := range e.ByProtocol {
			st.ByProtocol[k] += n
		}
		for k, n := range e.Findings {
			st.Findings[k] += n
		}
	}
	return st
}
