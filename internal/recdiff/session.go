package recdiff

import (
	"strings"
	"sync"
	"time"

	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol"
)

// event is one line of a session's sequence: what happened (type, state
// change, the salient detail) and its normalised members.
type event struct {
	// Line is what the edit script compares: "state.changed thinking →
	// calling_tool", "tool.invoked search_flights", "subscriber
	// confirmation.reply accept".
	Line string
	// Hash is the hash of the members compared once the lines match
	// (normalizer.hash); the members themselves are made from the payload
	// (the session's raw[Start:End]) only where the hashes differ.
	Hash       uint64
	Start, End int
}

// ToolCall is one tool invocation of a session.
type ToolCall struct {
	Name string `json:"name"`
	// Reversibility is "irreversible" when the invocation says so,
	// "reversible" otherwise (the default of §4.3.1).
	Reversibility string `json:"reversibility"`
	Risk          string `json:"risk"`
	Args          string `json:"args_summary,omitempty"`
	// Status is the completion's status ("" when none was seen).
	Status string `json:"status,omitempty"`

	id string
}

func (t *ToolCall) String() string {
	s := t.Name + " (" + t.Reversibility + ", risk " + t.Risk
	if t.Args != "" {
		s += ", args " + quote(t.Args)
	}
	if t.Status != "" {
		s += ", " + t.Status
	}
	return s + ")"
}

// Ask is a confirmation or clarification a session asked the user for.
type Ask struct {
	// Kind is "confirmation" or "clarification".
	Kind string `json:"kind"`
	// Text is the action (confirmation) or the question (clarification).
	Text string `json:"text"`
	// Options are the allowed replies or the choices offered.
	Options []string `json:"options,omitempty"`
	// Default is the default decision or response.
	Default string `json:"default,omitempty"`
	Risk    string `json:"risk,omitempty"`
	// Reversibility is the confirmation's, where it gives one.
	Reversibility string `json:"reversibility,omitempty"`
	// Decision is the reply's decision or response ("" when no reply was
	// recorded).
	Decision string `json:"decision,omitempty"`

	token string
}

func (a *Ask) String() string {
	s := a.Kind + " " + quote(a.Text)
	var attrs []string
	if len(a.Options) > 0 {
		attrs = append(attrs, "options "+strings.Join(a.Options, "|"))
	}
	if a.Default != "" {
		attrs = append(attrs, "default "+a.Default)
	}
	if a.Risk != "" {
		attrs = append(attrs, "risk "+a.Risk)
	}
	if a.Reversibility != "" {
		attrs = append(attrs, a.Reversibility)
	}
	if a.Decision != "" {
		attrs = append(attrs, "decision "+a.Decision)
	} else {
		attrs = append(attrs, "no reply recorded")
	}
	return s + " (" + strings.Join(attrs, ", ") + ")"
}

// session is what one side recorded of one session, built message by
// message and compared once it ended and met its match.
type session struct {
	side int
	// Ref says where the session is.
	ref SessionRef
	// occ counts earlier sessions of the same id in the same stream (a
	// session id used again after its session ended).
	occ int
	// text is what started the session (request_text, else the first
	// summary_normal); hasText once it is known. textOcc counts the earlier
	// sessions of the stream that started with the same text.
	text    string
	hasText bool
	textOcc int
	// field is the value of --match FIELD (first message carrying it).
	field    string
	hasField bool
	fieldOcc int
	// order is the session's position among its stream's sessions.
	order int
	// pseudo marks the stream's messages that belong to no session
	// (handshake requests and answers, replies to ended sessions).
	pseudo bool

	events []event
	// raw holds the payloads of the events, one after the other.
	raw []byte
	// lastOutput is the output_id of the last line when it is an output,
	// so that the chunks of one output are one line however they were cut.
	lastOutput    string
	inOutput      bool
	tools         []*ToolCall
	asks          []*Ask
	outputs       []string
	outputIdx     map[string]int
	outputBuilder []strings.Builder
	findings      map[FindingKey]int
	state         string
	complete      bool
	done          bool

	first, last, firstOutput time.Duration
	hasOutput                bool
	waiting                  time.Duration
	waitFrom                 time.Duration
	waitToken                string
	inWait                   bool
}

// FindingKey is a finding's rule and level.
type FindingKey struct {
	Rule  string
	Level protocol.Level
}

