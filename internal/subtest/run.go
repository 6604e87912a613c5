package subtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/serve"
)

// Options.Transport values: the transport a subscriber uses.
const (
	// TransportGRPC is for gRPC subscribers (Appendix B.5).
	TransportGRPC = "grpc"
	// TransportSSE and TransportWebSocket say which of the two a
	// subscriber that attaches over HTTP uses (both are served).
	TransportSSE       = "sse"
	TransportWebSocket = "websocket"
)

// DefaultAttachTimeout is how long a run waits for the subscriber.
const DefaultAttachTimeout = 10 * time.Second

// Options say how a run reaches the subscriber and where its exchange goes.
// Exactly one of Listen, To and Exec is the way the subscriber comes.
type Options struct {
	// Listen is the address the replay listens on. The subscriber attaches
	// to it (--listen), or, with Exec, it is the address {url} names
	// (default 127.0.0.1:0, a free port).
	Listen string
	// To is the WebSocket URL of a subscriber that listens (--to).
	To string
	// Transport is how the subscriber reaches the replay: "sse" or
	// "websocket" (both are served on Listen; a scenario of the other is
	// not applicable), "grpc" (aaep.v1.AaepService on Listen, {url} then
	// being grpc://HOST:PORT), or "" for the attach mode to tell: --to is
	// WebSocket, and a subscriber that attaches is judged on the transport
	// it came over.
	Transport string
	// RequireEvidence makes a check that passes by absence (no reply,
	// stayed connected) with nothing to show the subscriber took in the
	// events a failure instead of an unverified pass.
	RequireEvidence bool
	// FailOn is the lowest level of a subscriber-side finding that fails
	// the run, as check's --fail-on (0: protocol.Must; protocol.Never:
	// none).
	FailOn protocol.Level
	// Exec is a command started per scenario with {url} replaced by the
	// replay's base URL (http://HOST:PORT); it is run by /bin/sh (cmd.exe on
	// Windows) and its process group is ended when the scenario is over.
	Exec string
	// AttachTimeout bounds the wait for the subscriber (default 10s).
	AttachTimeout time.Duration
	// Record opens the recording of the exchange; nil writes it to a
	// temporary file that is removed after the run.
	Record func(sc *Scenario, capture string, hdr capfile.Header) (Recorder, error)
	// Output receives the exec'd subscriber's output and what the run is
	// waiting for; nil discards them.
	Output io.Writer
	// Announce, if set, is told the replay's base URL when it listens.
	Announce func(sc *Scenario, url string)
	// SSEEvent frames the SSE stream as serve's --sse-event does (""
	// or serve.SSEEventRecorded: as recorded, aaep.event where the capture
	// has no SSE framing; serve.SSEEventNone: unnamed; or a name), so that
	// a subscriber is judged on the stream serve would send it.
	SSEEvent string
	// Profile is the checker's reading where the specification
	// contradicts itself ("lenient", the default, or "strict"), as check's
	// --profile.
	Profile string
	// Page is a web subscriber's URL (PageURL's placeholders: {url} the
	// replay's base URL): each scenario opens it in a tab of Browser (a
	// headless Chromium; nil: one of the run's own) and hears its ARIA live
	// regions (page.go).
	Page    string
	Browser *Browser
	// Announcements gives the exec'd subscriber descriptor 3
	// (AAEP_TEST_ANNOUNCEMENTS_FD) for its announcements, one JSON line
	// each (heard.go).
	Announcements bool
}

