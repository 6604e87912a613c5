// Package recdiff compares two recordings at the protocol's level: what
// changed in the agent's behaviour (or a subscriber's replies) between
// them, with identifiers, timestamps, reply tokens, sequence numbers and
// the cut of streamed output into chunks left out.
//
// Each side (A and B) is one or more recordings (package recording), read
// through the one analysis driver (package protocol/check) as check reads
// them, so that each session's findings are check's. The two sides are
// read at the same time, each on its own goroutine; a session is built
// message by message while it is open and handed to a matcher when it
// ends, which pairs it with its match on the other side (by session id,
// by order, by what started it, or by a member's value) or keeps it until
// that match ends. A pair is compared at once and forgotten: memory holds
// the open sessions and those waiting for their match, not the recordings.
//
// A pair is compared on the sequence of its events (type, state change,
// salient detail: a minimal edit script, the chunks of one output as one
// line, the members of events that match compared after normalisation),
// its tool calls, its confirmations and clarifications, its output text
// joined across chunks, its final state, its findings by rule and level,
// and its timing within a tolerance.
package recdiff

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aaep-tools/aaepkit/protocol/check"
	"github.com/aaep-tools/aaepkit/recording"
)

// SchemaVersion is the version of the JSON form's schema ("schema_version").
const SchemaVersion = 1

// Options say how to compare.
type Options struct {
	// Match is how sessions are paired: "" (automatic: by id when the
	// sides share session ids, else by what started them), MatchID,
	// MatchOrder, MatchStart, or the name of a top-level member whose
	// value (in a session's first message that has it) pairs them.
	Match string
	// Ignore and Keep are member paths left out of, or kept in, the
	// comparison of events, beyond (or against) DefaultIgnore.
	Ignore, Keep []string
	// NoDefaultIgnore compares the members DefaultIgnore leaves out.
	NoDefaultIgnore bool
	// TimeTolerance is the fraction of A's time by which B's may differ
	// (0.2: 20%); negative: timing is not compared.
	TimeTolerance float64
	// TimeFloor is the difference below which timing never differs,
	// whatever the fraction (jitter of a recording machine).
	TimeFloor time.Duration
	// Check configures the analysis driver (its models, protocol and
	// profile), as check's flags do.
	Check check.Config
	// KeepSame keeps the sessions that are the same in Result.Sessions
	// (the JSON form lists them); otherwise they are only counted, so that
	// a long recording's report holds what differs.
	KeepSame bool
}

func (o *Options) matchField() string {
	switch o.Match {
	case "", "auto", MatchID, MatchOrder, MatchStart:
		return ""
	}
	return o.Match
}

// Validate reports options no comparison accepts.
func (o *Options) Validate() error {
	if _, err := newPaths(o.Ignore, o.Keep, true); err != nil {
		return err
	}
	if f := o.matchField(); f != "" {
		if strings.ContainsAny(f, ".* ") {
			return fmt.Errorf("--match: %q is not id, order, start or a member name", f)
		}
	}
	return o.Check.Validate()
}

// Side is what one side of a comparison names: its recordings, and what
// to call it.
type Side struct {
	// Name is the argument that named the side.
	Name       string
	Recordings []*recording.Recording
}

// Result is a comparison: each session, paired or not, and whether all
// were the same.
type Result struct {
	A, B string
	// Sessions are the sessions in the order A started them, then the
	// sessions only B has in the order B started them (those that are the
	// same only with Options.KeepSame).
	Sessions []*SessionDiff
	// counts counts every session by status, kept or not; streamCounts
	// the stream's messages of no session (a subscription handshake, a
	// reply to an ended session), compared as one entry per stream but no
	// session.
	counts, streamCounts map[Status]int
	// Incomplete says why part of a side could not be read (its side's
	// name first); a comparison of what was not read is no verdict.
	Incomplete []string
	// Options are those compared with.
	Options Options
}

// Same reports whether no session differs and none is on one side only,
// nor do the streams' messages of no session.
func (r *Result) Same() bool {
	return r.counts[Different]+r.counts[OnlyA]+r.counts[OnlyB]+
		r.streamCounts[Different]+r.streamCounts[OnlyA]+r.streamCounts[OnlyB] == 0
}

// Counts counts the sessions by status (not the streams' messages of no
// session: StreamCounts).
func (r *Result) Counts() map[Status]int {
	return maps.Clone(r.counts)
}

// StreamCounts counts the entries of the streams' messages of no session
// (shown as "(no session)") by status: no session, so not in Counts.
func (r *Result) StreamCounts() map[Status]int {
	return maps.Clone(r.streamCounts)
}

// aboutStream reports whether d compares a stream's messages of no
// session, not a session.
func (d *SessionDiff) aboutStream() bool {
	ref := d.A
	if ref == nil {
		ref = d.B
	}
	return d.MatchedBy == "stream" || ref != nil && ref.Session == ""
}

// Total is the number of sessions compared.
func (r *Result) Total() int {
	n := 0
	for _, c := range r.counts {
		n += c
	}
	return n
}

// add counts d and keeps it unless it is the same and opts says not to.
func (r *Result) add(d *SessionDiff) {
	if d.aboutStream() {
		if r.streamCounts == nil {
			r.streamCounts = map[Status]int{}
		}
		r.streamCounts[d.Status]++
	} else {
		r.counts[d.Status]++
	}
	if d.Status != Same || r.Options.KeepSame {
		r.Sessions = append(r.Sessions, d)
	}
}

// Run compares side a with side b.
func Run(ctx context.Context, a, b Side, opts Options) (*Result, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	p, err := newPaths(opts.Ignore, opts.Keep, !opts.NoDefaultIgnore)
	if err != nil {
		return nil, err
	}
	res := &Result{A: a.Name, B: b.Name, Options: opts, counts: map[Status]int{Same: 0, Different: 0, OnlyA: 0, OnlyB: 0}}
	var mu sync.Mutex
	m := newMatcher(opts.Match, func(x, y *session, by string) {
		d := compare(x, y, by, &opts, p)
		x.release()
		y.release()
		mu.Lock()
		res.add(d)
		mu.Unlock()
	})
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var errs [2]error
	var inc [2][]string
	for i, side := range []Side{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := newReader(i, m, &opts, p)
			inc[i], errs[i] = r.read(ctx, side.Recordings)
			if errs[i] != nil {
				cancel()
			}
			m.finish(i)
		}()
	}
	wg.Wait()
	if err := parent.Err(); err != nil {
		return nil, err
	}
	// A side that failed stopped the other: that one's cancellation is not
	// an error of its own.
	for i := range errs {
		if errors.Is(errs[i], context.Canceled) && errs[1-i] != nil && !errors.Is(errs[1-i], context.Canceled) {
			errs[i] = nil
		}
	}
	if err := errors.Join(errs[0], errs[1]); err != nil {
		return nil, err
	}
	for i, name := range []string{a.Name, b.Name} {
		for _, why := range inc[i] {
			res.Incomplete = append(res.Incomplete, name+": "+why)
		}
	}
	for _, side := range m.left {
		for _, s := range side {
			res.add(only(s))
		}
	}
	slices.SortStableFunc(res.Sessions, func(x, y *SessionDiff) int {
		return orderOf(x) - orderOf(y)
	})
	return res, nil
}

// orderOf places a session: A's in A's order, then B's only.
func orderOf(d *SessionDiff) int {
	if d.A != nil {
		return d.A.Order
	}
	return 1<<40 + d.B.Order
}
