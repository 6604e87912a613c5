// Package report renders what the protocol engine found: a report per
// recording (findings grouped by session, counts per level and party, a
// summary when the listing is long) as text or JSON, a Batch of several
// recordings' reports with their total, and the rule table of
// `aaep-replay check --rules`. Package protocol checks; this package
// writes.
package report

import (
	"io"
	"sort"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/protocol"
)

// DefaultMaxFindings bounds how many findings a Report keeps; later ones are
// only counted.
const DefaultMaxFindings = 100000

// Report collects a run's findings and session summaries, grouped by
// session, and writes them as text or JSON. Use its Sink as the engine's sink.
//
// A Report either collects everything and writes it at the end (WriteText,
// WriteJSON), or, after Stream, writes each session as soon as the session
// is done and forgets it, so that its memory holds only the open sessions;
// Close then writes what is left and the summary. Both produce the same
// format; only the order of the sessions differs (first appearance when
// collected, completion when streamed).
type Report struct {
	// Input names the recording checked (a file name, or a rotated
	// recording's first part and how many there are).
	Input string
	// Parts lists the recording's files or objects (the JSON report's
	// "parts"; empty: Input alone).
	Parts []string
	// Streams names the recording's streams when it has several (the
	// subscriptions of a serve --record recording): the JSON report's
	// "streams" has an entry for each (one, named "", when none is named),
	// holding the findings about it that belong to no session. Set it
	// before Close.
	Streams []string
	// Sources are the recording's sources (the origin table of its
	// capture's header, joined across its parts): the transport and
	// endpoint each was recorded from. The JSON report's "sources"; the
	// text report's "sources:" line. Empty for a JSON Lines file.
	Sources []capfile.Origin
	// MaxFindings bounds the findings listed (DefaultMaxFindings when 0);
	// later ones are only counted.
	MaxFindings int
	// View chooses the text report's form: every finding (ViewAll, the
	// default), a summary (ViewSummary), or the listing when it fits in
	// Screen lines and the summary otherwise (ViewAuto).
	View View
	// Screen is the height ViewAuto fits the listing into (DefaultScreen
	// when 0).
	Screen int

	Stats    protocol.Stats
	sessions map[sessionKey]*Session
	kept     int
	dropped  int64
	counts   map[protocol.Level]int64
	byParty  map[partyLevel]int64
	rules    map[string]*ruleStat // per rule, for the summary view

	// incomplete lists why parts of the input were not read (empty).
	incomplete []string

	// Streaming output, set by Stream.
	out      *reportWriter
	streamed int64 // sessions written so far (stream findings excluded)

	// batch is the Batch the report belongs to (nil: a report of its own,
	// written as a whole document), and pos its place there.
	batch *Batch
	pos   int
}

type sessionKey struct{ stream, protocol, session string }

// partyLevel keys the per-party counts.
type partyLevel struct {
	party protocol.Party
	level protocol.Level
}

// Session is one session's part of a report.
type Session struct {
	protocol.SessionSummary
	Findings []protocol.Finding `json:"findings"`
}

// New returns an empty report for input.
func New(input string) *Report {
	return &Report{Input: input, sessions: map[sessionKey]*Session{}, counts: map[protocol.Level]int64{}, byParty: map[partyLevel]int64{}}
}

// Sink returns a sink that adds to the report; steps are passed to step
// (which may be nil).
func (r *Report) Sink(step func(protocol.Step)) protocol.Sink {
	return protocol.Sink{Finding: r.AddFinding, SessionDone: r.AddSession, Step: step}
}

func (r *Report) session(stream, proto, id string) *Session {
	k := sessionKey{stream, proto, id}
	s := r.sessions[k]
	if s == nil {
		s = &Session{SessionSummary: protocol.SessionSummary{Stream: stream, Protocol: proto, Session: id, First: -1}}
		r.sessions[k] = s
	}
	return s
}

// AddFinding adds one finding.
func (r *Report) AddFinding(f protocol.Finding) {
	r.counts[f.Level]++
	r.byParty[partyLevel{f.Party, f.Level}]++
	r.noteRule(&f)
	limit := r.MaxFindings
	if limit == 0 {
		limit = DefaultMaxFindings
	}
	if r.kept >= limit {
		r.dropped++
		return
	}
	r.kept++
	s := r.session(f.Stream, f.Protocol, f.Session)
	s.Findings = append(s.Findings, f)
	if s.First < 0 && f.Index >= 0 {
		s.First = f.Offset
	}
}

// AddSession records a session's summary. A streaming report writes the
// session out and forgets it.
func (r *Report) AddSession(sum protocol.SessionSummary) {
	s := r.session(sum.Stream, sum.Protocol, sum.Session)
	first := s.First
	s.SessionSummary = sum
	if s.First < 0 || (first >= 0 && first < s.First) {
		s.First = first
	}
	if r.out != nil {
		sortFindings(s.Findings)
		r.out.session(s)
		r.streamed++
		delete(r.sessions, sessionKey{sum.Stream, sum.Protocol, sum.Session})
	}
}