// Result is the verdict of one scenario run.
type Result struct {
	Scenario *Scenario `json:"-"`
	Name     string    `json:"scenario"`
	Level    int       `json:"level"`
	Sections []string  `json:"sections"`
	User     string    `json:"user"`
	// Decisions are the scripted user's actions, as AAEP_TEST_DECISIONS
	// gave them to the harness.
	Decisions []Decision `json:"decisions"`
	// NotRun says why the scenario could not be run (no subscriber
	// attached, the capture could not be read); nothing else is set then.
	NotRun string `json:"not_run,omitempty"`
	// NotApplicable says why the scenario does not apply to the
	// subscriber (its transport); it is neither passed nor failed.
	NotApplicable string `json:"not_applicable,omitempty"`
	// Transport is the transport the subscriber was judged on.
	Transport string    `json:"transport,omitempty"`
	Outcomes  []Outcome `json:"expectations"`
	Findings  []Finding `json:"findings"`
	Record    string    `json:"record,omitempty"`
	// Silence says plainly that nothing the subscriber sent shows it heard
	// an event, when a check failed or passed unverified for it; for an
	// SSE subscriber sent named events, why one listening only for
	// unnamed events hears none (B.1.3).
	Silence  string        `json:"silence,omitempty"`
	Duration time.Duration `json:"duration_ns"`
	// CheckDuration is how long the subscriber-side rules took to check.
	CheckDuration time.Duration `json:"check_duration_ns"`
	// Heard is what the subscriber announced, when it is observed
	// (--page, --announcements).
	Heard *Heard `json:"heard,omitempty"`
}

// Heard is what a run observed of the subscriber's announcements.
type Heard struct {
	// From is "page" (a web subscriber's live regions) or
	// "announcements" (a native subscriber's descriptor).
	From          string         `json:"from"`
	Announcements []Announcement `json:"announcements"`
	// Problems are lines of the descriptor that are not announcements.
	Problems []string `json:"problems,omitempty"`
	// Note says what the page's accessibility tree shows, when it
	// announced nothing.
	Note string `json:"note,omitempty"`
}

// Passed reports whether every required expectation passed and no MUST
// finding was made (advisory failures and SHOULD findings only warn).
func (r *Result) Passed() bool {
	if r.NotRun != "" {
		return false
	}
	if r.NotApplicable != "" {
		return true
	}
	for _, o := range r.Outcomes {
		if o.Required && !o.Passed && !o.NotObservable {
			return false
		}
	}
	for _, f := range r.Findings {
		if f.Required {
			return false
		}
	}
	return true
}

