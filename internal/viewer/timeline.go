package viewer

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/recording"
)

// Event kinds on the timeline (the page's legend names them).
const (
	kindOther = iota
	kindLifecycle
	kindState
	kindTool
	kindAwaiting
	kindReply
	kindOutput
	kindProgress
	kindConn
)

// typeKinds classify a message by a part of its type: the first that the
// type contains.
var typeKinds = []struct {
	part string
	kind int
}{
	{"session.", kindLifecycle}, {"state.changed", kindState}, {"tool.", kindTool},
	{"awaiting.", kindAwaiting}, {"output.", kindOutput}, {"progress.", kindProgress},
}

// kindOf classifies a record for the timeline.
func kindOf(rec *capfile.Record, f *payload.Routing) int {
	switch rec.Kind {
	case capfile.KindReceived:
	case capfile.KindSent:
		return kindReply
	default:
		return kindConn
	}
	t := f.TypeName()
	for _, k := range typeKinds {
		if strings.Contains(t, k.part) {
			return k.kind
		}
	}
	return kindOther
}

// Timeline bounds: the lanes one answer draws, the pixels it is
// aggregated to, the messages a window may hold to be read rather than
// taken from the check's buckets, and the events and spans listed one by one.
const (
	defaultLanes      = 24
	maxLanes          = 64
	defaultPx         = 1000
	maxPx             = 4000
	maxTimelineScan   = 20_000
	maxTimelineEvents = 5000
	maxTimelineSpans  = 5000
)

// timelineAnswer is the timeline of a window, for the lanes asked: cells
// (count and worst level per pixel column) always; the events one by one
// when there are few enough; the spans of tool calls and waits for replies.
type timelineAnswer struct {
	From     time.Duration `json:"from_ns"`
	To       time.Duration `json:"to_ns"`
	Capture  [2]int64      `json:"capture_ns"`
	Px       int64         `json:"px"`
	Sessions int           `json:"sessions"`
	// Overview is the whole capture at Px columns, all sessions: the minimap.
	Overview [][3]int64 `json:"overview"`
	// All is the window at Px columns, all sessions.
	All   [][3]int64     `json:"all"`
	Lanes []timelineLane `json:"lanes"`
	// Events are [index, offset, lane, kind, level] (lane: position in Lanes).
	Events [][5]int64 `json:"events,omitempty"`
	// Spans are [lane, start, end, kind (0 tool call, 1 wait for a reply),
	// start index, end index (-1: still open at the window's end, -2: the
	// wait timed out, its timeout_seconds passed before a reply), level].
	Spans [][7]int64 `json:"spans,omitempty"`
	// Count is about how many messages the window holds (all sessions).
	Count int64 `json:"count"`
	// Detail says how the lanes were made: "events" (one by one), "read"
	// (records read and counted per column) or "buckets" (the check's
	// buckets, BucketNS wide).
	Detail   string `json:"detail"`
	BucketNS int64  `json:"bucket_ns"`
}

type timelineLane struct {
	// ID is the session's id, Key its key (sessionRow.Key: the lanes
	// parameter's form); Recording names its recording when several are
	// viewed.
	ID        string     `json:"id"`
	Key       string     `json:"key"`
	Recording string     `json:"recording,omitempty"`
	Lane      int        `json:"lane"`
	Cells     [][3]int64 `json:"cells"`
	Count     int64      `json:"count"`
}

// columns accumulates counts per pixel column of [from, to].
type columns struct {
	from, to, px int64
	count        []int64
	worst        []int64
}

func newColumns(from, to, px int64) *columns {
	return &columns{from: from, to: to, px: px, count: make([]int64, px), worst: make([]int64, px)}
}

func (c *columns) col(t int64) int64 {
	return min(max((t-c.from)*c.px/(c.to-c.from+1), 0), c.px-1)
}

func (c *columns) add(t, n, worst int64) {
	if t < c.from || t > c.to {
		return
	}
	i := c.col(t)
	c.count[i] += n
	c.worst[i] = max(c.worst[i], worst)
}

// addBucket spreads a bucket [start, start+width) over the columns it covers.
func (c *columns) addBucket(start, width, n, worst int64) {
	end := start + width - 1
	if end < c.from || start > c.to || n == 0 && worst == 0 {
		return
	}
	a, b := c.col(max(start, c.from)), c.col(min(end, c.to))
	// The bucket's count, spread evenly (the first columns take the rest).
	k := b - a + 1
	for i := a; i <= b; i++ {
		c.count[i] += n / k
		if i-a < n%k {
			c.count[i]++
		}
		c.worst[i] = max(c.worst[i], worst)
	}
}

