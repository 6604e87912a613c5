package subtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/grpcbind/grpcserve"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/serve"
	"github.com/aaep-tools/aaepkit/timing"
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

// reconnectWait bounds the wait for a subscriber to come back after a cut.
const reconnectWait = 10 * time.Second

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

type runner struct {
	sc      *Scenario
	o       Options
	events  []eventRef
	srv     *serve.Server
	ctl     *timing.Controller
	notices chan serve.Notice
	// start is when the recording's clock started; heard what the
	// subscriber announced (nil: not observed).
	start time.Time
	heard *observation

	mu      sync.Mutex
	joined  int // subscriptions started (or handshakes answered by POST)
	replied map[string]bool
}

// notify collects serve's notices (called from serve's goroutines).
func (r *runner) notify(n serve.Notice) {
	r.mu.Lock()
	switch n.Kind {
	case serve.NoticeSubscribed:
		r.joined++
	case serve.NoticeHandshake:
		// A refused subscription is all a subscriber gets to do; an
		// accepted one by POST attaches when its stream opens.
		if n.Verdict != serve.VerdictAccepted {
			r.joined++
		}
	case serve.NoticeReply:
		if r.replied == nil {
			r.replied = map[string]bool{}
		}
		// A token echoed in another case still settles the wait: the
		// expectation then fails at once instead of at its deadline.
		r.replied[strings.ToLower(strings.TrimSpace(n.Token))] = true
	}
	r.mu.Unlock()
	select {
	case r.notices <- n:
	default:
	}
}

func (r *runner) joinedCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.joined
}

func (r *runner) openRecord(capture string, hdr capfile.Header, dir string) (Recorder, error) {
	meta := map[string]string{
		capfile.MetaReplayOf: filepath.Base(capture),
		"replay_of_start":    hdr.Start.Format(time.RFC3339Nano),
		"replay_speed":       fmt.Sprint(r.speed()),
		"test_scenario":      r.sc.Name,
		"view":               "subscriber: received = sent by aaep-replay test, sent = sent by the subscriber; source N = Nth subscription, attribute subscription = its id",
	}
	h := capfile.Header{Start: time.Now(), Tool: "aaep-replay-test", Meta: meta,
		Origins: []capfile.Origin{{ID: 0, Transport: "replay", Subprotocol: serve.Subprotocol}}}
	if r.o.Record != nil {
		return r.o.Record(r.sc, capture, h)
	}
	return createRecording(filepath.Join(dir, "run.aaep"), h)
}

func (r *runner) speed() float64 {
	if r.sc.Speed == 0 {
		return 1
	}
	return r.sc.Speed
}

func (r *runner) timing() timing.Config {
	return timing.Config{Speed: r.speed(), NoDelay: r.sc.NoDelay}
}

