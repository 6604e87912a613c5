package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/peek"
	"github.com/aaep-tools/aaepkit/timing"
)

// Defaults for Options.
const (
	DefaultGrace        = 500 * time.Millisecond
	DefaultQueueSize    = 1024
	DefaultQueueBytes   = 8 << 20
	DefaultWriteTimeout = 10 * time.Second
	DefaultMaxLag       = 30 * time.Second
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

// Options configure a Server or a Push.
type Options struct {
	// Open opens the capture (required).
	Open Opener
	// Range selects the part of the capture to replay.
	Range Range
	// Filter selects events by type and session (--filter-type, --session).
	Filter peek.Filter
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
	// subscription.request before the stream starts without one.
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
}

func (o *Options) withDefaults() error {
	if o.Open == nil {
		return errors.New("serve: no capture to open")
	}
	if err := o.Timing.Validate(); err != nil {
		return err
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
	return nil
}

// Server serves a capture to subscribers. It is an http.Handler.
type Server struct {
	opts     Options
	clock    timing.Clock
	producer json.RawMessage
	mux      *http.ServeMux
	started  time.Time

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

	shared *timeline
	reg    *registry // shared timeline's tokens
}

// pendingSub is a subscription negotiated by POST, waiting for its stream.
type pendingSub struct {
	id         string
	terms      *Terms
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
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
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
	if opts.Shared {
		s.reg = newRegistry()
		s.shared = &timeline{srv: s}
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

// ServeHTTP routes a request to the replay's endpoints.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

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
func (s *Server) newSubscriber(transport, remote, id string, w wire, terms *Terms) (*subscriber, error) {
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
	if terms == nil {
		terms = &Terms{}
	}
	sub.terms.Store(terms)
	if s.opts.Shared {
		sub.reg = s.reg
	} else {
		sub.reg = newRegistry()
		sub.pool = make(chan *Event, s.opts.QueueSize+8)
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
	s.mu.Unlock()
	s.total.Add(1)
	s.wg.Add(1)
	s.recordConn(sub, map[string]any{"event": "connected", "transport": transport, "remote": remote})
	s.notify(Notice{Kind: NoticeSubscribed, Subscription: id, Transport: transport, Remote: remote})
	return sub, nil
}

// closed is called by a subscriber's writer when it has finished.
func (s *Server) closed(sub *subscriber, ci *CloseInfo) {
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
	s.recordConn(sub, map[string]any{"event": "closed", "code": ci.Code, "reason": ci.Reason, "cause": ci.Cause})
	st := sub.stats()
	s.notify(Notice{Kind: NoticeClosed, Subscription: sub.id, Transport: sub.transport, Remote: sub.remote, Stats: &st})
	s.wg.Done()
}

func (s *Server) lookup(id string) *subscriber {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.subs[id]
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

func (s *Server) notify(n Notice) {
	if s.opts.Notify == nil {
		return
	}
	if n.Time.IsZero() {
		n.Time = time.Now()
	}
	s.opts.Notify(n)
}

// record appends one message to the recording (no-op without one).
func (s *Server) record(sub *subscriber, kind capfile.Kind, ev *Event) {
	if s.opts.Record == nil {
		return
	}
	attrs := []capfile.Attr{{Key: "subscription", Value: sub.id}}
	if sub.transport == TransportSSE && !ev.Control {
		attrs = append(attrs, capfile.Attr{Key: "event", Value: sseEventName})
		if validSSEID(ev.ID) {
			attrs = append(attrs, capfile.Attr{Key: "id", Value: ev.ID})
		}
	}
	var flags capfile.Flags
	if ev.Binary {
		flags |= capfile.FlagInvalidUTF8
	}
	s.appendRecord(&capfile.Record{Kind: kind, Flags: flags, Source: sub.num, Session: ev.Session, Attrs: attrs, Payload: ev.Payload})
}

// recordMessage records a message a subscriber sent (sub may be nil for a
// POST that names no active subscription).
func (s *Server) recordMessage(sub *subscriber, raw []byte, session string, extra ...capfile.Attr) {
	if s.opts.Record == nil {
		return
	}
	var src uint16
	id := ""
	if sub != nil {
		src, id = sub.num, sub.id
	}
	attrs := append([]capfile.Attr{{Key: "subscription", Value: id}}, extra...)
	s.appendRecord(&capfile.Record{Kind: capfile.KindSent, Source: src, Session: session, Attrs: attrs, Payload: raw})
}

// recordHandshake records a handshake made by POST, before its stream
// exists (source 0, attribute subscription set).
func (s *Server) recordHandshake(id string, req, resp []byte) {
	if s.opts.Record == nil {
		return
	}
	attrs := []capfile.Attr{{Key: "subscription", Value: id}}
	s.appendRecord(&capfile.Record{Kind: capfile.KindSent, Attrs: attrs, Payload: req})
	s.appendRecord(&capfile.Record{Kind: capfile.KindReceived, Attrs: attrs, Payload: resp})
}

func (s *Server) recordConn(sub *subscriber, fields map[string]any) {
	if s.opts.Record == nil {
		return
	}
	fields["subscription"] = sub.id
	b, _ := json.Marshal(fields)
	s.appendRecord(&capfile.Record{Kind: capfile.KindConn, Source: sub.num, Attrs: []capfile.Attr{{Key: "subscription", Value: sub.id}}, Payload: b})
}

func (s *Server) appendRecord(rec *capfile.Record) {
	s.recMu.Lock()
	defer s.recMu.Unlock()
	if s.recErr != nil {
		return
	}
	rec.Time = int64(time.Since(s.recStart))
	if err := s.opts.Record.Append(rec); err != nil {
		s.recErr = fmt.Errorf("record: %w", err)
	}
}

// handleInbound handles one message a subscriber sent over its connection
// (sub set) or by POST (sub nil). It returns the HTTP status and body for a
// POST.
func (s *Server) handleInbound(sub *subscriber, raw []byte, via string) (int, []byte) {
	f := peek.Peek(raw)
	if !f.Object {
		s.recordMessage(sub, raw, "")
		s.notifyMessage(sub, via, raw, "", "not a JSON object")
		return http.StatusBadRequest, errorBody("malformed", "the message is not a JSON object")
	}
	switch f.Type {
	case "confirmation.reply", "clarification.reply":
		return s.handleReply(sub, raw, via)
	case "subscription.renegotiate", "subscription.request":
		target := sub
		if target == nil {
			var rq request
			_ = json.Unmarshal(raw, &rq)
			target = s.lookup(rq.SubscriptionID)
			if target == nil {
				s.recordMessage(nil, raw, "")
				s.notifyMessage(nil, via, raw, f.Type, "unknown subscription_id")
				return http.StatusNotFound, errorBody("unknown_subscription", "no active subscription with that subscription_id")
			}
		}
		s.recordMessage(target, raw, "")
		n := target.renegotiate(raw, f.Type == "subscription.request")
		s.notifyMessage(target, via, raw, f.Type, "")
		return http.StatusOK, n.Response
	case "subscription.close":
		target := sub
		if target == nil {
			var rq request
			_ = json.Unmarshal(raw, &rq)
			target = s.lookup(rq.SubscriptionID)
		}
		s.recordMessage(target, raw, "")
		s.notifyMessage(target, via, raw, f.Type, "")
		if target == nil {
			return http.StatusNotFound, errorBody("unknown_subscription", "no active subscription with that subscription_id")
		}
		target.stop(CloseSubscriber, "closed by subscriber", CauseSubscriber)
		return http.StatusNoContent, nil
	default:
		s.recordMessage(sub, raw, f.SessionKey())
		s.notifyMessage(sub, via, raw, f.Type, "unexpected message type")
		return http.StatusBadRequest, errorBody("unsupported_message", "expected confirmation.reply, clarification.reply, subscription.renegotiate or subscription.close")
	}
}

// handleReply validates and records a reply.
func (s *Server) handleReply(sub *subscriber, raw []byte, via string) (int, []byte) {
	var rp reply
	_ = json.Unmarshal(raw, &rp)
	target := sub
	if target == nil && rp.SubscriptionID != "" {
		target = s.lookup(rp.SubscriptionID)
	}
	if target == nil {
		target = s.findByToken(rp.ReplyToken)
	}
	verdict, reason, session := VerdictIgnored, "no active subscription sent that reply_token", ""
	if target != nil {
		verdict, reason, session = target.reg.settle(&rp)
		target.replies.Add(1)
	} else if s.opts.Shared {
		verdict, reason, session = s.reg.settle(&rp)
	}
	s.recordMessage(target, raw, session, capfile.Attr{Key: "verdict", Value: verdict})
	n := Notice{Kind: NoticeReply, Transport: via, MessageType: rp.Type, Token: rp.ReplyToken, Decision: rp.Decision,
		Response: rp.Response, Verdict: verdict, Reason: reason, Payload: json.RawMessage(raw)}
	if target != nil {
		n.Subscription, n.Remote = target.id, target.remote
	}
	s.notify(n)
	if verdict == VerdictAccepted {
		s.accepted.Add(1)
		return http.StatusNoContent, nil
	}
	s.ignored.Add(1)
	// §6.3.4: never tell the sender why.
	return http.StatusBadRequest, errorBody("invalid_reply", "the reply does not match an outstanding request")
}

func (s *Server) notifyMessage(sub *subscriber, via string, raw []byte, typ, problem string) {
	n := Notice{Kind: NoticeMessage, Transport: via, MessageType: typ, Reason: problem}
	if json.Valid(raw) {
		n.Payload = json.RawMessage(raw)
	} else {
		n.Raw = string(raw)
	}
	if sub != nil {
		n.Subscription, n.Remote = sub.id, sub.remote
	}
	s.notify(n)
}

// renegotiate answers a renegotiation (or a repeated request, fresh=true) on
// an active subscription: the answer is queued ahead of later events, and
// the new terms apply to events queued after it.
func (sub *subscriber) renegotiate(raw []byte, fresh bool) *negotiation {
	sub.mu.Lock()
	var prev map[string]json.RawMessage
	if !fresh {
		prev = sub.caps
	}
	n := negotiate(raw, sub.id, sub.srv.producer, prev)
	if n.Rejected == nil {
		sub.caps = n.Caps
	}
	sub.mu.Unlock()
	if sub.transport != TransportSSE {
		sub.q.tryPush(&Event{Index: -1, Control: true, Payload: n.Response})
	}
	if n.Rejected != nil {
		// §5.7: a rejected renegotiation terminates the subscription.
		sub.stopAfterQueued(CloseRejected, "renegotiation rejected: "+n.Rejected.Code, CauseRejected)
		return n
	}
	sub.terms.Store(n.Terms)
	return n
}

// stopAfterQueued ends the subscription once what is queued has been written.
func (sub *subscriber) stopAfterQueued(code int, reason, cause string) {
	sub.setClose(code, reason, cause)
	sub.q.end()
}

func errorBody(code, msg string) []byte {
	b, _ := json.Marshal(map[string]string{"error": code, "message": msg})
	return b
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	if body == nil {
		w.WriteHeader(status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
	if len(body) > 0 && body[len(body)-1] != '\n' {
		_, _ = io.WriteString(w, "\n")
	}
}

// readBody reads a POST body of at most MaxMessage bytes.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxMessage))
	if err != nil {
		writeJSON(w, http.StatusRequestEntityTooLarge, errorBody("too_large", fmt.Sprintf("the body exceeds %d bytes or could not be read", MaxMessage)))
		return nil, false
	}
	return body, true
}

// serveMessage handles POST /aaep/v1/replies and POST /messages.
func (s *Server) serveMessage(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	status, resp := s.handleInbound(nil, body, TransportHTTP)
	allowCORS(w)
	writeJSON(w, status, resp)
}

// serveSubscribe handles POST /aaep/v1/subscriptions: the handshake for an
// SSE stream.
func (s *Server) serveSubscribe(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	allowCORS(w)
	f := peek.Peek(body)
	if !f.Object || f.Type != "subscription.request" {
		writeJSON(w, http.StatusBadRequest, errorBody("malformed", "expected a subscription.request JSON object"))
		return
	}
	id := newSubscriptionID()
	n := negotiate(body, id, s.producer, nil)
	s.recordHandshake(id, body, n.Response)
	notice := Notice{Kind: NoticeHandshake, Subscription: id, Transport: TransportHTTP, Remote: r.RemoteAddr,
		MessageType: "subscription.request", Verdict: VerdictAccepted, Payload: body}
	if n.Rejected != nil {
		notice.Verdict, notice.Reason = "rejected", n.Rejected.Error()
		s.notify(notice)
		writeJSON(w, http.StatusForbidden, n.Response)
		return
	}
	s.notify(notice)
	s.mu.Lock()
	now := time.Now()
	for k, p := range s.pending {
		if !p.active && now.Sub(p.created) > pendingTTL {
			delete(s.pending, k)
		}
	}
	if len(s.pending) >= maxPending {
		s.mu.Unlock()
		rej := reject(id, &rejection{"rate_limit", "too many subscriptions waiting for their stream"}, nil)
		writeJSON(w, http.StatusServiceUnavailable, rej.Response)
		return
	}
	s.pending[id] = &pendingSub{id: id, terms: n.Terms, caps: n.Caps, subscriber: n.SubscriberID, created: now}
	s.mu.Unlock()
	w.Header().Set("Location", "/aaep/v1/events?subscription_id="+id)
	writeJSON(w, http.StatusCreated, n.Response)
}

func allowCORS(w http.ResponseWriter) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
}

func (s *Server) serveHealth(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, []byte(`{"status":"ok"}`))
}

func (s *Server) serveStats(w http.ResponseWriter, _ *http.Request) {
	b, err := json.MarshalIndent(s.Stats(), "", "  ")
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, errorBody("internal", err.Error()))
		return
	}
	writeJSON(w, http.StatusOK, b)
}