// Run plays sc to the subscriber and judges what it sent back. The error
// is for what is wrong with the options; a scenario that cannot be run is
// a Result with NotRun set.
func Run(ctx context.Context, sc *Scenario, o Options) (*Result, error) {
	ways := 0
	for _, s := range []string{o.To, o.Exec, o.Page} {
		if s != "" {
			ways++
		}
	}
	if ways > 1 {
		return nil, errors.New("--to, --exec and --page exclude each other")
	}
	switch o.Transport {
	case "", TransportSSE, TransportWebSocket, TransportGRPC:
	default:
		return nil, fmt.Errorf("transport %q: want %s, %s or %s (or none: the attach mode tells)", o.Transport, TransportSSE, TransportWebSocket, TransportGRPC)
	}
	if o.Transport == TransportSSE && o.To != "" {
		return nil, errors.New("--to dials a WebSocket subscriber: not with the SSE transport")
	}
	if o.Transport == TransportGRPC && o.To != "" {
		return nil, errors.New("--to dials a WebSocket subscriber: not with the gRPC transport")
	}
	if err := serve.CheckSSEEvent(o.SSEEvent); err != nil {
		return nil, fmt.Errorf("--sse-event: %w", err)
	}
	if o.Announcements && o.Exec == "" {
		return nil, errors.New("--announcements is for an --exec subscriber (it writes them to descriptor 3)")
	}
	if o.Page != "" && o.Transport == TransportGRPC {
		return nil, errors.New("--page opens a web subscriber: not with the gRPC transport")
	}
	if o.Page != "" && o.Browser == nil {
		o.Browser = &Browser{}
		defer o.Browser.Close()
	}
	if o.AttachTimeout <= 0 {
		o.AttachTimeout = DefaultAttachTimeout
	}
	if o.Output == nil {
		o.Output = io.Discard
	}
	res := &Result{Scenario: sc, Name: sc.Name, Level: sc.Level, Sections: sc.Sections, User: sc.User, Decisions: orEmpty(sc.Decisions), Transport: o.knownTransport()}
	start := time.Now()
	defer func() { res.Duration = time.Since(start) }()
	if res.Transport != "" && !sc.appliesTo(res.Transport) {
		res.NotApplicable = notApplicable(sc, res.Transport, "")
		return res, nil
	}
	dir, err := os.MkdirTemp("", "aaep-test-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	capture, err := prepareCapture(ctx, sc, dir)
	if err != nil {
		res.NotRun = err.Error()
		return res, nil
	}
	events, hdr, err := readEvents(capture, o.Output)
	if err != nil {
		res.NotRun = err.Error()
		return res, nil
	}
	for _, d := range sc.Decisions {
		if d.After != "" && !slices.ContainsFunc(events, func(e eventRef) bool { return e.ID == d.After }) {
			res.NotRun = fmt.Sprintf("%s:%d: the user acts (%s) after event %s, which the capture does not have", sc.File, d.Line, d.Action, d.After)
			return res, nil
		}
	}
	for _, f := range sc.Faults {
		if f.After > len(events) {
			res.NotRun = fmt.Sprintf("%s:%d: fault %s after event %d, but the capture has %d events", sc.File, f.Line, f.Kind, f.After, len(events))
			return res, nil
		}
	}
	r := &runner{sc: sc, o: o, events: events, notices: make(chan serve.Notice, 256)}
	rec, err := r.openRecord(capture, hdr, dir)
	if err != nil {
		return nil, err
	}
	if err := r.play(ctx, capture, rec); err != nil {
		res.NotRun = err.Error()
	}
	if cerr := rec.Close(); cerr != nil && res.NotRun == "" {
		return nil, fmt.Errorf("recording: %w", cerr)
	}
	if res.NotRun != "" {
		return res, nil
	}
	if o.Record != nil {
		res.Record = rec.Path()
	}
	x, err := readExchange(rec.Path())
	if err != nil {
		return nil, fmt.Errorf("reading the recording: %w", err)
	}
	if x.heard = r.heard; x.heard != nil {
		x.mapHeard()
		res.Heard = &Heard{From: x.heard.From, Announcements: x.heard.List, Problems: x.heard.Problems, Note: x.heard.Note}
	}
	if res.Transport == "" {
		res.Transport = x.subscriberTransport()
		if res.Transport != "" && !sc.appliesTo(res.Transport) {
			res.NotApplicable = notApplicable(sc, res.Transport, " (it came so; --transport chooses)")
			return res, nil
		}
	}
	if sc.needs != "" && !x.sent(sc.needs) && x.negotiated() {
		res.NotApplicable = fmt.Sprintf("%s never reached the subscriber: the event_filters it negotiated leave it out (§5.3.1.7; the default include is aaep:agent.*), so nothing here shows how it handles one", sc.needs)
		return res, nil
	}
	res.Outcomes = evaluate(sc, x, events[len(events)-1].ID, o.RequireEvidence)
	res.Silence = x.silence(res.Transport, res.Outcomes)
	checked := time.Now()
	if res.Findings, err = subscriberFindings(ctx, rec.Path(), o.Profile, o.FailOn); err != nil {
		return nil, err
	}
	res.CheckDuration = time.Since(checked)
	return res, nil
}

// orEmpty is ds, or an empty list for none (JSON: [], not null).
func orEmpty(ds []Decision) []Decision {
	if ds == nil {
		return []Decision{}
	}
	return ds
}

// knownTransport is the subscriber's transport when the options tell it
// before it attaches: --transport, or --to (a WebSocket).
func (o *Options) knownTransport() string {
	if o.Transport == "" && o.To != "" {
		return TransportWebSocket
	}
	return o.Transport
}

// appliesTo reports whether the scenario applies to a subscriber on
// transport.
func (sc *Scenario) appliesTo(transport string) bool {
	return len(sc.Transports) == 0 || slices.Contains(sc.Transports, transport)
}

func notApplicable(sc *Scenario, transport, how string) string {
	return fmt.Sprintf("the subscriber uses %s%s; this scenario tests %s only", transport, how, strings.Join(sc.Transports, " and "))
}
