package viewer

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/check"
	"github.com/aaep-tools/aaepkit/recording"
)

// Bounds on what the background check keeps, so that a capture of any size
// fits in memory: findings beyond maxFindings are counted, not kept, and
// each session remembers at most maxValues types, urgencies and sources.
const (
	maxFindings = 200000
	maxValues   = 64
	// maxSessions bounds the sessions the check describes; later ones are
	// only counted in the totals.
	maxSessions = 100000
	// baseBuckets is how many time buckets the whole capture is cut into
	// for the timeline's lanes (built once, during the check).
	baseBuckets = 2048
	// publishEvery is how often the check publishes what it has learned.
	publishEvery = 200 * time.Millisecond
)

// Verdict counts a session's findings by level.
type Verdict struct {
	Must   int64 `json:"must"`
	Should int64 `json:"should"`
	Info   int64 `json:"info"`
}

func (v *Verdict) add(l protocol.Level) {
	switch l {
	case protocol.Must:
		v.Must++
	case protocol.Should:
		v.Should++
	default:
		v.Info++
	}
}

// sessionFacts is what the check learned about one session.
type sessionFacts struct {
	Protocol  string        `json:"protocol,omitempty"`
	Messages  int64         `json:"messages"`
	First     time.Duration `json:"first_ns"`
	Last      time.Duration `json:"last_ns"`
	State     string        `json:"state,omitempty"`
	Complete  bool          `json:"complete"`
	Verdict   Verdict       `json:"verdict"`
	Types     []string      `json:"types"`
	Urgencies []string      `json:"urgencies"`
	Sources   []int         `json:"sources"`
	Rules     ruleCounts    `json:"rules"`
	// Recording names the recording the session belongs to when several
	// are viewed (each judged on its own, as check judges it).
	Recording string `json:"recording,omitempty"`
}

func addValue[T comparable](list []T, v T) []T {
	if slices.Contains(list, v) || len(list) >= maxValues {
		return list
	}
	return append(list, v)
}

// ruleCounts counts a session's findings by rule, in the order the rules
// were first broken; its JSON is an object of rule id to count, like a map's
// (keys sorted), {} when empty. A slice of a few pairs instead of a map: a
// session without findings (most of them) costs nothing, and publishing a
// session copies a few words.
type ruleCounts []ruleCount

type ruleCount struct {
	rule string
	n    int64
}

func (rc ruleCounts) add(rule string) ruleCounts {
	for i := range rc {
		if rc[i].rule == rule {
			rc[i].n++
			return rc
		}
	}
	return append(rc, ruleCount{rule, 1})
}

// MarshalJSON writes the counts as an object, its keys sorted.
func (rc ruleCounts) MarshalJSON() ([]byte, error) {
	sorted := slices.SortedFunc(slices.Values(rc), func(a, b ruleCount) int { return strings.Compare(a.rule, b.rule) })
	b := []byte{'{'}
	for i, c := range sorted {
		if i > 0 {
			b = append(b, ',')
		}
		k, err := json.Marshal(c.rule)
		if err != nil {
			return nil, err
		}
		b = append(b, k...)
		b = append(b, ':')
		b = strconv.AppendInt(b, c.n, 10)
	}
	return append(b, '}'), nil
}

// cell is one lane's count of messages in one time bucket and the worst
// level of their findings.
type cell struct {
	bucket uint32
	count  uint32
	worst  uint8
}

// sessionBuild is a session as the check builds it (owned by run).
type sessionBuild struct {
	facts   sessionFacts
	records []uint32 // its messages' record indices, replies included
	cells   []cell   // its lane of the timeline, by bucket
	lane    int
	dirty   bool
	// stream marks a block of findings about the stream, not a session
	// (protocol.SessionSummary.StreamLevel: a source's subscription
	// handshake, its connection without one): not listed among the
	// sessions, nor counted; its findings are the capture's.
	stream bool
}

// analysis is the background check of the whole capture: findings by
// message, verdicts by session, record lists and timeline buckets by
// session, progress. run fills it; the API reads snap (no lock) and the
// findings (under fmu, taken once per batch by run, never across a write).
type analysis struct {
	snap  atomic.Pointer[snapshot]
	lanes *laneIndex

	fmu      sync.RWMutex
	findings []protocol.Finding
	byIndex  map[int64][]int32 // message index -> positions in findings
	flagged  []int64           // indices with findings, ascending once done

	// Time buckets to start with: [first, first+width*baseBuckets).
	first, width int64
}

func newAnalysis(first, last int64) *analysis {
	a := &analysis{byIndex: map[int64][]int32{}, first: first, width: max((last-first)/baseBuckets+1, 1), lanes: newLaneIndex()}
	a.snap.Store(&snapshot{lanes: a.lanes, first: a.first, width: a.width, lastIndex: -1})
	return a
}

