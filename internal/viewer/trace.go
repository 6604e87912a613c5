package viewer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/check"
	"github.com/aaep-tools/aaepkit/protocol/models"
	"github.com/aaep-tools/aaepkit/recording"
	"github.com/aaep-tools/aaepkit/visualize"
)

// Trace bounds: steps listed per session, sessions kept drawn, steps in
// one answer.
const (
	defaultStepLimit = 200
	maxStepLimit     = 1000
	maxSteps         = 100000
	traceCached      = 16
	renderLimit      = 60 * time.Second
)

// stepRow is one step of a session as the page lists it.
type stepRow struct {
	N         int64         `json:"n"`
	Index     int64         `json:"index"`
	Offset    time.Duration `json:"offset_ns"`
	From      string        `json:"from"`
	To        string        `json:"to"`
	Label     string        `json:"label"`
	Detail    string        `json:"detail,omitempty"`
	Kind      string        `json:"kind"`
	Synthetic bool          `json:"synthetic,omitempty"`
	// Edge is the id of the drawn edge the step belongs to.
	Edge  string `json:"edge"`
	Worst string `json:"worst,omitempty"`
}

// step is one step of a session as the trace keeps it; its stepRow is
// made when a page of steps is asked for.
type step struct {
	index     int64
	offset    time.Duration
	from, to  string
	label     string
	detail    string
	kind      protocol.StepKind
	synthetic bool
	worst     protocol.Level
}

// row is the step as the page lists it, step number n (from 1).
func (st *step) row(n int64) stepRow {
	r := stepRow{
		N: n, Index: st.index, Offset: st.offset, From: st.from, To: st.to,
		Label: st.label, Detail: st.detail, Kind: st.kind.String(), Synthetic: st.synthetic,
		Edge: visualize.EdgeID(0, st.from, st.to, st.kind, st.synthetic),
	}
	if st.worst != 0 {
		r.Worst = st.worst.String()
	}
	return r
}

// sessionTrace is one session checked on its own for the trace view.
type sessionTrace struct {
	once    sync.Once
	steps   []step
	more    int64 // steps not listed
	dot     []byte
	err     error
	svgOnce sync.Once
	svg     []byte
	svgErr  error
	// legend is the drawing with its legend, for a tab of its own or a
	// download (the page draws the legend itself beside dot's drawing).
	legendDOT  []byte
	legendOnce sync.Once
	legendSVG  []byte
	legendErr  error
	protocol   string
}

type traceCache struct {
	s     *Server
	mu    sync.Mutex
	m     map[string]*sessionTrace
	order []string
}

func newTraceCache(s *Server) *traceCache { return &traceCache{s: s, m: map[string]*sessionTrace{}} }

// clear forgets the traces (a followed capture has grown).
func (c *traceCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.m)
	c.order = nil
}

// get returns the trace of session id of stream (known: the stream is
// known; else, a session the check has not reached yet, the first stream
// that holds it), by the session's key.
func (c *traceCache) get(key, id, stream string, known bool) *sessionTrace {
	c.mu.Lock()
	t := c.m[key]
	if t == nil {
		t = &sessionTrace{}
		c.m[key] = t
		c.order = append(c.order, key)
		if len(c.order) > traceCached {
			delete(c.m, c.order[0])
			c.order = c.order[1:]
		}
	}
	c.mu.Unlock()
	t.once.Do(func() {
		c.s.pause.hold()
		defer c.s.pause.release()
		t.build(c.s, id, stream, known)
	})
	return t
}

// recordingIndex is the position among the joined recordings of stream's
// (-1: one recording viewed).
func (s *Server) recordingIndex(stream string) int {
	j := s.rec.RecordingOfStream(stream)
	for i, r := range s.rec.Joined() {
		if r == j {
			return i
		}
	}
	return -1
}

// sessionRecords passes each message of session id, each message that
// names no session (replies, handshake) and each connection record of
// recording ri (-1: of any) to the pass, reading only the frames that hold
// the session when the index knows it. The records are read, decoded and
// prepared for the pass's engine on a goroutine of their own, ahead of the
// pass (recording.ReadAhead).
func (s *Server) sessionRecords(ctx context.Context, id string, ri int, pass *check.Pass) error {
	h := recording.Handler{
		Message: func(m *protocol.Message) error { pass.Message(m); return nil },
		Conn: func(c *protocol.Conn) {
			if ri < 0 || c.Recording == ri {
				pass.Conn(c)
			}
		},
	}
	info, ok := s.sessionIndex()[id]
	if !ok {
		// Not keyed in the index: read everything and keep the session's
		// messages (decoded by the read-ahead).
		_, err := s.rec.Read(ctx, recording.ReadOptions{Prepare: pass.Preparation()}, recording.Handler{
			Message: func(m *protocol.Message) error {
				if ri >= 0 && m.Recording != ri {
					return nil
				}
				if k := m.Doc.Routing.SessionKey(); k == id || k == "" {
					pass.Message(m)
				}
				return nil
			},
			Conn: h.Conn,
		})
		return err
	}
	return recording.ReadAhead(ctx, pass.Preparation(), h, func(ctx context.Context, h recording.Handler) error {
		return s.readSessionFrames(ctx, id, ri, info, h)
	})
}