// Stream makes the report write each session to w as soon as it is done
// (as JSON when asJSON), counting findings at or above threshold as
// failures. Call it before the first finding; finish with Close.
func (r *Report) Stream(w io.Writer, asJSON bool, threshold protocol.Level) {
	r.out = newReportWriter(w, r, asJSON, threshold)
}

// Close writes the sessions still held (open sessions, stream-level
// findings) and the summary of a streaming report, and returns the first
// write error. It does nothing for a collecting report.
func (r *Report) Close() error {
	if r.out == nil {
		return nil
	}
	for _, s := range r.Sessions() {
		r.out.session(s)
	}
	err := r.out.finish()
	if r.batch != nil {
		if berr := r.batch.done(r); err == nil {
			err = berr
		}
	}
	return err
}

// Incomplete records that part of the input could not be read, and why
// ("the capture ends in a torn record at byte 4096"). A report with a reason
// never says PASS: its verdict is INCOMPLETE. Call it before Close.
func (r *Report) Incomplete(reason string) { r.incomplete = append(r.incomplete, reason) }

// IncompleteReasons returns why part of the input was not read (Incomplete).
func (r *Report) IncompleteReasons() []string { return append([]string(nil), r.incomplete...) }

// Complete reports whether the whole input was read (no Incomplete call).
func (r *Report) Complete() bool { return len(r.incomplete) == 0 }

// Verdict is the report's one-word outcome for threshold: INCOMPLETE when
// part of the input could not be read, NOT GATED when threshold is Never,
// FAIL when a finding reaches threshold, PASS otherwise.
func (r *Report) Verdict(threshold protocol.Level) string {
	switch {
	case !r.Complete():
		return VerdictIncomplete
	case threshold >= protocol.Never:
		return VerdictNotGated
	case r.Failed(threshold):
		return VerdictFail
	}
	return VerdictPass
}

// Verdicts (Report.Verdict).
const (
	VerdictPass       = "PASS"
	VerdictFail       = "FAIL"
	VerdictIncomplete = "INCOMPLETE"
	VerdictNotGated   = "NOT GATED"
)

// Count returns how many findings of level l were reported (including dropped ones).
func (r *Report) Count(l protocol.Level) int64 { return r.counts[l] }

// PartyCount returns how many findings of level l were reported against
// party p (including dropped ones): a producer's MUST findings are
// PartyCount(Producer, Must). Findings of rules that bind either party
// count under Either.
func (r *Report) PartyCount(p protocol.Party, l protocol.Level) int64 {
	return r.byParty[partyLevel{p, l}]
}

// Failed reports whether any finding is at or above threshold (never for
// Never). It judges what was read, complete or not.
func (r *Report) Failed(threshold protocol.Level) bool {
	for l, n := range r.counts {
		if l >= threshold && n > 0 {
			return true
		}
	}
	return false
}

// Sessions returns the sessions in a deterministic order: by first
// appearance, then protocol and ID; stream-level findings come last. It
// holds the blocks of findings about a stream too
// (protocol.SessionSummary.StreamLevel), which the written report lists
// apart from the sessions.
func (r *Report) Sessions() []*Session {
	out := make([]*Session, 0, len(r.sessions))
	for _, s := range r.sessions {
		sortFindings(s.Findings)
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if (a.Protocol == protocol.StreamProtocol) != (b.Protocol == protocol.StreamProtocol) {
			return b.Protocol == protocol.StreamProtocol
		}
		if a.First != b.First {
			return a.First < b.First
		}
		if a.Stream != b.Stream {
			return a.Stream < b.Stream
		}
		if a.Protocol != b.Protocol {
			return a.Protocol < b.Protocol
		}
		return a.Session < b.Session
	})
	return out
}

// sortFindings orders a session's findings by message index (end-of-session
// findings last), then rule.
func sortFindings(fs []protocol.Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if (a.Index < 0) != (b.Index < 0) {
			return b.Index < 0
		}
		if a.Index != b.Index {
			return a.Index < b.Index
		}
		return a.RuleID < b.RuleID
	})
}

// WriteText writes a collected report for people: each session with its
// findings (level, rule, message index, time offset, explanation), then a
// summary and the verdict.
func (r *Report) WriteText(w io.Writer, threshold protocol.Level) error {
	return r.writeAll(newReportWriter(w, r, false, threshold))
}

// WriteJSON writes a collected report as one JSON document (for CI): the
// document of a Batch holding this one recording.
func (r *Report) WriteJSON(w io.Writer, threshold protocol.Level) error {
	return r.writeAll(newReportWriter(w, r, true, threshold))
}

func (r *Report) writeAll(rw *reportWriter) error {
	for _, s := range r.Sessions() {
		rw.session(s)
	}
	return rw.finish()
}

// countFrom counts the findings at or above threshold.
func (r *Report) countFrom(threshold protocol.Level) int64 {
	var n int64
	for l, c := range r.counts {
		if l >= threshold {
			n += c
		}
	}
	return n
}