// bucket is the bucket of a message at offset. Following a capture that
// grows, an offset past the last bucket doubles the buckets' width (twice
// the time in as many buckets) until it fits; otherwise it falls in the
// last bucket.
func (b *builder) bucket(offset int64) uint32 {
	for b.live && offset-b.first >= b.width*baseBuckets {
		b.regrid()
	}
	k := (offset - b.first) / b.width
	return uint32(min(max(k, 0), baseBuckets-1))
}

// regrid doubles the buckets' width: buckets 2k and 2k+1 become k, in the
// overview and in every session's cells.
func (b *builder) regrid() {
	b.width *= 2
	for k := range baseBuckets {
		c := cell{bucket: uint32(k)}
		if 2*k+1 < baseBuckets {
			x, y := b.overview[2*k], b.overview[2*k+1]
			c.count, c.worst = x.count+y.count, max(x.worst, y.worst)
		}
		b.overview[k] = c
	}
	for _, s := range b.order {
		n := 0
		for _, c := range s.cells {
			c.bucket /= 2
			if n > 0 && s.cells[n-1].bucket == c.bucket {
				s.cells[n-1].count += c.count
				s.cells[n-1].worst = max(s.cells[n-1].worst, c.worst)
				continue
			}
			s.cells[n] = c
			n++
		}
		s.cells = s.cells[:n]
	}
	b.regridded = true
}

func addCell(cells []cell, b uint32, worst uint8) []cell {
	if n := len(cells); n > 0 && cells[n-1].bucket == b {
		cells[n-1].count++
		cells[n-1].worst = max(cells[n-1].worst, worst)
		return cells
	}
	// Messages arrive in time order, so a bucket is only ever the last or a
	// new one (a record earlier than the last starts a new cell; readers
	// merge cells of the same bucket).
	return append(cells, cell{bucket: b, count: 1, worst: worst})
}

// markCell raises the worst level of the cell of bucket b (a finding made
// after its message was counted).
func markCell(cells []cell, b uint32, l uint8) {
	for i := len(cells) - 1; i >= 0 && i >= len(cells)-64; i-- {
		if cells[i].bucket == b {
			cells[i].worst = max(cells[i].worst, l)
			return
		}
	}
}

// builder is run's own state, published to the snapshot now and then.
type builder struct {
	a         *analysis
	order     []*sessionBuild
	views     []*sessionView
	overview  []cell // dense, baseBuckets long
	spare     sessionBuild
	truncated bool
	counts    Verdict
	read      int64
	pending   []protocol.Finding
	kept      int
	dropped   int64
	tokens    map[string]*sessionBuild // stream, reply_token -> session that asked
	readTo    int64
	lastIndex int64
	publishes int
	stats     protocol.Stats
	// first and width place the buckets (snapshot.first, width); live
	// is set when following a capture being written (see bucket), and
	// regridded when the width has changed since the last publish.
	first, width int64
	live         bool
	regridded    bool
	// rec is the recording checked; byRec counts the findings of each of
	// the recordings it joins (nil for one recording).
	rec    *recording.Recording
	byRec  []recordingCounts
	recPos map[string]int // stream -> position in byRec
}

// recordingOf is the position among the joined recordings of stream's.
func (b *builder) recordingOf(stream string) int {
	if i, ok := b.recPos[stream]; ok {
		return i
	}
	if b.recPos == nil {
		b.recPos = map[string]int{}
	}
	b.recPos[stream] = -1
	j := b.rec.RecordingOfStream(stream)
	for i, r := range b.rec.Joined() {
		if r == j {
			b.recPos[stream] = i
			return i
		}
	}
	return -1
}

// sessionKey is the handle of session id of stream: the id itself in a
// recording of one stream (as the page always named sessions), else the
// stream and the id, for sessions of different recordings, or of different
// subscriptions of a recording of a replay, share ids and are never one.
func sessionKey(stream, id string) string {
	if stream == "" {
		return id
	}
	return stream + keySep + id
}

// keySep separates a session key's stream from its id.
const keySep = "|"

func (b *builder) session(stream, id string) *sessionBuild {
	key := sessionKey(stream, id)
	// Read without the lock: this goroutine is the only one that writes.
	if lane, ok := b.a.lanes.byKey[key]; ok {
		return b.order[lane]
	}
	if len(b.order) >= maxSessions {
		// Counted in the totals, not described.
		b.truncated = true
		b.spare = sessionBuild{}
		return &b.spare
	}
	s := &sessionBuild{lane: len(b.order), dirty: true}
	b.order = append(b.order, s)
	b.views = append(b.views, &sessionView{ID: id, Stream: stream, Key: key, Lane: s.lane})
	b.a.lanes.add(key, id, s.lane)
	return s
}