// shortType is the type as lines show it, without the "aaep:agent." prefix.
func shortType(t string) string {
	if s, ok := strings.CutPrefix(t, "aaep:agent."); ok {
		return s
	}
	if s, ok := strings.CutPrefix(t, "aaep:"); ok {
		return s
	}
	return t
}

func str(doc *payload.Doc, name string) string {
	s, _ := doc.Get(name).Str()
	return s
}

// valueText is a member's value as text: a string's content, other values
// as compact JSON, "" when absent.
func valueText(v payload.Value) string {
	if v == nil {
		return ""
	}
	if s, ok := v.Str(); ok {
		return s
	}
	return compact(v)
}

func quote(s string) string {
	return `"` + clip(strings.ReplaceAll(s, "\n", `\n`)) + `"`
}

// Buffers of sessions compared are used again by sessions to come: a
// session's payloads and events are garbage once it is compared, and a
// long recording makes many.
var (
	rawPool    sync.Pool // *[]byte
	eventsPool sync.Pool // *[]event
)

// maxPooled is the largest buffer kept for reuse (a long session's is left
// to the collector).
const maxPooled = 64 << 10

func newRaw() []byte {
	if b, ok := rawPool.Get().(*[]byte); ok {
		return (*b)[:0]
	}
	return make([]byte, 0, 8<<10) // most sessions fit
}

// release hands the session's buffers back for reuse; the session must not
// be read after.
func (s *session) release() {
	if cap(s.raw) > 0 && cap(s.raw) <= maxPooled {
		b := s.raw[:0]
		rawPool.Put(&b)
	}
	if cap(s.events) > 0 && cap(s.events)*48 <= maxPooled {
		e := s.events[:0]
		eventsPool.Put(&e)
	}
	s.raw, s.events = nil, nil
}

// size is about how much memory the session holds, in bytes.
func (s *session) size() int {
	n := cap(s.raw) + cap(s.events)*48 + 64*(len(s.tools)+len(s.asks))
	for _, o := range s.outputs {
		n += len(o)
	}
	return n
}

// add records one message of the session.
func (s *session) add(m *protocol.Message, line string, hash uint64) {
	doc := m.Doc
	if len(s.events) == 0 && !s.hasOutput && s.first == 0 && s.last == 0 {
		s.first = m.Offset
	}
	s.last = m.Offset
	typ := doc.Routing.TypeName()
	fromSub := m.Dir == protocol.ToProducer
	if s.inWait && (!fromSub || (s.waitToken != "" && str(doc, "reply_token") == s.waitToken)) {
		s.waiting += m.Offset - s.waitFrom
		s.inWait = false
	}
	short := shortType(typ)
	if !fromSub && short == "output.streaming" {
		id := str(doc, "output_id")
		if !s.hasOutput {
			s.hasOutput, s.firstOutput = true, m.Offset-s.first
		}
		chunk, _ := doc.Get("chunk").Str()
		if s.outputIdx == nil {
			s.outputIdx = map[string]int{}
		}
		i, ok := s.outputIdx[id]
		if !ok {
			i = len(s.outputBuilder)
			s.outputIdx[id] = i
			s.outputBuilder = append(s.outputBuilder, strings.Builder{})
		}
		s.outputBuilder[i].WriteString(chunk)
		if s.inOutput && s.lastOutput == id {
			return // the same output, cut elsewhere
		}
		s.inOutput, s.lastOutput = true, id
	} else {
		s.inOutput = false
	}
	if s.raw == nil {
		s.raw = newRaw()
	}
	if s.events == nil {
		if e, ok := eventsPool.Get().(*[]event); ok {
			s.events = (*e)[:0]
		}
	}
	start := len(s.raw)
	s.raw = append(s.raw, m.Raw...)
	s.events = append(s.events, event{Line: line, Hash: hash, Start: start, End: len(s.raw)})
	if fromSub {
		s.reply(doc, short)
		return
	}
	switch short {
	case "tool.invoked":
		t := &ToolCall{Name: str(doc, "tool"), Reversibility: "reversible", Risk: "low", Args: str(doc, "args_summary"), id: str(doc, "tool_call_id")}
		if b, ok := doc.Get("irreversible").Bool(); ok && b {
			t.Reversibility = "irreversible"
		}
		if r := str(doc, "risk_level"); r != "" {
			t.Risk = r
		}
		s.tools = append(s.tools, t)
	case "tool.completed":
		id, name := str(doc, "tool_call_id"), str(doc, "tool")
		for i := len(s.tools) - 1; i >= 0; i-- {
			t := s.tools[i]
			if t.Status == "" && ((id != "" && t.id == id) || (id == "" && t.Name == name)) {
				t.Status = str(doc, "status")
				if t.Status == "" {
					t.Status = "completed"
				}
				break
			}
		}
	case "awaiting.confirmation", "awaiting.clarification":
		a := &Ask{token: str(doc, "reply_token")}
		if short == "awaiting.confirmation" {
			a.Kind, a.Text, a.Default = "confirmation", str(doc, "action"), str(doc, "default_decision")
			a.Options = []string{"accept", "reject"}
			if v := doc.Get("allowed_replies"); v != nil {
				a.Options = a.Options[:0]
				v.Elements(func(_ int, e payload.Value) bool {
					a.Options = append(a.Options, valueText(e))
					return true
				})
			}
			a.Risk, a.Reversibility = str(doc, "risk_level"), str(doc, "reversibility")
		} else {
			a.Kind, a.Text, a.Default = "clarification", str(doc, "question"), valueText(doc.Get("default_response"))
			doc.Get("choices").Elements(func(_ int, e payload.Value) bool {
				if v := e.Get("value"); v != nil {
					a.Options = append(a.Options, valueText(v))
				} else {
					a.Options = append(a.Options, valueText(e))
				}
				return true
			})
		}
		s.asks = append(s.asks, a)
		s.inWait, s.waitFrom, s.waitToken = true, m.Offset, a.token
	}
}

