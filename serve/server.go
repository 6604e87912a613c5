package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/webguard"
	"github.com/aaep-tools/aaepkit/msgfilter"
	"github.com/aaep-tools/aaepkit/recording"
	"github.com/aaep-tools/aaepkit/timing"
)

// Defaults for Options.
const (
	DefaultGrace        = 500 * time.Millisecond
	DefaultQueueSize    = 1024
	DefaultQueueBytes   = 8 << 20
	DefaultWriteTimeout = 10 * time.Second
	DefaultMaxLag       = 30 * time.Second
	DefaultKeepalive    = 15 * time.Second
	// MinKeepalive is the shortest keepalive interval accepted: shorter
	// ones would flood a quiet subscriber with comments or pings.
	MinKeepalive = time.Second
	// DefaultPongWait is how long a WebSocket peer may leave a keepalive
	// ping unanswered before it is closed as unresponsive.
	DefaultPongWait = 30 * time.Second
	// MaxMessage bounds what a subscriber may send in one message or POST.
	MaxMessage = 1 << 20
	// keepClosed is how many closed subscriptions Stats still lists.
	keepClosed = 100
	// maxPending bounds handshakes made by POST and not yet streamed.
	maxPending = 10000
	pendingTTL = 10 * time.Minute
	// shutdownGrace is how long Shutdown lets writes in progress finish.
	shutdownGrace = time.Second
)

// RecordWriter receives the replay as seen on the wire (see the package
// doc for the direction of each kind). *capfile.Writer implements it.
type RecordWriter interface {
	Append(rec *capfile.Record) error
}

// OriginAdder is implemented by a RecordWriter whose header's origin table
// can grow (*capfile.Writer with a HeaderReserve): each subscriber is then
// listed as an origin before its first record. A subscriber that cannot be
// listed is recorded as origin 0 (the server), its records still told apart
// by their "subscription" attribute.
type OriginAdder interface {
	AddOrigin(o capfile.Origin) error
}

// Options configure a Server or a Push.
type Options struct {
	// Open opens the capture (required).
	Open Opener
	// Range selects the part of the capture to replay.
	Range Range
	// Filter selects events by type and session (--filter-type, --session).
	Filter msgfilter.Filter
	// Timing sets speed, no-delay and the idle cap.
	Timing timing.Config
	// Clock paces the replay; nil means timing.System().
	Clock timing.Clock
	// Passes is how many times the range is played: 0 or 1 once, N times,
	// negative forever.
	Passes int
	// Shared puts all subscribers on one timeline.
	Shared bool
	// Grace is how long a WebSocket subscriber may take to send its
	// subscription.request before the stream starts without one (a later
	// request is answered all the same: see the package doc).
	Grace time.Duration
	// QueueSize and QueueBytes bound each subscriber's queue, in events and
	// in payload bytes (a single larger event is still accepted alone).
	QueueSize  int
	QueueBytes int
	// WriteTimeout bounds each flush to a subscriber.
	WriteTimeout time.Duration
	// MaxLag closes a subscriber that falls this far behind its schedule
	// (not with NoDelay). Negative disables it.
	MaxLag time.Duration
	// Record, if set, receives every message on the wire.
	Record RecordWriter
	// Notify, if set, is told about replies and subscriptions (see Printer).
	// It is called from many goroutines.
	Notify func(Notice)
	// Producer is the producer object sent in subscription.accepted; when
	// empty, the first event's producer is used.
	Producer json.RawMessage
	// Control, if set, steers the shared timeline (Shared is required) and
	// adds the control API under /control (see control.go).
	Control *timing.Controller
	// SSEEvent chooses the SSE event: line: SSEEventRecorded (or empty)
	// frames each message as recorded, SSEEventNone sends unnamed events,
	// anything else is the name for every event.
	SSEEvent string
	// CORSOrigins are the browser origins (scheme://host[:port]) whose
	// pages may use the subscriber endpoints (events, subscriptions,
	// replies); empty allows any origin.
	CORSOrigins []string
	// AllowOrigins are the browser origins whose pages may also use the
	// operator's endpoints (/control, /stats), which otherwise answer only
	// clients that are not browsers and the server's own pages, and only
	// under a Host header that names the server (package webguard).
	AllowOrigins []string
	// Keepalive is the silence after which a subscriber gets an SSE comment
	// or a WebSocket ping, and again after every such silence (default
	// DefaultKeepalive; negative: never). A positive value under
	// MinKeepalive is refused.
	Keepalive time.Duration
	// PongWait is how long a WebSocket peer may leave a keepalive ping
	// unanswered, sending nothing at all, before it is closed as
	// unresponsive (4004), whatever the keepalive interval (default
	// DefaultPongWait). It is checked when a keepalive is due, so a peer
	// is closed at the first one at least PongWait after the ping it left
	// unanswered.
	PongWait time.Duration
	// RejectRequests, when set, answers every subscription.request with
	// subscription.rejected and this reason code (§5.5.3): a subscriber
	// test plays a producer that refuses the subscription.
	RejectRequests string
	// HonorMaxRate, when positive, caps the max_events_per_second a
	// subscription is honoured at (§5.4.4): a producer that accepts a
	// lower rate than requested, or sets one where none was asked, for a
	// subscriber test of honoured capabilities (§9.5.2(3)) and of
	// critical events under backpressure (§9.5.2(9)).
	HonorMaxRate int
	// CloseAtEnd closes each subscription when its replay has ended. By
	// default a finished subscription stays open (with keepalives) until
	// the subscriber leaves, as a live producer that went quiet would.
	CloseAtEnd bool
}