// liveCheck is how the check follows a capture being written.
type liveCheck struct {
	poll time.Duration
	// caughtUp is called each time the check has caught up with the
	// recorder (and now and then while it lags behind), after it has
	// published what it found.
	caughtUp func()
}

// run checks the recording through the analysis driver (its streams, the
// replay flags of its sources and its connection records, as check does).
// With live set, it reads the capture as it is written (recording.Following)
// and checks each message once, as it arrives, until the recorder is done.
func (a *analysis) run(ctx context.Context, rec *recording.Recording, cfg check.Config, pause *pauser, live *liveCheck) {
	b := &builder{a: a, overview: make([]cell, baseBuckets), tokens: map[string]*sessionBuild{}, rec: rec,
		first: a.first, width: a.width, live: live != nil, lastIndex: -1}
	for _, r := range rec.Joined() {
		b.byRec = append(b.byRec, recordingCounts{Name: r.Name})
	}
	for i := range b.overview {
		b.overview[i].bucket = uint32(i)
	}
	sink := protocol.Sink{
		Finding: func(f protocol.Finding) {
			b.counts.add(f.Level)
			if b.byRec != nil {
				if i := b.recordingOf(f.Stream); i >= 0 {
					b.byRec[i].Counts.add(f.Level)
				}
			}
			if f.Session != "" {
				s := b.session(f.Stream, f.Session)
				s.facts.Verdict.add(f.Level)
				s.facts.Rules = s.facts.Rules.add(f.RuleID)
				s.dirty = true
				if f.Index >= 0 {
					markCell(s.cells, b.bucket(int64(f.Offset)), uint8(f.Level))
				}
			}
			if f.Index >= 0 {
				c := &b.overview[b.bucket(int64(f.Offset))]
				c.worst = max(c.worst, uint8(f.Level))
			}
			if b.kept >= maxFindings {
				b.dropped++
				return
			}
			b.kept++
			b.pending = append(b.pending, f)
		},
		SessionDone: func(sum protocol.SessionSummary) {
			s := b.session(sum.Stream, sum.Session)
			s.facts.Protocol, s.facts.State, s.facts.Complete = sum.Protocol, sum.State, sum.Complete
			s.stream = s.stream || sum.StreamLevel() && s.facts.Messages == 0
			s.dirty = true
		},
	}
	last := time.Now()
	obs := &check.Observer{Before: func(stream string, m *protocol.Message) {
		pause.wait(ctx)
		// Filed first, so that the findings its check makes land in its cell.
		b.message(m, stream)
		if b.read%1024 == 0 && time.Since(last) >= publishEvery {
			b.publish(false, nil)
			last = time.Now()
		}
	}}
	checked := rec
	if live != nil {
		fr, err := rec.Following(recording.Follow{Poll: live.poll, Report: func() {
			b.publish(false, nil)
			last = time.Now()
			live.caughtUp()
		}})
		if err != nil {
			b.publish(true, err)
			return
		}
		checked = fr
	}
	res, err := check.Run(ctx, checked, cfg, sink, obs)
	if err == nil {
		b.stats = res.Stats
		err = res.Err
	}
	b.publish(true, err)
}

// message files one message under its session: the payload's session key,
// or for a subscriber's reply the session whose event carried its
// reply_token.
func (b *builder) message(m *protocol.Message, stream string) {
	b.read++
	b.readTo, b.lastIndex = int64(m.Offset), m.Index
	d := m.Doc
	key := d.Routing.SessionKey()
	token, _ := d.Get("reply_token").Str()
	var s *sessionBuild
	switch {
	case key != "":
		s = b.session(stream, key)
		if token != "" && m.Dir == protocol.FromProducer {
			if len(b.tokens) < 1<<20 {
				b.tokens[stream+keySep+token] = s
			}
		}
	case token != "":
		s = b.tokens[stream+keySep+token]
	}
	bk := b.bucket(int64(m.Offset))
	b.overview[bk].count++
	ri := -1
	if b.byRec != nil {
		if ri = b.recordingOf(stream); ri >= 0 {
			b.byRec[ri].Messages++
		}
	}
	if s == nil || s == &b.spare {
		return
	}
	f := &s.facts
	if f.Messages == 0 {
		f.First = m.Offset
		if ri >= 0 {
			f.Recording = b.byRec[ri].Name
			b.byRec[ri].Sessions++
		}
	}
	f.Messages++
	f.Last = m.Offset
	if key != "" {
		if t := d.Routing.TypeName(); t != "" {
			f.Types = addValue(f.Types, t)
		}
		u := d.Routing.Urgency
		if u == "" && d.Routing.Type != "" {
			u = "normal"
		}
		if u != "" {
			f.Urgencies = addValue(f.Urgencies, u)
		}
	}
	f.Sources = addValue(f.Sources, m.Source)
	s.records = append(s.records, uint32(m.Index))
	s.cells = addCell(s.cells, bk, 0)
	s.dirty = true
}
