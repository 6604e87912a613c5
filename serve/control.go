package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/aaep-tools/aaepkit/timing"
)

// Replay control: with Options.Control set, the shared timeline is steered
// by a timing.Controller (play, pause, step one event, seek, speed), and the
// server answers a small JSON API under /control:
//
//	GET  /control             the replay's state (ControlStatus)
//	POST /control/play        resume
//	POST /control/pause       hold every event
//	POST /control/step        send the next event (count=N for N), then hold
//	POST /control/seek        continue at index=N (a record number) or
//	                          to=POSITION (1m30s, #120, as --from takes)
//	POST /control/speed       value=F (0.01 to 1000)
//	GET  /control/log         what each subscriber received and sent:
//	                          since=SEQ, subscription=ID, limit=N (LogPage)
//
// Parameters come as query parameters or as a JSON object in the body
// ({"count": 2}, {"index": 40}, {"to": "1m30s"}, {"value": 2}). Every POST
// answers with the ControlStatus after the action, or with 400/409 and
// {"error": "..."}: a step answers once its events have been released and
// queued to the subscribers (position and released count them), a seek once
// the timeline has moved there, a pause once the event being released (if
// any) is queued. It waits at most settleWait for that, then answers the
// state as it is.
//
// When the range ends the replay holds at its end, subscribers stay
// attached, and a seek plays it again.

// Replay states in ControlStatus.State.
const (
	StateWaiting = "waiting" // no subscriber has started the timeline yet
	StatePlaying = "playing"
	StatePaused  = "paused"
	StateEnded   = "ended" // the range is over; seek to play again
)

// Log entry kinds.
const (
	LogEvent   = "event"   // an event was written to the subscriber
	LogReceive = "receive" // the subscriber sent something (reply, request, close)
	LogJoin    = "joined"
	LogLeave   = "left"
)

// logSize bounds the control log (entries kept, oldest dropped first).
const logSize = 20000

// settleWait bounds how long an action waits for the timeline to show its
// effect (see settle).
const settleWait = 5 * time.Second

// ControlPosition is the last event the shared timeline released.
type ControlPosition struct {
	// Index is its record number, -1 before the first.
	Index   int64         `json:"index"`
	Offset  time.Duration `json:"offset_ns"`
	Type    string        `json:"type,omitempty"`
	Session string        `json:"session,omitempty"`
}

// ControlStatus is the state of a controlled replay, as GET /control serves it.
type ControlStatus struct {
	State    string          `json:"state"`
	Speed    float64         `json:"speed"`
	NoDelay  bool            `json:"no_delay"`
	Position ControlPosition `json:"position"`
	// Next is the record the replay continues from after a seek, until the
	// first event from there is released (then Position names it); -1
	// when no seek is pending.
	Next int64 `json:"next"`
	// Released counts the events released since the server started (and
	// queued to the subscribers; Position is the last of them).
	Released int64 `json:"released"`
	// StepsPending counts steps asked for and not yet taken.
	StepsPending int `json:"steps_pending"`
	// LogSeq is the sequence number of the newest log entry.
	LogSeq      int64             `json:"log_seq"`
	Subscribers []SubscriberStats `json:"subscribers"`
}