// play serves the scenario until it is over and the subscriber is gone.
func (r *runner) play(ctx context.Context, capture string, rec Recorder) error {
	r.ctl = timing.NewController(nil, r.timing(), true)
	r.start = time.Now() // serve's recording clock starts as it is made
	srv, err := serve.New(serve.Options{
		Open: serve.OpenFile(capture), Timing: r.timing(), Shared: true, Control: r.ctl,
		Record: rec, Notify: r.notify, Keepalive: r.sc.Keepalive, RejectRequests: r.sc.Reject,
		SSEEvent: r.o.SSEEvent, HonorMaxRate: r.sc.HonorMaxRate,
	})
	if err != nil {
		return err
	}
	r.srv = srv
	listen := r.o.Listen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", listen, err)
	}
	served := make(chan struct{})
	base := "http://" + ln.Addr().String()
	var stopServing func(ctx context.Context)
	if r.o.Transport == TransportGRPC {
		gs := grpcserve.New(ln, srv, nil)
		go func() { defer close(served); _ = gs.Serve() }()
		base = "grpc://" + ln.Addr().String()
		stopServing = func(context.Context) { gs.Stop() }
	} else {
		hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
		go func() { defer close(served); _ = hs.Serve(serve.Listener(ln)) }()
		stopServing = func(ctx context.Context) { _ = hs.Shutdown(ctx) }
	}
	var proc *process
	var pipe *heardPipe
	var pg *pageSubscriber
	// The replay ends first (its subscriptions close as shut down), then
	// the subscriber's process (or page): a subscriber is never seen
	// leaving because the run ended.
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		stopServing(sctx)
		<-served
		if proc != nil {
			proc.stop()
		}
		if pipe != nil {
			r.heard = pipe.observed(time.Second)
		}
		if pg != nil {
			pg.close(r.o.Output)
		}
	}()
	if r.o.Announce != nil {
		r.o.Announce(r.sc, base)
	}
	switch {
	case r.o.Exec != "":
		var w *os.File
		if r.o.Announcements {
			if pipe, w, err = newHeardPipe(r.start); err != nil {
				return err
			}
		}
		proc, err = startProcess(r.o.Exec, base, r.sc, r.o.Output, w)
		if w != nil {
			w.Close() // the subscriber has its own
		}
		if err != nil {
			return err
		}
	case r.o.Page != "":
		if pg, err = r.openPage(ctx, base); err != nil {
			return err
		}
	case r.o.To != "":
		if err := srv.DialWebSocket(ctx, r.o.To, serve.PushOptions{DialTimeout: r.o.AttachTimeout}); err != nil {
			return err
		}
	}
	if err := r.waitAttach(ctx, proc); err != nil {
		return err
	}
	if err := r.drive(ctx); err != nil {
		return err
	}
	if err := r.linger(ctx); err != nil {
		return err
	}
	if pg != nil {
		// Read before the replay ends: what the page says of a lost
		// connection is not about the events.
		if r.heard, err = pg.observed(ctx); err != nil {
			return err
		}
	}
	return nil
}