// reply records a subscriber's reply: the decision of the ask it answers.
func (s *session) reply(doc *payload.Doc, short string) {
	token := str(doc, "reply_token")
	var decision string
	switch short {
	case "confirmation.reply":
		decision = str(doc, "decision")
	case "clarification.reply":
		decision = valueText(doc.Get("response"))
	default:
		return
	}
	for i := len(s.asks) - 1; i >= 0; i-- {
		if a := s.asks[i]; a.Decision == "" && (token == "" || a.token == token) {
			a.Decision = decision
			return
		}
	}
}

// finish closes what is still open when the session ends.
func (s *session) finish() {
	s.outputs = make([]string, len(s.outputBuilder))
	for i := range s.outputBuilder {
		s.outputs[i] = s.outputBuilder[i].String()
	}
	s.outputBuilder, s.outputIdx = nil, nil
	if s.inWait {
		s.waiting += s.last - s.waitFrom
		s.inWait = false
	}
}

// appendLine appends a message's line: who sent it when it was the subscriber, its
// type and what it says of the session's course. For AAEP that is read
// from the message itself (a state change's from and to states, the tool
// and completion status, a reply's decision, a handoff's target), never
// from the checker's view of the state, so that one missing event does not
// change every line after it. For the other protocols it is their step's
// state change and detail (a sender, a task, a tool).
func appendLine(b []byte, m *protocol.Message, step *protocol.Step) []byte {
	if m.Dir == protocol.ToProducer {
		b = append(b, "subscriber "...)
	}
	typ := m.Doc.Routing.TypeName()
	t := shortType(typ)
	if t == "" {
		t = "(no type)"
	}
	b = append(b, t...)
	member := func(b []byte, name string) []byte {
		if v, ok := m.Doc.Get(name).Text(); ok && len(v) > 0 {
			b = append(append(b, ' '), v...)
		}
		return b
	}
	switch {
	case t == "state.changed":
		b = member(b, "from_state")
		b = append(b, " →"...)
		b = member(b, "to_state")
	case t == "tool.invoked":
		b = member(b, "tool")
	case t == "tool.completed":
		b = member(member(b, "tool"), "status")
	case t == "confirmation.reply":
		b = member(b, "decision")
	case t == "handoff.requested":
		b = member(b, "target_kind")
	case strings.HasPrefix(typ, "aaep:") || strings.Contains(typ, ".") || step == nil:
	default:
		if step.From != step.To && step.To != "" {
			b = append(append(append(append(b, ' '), step.From...), " → "...), step.To...)
		}
		if step.Detail != "" {
			b = append(append(b, ' '), step.Detail...)
		}
	}
	return b
}