// LogEntry is one thing a subscriber received or sent.
type LogEntry struct {
	Seq          int64     `json:"seq"`
	Time         time.Time `json:"time"`
	Subscription string    `json:"subscription"`
	Kind         string    `json:"kind"`
	// Index, Offset, Type and Session describe an event (LogEvent); Index
	// is -1 for the other kinds.
	Index   int64         `json:"index"`
	Offset  time.Duration `json:"offset_ns,omitempty"`
	Type    string        `json:"type,omitempty"`
	Session string        `json:"session,omitempty"`
	// Message, Verdict, Reason and Payload describe what a subscriber sent
	// (LogReceive), as the operator's notices do.
	Message string          `json:"message_type,omitempty"`
	Verdict string          `json:"verdict,omitempty"`
	Reason  string          `json:"reason,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// LogPage is what GET /control/log returns: entries after Since, oldest
// first, and the Seq to ask for next. Dropped is set when entries after
// Since were already dropped from the bounded log.
type LogPage struct {
	Entries []LogEntry `json:"entries"`
	Next    int64      `json:"next"`
	Dropped bool       `json:"dropped,omitempty"`
}

// control is the state of a controlled shared timeline.
type control struct {
	srv *Server
	c   *timing.Controller

	mu       sync.Mutex
	pos      ControlPosition
	next     int64         // seek target not yet released from (-1: none)
	released int64         // events released and queued to the subscribers
	moved    chan struct{} // closed and replaced when any of the above changes
	started  bool
	ended    bool
	log      []LogEntry // ring of logSize
	seq      int64      // newest entry's Seq
}

func newControl(s *Server) *control {
	return &control{srv: s, c: s.opts.Control, pos: ControlPosition{Index: -1}, next: -1, moved: make(chan struct{}), log: make([]LogEntry, 0, 256)}
}

// mountControl adds the control API to the server's routes.
func (s *Server) mountControl() {
	ct := newControl(s)
	s.ctl = ct
	s.mux.HandleFunc("GET /control", ct.serveStatus)
	s.mux.HandleFunc("GET /control/log", ct.serveLog)
	s.mux.HandleFunc("POST /control/{action}", ct.serveAction)
}

// ControlStatus returns the controlled replay's state; ok is false without
// Options.Control.
func (s *Server) ControlStatus() (ControlStatus, bool) {
	if s.ctl == nil {
		return ControlStatus{}, false
	}
	return s.ctl.status(), true
}

func (ct *control) status() ControlStatus {
	cs := ct.c.State()
	ct.mu.Lock()
	st := ControlStatus{Speed: cs.Speed, NoDelay: cs.NoDelay, Position: ct.pos, Next: ct.next, Released: ct.released, StepsPending: cs.StepsPending, LogSeq: ct.seq}
	switch {
	case !ct.started:
		st.State = StateWaiting
	case ct.ended:
		st.State = StateEnded
	case cs.Paused:
		st.State = StatePaused
	default:
		st.State = StatePlaying
	}
	ct.mu.Unlock()
	st.Subscribers = ct.srv.Stats().Subscribers
	return st
}

// append adds an entry to the log.
func (ct *control) append(e LogEntry) {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	ct.seq++
	e.Seq = ct.seq
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	if len(ct.log) < logSize {
		ct.log = append(ct.log, e)
		return
	}
	ct.log[int((e.Seq-1)%logSize)] = e
}

// page returns up to limit entries after since, for one subscription or all.
func (ct *control) page(since int64, sub string, limit int) LogPage {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	p := LogPage{Entries: []LogEntry{}, Next: since}
	oldest := ct.seq - int64(len(ct.log)) + 1
	if since+1 < oldest {
		p.Dropped = true
		since = oldest - 1
	}
	for q := since + 1; q <= ct.seq && len(p.Entries) < limit; q++ {
		e := ct.log[int((q-1)%logSize)]
		p.Next = q
		if sub != "" && e.Subscription != sub {
			continue
		}
		p.Entries = append(p.Entries, e)
	}
	if len(p.Entries) < limit {
		p.Next = max(p.Next, ct.seq)
	}
	return p
}

// sent is the writer's hook: ev was written to sub.
func (s *Server) observeSent(sub *subscriber, ev *event) {
	if s.ctl == nil || ev.Control {
		return
	}
	s.ctl.append(LogEntry{Subscription: sub.id, Kind: LogEvent, Index: ev.Index, Offset: ev.Offset, Type: ev.Type, Session: ev.Session})
}

// observeNotice is the notices' hook: what subscribers send and when they
// come and go.
func (s *Server) observeNotice(n Notice) {
	if s.ctl == nil {
		return
	}
	e := LogEntry{Time: n.Time, Subscription: n.Subscription, Index: -1}
	switch n.Kind {
	case NoticeSubscribed:
		e.Kind, e.Reason = LogJoin, n.Transport+" from "+n.Remote
	case NoticeClosed:
		e.Kind = LogLeave
		if n.Stats != nil && n.Stats.Close != nil {
			e.Reason = n.Stats.Close.Reason
		}
	case NoticeReply, NoticeMessage, NoticeHandshake:
		e.Kind, e.Message, e.Verdict, e.Reason, e.Payload = LogReceive, n.MessageType, n.Verdict, n.Reason, n.Payload
		if len(e.Payload) == 0 && n.Raw != "" {
			e.Payload, _ = json.Marshal(n.Raw)
		}
	default:
		return
	}
	s.ctl.append(e)
}

// queued records an event the timeline released, once it is queued to the
// subscribers: the position and the released count move together.
func (ct *control) queued(ev *event) {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	ct.pos = ControlPosition{Index: ev.Index, Offset: ev.Offset, Type: ev.Type, Session: ev.Session}
	ct.next = -1
	ct.released++
	ct.move()
}

// move wakes the actions waiting for the timeline (settle); ct.mu must be
// held.
func (ct *control) move() {
	close(ct.moved)
	ct.moved = make(chan struct{})
}

func (ct *control) setPhase(started, ended bool) {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	ct.started, ct.ended = started, ended
	ct.move()
}

// settle waits until the timeline shows the effect of an action: target
// events released and queued (a step's, or those the controller had
// released when the action was taken), and no seek waiting to be taken. It
// returns at once when no timeline runs, when the range has ended (fewer
// events than asked are left), when the server shuts down, or after
// settleWait.
func (ct *control) settle(target int64) {
	timer := time.NewTimer(settleWait)
	defer timer.Stop()
	for {
		ct.mu.Lock()
		done := !ct.started || ct.ended || ct.released >= target && !ct.c.SeekPending()
		moved := ct.moved
		ct.mu.Unlock()
		if done {
			return
		}
		select {
		case <-moved:
		case <-ct.c.Changed(): // a seek or step asked meanwhile
		case <-ct.srv.ctx.Done():
			return
		case <-timer.C:
			return
		}
	}
}

// runControlled plays the shared timeline under the controller. It differs
// from run in three ways: each event waits for the controller (pause, step,
// speed), a seek repositions the stream, and the end of the range holds the
// timeline (subscribers stay attached) until a seek.
func (t *timeline) runControlled() {
	s := t.srv
	ct := s.ctl
	defer s.wg.Done()
	var failure error
	defer func() { t.end(failure) }()
	ct.setPhase(true, false)
	defer ct.setPhase(false, false)
	st, err := openStream(s.opts.Open, s.opts.Range, s.opts.Filter)
	if err != nil {
		failure = err
		s.notify(Notice{Kind: NoticeMessage, Reason: err.Error()})
		return
	}
	st.gap = s.announceGap
	defer st.close()
	// Events need their routing fields: the log and the position name them.
	st.lazy = false
	for pass := 1; ; {
		ev, err := st.next()
		if errors.Is(err, io.EOF) {
			if s.opts.Passes < 0 || pass < s.opts.Passes {
				if err := st.restart(); err != nil {
					failure = err
					return
				}
				pass++
				ct.c.Restart()
				t.newPass()
				continue
			}
			ct.setPhase(true, true)
			if !ct.holdAtEnd(s) {
				return
			}
			if err := ct.seek(st); err != nil {
				failure = err
				return
			}
			t.newPass() // resume positions refer to the order before the seek
			ct.setPhase(true, false)
			continue
		}
		if err != nil {
			failure = err
			s.notify(Notice{Kind: NoticeMessage, Reason: err.Error()})
			return
		}
		deadline, err := ct.c.Wait(s.ctx, ev.Offset)
		if errors.Is(err, timing.ErrSeek) {
			if err := ct.seek(st); err != nil {
				failure = err
				return
			}
			t.newPass() // resume positions refer to the order before the seek
			continue
		}
		if err != nil {
			return
		}
		ev.Deadline = deadline
		t.broadcast(ev)
		ct.queued(ev)
	}
}

// holdAtEnd waits at the end of the range until a seek is asked for; it
// reports false when the server shuts down first.
func (ct *control) holdAtEnd(s *Server) bool {
	for {
		changed := ct.c.Changed()
		if ct.c.SeekPending() {
			return true
		}
		select {
		case <-changed:
		case <-s.ctx.Done():
			return false
		}
	}
}

// seek repositions st at the pending seek target.
func (ct *control) seek(st *stream) error {
	target, ok := ct.c.TakeSeek()
	if !ok {
		return nil
	}
	defer func() {
		ct.mu.Lock()
		ct.move()
		ct.mu.Unlock()
	}()
	st.err = nil
	if err := st.cur.SeekRecord(target); err != nil {
		return fmt.Errorf("seek to record %d: %w", target, err)
	}
	return nil
}

func (ct *control) serveStatus(w http.ResponseWriter, r *http.Request) {
	writeControlJSON(w, http.StatusOK, ct.status())
}

func (ct *control) serveLog(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	since, err := intParam(q.Get("since"), 0)
	if err != nil || since < 0 {
		controlError(w, http.StatusBadRequest, "since: want a log sequence number (0 or more)")
		return
	}
	limit, err := intParam(q.Get("limit"), 1000)
	if err != nil || limit < 1 || limit > 10000 {
		controlError(w, http.StatusBadRequest, "limit: want 1 to 10000")
		return
	}
	writeControlJSON(w, http.StatusOK, ct.page(since, q.Get("subscription"), int(limit)))
}

func intParam(s string, def int64) (int64, error) {
	if s == "" {
		return def, nil
	}
	return strconv.ParseInt(s, 10, 64)
}

// controlArgs are an action's parameters, from the query or a JSON body.
type controlArgs struct {
	Count *int64   `json:"count"`
	Index *int64   `json:"index"`
	To    string   `json:"to"`
	Value *float64 `json:"value"`
}

func (ct *control) serveAction(w http.ResponseWriter, r *http.Request) {
	var a controlArgs
	if r.Body != nil {
		body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
		if err != nil {
			controlError(w, http.StatusBadRequest, "reading the request: "+err.Error())
			return
		}
		if len(body) > 0 {
			if err := json.Unmarshal(body, &a); err != nil {
				controlError(w, http.StatusBadRequest, "the body is not a JSON object of count, index, to, value: "+err.Error())
				return
			}
		}
	}
	q := r.URL.Query()
	for _, p := range []struct {
		name string
		dst  **int64
	}{{"count", &a.Count}, {"index", &a.Index}} {
		if v := q.Get(p.name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				controlError(w, http.StatusBadRequest, p.name+": not an integer: "+v)
				return
			}
			*p.dst = &n
		}
	}
	if v := q.Get("to"); v != "" {
		a.To = v
	}
	if v := q.Get("value"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			controlError(w, http.StatusBadRequest, "value: not a number: "+v)
			return
		}
		a.Value = &f
	}
	if code, msg := ct.apply(r.PathValue("action"), &a); code != 0 {
		controlError(w, code, msg)
		return
	}
	writeControlJSON(w, http.StatusOK, ct.status())
}

// apply performs one action and waits for the timeline to show it
// (settle); it returns an HTTP status and message on error.
func (ct *control) apply(action string, a *controlArgs) (int, string) {
	target := int64(-1) // the released count to wait for (-1: the controller's now)
	switch action {
	case "play":
		ct.c.Play()
	case "pause":
		ct.c.Pause()
	case "step":
		n := int64(1)
		if a.Count != nil {
			n = *a.Count
		}
		if n < 1 || n > 1_000_000 {
			return http.StatusBadRequest, "count: want 1 to 1000000"
		}
		if st := ct.status(); st.State == StateWaiting || st.State == StateEnded {
			return http.StatusConflict, "nothing to step: the replay is " + st.State + " (attach a subscriber, or seek)"
		}
		target = ct.c.Step(int(n))
	case "seek":
		idx, code, msg := ct.target(a)
		if code != 0 {
			return code, msg
		}
		ct.mu.Lock()
		ct.next = idx
		ct.mu.Unlock()
		ct.c.SeekTo(idx)
	case "speed":
		if a.Value == nil {
			return http.StatusBadRequest, "speed needs value=F"
		}
		if *a.Value <= 0 {
			return http.StatusBadRequest, fmt.Sprintf("value %g: want %g to %g", *a.Value, timing.MinSpeed, float64(timing.MaxSpeed))
		}
		if err := ct.c.SetSpeed(*a.Value); err != nil {
			return http.StatusBadRequest, err.Error()
		}
	default:
		return http.StatusNotFound, "unknown action " + strconv.Quote(action) + " (want play, pause, step, seek or speed)"
	}
	if target < 0 {
		target = ct.c.State().Released
	}
	ct.settle(target)
	return 0, ""
}

// target resolves a seek's index or position to a record index.
func (ct *control) target(a *controlArgs) (int64, int, string) {
	if (a.Index == nil) == (a.To == "") {
		return 0, http.StatusBadRequest, "seek needs one of index=N or to=POSITION"
	}
	pos := timing.Position{Set: true, ByIndex: true}
	if a.Index != nil {
		pos.Index = *a.Index
	} else {
		p, err := timing.ParsePosition(a.To)
		if err != nil {
			return 0, http.StatusBadRequest, "to: " + err.Error()
		}
		pos = p
	}
	cur, err := ct.srv.opts.Open()
	if err != nil {
		return 0, http.StatusInternalServerError, err.Error()
	}
	defer cur.Close()
	if pos.ByIndex {
		if pos.Index < 0 {
			return 0, http.StatusBadRequest, "index: want 0 or more"
		}
		if err := cur.SeekRecord(pos.Index); err != nil {
			return 0, http.StatusBadRequest, err.Error()
		}
		return pos.Index, 0, ""
	}
	if err := cur.SeekTime(int64(pos.Time)); err != nil {
		return 0, http.StatusBadRequest, err.Error()
	}
	if _, err := cur.Next(); err != nil {
		return 0, http.StatusBadRequest, fmt.Sprintf("no record at or after %v", pos.Time)
	}
	return cur.Index(), 0, ""
}

func writeControlJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func controlError(w http.ResponseWriter, code int, msg string) {
	writeControlJSON(w, code, map[string]string{"error": msg})
}
