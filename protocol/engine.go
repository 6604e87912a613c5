package protocol

import (
	"fmt"
	"sort"
	"time"

	"github.com/aaep-tools/aaepkit/payload"
)

// StreamProtocol is the protocol name of findings about the stream itself:
// messages that are not JSON, or that no model (or more than one) recognises.
const StreamProtocol = "stream"

// Stream-level rules, reported by the engine itself.
var (
	ruleNotJSON = &Rule{ID: "STREAM-NOT-JSON", Level: Must, Party: Either,
		Summary: "Every message is a JSON object; this one is not, and no single protocol of the stream could claim it.",
		Doc: "A message that is not a JSON object (not JSON at all, or an array) goes to the stream's protocol when the stream so far holds " +
			"only one, whose own rules judge it (ENV-JSON-OBJECT, ASP-E01, KA-B01); only when no single protocol can claim it is it a " +
			"fault of the stream. An array gets a hint to split it into one message per line.",
		Spec: "asp-kahn.md §3 (R8, stream level: one JSON object per line or record)"}
	ruleUnknownProtocol = &Rule{ID: "STREAM-UNKNOWN-PROTOCOL", Level: Should, Party: Either,
		Summary: "Every message belongs to a known protocol (AAEP, ASP or KAHN); this one matches none and is skipped, not guessed.",
		Doc: "Recognition reads top-level members only (an aaep: type, an ASP performative, KAHN's event with run_id and ts); " +
			"a checker may still claim a message its protocol placed there (an AAEP producer's error answer to a reply). " +
			"A warning, because a capture may carry other traffic.",
		Spec: "asp-kahn.md §3 (R8)"}
	ruleAmbiguousProtocol = &Rule{ID: "STREAM-AMBIGUOUS-PROTOCOL", Level: Must, Party: Either,
		Summary: "A message matches the discriminators of more than one protocol; it is skipped rather than guessed.",
		Doc:     "The three protocols' discriminators sit on disjoint top-level keys, so a message that has two is broken; --protocol forces one.",
		Spec:    "asp-kahn.md §3 (R7)"}
)

var streamRules = []*Rule{ruleNotJSON, ruleUnknownProtocol, ruleAmbiguousProtocol}

// StreamRules lists the rules the engine itself reports.
func StreamRules() []Rule { return Values(streamRules) }

// Values copies declared rules into a list of values (Model.Rules).
func Values(rules []*Rule) []Rule {
	out := make([]Rule, len(rules))
	for i, r := range rules {
		out[i] = *r
	}
	return out
}

// Sink receives what a run produces. Any field may be nil.
type Sink struct {
	Finding     func(Finding)
	Step        func(Step)
	SessionDone func(SessionSummary)
}

// Claimer is an optional interface of a Checker for messages that no
// model recognises by their own fields but that the run so far places in
// the checker's protocol: a producer's error answer to a subscriber's reply
// carries no type, yet follows the reply on the same connection. The engine
// offers a Claimer each message no model recognised, before reporting it
// as of unknown protocol; a claimed message goes to that checker's Handle.
type Claimer interface {
	// Claim reports whether the checker takes m (m.Doc is decoded).
	Claim(m *Message) bool
}

// Engine runs a set of models over one stream. It is not safe for concurrent use.
type Engine struct {
	info     StreamInfo
	models   []Model
	opts     *Options
	checkers []Checker
	forced   int // index into models, or -1
	// doc decodes the messages that come undecoded (Message.Doc nil).
	doc  payload.Doc
	sink Sink
	// disabled holds the IDs of the rules not to report.
	disabled map[string]bool
	// seen counts messages recognised per model, to attribute non-JSON
	// messages in single-protocol streams.
	seen  []int
	stats Stats
	// byModel counts the messages dispatched to each model (Stats turns
	// it into ByProtocol).
	byModel []int64
}

// Stats counts what an engine saw.
type Stats struct {
	Messages   int64            `json:"messages"`
	ByProtocol map[string]int64 `json:"by_protocol"`
	Findings   map[Level]int64  `json:"-"`
}

// NewEngine prepares a run of models over the stream info describes. With
// force non-empty, every message is handed to the model of that name
// without recognition. Unknown names in force or in opts.Disabled are
// errors. Checkers that observe the stream (StreamObserver) are told info
// at once; every finding, step and session summary carries info.Stream.
//
// Front ends do not call NewEngine themselves: the analysis driver
// (package protocol/check) makes one engine per stream of a recording.
func NewEngine(models []Model, force string, opts *Options, info StreamInfo, sink Sink) (*Engine, error) {
	e, err := newEngine(models, force, opts, info, sink)
	if err != nil {
		return nil, err
	}
	e.checkers = make([]Checker, len(models))
	for i, m := range models {
		e.checkers[i] = m.NewChecker(&reporter{e: e, protocol: m.Name()}, e.opts)
		if o, ok := e.checkers[i].(StreamObserver); ok {
			o.Begin(info)
		}
	}
	return e, nil
}

