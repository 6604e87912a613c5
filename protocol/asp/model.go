package asp

import (
	"strings"
	"sync/atomic"

	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol"
)

// Config adjusts the ASP model beyond the common protocol.Options.
type Config struct {
	// SupportedVersions lists the accepted version strings (ASP-E02).
	// Empty means asp/0.1 and asp/1.0.
	SupportedVersions []string
	// MinimalAgents lists agent IDs (agent://…) that declare the Minimal
	// conformance level in their Agent Card, which is not part of the
	// stream (ASP-C03).
	MinimalAgents []string
	// DocsExamples accepts the abbreviated integrity values of the
	// documentation's examples ("sha256:a1b2c3d4...") for ASP-E12.
	DocsExamples bool
}

// New returns the ASP model with the default configuration. Use one model
// per run: it remembers whether the stream held ASP messages, to recognise
// bare WebSocket control frames (ack, error, …) only in ASP streams.
func New() protocol.Model { return NewWithConfig(Config{}) }

// NewWithConfig returns the ASP model with cfg.
func NewWithConfig(cfg Config) protocol.Model {
	m := &model{cfg: cfg, versions: map[string]bool{}, minimal: map[string]bool{}}
	if len(cfg.SupportedVersions) == 0 {
		cfg.SupportedVersions = []string{"asp/0.1", "asp/1.0"}
	}
	for _, v := range cfg.SupportedVersions {
		m.versions[v] = true
	}
	for _, a := range cfg.MinimalAgents {
		m.minimal[a] = true
	}
	return m
}

type model struct {
	cfg      Config
	versions map[string]bool
	minimal  map[string]bool
	// seen is set once a message with a performative was recognised.
	seen atomic.Bool
}

// Name returns "asp".
func (*model) Name() string { return "asp" }

// Rules lists every rule the ASP checker reports.
func (*model) Rules() []protocol.Rule { return protocol.Values(rules) }

// The 13 performatives.
const (
	pPropose  = "PROPOSE"
	pAccept   = "ACCEPT"
	pReject   = "REJECT"
	pCounter  = "COUNTER"
	pInform   = "INFORM"
	pQuery    = "QUERY"
	pClarify  = "CLARIFY"
	pCommit   = "COMMIT"
	pDelegate = "DELEGATE"
	pEscalate = "ESCALATE"
	pWithdraw = "WITHDRAW"
	pObserve  = "OBSERVE"
	pClose    = "CLOSE"
)

var performatives = map[string]bool{
	pPropose: true, pAccept: true, pReject: true, pCounter: true, pInform: true, pQuery: true, pClarify: true,
	pCommit: true, pDelegate: true, pEscalate: true, pWithdraw: true, pObserve: true, pClose: true,
}

// isPerformative reports whether p names a performative, in any case.
func isPerformative(p string) bool {
	return performatives[p] || (len(p) <= 8 && performatives[strings.ToUpper(p)])
}

// Frame types of the WebSocket transport that carry no envelope.
var stateFrames = map[string]bool{"session_state": true, "auth_ok": true, "heartbeat": true}
var controlFrames = map[string]bool{"ack": true, "trust_update": true, "error": true, "auth": true, "pong": true}

// Recognize implements protocol.Model. A message is ASP when, at top level:
//   - its performative names one of the 13 performatives (any case, so
//     that ASP-E10 can report a lower-case one);
//   - it is a WebSocket frame {"type":"message"|"send","envelope":{…}}
//     whose envelope has such a performative;
//   - it is a session_state, auth_ok or heartbeat frame whose state names
//     an ASP state, or (once the stream has held ASP messages) a bare
//     ack, trust_update, error, auth or pong frame;
//   - it is a message of the unrelated agentsessionprotocol.org protocol
//     (type "session.*" with id, created_at and data), which the checker
//     reports as unsupported (ASP-X01).
func (md *model) Recognize(m *protocol.Message) bool {
	f := &m.Doc.Routing
	if f.Performative != "" {
		if isPerformative(f.Performative) {
			md.seen.Store(true)
			return true
		}
		return false
	}
	if strings.HasPrefix(f.Type, "aaep:") {
		return false
	}
	switch {
	case (f.Type == "message" || f.Type == "send") && f.ASPEnvelope:
		if p, _ := envelopeOf(m.Doc).Get("performative").Str(); isPerformative(p) {
			md.seen.Store(true)
			return true
		}
	case stateFrames[f.Type]:
		if s, ok := m.Doc.Get("state").Str(); ok && m.Doc.IsObject() && stateNames[s] {
			return true
		}
		return md.seen.Load()
	case controlFrames[f.Type]:
		return md.seen.Load()
	case strings.HasPrefix(f.Type, "session."):
		return isOtherASP(m.Doc)
	}
	return false
}

// envelopeOf returns the "envelope" member of a WebSocket frame when it is
// an object, or nil.
func envelopeOf(d *payload.Doc) payload.Value {
	if env := d.Get("envelope"); d.IsObject() && env.Kind() == payload.Object {
		return env
	}
	return nil
}

// isOtherASP reports whether raw looks like agentsessionprotocol.org's
// envelope {"id","type":"session.*","created_at","data"}.
func isOtherASP(d *payload.Doc) bool {
	return d.IsObject() && d.Get("id") != nil && d.Get("created_at") != nil && d.Get("data") != nil
}

// NewChecker starts a run; opts.Strict() selects the strict profile.
func (md *model) NewChecker(r protocol.Reporter, opts *protocol.Options) protocol.Checker {
	return newChecker(md, r, opts.Strict())
}