func (c *columns) cells() [][3]int64 {
	out := [][3]int64{}
	for i := range c.count {
		if c.count[i] > 0 || c.worst[i] > 0 {
			out = append(out, [3]int64{int64(i), c.count[i], c.worst[i]})
		}
	}
	return out
}

// serveTimeline answers /api/timeline?from_ns&to_ns&px&lanes=S1,S2,… (session
// keys, or ids that name one session each) from
// the check's buckets when the window holds many messages, else by reading
// the window's records.
func (s *Server) serveTimeline(w http.ResponseWriter, r *http.Request) {
	first, last := s.index().FirstTime(), s.index().LastTime()
	from, err := intQuery(r, "from_ns", first)
	to, err2 := intQuery(r, "to_ns", last)
	px, err3 := intQuery(r, "px", defaultPx)
	if err = errors.Join(err, err2, err3); err == nil {
		switch {
		case to < from:
			err = fmt.Errorf("to_ns %d is before from_ns %d", to, from)
		case px < 1 || px > maxPx:
			err = fmt.Errorf("px: want 1 to %d", maxPx)
		}
	}
	ids := splitList(r.URL.Query()["lanes"])
	if err == nil && len(ids) > maxLanes {
		err = fmt.Errorf("lanes: at most %d", maxLanes)
	}
	if err != nil {
		apiError(w, http.StatusBadRequest, "%v", err)
		return
	}
	sn := s.analysis().snap.Load()
	if _, asked := r.URL.Query()["lanes"]; !asked {
		for _, v := range sn.sessions[:min(len(sn.sessions), defaultLanes)] {
			ids = append(ids, v.Key)
		}
	}
	views := make([]*sessionView, len(ids))
	for i, id := range ids {
		v, err := sn.lookup(id)
		if err != nil {
			apiError(w, http.StatusBadRequest, "lanes: %v", err)
			return
		}
		if views[i] = v; v != nil {
			ids[i] = v.Key
		}
	}
	a := sn // the buckets' grid
	ans := timelineAnswer{From: time.Duration(from), To: time.Duration(to), Capture: [2]int64{first, last}, Px: px,
		Sessions: len(sn.sessions), Lanes: []timelineLane{}, BucketNS: a.width}
	whole := newColumns(first, last, px)
	all := newColumns(from, to, px)
	for _, c := range sn.overview {
		start := a.first + int64(c.bucket)*a.width
		whole.addBucket(start, a.width, int64(c.count), int64(c.worst))
		if c.count > 0 && start+a.width > from && start <= to {
			part := int64(c.count)
			if start < from || start+a.width-1 > to { // the part inside the window
				inside := min(start+a.width-1, to) - max(start, from) + 1
				part = max(part*inside/a.width, 1)
			}
			ans.Count += part
		}
	}
	ans.Overview = whole.cells()
	lanes := make([]*columns, len(ids))
	pos := map[string]int{}
	for i, id := range ids {
		lane := timelineLane{ID: id, Key: id, Lane: -1}
		if v := views[i]; v != nil {
			lane.ID, lane.Lane, lane.Recording = v.ID, v.Lane, v.Facts.Recording
		}
		lanes[i] = newColumns(from, to, px)
		pos[id] = i
		ans.Lanes = append(ans.Lanes, lane)
	}
	// A window the check has not read through yet is read, whatever the
	// buckets say so far.
	if (ans.Count <= s.opts.TimelineScan || !sn.done && sn.readTo < to) && s.index().Records > 0 {
		if !s.readWindow(w, &ans, from, to, pos, lanes, all) {
			return
		}
	} else {
		ans.Detail = "buckets"
		for _, c := range sn.overview {
			all.addBucket(a.first+int64(c.bucket)*a.width, a.width, int64(c.count), int64(c.worst))
		}
		for i, v := range views {
			if v != nil {
				for _, c := range v.Cells {
					lanes[i].addBucket(a.first+int64(c.bucket)*a.width, a.width, int64(c.count), int64(c.worst))
				}
			}
		}
	}
	ans.All = all.cells()
	for i := range lanes {
		ans.Lanes[i].Cells = lanes[i].cells()
		for _, n := range lanes[i].count {
			ans.Lanes[i].Count += n
		}
	}
	writeJSON(w, http.StatusOK, ans)
}