// CheckOptions reports what NewEngine would refuse of models, force and
// opts (an unknown profile, protocol or rule), without making checkers.
func CheckOptions(models []Model, force string, opts *Options) error {
	_, err := newEngine(models, force, opts, StreamInfo{}, Sink{})
	return err
}

// PreparationOf returns what prepares messages for models run with opts
// (as Engine.Preparation does for an engine of them), or nil.
func PreparationOf(models []Model, opts *Options) *Preparation {
	return (&Engine{models: models, opts: opts}).Preparation()
}

// newEngine is NewEngine without its checkers.
func newEngine(models []Model, force string, opts *Options, info StreamInfo, sink Sink) (*Engine, error) {
	if opts == nil {
		opts = &Options{}
	}
	if _, err := ParseProfile(string(opts.Profile)); err != nil {
		return nil, err
	}
	e := &Engine{
		info:     info,
		models:   models,
		opts:     opts,
		forced:   -1,
		sink:     sink,
		disabled: map[string]bool{},
		seen:     make([]int, len(models)),
		byModel:  make([]int64, len(models)),
		stats:    Stats{ByProtocol: map[string]int64{}, Findings: map[Level]int64{}},
	}
	// The rules are checked here, once: a finding's level and party are
	// then those of the rule its checker reports, read as they come.
	// (A rule declared again alike, by a model listed twice, is one rule.)
	type declaration struct {
		protocol string
		rule     Rule
	}
	declared := map[string]declaration{}
	for _, r := range streamRules {
		declared[r.ID] = declaration{StreamProtocol, *r}
	}
	for i, m := range models {
		for _, r := range m.Rules() {
			if err := r.validate(); err != nil {
				return nil, fmt.Errorf("the %s model's rule %q: %w", m.Name(), r.ID, err)
			}
			if d, ok := declared[r.ID]; ok && d.rule != r {
				return nil, fmt.Errorf("rule %s is declared twice, differently (%s and %s)", r.ID, d.protocol, m.Name())
			}
			declared[r.ID] = declaration{m.Name(), r}
		}
		if m.Name() == force {
			e.forced = i
		}
	}
	if force != "" && e.forced < 0 {
		return nil, fmt.Errorf("unknown protocol %q (known: %s)", force, modelNames(models))
	}
	for _, id := range opts.Disabled {
		if _, ok := declared[id]; !ok {
			return nil, fmt.Errorf("cannot disable unknown rule %q", id)
		}
		e.disabled[id] = true
	}
	return e, nil
}

func modelNames(models []Model) string {
	s := ""
	for i, m := range models {
		if i > 0 {
			s += ", "
		}
		s += m.Name()
	}
	return s
}

// Feed checks one message. Unless m.Doc already holds the decoding of
// m.Raw (Message.Decode), Feed decodes it, once, and every model's
// recognition and checks read that decoding.
//
// A payload that is not a valid JSON object goes to the one protocol the
// stream has held so far, or else to the one model that recognises what
// its members before the error gave; otherwise it is STREAM-NOT-JSON.
func (e *Engine) Feed(m *Message) {
	e.stats.Messages++
	if !m.decoded() {
		m.Decode(&e.doc)
	}
	if e.forced >= 0 {
		e.dispatch(e.forced, m)
		return
	}
	if !m.Doc.IsObject() {
		if only := e.onlyProtocol(); only >= 0 {
			e.dispatch(only, m)
			return
		}
		if m.Doc.Valid() && m.Doc.Kind() == payload.Array {
			e.streamFinding(ruleNotJSON, m, "a JSON array", "message %d is a JSON array, not an object: check reads one message per line (JSON lines) or per capture record, so an array of events must be split into one event per line (e.g. jq -c '.[]')", m.Index)
			return
		}
		if m.Doc.Kind() == payload.Object {
			if match, count := e.recognize(m); count == 1 {
				e.seen[match]++
				e.dispatch(match, m)
				return
			}
		}
		e.streamFinding(ruleNotJSON, m, "not JSON", "message %d is not a JSON object, and the stream holds no single protocol it could belong to", m.Index)
		return
	}
	match, count := e.recognize(m)
	switch count {
	case 0:
		for i, c := range e.checkers {
			if cl, ok := c.(Claimer); ok && cl.Claim(m) {
				e.seen[i]++
				e.dispatch(i, m)
				return
			}
		}
		e.streamFinding(ruleUnknownProtocol, m, "unknown protocol", "message %d belongs to no known protocol (%s): it has neither an \"aaep:\" type, an ASP performative, nor KAHN's event/run_id/ts", m.Index, modelNames(e.models))
	case 1:
		e.seen[match]++
		e.dispatch(match, m)
	default:
		var names []string
		for _, mod := range e.models {
			if mod.Recognize(m) {
				names = append(names, mod.Name())
			}
		}
		e.streamFinding(ruleAmbiguousProtocol, m, "ambiguous protocol", "message %d matches more than one protocol (%v); it is skipped (use --protocol to force one)", m.Index, names)
	}
}