func (o *Options) withDefaults() error {
	if o.Open == nil {
		return errors.New("serve: no capture to open")
	}
	if err := o.Timing.Validate(); err != nil {
		return err
	}
	if err := CheckSSEEvent(o.SSEEvent); err != nil {
		return err
	}
	switch {
	case o.Keepalive == 0:
		o.Keepalive = DefaultKeepalive
	case o.Keepalive > 0 && o.Keepalive < MinKeepalive:
		return fmt.Errorf("serve: keepalive interval %v is under the minimum of %v", o.Keepalive, MinKeepalive)
	}
	if o.PongWait <= 0 {
		o.PongWait = DefaultPongWait
	}
	if o.Grace == 0 {
		o.Grace = DefaultGrace
	}
	if o.QueueSize <= 0 {
		o.QueueSize = DefaultQueueSize
	}
	if o.QueueBytes <= 0 {
		o.QueueBytes = DefaultQueueBytes
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.MaxLag == 0 {
		o.MaxLag = DefaultMaxLag
	}
	if o.Passes == 0 {
		o.Passes = 1
	}
	if o.Clock == nil {
		o.Clock = timing.System()
	}
	if o.Control != nil && !o.Shared {
		return errors.New("serve: replay control needs the shared timeline")
	}
	return nil
}

// Server serves a capture to subscribers. It is an http.Handler.
type Server struct {
	opts     Options
	clock    timing.Clock
	producer json.RawMessage

	manifestOnce sync.Once
	manifest     []byte // GetManifest's answer (Manifest)
	mux          *http.ServeMux
	started      time.Time

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	subs    map[string]*subscriber // active, by subscription id
	closedS []*subscriber          // recently closed, oldest first
	pending map[string]*pendingSub // handshakes made by POST, by subscription id
	nextNum int
	closes  map[string]int64
	down    bool

	total    atomic.Int64
	accepted atomic.Int64
	ignored  atomic.Int64

	recMu    sync.Mutex
	recStart time.Time
	recErr   error
	unlisted atomic.Bool // a subscriber could not be listed as a source

	shared *timeline
	reg    *registry // shared timeline's tokens
	ctl    *control  // nil without Options.Control

	cors     corsPolicy
	guard    *webguard.Guard
	upgrader websocket.Upgrader
}

// pendingSub is a subscription negotiated by POST, waiting for its stream.
type pendingSub struct {
	id         string
	terms      *subscriptionTerms
	caps       map[string]json.RawMessage
	subscriber string
	created    time.Time
	active     bool
}

// New checks opts, reads the capture's producer identity and returns a Server.
func New(opts Options) (*Server, error) {
	if err := opts.withDefaults(); err != nil {
		return nil, err
	}
	st, err := openStream(opts.Open, opts.Range, opts.Filter)
	if err != nil {
		return nil, fmt.Errorf("open capture: %w", err)
	}
	producer, err := findProducer(st)
	st.close()
	if err != nil {
		return nil, err
	}
	if len(opts.Producer) > 0 {
		producer = opts.Producer
	}
	cors, err := newCORSPolicy(opts.CORSOrigins)
	if err != nil {
		return nil, err
	}
	guard, err := webguard.New(opts.AllowOrigins)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		cors:     cors,
		guard:    guard,
		opts:     opts,
		clock:    opts.Clock,
		producer: producer,
		started:  time.Now(),
		ctx:      ctx,
		cancel:   cancel,
		subs:     make(map[string]*subscriber),
		pending:  make(map[string]*pendingSub),
		closes:   make(map[string]int64),
		recStart: time.Now(),
	}
	s.upgrader = newUpgrader(cors)
	if opts.Shared {
		s.reg = newRegistry()
		s.shared = newTimeline(s)
	}
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("GET /aaep/v1/ws", s.serveWS)
	s.mux.HandleFunc("GET /aaep/v1/events", s.serveSSE)
	s.mux.HandleFunc("GET /events", s.serveSSE)
	s.mux.HandleFunc("POST /aaep/v1/subscriptions", s.serveSubscribe)
	s.mux.HandleFunc("POST /aaep/v1/replies", s.serveMessage)
	s.mux.HandleFunc("POST /messages", s.serveMessage)
	s.mux.HandleFunc("GET /healthz", s.serveHealth)
	s.mux.HandleFunc("GET /stats", s.serveStats)
	if opts.Control != nil {
		s.mountControl()
	}
	return s, nil
}

