// Package protocoltest is the shared test support of the protocol models'
// tests: it runs JSONL lines through a real protocol.Engine and collects
// what the checkers report (Run), runs the one rule-case harness of AAEP,
// ASP and KAHN (RuleCase, CheckRules) and checks that every rule has its
// failing and passing cases (CheckCoverage), checks a model's machine
// (CheckMachine), compares output with golden files and
// JSONL fixtures that an -update flag rewrites (Golden, GoldenResult,
// Fixture), and fuzzes and benchmarks models (Fuzz, Benchmark).
//
// The -update flag stays with each test package (flag names must be unique
// per test binary); the helpers take its value.
package protocoltest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/check"
)

// Result is what one run reported, each list in the order the engine
// reported it.
type Result struct {
	Findings []protocol.Finding
	Steps    []protocol.Step
	Sessions []protocol.SessionSummary
	Stats    protocol.Stats
}

// Rules returns the rule IDs of the findings, in order.
func (r *Result) Rules() []string {
	var ids []string
	for _, f := range r.Findings {
		ids = append(ids, f.RuleID)
	}
	return ids
}

// Has reports whether some finding is of rule.
func (r *Result) Has(rule string) bool { return slices.Contains(r.Rules(), rule) }

// Count returns how many findings are of rule.
func (r *Result) Count(rule string) int {
	n := 0
	for _, f := range r.Findings {
		if f.RuleID == rule {
			n++
		}
	}
	return n
}

// Dump lists the findings and steps, one a line, for a failure message.
func (r *Result) Dump() string {
	var b strings.Builder
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "  %s %s #%d [%s]: %s\n", f.Level, f.RuleID, f.Index, f.Session, f.Message)
	}
	for _, s := range r.Steps {
		syn := ""
		if s.Synthetic {
			syn = " (synthetic)"
		}
		fmt.Fprintf(&b, "  step #%d %s %s → %s %s [%s]%s\n", s.Index, s.Session, s.From, s.To, s.Label, s.Detail, syn)
	}
	return b.String()
}

// Run feeds lines to a new engine of models, with force and the profile
// as protocol.NewEngine and protocol.Options take them, and collects what
// it reports. Line i is message i, received i×100 ms after the start.
func Run(t testing.TB, models []protocol.Model, force, profile string, lines []string) *Result {
	t.Helper()
	msgs := make([]*protocol.Message, len(lines))
	for i, l := range lines {
		msgs[i] = &protocol.Message{Index: int64(i), Offset: time.Duration(i) * 100 * time.Millisecond, Raw: []byte(l)}
	}
	return RunMessages(t, models, force, profile, msgs)
}

// RunMessages is Run for messages built by the caller.
func RunMessages(t testing.TB, models []protocol.Model, force, profile string, msgs []*protocol.Message) *Result {
	t.Helper()
	r := &Result{}
	// Through the analysis driver, as every front end: a stream of live
	// sources.
	cfg := check.Config{Models: func() []protocol.Model { return models }, Protocol: force, Options: protocol.Options{Profile: protocol.Profile(profile)}}
	p, err := check.NewPass(cfg, nil, protocol.Sink{
		Finding:     func(f protocol.Finding) { r.Findings = append(r.Findings, f) },
		Step:        func(s protocol.Step) { r.Steps = append(r.Steps, s) },
		SessionDone: func(s protocol.SessionSummary) { r.Sessions = append(r.Sessions, s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		p.Message(m)
	}
	p.Finish()
	r.Stats = p.Stats()
	return r
}

// Recognize reports whether md recognises line after an engine of md
// alone has read it, as in a run: the engine fills the message's routing
// fields, and a model that learns from the stream has seen the line.
func Recognize(t testing.TB, md protocol.Model, line string) bool {
	t.Helper()
	m := &protocol.Message{Raw: []byte(line)}
	p, err := check.NewPass(check.Config{Models: func() []protocol.Model { return []protocol.Model{md} }}, nil, protocol.Sink{})
	if err != nil {
		t.Fatal(err)
	}
	p.Message(m)
	return md.Recognize(m)
}

// Handle hands line to c directly, bypassing the engine, as message index
// with its routing fields read the way the engine reads them: for tests
// that look inside a checker.
func Handle(c protocol.Checker, index int64, line string) {
	m := &protocol.Message{Index: index, Raw: []byte(line)}
	m.Decode(new(payload.Doc))
	c.Handle(m)
}

// SessionCounter is a protocol.Reporter that drops findings and steps and
// counts the sessions reported done.
type SessionCounter struct{ Done int }

// Report drops the finding.
func (*SessionCounter) Report(*protocol.Rule, string, *protocol.Message, string, string, ...any) {}

// Step drops the step.
func (*SessionCounter) Step(protocol.Step) {}

// SessionDone counts the session.
func (r *SessionCounter) SessionDone(protocol.SessionSummary) { r.Done++ }