// recognize asks every model about m: the first that recognises it, and
// how many do.
func (e *Engine) recognize(m *Message) (match, count int) {
	match = -1
	for i, mod := range e.models {
		if mod.Recognize(m) {
			if count == 0 {
				match = i
			}
			count++
		}
	}
	return match, count
}

func (e *Engine) dispatch(i int, m *Message) {
	e.byModel[i]++
	e.checkers[i].Handle(m)
}

// onlyProtocol returns the one model that has recognised messages so far, or -1.
func (e *Engine) onlyProtocol() int {
	only := -1
	for i, n := range e.seen {
		if n > 0 {
			if only >= 0 {
				return -1
			}
			only = i
		}
	}
	return only
}

// Info returns what the engine was told about its stream.
func (e *Engine) Info() StreamInfo { return e.info }

// Connection passes a capture's connection record to the checkers that
// observe connections. c.Event is filled from c.Raw.
func (e *Engine) Connection(c *Conn) {
	var d payload.Doc
	if d.Decode(c.Raw); d.IsObject() {
		c.Event = d.Routing.Event
	}
	for _, ch := range e.checkers {
		if o, ok := ch.(StreamObserver); ok {
			o.Connection(c)
		}
	}
}

// Finish ends the stream: checkers report what is left open.
func (e *Engine) Finish() {
	for _, c := range e.checkers {
		c.Finish()
	}
}

// Stats returns counts of what the engine saw so far.
func (e *Engine) Stats() Stats {
	clear(e.stats.ByProtocol)
	for i, n := range e.byModel {
		if n > 0 {
			e.stats.ByProtocol[e.models[i].Name()] += n
		}
	}
	return e.stats
}

func (e *Engine) streamFinding(rule *Rule, m *Message, short, format string, args ...any) {
	e.emit(rule, Finding{
		Stream:   e.info.Stream,
		Protocol: StreamProtocol,
		Session:  m.Doc.Routing.SessionKey(),
		RuleID:   rule.ID,
		Index:    m.Index,
		Offset:   m.Offset,
		Short:    short,
		Message:  fmt.Sprintf(format, args...),
	})
}

// emit files f, a finding of rule, at the rule's level in the run's
// profile and against its party.
func (e *Engine) emit(rule *Rule, f Finding) {
	if e.disabled[f.RuleID] {
		return
	}
	f.Level, f.Party = rule.LevelIn(e.opts), rule.Party
	e.stats.Findings[f.Level]++
	if e.sink.Finding != nil {
		e.sink.Finding(f)
	}
}

type reporter struct {
	e        *Engine
	protocol string
}

func (r *reporter) Report(rule *Rule, session string, m *Message, short, format string, args ...any) {
	f := Finding{Stream: r.e.info.Stream, Protocol: r.protocol, Session: session, RuleID: rule.ID, Index: -1, Short: short, Message: fmt.Sprintf(format, args...)}
	if m != nil {
		f.Index, f.Offset = m.Index, m.Offset
	}
	for _, a := range args {
		if rel, ok := a.(Related); ok {
			f.Related = append(f.Related, rel)
		}
	}
	r.e.emit(rule, f)
}

func (r *reporter) Step(s Step) {
	s.Stream, s.Protocol = r.e.info.Stream, r.protocol
	if r.e.sink.Step != nil {
		r.e.sink.Step(s)
	}
}

func (r *reporter) SessionDone(s SessionSummary) {
	s.Stream, s.Protocol = r.e.info.Stream, r.protocol
	if r.e.sink.SessionDone != nil {
		r.e.sink.SessionDone(s)
	}
}

// FormatOffset renders an offset as seconds with millisecond precision, e.g. "12.345s".
func FormatOffset(d time.Duration) string {
	return fmt.Sprintf("%.3fs", d.Seconds())
}

func sortStrings(s []string) { sort.Strings(s) }