// findProducer returns the producer object of the first few events that
// have one. A capture whose first events cannot be read is an error.
func findProducer(st *stream) (json.RawMessage, error) {
	for i := 0; i < 64; i++ {
		ev, err := st.next()
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		var v struct {
			Producer json.RawMessage `json:"producer"`
		}
		if json.Unmarshal(ev.Payload, &v) == nil && len(v.Producer) > 0 && v.Producer[0] == '{' {
			return v.Producer, nil
		}
	}
	return nil, nil
}

// ServeHTTP routes a request to the replay's endpoints: a subscriber
// endpoint after its CORS headers (and the answer to a CORS preflight), any
// other (/control, /stats) only when the guard lets the request through:
// no web page of another origin drives or reads the replay.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if IsSubscriberPath(r.URL.Path) {
		if s.cors.handle(w, r) {
			return
		}
	} else if s.guard.Refuse(w, r) {
		return
	}
	s.mux.ServeHTTP(w, r)
}

// IsSubscriberPath reports whether path is one of the endpoints a
// subscriber uses, browsers on other origins included: the WebSocket and
// SSE streams, subscriptions, replies, and the health check.
func IsSubscriberPath(path string) bool {
	switch path {
	case "/aaep/v1/ws", "/aaep/v1/events", "/events", "/aaep/v1/subscriptions", "/aaep/v1/replies", "/messages", "/healthz":
		return true
	}
	return false
}