// readWindow reads the records of the window (and one window's width
// before it, for the spans that start there) into the columns, and lists
// the events and spans when the lanes hold few enough.
func (s *Server) readWindow(w http.ResponseWriter, ans *timelineAnswer, from, to int64, pos map[string]int, lanes []*columns, all *columns) bool {
	start := max(from-(to-from), s.index().FirstTime())
	rd, ok := s.openAt(w, func(rd *recording.Reader) error { return rd.SeekTime(start) })
	if !ok {
		return false
	}
	defer s.release(rd)
	type open struct {
		lane         int
		start, index int64
		kind         int64
		deadline     int64 // a wait's timeout_seconds after it (0: none)
	}
	opened := map[string]open{}   // stream, "t"+tool_call_id or "r"+reply_token
	tokenLane := map[string]int{} // stream, reply_token
	keys := keyer{s: s}
	events := [][5]int64{}
	var spans [][7]int64
	tooMany := false
	var doc payload.Doc
	var counted int64
	whole := true
	for scanned := int64(0); ; scanned++ {
		if scanned >= 3*s.opts.TimelineScan {
			whole = false
			break
		}
		rec, err := rd.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) && !capfile.IsTorn(err) {
				apiError(w, http.StatusInternalServerError, "%s: %v", s.title(), err)
				return false
			}
			break
		}
		if rec.Time > to {
			break
		}
		if rec.Kind != capfile.KindReceived && rec.Kind != capfile.KindSent {
			continue
		}
		idx := rd.Index()
		doc.Decode(rec.Payload)
		f := &doc.Routing
		key := f.SessionKey()
		token, _ := doc.Get("reply_token").Str()
		stream := keys.streamOf(rd.Recording(), rec)
		lane, inLane := pos[sessionKey(stream, key)]
		if key == "" && token != "" {
			lane, inLane = tokenLane[stream+keySep+token]
		}
		worst := int64(0)
		if rec.Time >= from {
			l, _ := s.analysis().worstAt(idx, nil)
			worst = int64(l)
			all.add(rec.Time, 1, worst)
			counted++
		}
		if !inLane {
			continue
		}
		t := f.TypeName()
		if token != "" && key != "" {
			tokenLane[stream+keySep+token] = lane
		}
		sk := stream + keySep
		// Spans: a tool call from invoked to its end, a wait from the
		// event that asks to the reply that carries its token.
		var done *open
		switch {
		case strings.HasSuffix(t, "tool.invoked"):
			if id, _ := doc.Get("tool_call_id").Str(); id != "" {
				opened[sk+"t"+id] = open{lane: lane, start: rec.Time, index: idx}
			}
		case strings.Contains(t, "tool."):
			if id, _ := doc.Get("tool_call_id").Str(); id != "" {
				if o, ok := opened[sk+"t"+id]; ok {
					delete(opened, sk+"t"+id)
					done = &o
				}
			}
		case token != "" && key != "" && strings.Contains(t, "awaiting."):
			o := open{lane: lane, start: rec.Time, index: idx, kind: 1}
			if secs, ok := doc.Get("timeout_seconds").Number(); ok && secs > 0 {
				o.deadline = rec.Time + int64(secs*1e9)
			}
			opened[sk+"r"+token] = o
		case token != "" && rec.Kind == capfile.KindSent:
			if o, ok := opened[sk+"r"+token]; ok {
				delete(opened, sk+"r"+token)
				done = &o
			}
		}
		if done != nil && rec.Time >= from {
			end, endIdx := rec.Time, idx
			if done.deadline > 0 && rec.Time > done.deadline {
				end, endIdx = done.deadline, -2 // timed out before the reply came
			}
			if len(spans) < maxTimelineSpans {
				spans = append(spans, [7]int64{int64(done.lane), done.start, end, done.kind, done.index, endIdx, worst})
			} else {
				tooMany = true
			}
		}
		if rec.Time < from {
			continue
		}
		lanes[lane].add(rec.Time, 1, worst)
		if len(events) < maxTimelineEvents {
			events = append(events, [5]int64{idx, rec.Time, int64(lane), int64(kindOf(rec, f)), worst})
		} else {
			tooMany = true
		}
	}
	for _, o := range opened {
		end, endIdx := to, int64(-1)
		if o.deadline > 0 && o.deadline <= to {
			end, endIdx = o.deadline, -2
		}
		if end >= from && len(spans) < maxTimelineSpans {
			spans = append(spans, [7]int64{int64(o.lane), o.start, end, o.kind, o.index, endIdx, 0})
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i][1] < spans[j][1] })
	ans.Spans = spans
	if whole {
		ans.Count = counted
	}
	ans.Detail = "read"
	if !tooMany {
		ans.Detail = "events"
		ans.Events = events
	}
	return true
}