// readSessionFrames passes to h the records of the frames that hold
// session id that sessionRecords keeps (of recording ri, -1: of any).
func (s *Server) readSessionFrames(ctx context.Context, id string, ri int, info *capfile.SessionInfo, h recording.Handler) error {
	rd, err := s.rec.Records(ctx)
	if err != nil {
		return err
	}
	defer rd.Close()
	attrs := map[string]string{}
	var (
		m protocol.Message
		c protocol.Conn
	)
	for _, k := range info.Frames {
		fr := s.index().Frames[k]
		if err := rd.SeekRecord(fr.FirstRecord); err != nil {
			return err
		}
		for n := int64(0); n < fr.Records; n++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			rec, err := rd.Next()
			if err != nil {
				if errors.Is(err, io.EOF) || capfile.IsTorn(err) {
					return nil
				}
				return err
			}
			if ri >= 0 && rd.Recording() != ri {
				continue
			}
			if rec.Kind == capfile.KindConn {
				recording.ConnFromRecord(&c, rec, rd.Index(), attrs)
				c.Recording = rd.Recording()
				h.Conn(&c)
				continue
			}
			if rec.Kind != capfile.KindReceived && rec.Kind != capfile.KindSent {
				continue
			}
			if rec.Session != "" && rec.Session != id {
				continue
			}
			if rec.Session == "" {
				if k := payload.Decode(rec.Payload).Routing.SessionKey(); k != "" && k != id {
					continue
				}
			}
			recording.FromRecord(&m, rec, rd.Index(), s.hdr.Start, attrs)
			m.Recording = rd.Recording()
			if err := h.Message(&m); err != nil {
				return err
			}
		}
	}
	return nil
}

// build checks session id of stream alone (with known unset, the first
// stream that holds it) and keeps its steps and DOT drawing.
func (t *sessionTrace) build(s *Server, id, stream string, known bool) {
	col := visualize.NewCollector(visualize.CollectorOptions{Session: id, MaxSessions: 1})
	sink := col.Sink()
	collect := sink.Step
	worst := map[int64]protocol.Level{}
	found := sink.Finding
	sink.Finding = func(f protocol.Finding) {
		if f.Session == id {
			worst[f.Index] = max(worst[f.Index], f.Level)
		}
		found(f)
	}
	haveStream := known
	ri := -1
	if known {
		ri = s.recordingIndex(stream)
	}
	sink.Step = func(st protocol.Step) {
		collect(st)
		if st.Session != id {
			return
		}
		// Recordings and the subscriptions of a recording of a replay
		// share session ids: the steps listed are those of the session's
		// stream (of the first stream, for a session not checked yet).
		if !haveStream {
			stream, haveStream = st.Stream, true
		}
		if st.Stream != stream {
			return
		}
		t.protocol = st.Protocol
		if len(t.steps) >= maxSteps {
			t.more++
			return
		}
		t.steps = append(t.steps, step{
			index: st.Index, offset: st.Offset, from: st.From, to: st.To,
			label: st.Label, detail: st.Detail, kind: st.Kind, synthetic: st.Synthetic,
		})
	}
	if info, ok := s.sessionIndex()[id]; ok {
		// About one step per message: the list grows once instead of
		// being copied a dozen times on its way to 100,000 steps.
		t.steps = make([]step, 0, min(info.Records, maxSteps))
	}
	pass, err := check.NewPass(s.config(), s.rec, sink)
	if err != nil {
		t.err = err
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, renderLimit)
	defer cancel()
	if err := s.sessionRecords(ctx, id, ri, pass); err != nil {
		t.err = err
		return
	}
	pass.Finish()
	if len(t.steps) < cap(t.steps)/2 {
		// Far fewer steps than messages: keep no more than they need.
		t.steps = slices.Clone(t.steps)
	}
	for i := range t.steps {
		t.steps[i].worst = worst[t.steps[i].index]
	}
	var traces []*visualize.Trace
	for _, tr := range col.Traces() {
		if tr.Stream == stream || !haveStream {
			traces = append(traces, tr)
		}
	}
	if len(traces) == 0 {
		return
	}
	machines := map[string]protocol.Machine{}
	for _, m := range models.All() {
		machines[m.Name()] = m.Machine()
	}
	t.dot = visualize.DOT(traces, visualize.DOTOptions{Title: id, Machines: machines, EdgeIDs: true, NoLegend: true})
	t.legendDOT = visualize.DOT(traces, visualize.DOTOptions{Title: id, Machines: machines, EdgeIDs: true})
}