// Shutdown closes every subscription (WebSocket code 1001) and waits for
// their goroutines until ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.down = true
	subs := make([]*subscriber, 0, len(s.subs))
	for _, sub := range s.subs {
		subs = append(subs, sub)
	}
	s.mu.Unlock()
	for _, sub := range subs {
		sub.stop(CloseGoingAway, "server shutting down", CauseShutdown)
	}
	s.cancel()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	// Writes in progress get a moment to finish cleanly, then are cut short.
	t := time.NewTimer(shutdownGrace)
	defer t.Stop()
	for {
		select {
		case <-done:
			return nil
		case <-t.C:
			for _, sub := range subs {
				sub.wire.interrupt()
			}
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// Wait blocks until no subscriber is active and at least one has finished,
// or ctx ends. Tests and one-shot runs use it.
func (s *Server) Wait(ctx context.Context) error {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		s.mu.Lock()
		idle := len(s.subs) == 0 && len(s.closedS) > 0
		s.mu.Unlock()
		if idle {
			return nil
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// RecordError returns the first error from Options.Record, if any.
func (s *Server) RecordError() error {
	s.recMu.Lock()
	defer s.recMu.Unlock()
	return s.recErr
}

// newSubscriber registers a subscription. id may be empty (a fresh id is made).
func (s *Server) newSubscriber(transport, remote, id string, w wire, terms *subscriptionTerms) (*subscriber, error) {
	return s.newSubscriberResuming(transport, remote, id, w, terms, "")
}

// newSubscriberResuming is newSubscriber for an SSE subscriber that came
// back with a Last-Event-ID (recorded with its connection).
func (s *Server) newSubscriberResuming(transport, remote, id string, w wire, terms *subscriptionTerms, lastEventID string) (*subscriber, error) {
	if id == "" {
		id = newSubscriptionID()
	}
	ctx, cancel := context.WithCancelCause(s.ctx)
	sub := &subscriber{
		srv:       s,
		id:        id,
		transport: transport,
		remote:    remote,
		started:   time.Now(),
		wire:      w,
		q:         newQueue(s.opts.QueueSize, s.opts.QueueBytes),
		ctx:       ctx,
		cancel:    cancel,
		done:      make(chan struct{}),
	}
	sub.lastIndex.Store(-1)
	sub.skipThrough.Store(-1)
	if terms == nil {
		terms = &subscriptionTerms{}
	}
	sub.terms.Store(terms)
	if s.opts.Shared {
		sub.reg = s.reg
	} else {
		sub.reg = newRegistry()
		sub.pool = make(chan *event, s.opts.QueueSize+8)
	}
	s.mu.Lock()
	if s.down {
		s.mu.Unlock()
		cancel(errors.New("shutting down"))
		return nil, errors.New("server shutting down")
	}
	s.nextNum++
	sub.num = uint16(s.nextNum)
	s.subs[id] = sub
	// Counted while s.mu rules out Shutdown's Wait: the goroutines the
	// subscription starts later are added while this count holds.
	s.wg.Add(1)
	s.mu.Unlock()
	s.listOrigin(sub)
	s.total.Add(1)
	conn := map[string]any{"event": capfile.ConnConnected, "transport": transport, "remote": remote}
	if lastEventID != "" {
		conn["last_event_id"] = lastEventID
	}
	s.recordConn(sub, conn)
	s.notify(Notice{Kind: NoticeSubscribed, Subscription: id, Transport: transport, Remote: remote})
	return sub, nil
}

// closed is called by a subscriber's writer when it has finished.
// The notice goes out before the subscription leaves the active set, so
// that Wait returning means every closed notice has been given.
func (s *Server) closed(sub *subscriber, ci *CloseInfo) {
	s.recordConn(sub, map[string]any{"event": capfile.ConnClosed, "code": ci.Code, "reason": ci.Reason, "cause": ci.Cause})
	st := sub.stats()
	s.notify(Notice{Kind: NoticeClosed, Subscription: sub.id, Transport: sub.transport, Remote: sub.remote, Stats: &st})
	s.mu.Lock()
	delete(s.subs, sub.id)
	s.closedS = append(s.closedS, sub)
	if len(s.closedS) > keepClosed {
		s.closedS = s.closedS[1:]
	}
	s.closes[ci.Cause]++
	if p := s.pending[sub.id]; p != nil {
		p.active = false
		p.created = time.Now()
	}
	s.mu.Unlock()
	s.wg.Done()
}

func (s *Server) lookup(id string) *subscriber {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.subs[id]
}

// recentlyClosed returns the most recently closed subscription called id,
// or, when id is empty, the most recently closed one the token was
// written to; nil when there is none.
func (s *Server) recentlyClosed(id, token string) *subscriber {
	s.mu.Lock()
	closed := slices.Clone(s.closedS)
	s.mu.Unlock()
	for i := len(closed) - 1; i >= 0; i-- {
		sub := closed[i]
		if id != "" {
			if sub.id == id {
				return sub
			}
			continue
		}
		sub.mu.Lock()
		prompted := sub.prompted[token]
		sub.mu.Unlock()
		if prompted && token != "" {
			return sub
		}
	}
	return nil
}

// findByToken returns an active subscription for which token is outstanding.
func (s *Server) findByToken(token string) *subscriber {
	s.mu.Lock()
	subs := make([]*subscriber, 0, len(s.subs))
	for _, sub := range s.subs {
		subs = append(subs, sub)
	}
	s.mu.Unlock()
	for _, sub := range subs {
		if sub.reg.outstanding(token) {
			return sub
		}
	}
	return nil
}

// notifyComplete tells the operator that sub has received the whole replay.
func (s *Server) notifyComplete(sub *subscriber) {
	st := sub.stats()
	n := Notice{Kind: NoticeComplete, Subscription: sub.id, Transport: sub.transport, Remote: sub.remote, Stats: &st}
	if !s.opts.CloseAtEnd {
		n.Reason = "the stream stays open until the subscriber leaves"
	}
	s.notify(n)
}

// announceGap tells the operator of a damaged range of the capture that a
// replay skipped (recording.Gap's words), and whether the replay goes on.
func (s *Server) announceGap(g recording.Gap) {
	then := "the replay goes on after it"
	if g.End {
		then = "nothing readable follows: the replay ends here, as at the end of the capture"
	}
	s.notify(Notice{Kind: NoticeWarning, Reason: "damaged capture: " + g.String() + "; " + then})
}

func (s *Server) notify(n Notice) {
	if s.opts.Notify == nil && s.ctl == nil {
		return
	}
	if n.Time.IsZero() {
		n.Time = time.Now()
	}
	s.observeNotice(n)
	if s.opts.Notify != nil {
		s.opts.Notify(n)
	}
}