// waitAttach waits for the first subscription (or handshake).
func (r *runner) waitAttach(ctx context.Context, proc *process) error {
	t := time.NewTimer(r.o.AttachTimeout)
	defer t.Stop()
	var exited <-chan struct{}
	if proc != nil {
		exited = proc.done
	}
	for r.joinedCount() == 0 {
		select {
		case <-r.notices:
		case <-exited:
			if r.joinedCount() > 0 {
				return nil
			}
			return fmt.Errorf("no subscriber attached: the subscriber process ended (%v) before it subscribed", proc.err)
		case <-t.C:
			return fmt.Errorf("no subscriber attached within %s (--attach-timeout)", r.o.AttachTimeout)
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	return nil
}

// drive releases the events, applying each fault after its event, then
// waits for the end of the range (or for every subscriber to be gone).
func (r *runner) drive(ctx context.Context) error {
	faults := slices.Clone(r.sc.Faults)
	slices.SortStableFunc(faults, func(a, b Fault) int { return a.After - b.After })
	released := 0
	for _, f := range faults {
		if n := f.After - released; n > 0 {
			r.ctl.Step(n)
			if !r.waitReleased(ctx, f.After) {
				break
			}
			released = f.After
		}
		switch f.Kind {
		case FaultPause:
			if err := sleep(ctx, f.For); err != nil {
				return err
			}
		case FaultSlow:
			if err := r.ctl.SetSpeed(r.speed() * f.Speed); err != nil {
				return err
			}
		case FaultCut, FaultRedeliver:
			before := r.joinedCount()
			if f.Kind == FaultRedeliver {
				// The subscription that comes back gets the event again
				// as it joins, right behind its handshake answer. A seek
				// once it was seen back (as before) left it a moment with
				// nothing: a WebSocket subscriber that answered the
				// prompt then, on its new subscription, sent a reply no
				// prompt of that subscription had issued yet (a false
				// SEQ-REPLY-KNOWN-TOKEN on a loaded machine).
				r.srv.RedeliverFrom(r.events[f.After-1].Index)
			}
			for _, id := range r.srv.Active() {
				r.srv.Cut(id)
			}
			r.waitRejoin(ctx, before)
		}
	}
	r.ctl.Play()
	return r.waitEnd(ctx)
}

// waitReleased waits until n events have been released and written to
// every attached subscriber (a fault must not overtake them: a cut drops
// what is still queued); false when the replay ended or nobody has been
// attached for the linger time. An event a subscriber's terms filter out
// never reaches it: after deliverWait the fault goes ahead anyway.
func (r *runner) waitReleased(ctx context.Context, n int) bool {
	alone := r.aloneFor()
	target := r.events[n-1].Index
	var releasedAt time.Time
	return poll(ctx, 0, func() (bool, bool) {
		st, _ := r.srv.ControlStatus()
		if st.Released < int64(n) {
			return st.State == serve.StateEnded || alone(), false
		}
		if releasedAt.IsZero() {
			releasedAt = time.Now()
		}
		for _, s := range st.Subscribers {
			if s.State == "active" && s.PositionIndex < target && time.Since(releasedAt) < deliverWait {
				return false, false
			}
		}
		return true, true
	})
}

// deliverWait bounds the wait for released events to be written.
const deliverWait = 5 * time.Second

// aloneFor returns a function that reports whether no subscriber has
// been attached for the scenario's linger time.
func (r *runner) aloneFor() func() bool {
	var since time.Time
	return func() bool {
		if len(r.srv.Active()) > 0 {
			since = time.Time{}
			return false
		}
		if since.IsZero() {
			since = time.Now()
		}
		return time.Since(since) >= r.sc.Linger
	}
}

// waitRejoin waits for a subscription after the one that was cut, until
// it follows the timeline (so that nothing is released before it is
// there). An SSE subscriber that negotiated by POST comes back under the
// same subscription id; a cut subscription is never on the timeline.
func (r *runner) waitRejoin(ctx context.Context, before int) {
	poll(ctx, reconnectWait, func() (bool, bool) {
		if r.joinedCount() <= before {
			return false, false
		}
		for _, id := range r.srv.Active() {
			if r.srv.OnTimeline(id) {
				return true, true
			}
		}
		return false, false
	})
}

// waitEnd waits until the range has been played and written to every
// attached subscriber, or until no subscriber has been attached for the
// linger time (it left, or was rejected). A subscriber held back by its
// honoured rate (max_events_per_second) gets the rest of the range; one
// whose position has not moved for deliverWait is waited for no longer.
func (r *runner) waitEnd(ctx context.Context) error {
	alone := r.aloneFor()
	last := r.events[len(r.events)-1].Index
	var moved time.Time
	var pos int64 = -1
	poll(ctx, 0, func() (bool, bool) {
		if alone() {
			return true, true
		}
		st, _ := r.srv.ControlStatus()
		if st.State != serve.StateEnded {
			return false, false
		}
		behind := int64(-1)
		for _, s := range st.Subscribers {
			if s.State == "active" && s.PositionIndex < last {
				behind = max(behind, s.PositionIndex)
			}
		}
		if behind < 0 {
			return true, true
		}
		if behind != pos {
			pos, moved = behind, time.Now()
		}
		return time.Since(moved) >= deliverWait, true
	})
	return context.Cause(ctx)
}

// linger gives the subscriber time for its last replies: the scenario's
// linger time always (whatever else comes, a second reply or an
// auto-response, is judged too), and beyond it until every expected reply
// has come, at most its within.
func (r *runner) linger(ctx context.Context) error {
	wait := r.sc.Linger
	for _, e := range r.sc.Expect {
		if e.Kind == ExpectReply {
			wait = max(wait, e.Within)
		}
	}
	start := time.Now()
	poll(ctx, wait, func() (bool, bool) {
		// Whatever else comes (a second reply, an auto-response) is
		// judged too: the linger time is always given.
		if time.Since(start) < r.sc.Linger {
			return false, false
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, e := range r.sc.Expect {
			if e.Kind == ExpectReply && !r.replied[strings.ToLower(e.Token)] {
				return false, false
			}
		}
		return true, true
	})
	return context.Cause(ctx)
}

// poll calls cond every 10ms until it says done (its second result is
// then returned), ctx ends or limit (0: none) passes.
func poll(ctx context.Context, limit time.Duration, cond func() (done, result bool)) bool {
	var deadline <-chan time.Time
	if limit > 0 {
		t := time.NewTimer(limit)
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if done, res := cond(); done {
			return res
		}
		select {
		case <-tick.C:
		case <-deadline:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