// trace returns the trace of the request's session (its key, or an id
// that names one session) and the session's id and key, or answers with
// the error and returns nil.
func (s *Server) trace(w http.ResponseWriter, r *http.Request) (*sessionTrace, string, string) {
	name := r.PathValue("session")
	v, err := s.analysis().snap.Load().lookup(name)
	if err != nil {
		apiError(w, http.StatusBadRequest, "%v", err)
		return nil, name, name
	}
	var t *sessionTrace
	switch _, indexed := s.sessionIndex()[name]; {
	case v != nil:
		name = v.ID
		t = s.traces.get(v.Key, v.ID, v.Stream, true)
	case indexed:
		// Not checked yet: its first stream's.
		t = s.traces.get(name, name, "", false)
	default:
		apiError(w, http.StatusNotFound, "no session %q in %s", name, s.title())
		return nil, name, name
	}
	key := name
	if v != nil {
		key = v.Key
	}
	if t.err != nil {
		apiError(w, http.StatusInternalServerError, "%v", t.err)
		return nil, name, key
	}
	return t, name, key
}

func (s *Server) serveSteps(w http.ResponseWriter, r *http.Request) {
	t, id, key := s.trace(w, r)
	if t == nil {
		return
	}
	from, err := intQuery(r, "from", 0)
	limit, err2 := intQuery(r, "limit", defaultStepLimit)
	if err = errors.Join(err, err2); err == nil && (from < 0 || limit < 1 || limit > maxStepLimit) {
		err = fmt.Errorf("from: want 0 or more; limit: want 1 to %d", maxStepLimit)
	}
	if err != nil {
		apiError(w, http.StatusBadRequest, "%v", err)
		return
	}
	total := int64(len(t.steps))
	if v := r.URL.Query().Get("index"); v != "" {
		// The page of the first step of message index.
		idx, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			apiError(w, http.StatusBadRequest, "index: not an integer: %q", v)
			return
		}
		at := sort.Search(len(t.steps), func(i int) bool { return t.steps[i].index >= idx })
		if at < len(t.steps) && t.steps[at].index == idx {
			from = max(int64(at)-limit/2, 0)
		}
	}
	steps := []stepRow{}
	for i := from; i < min(from+limit, total); i++ {
		steps = append(steps, t.steps[i].row(i+1))
	}
	writeJSON(w, http.StatusOK, map[string]any{"session": id, "key": key, "protocol": t.protocol, "steps": steps, "from": from, "total": total, "more": t.more, "drawn": t.dot != nil})
}

func (s *Server) serveSVG(w http.ResponseWriter, r *http.Request) {
	t, id, _ := s.trace(w, r)
	if t == nil {
		return
	}
	if t.dot == nil {
		apiError(w, http.StatusNotFound, "session %q has no steps to draw", id)
		return
	}
	render := func(dot []byte, out *[]byte, err *error) {
		rend := s.opts.Renderer
		if rend == nil {
			rend = &visualize.Renderer{}
		}
		ctx, cancel := context.WithTimeout(s.ctx, renderLimit)
		defer cancel()
		*out, *err = rend.SVG(ctx, dot)
	}
	svg, err := &t.svg, &t.svgErr
	q := r.URL.Query()
	if q.Get("legend") == "1" {
		svg, err = &t.legendSVG, &t.legendErr
		t.legendOnce.Do(func() { render(t.legendDOT, svg, err) })
	} else {
		t.svgOnce.Do(func() { render(t.dot, svg, err) })
	}
	if *err != nil {
		apiError(w, http.StatusServiceUnavailable, "drawing needs the aaep-render helper: %v", *err)
		return
	}
	if q.Get("download") == "1" {
		w.Header().Set("Content-Disposition", `attachment; filename="`+downloadName("trace-"+id)+`.svg"`)
	}
	// Opened in a tab of its own, the drawing is a document: nothing in it runs.
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(*svg)
}

// downloadName is name with only letters, digits, '.', '-' and '_' kept
// (others become '_'), for a Content-Disposition file name.
func downloadName(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}
