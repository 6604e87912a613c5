package viewer

import (
	"slices"
	"sort"
	"sync"

	"github.com/aaep-tools/aaepkit/protocol"
)

// snapshot is what the check has learned so far, published whole and
// never changed after: the API reads it without a lock.
type snapshot struct {
	done bool
	err  string
	read int64
	// readTo is the offset of the last message the check has read, and
	// lastIndex its index (-1 before the first).
	readTo    int64
	lastIndex int64
	dropped   int64
	truncated bool
	counts    Verdict
	stats     protocol.Stats
	// sessions in order of first message; views every lane, blocks about
	// the stream included, by lane; lanes finds a lane by key (sessionKey)
	// or id (see byKey, byID), shared by the snapshots: each sees the
	// lanes it has in views.
	sessions []*sessionView
	views    []*sessionView
	lanes    *laneIndex
	// overview is the whole capture's density: all lanes, by bucket.
	overview []cell
	// recordings are the findings of each recording viewed, when several
	// are (in the order they were named).
	recordings []recordingCounts
	// first and width place the buckets of overview and of the sessions'
	// cells: bucket k is [first+k*width, first+(k+1)*width). A followed
	// capture that outgrows them doubles width.
	first, width int64
	// sorted caches session orders by sort key (filled on demand).
	sorted sync.Map
}

// laneIndex finds the check's sessions: the lane of a session's key, and
// the lanes of an id's sessions of named streams (whose key is not the
// id). The check adds a session once, when it first meets it (under mu);
// the snapshots share it instead of each making maps of every session
// (at 100,000 sessions those maps were tens of MiB made again at every
// publish, every 200 ms, and two generations of them alive at once).
type laneIndex struct {
	mu    sync.RWMutex
	byKey map[string]int32
	byID  map[string][]int32
}

func newLaneIndex() *laneIndex {
	return &laneIndex{byKey: map[string]int32{}, byID: map[string][]int32{}}
}

// add files lane as the session key of id (the check's goroutine only).
func (x *laneIndex) add(key, id string, lane int) {
	x.mu.Lock()
	x.byKey[key] = int32(lane)
	if key != id {
		x.byID[id] = append(x.byID[id], int32(lane))
	}
	x.mu.Unlock()
}

// view is the session published in lane, nil when there is none (yet) or
// it is a block about the stream.
func (sn *snapshot) view(lane int32, ok bool) *sessionView {
	if !ok || int(lane) >= len(sn.views) {
		return nil
	}
	if v := sn.views[lane]; !v.stream {
		return v
	}
	return nil
}

// byKey returns the session of key (sessionKey), nil when there is none
// (yet).
func (sn *snapshot) byKey(key string) *sessionView {
	if sn.lanes == nil {
		return nil
	}
	sn.lanes.mu.RLock()
	lane, ok := sn.lanes.byKey[key]
	sn.lanes.mu.RUnlock()
	return sn.view(lane, ok)
}

// byID returns the sessions of id in order of first message: several when
// recordings or streams share an id.
func (sn *snapshot) byID(id string) []*sessionView {
	if sn.lanes == nil {
		return nil
	}
	sn.lanes.mu.RLock()
	lane, ok := sn.lanes.byKey[id]
	// The lanes already filed are never changed: a copy of the slice
	// header is enough.
	others := sn.lanes.byID[id]
	sn.lanes.mu.RUnlock()
	var out []*sessionView
	if v := sn.view(lane, ok); v != nil && v.ID == id {
		out = append(out, v)
	}
	for _, l := range others {
		if v := sn.view(l, true); v != nil {
			out = append(out, v)
		}
	}
	if len(out) > 1 && ok {
		slices.SortFunc(out, func(a, b *sessionView) int { return a.Lane - b.Lane })
	}
	return out
}

// messages is how many messages the check has read: all of them once done
// (its statistics), else so far.
func (sn *snapshot) messages() int64 {
	if sn.done {
		return sn.stats.Messages
	}
	return sn.read
}

// sessionView is a published session: facts copied, record list and cells
// as far as they were built (their backing arrays only grow).
type sessionView struct {
	ID string
	// Stream is the session's stream (check's: "" for one recording of
	// one stream, else the recording's name and any subscription), Key its
	// handle (sessionKey).
	Stream  string
	Key     string
	Lane    int
	Facts   sessionFacts
	Records []uint32
	Cells   []cell
	// stream marks a block about the stream (sessionBuild.stream): in
	// views, not in sessions.
	stream bool
}

// recordingCounts are one recording's findings, sessions and messages,
// when several are viewed.
type recordingCounts struct {
	Name   string  `json:"name"`
	Counts Verdict `json:"findings"`
	// Sessions counts the sessions the check describes whose first
	// message is the recording's (those /api/sessions?recording=NAME
	// lists), Messages the recording's messages read so far.
	Sessions int   `json:"sessions"`
	Messages int64 `json:"messages"`
}

// publishFindings files the pending findings where the API reads them.
func (b *builder) publishFindings(done bool) {
	a := b.a
	if len(b.pending) == 0 && !done {
		return
	}
	a.fmu.Lock()
	for _, f := range b.pending {
		if _, ok := a.byIndex[f.Index]; !ok && f.Index >= 0 {
			a.flagged = append(a.flagged, f.Index)
		}
		a.byIndex[f.Index] = append(a.byIndex[f.Index], int32(len(a.findings)))
		a.findings = append(a.findings, f)
	}
	if done {
		slices.Sort(a.flagged)
	}
	a.fmu.Unlock()
	b.pending = b.pending[:0]
}

// publish makes what run has learned visible to the API.
func (b *builder) publish(done bool, err error) {
	b.publishFindings(done)
	// The lanes' cells are copied every tenth time only (they are the
	// bulk of a publish).
	b.publishes++
	// After a regrid every session's cells are copied: those published
	// before count in the old buckets.
	cells := done || b.publishes%10 == 1 || b.regridded
	for i, s := range b.order {
		if !s.dirty && !done && !b.regridded {
			continue
		}
		s.dirty = false
		f := s.facts
		// The counts change in place: a copy. The lists of values only
		// grow (addValue appends): their filled part is shared, until
		// the end, when they are sorted.
		f.Rules = slices.Clone(s.facts.Rules)
		if done {
			f.Types = slices.Clone(s.facts.Types)
			f.Urgencies = slices.Clone(s.facts.Urgencies)
			f.Sources = slices.Clone(s.facts.Sources)
			sort.Strings(f.Types)
			sort.Strings(f.Urgencies)
			sort.Ints(f.Sources)
		} else {
			f.Types = s.facts.Types[:len(s.facts.Types):len(s.facts.Types)]
			f.Urgencies = s.facts.Urgencies[:len(s.facts.Urgencies):len(s.facts.Urgencies)]
			f.Sources = s.facts.Sources[:len(s.facts.Sources):len(s.facts.Sources)]
		}
		old := b.views[i]
		v := &sessionView{ID: old.ID, Stream: old.Stream, Key: old.Key, Lane: old.Lane, Facts: f, Records: s.records[:len(s.records):len(s.records)], Cells: old.Cells, stream: s.stream}
		switch {
		case done:
			v.Cells = mergeCells(s.cells)
		case cells:
			// The cells still change (counts, late findings): a copy.
			v.Cells = slices.Clone(s.cells)
		}
		b.views[i] = v
	}
	views := slices.Clone(b.views)
	sessions := views
	if slices.ContainsFunc(b.order, func(s *sessionBuild) bool { return s.stream }) {
		sessions = make([]*sessionView, 0, len(views))
		for i, v := range views {
			if !b.order[i].stream {
				sessions = append(sessions, v)
			}
		}
	}
	snap := &snapshot{
		done: done, read: b.read, readTo: b.readTo, lastIndex: b.lastIndex, dropped: b.dropped, truncated: b.truncated, counts: b.counts,
		stats: b.stats, sessions: sessions, views: views, lanes: b.a.lanes,
		overview: slices.Clone(b.overview), recordings: slices.Clone(b.byRec), first: b.first, width: b.width,
	}
	b.regridded = false
	if err != nil {
		snap.err = err.Error()
	}
	b.a.snap.Store(snap)
}

// mergeCells sorts cells by bucket and merges those of one bucket.
func mergeCells(cells []cell) []cell {
	out := slices.Clone(cells)
	slices.SortStableFunc(out, func(x, y cell) int { return int(x.bucket) - int(y.bucket) })
	n := 0
	for _, c := range out {
		if n > 0 && out[n-1].bucket == c.bucket {
			out[n-1].count += c.count
			out[n-1].worst = max(out[n-1].worst, c.worst)
			continue
		}
		out[n] = c
		n++
	}
	return out[:n]
}

// findingsAt returns the findings about message index (a copy).
func (a *analysis) findingsAt(index int64) []protocol.Finding {
	a.fmu.RLock()
	defer a.fmu.RUnlock()
	var out []protocol.Finding
	for _, i := range a.byIndex[index] {
		out = append(out, a.findings[i])
	}
	return out
}

// worstAt returns the worst level of the findings about index (0: none)
// and whether one of them is of one of rules.
func (a *analysis) worstAt(index int64, rules []string) (protocol.Level, bool) {
	a.fmu.RLock()
	defer a.fmu.RUnlock()
	var worst protocol.Level
	hasRule := false
	for _, i := range a.byIndex[index] {
		f := &a.findings[i]
		worst = max(worst, f.Level)
		if slices.Contains(rules, f.RuleID) {
			hasRule = true
		}
	}
	return worst, hasRule
}

// rulesAt returns the rules of the findings about index, and their worst level.
func (a *analysis) rulesAt(index int64) ([]string, protocol.Level) {
	a.fmu.RLock()
	defer a.fmu.RUnlock()
	var out []string
	var worst protocol.Level
	for _, i := range a.byIndex[index] {
		out = append(out, a.findings[i].RuleID)
		worst = max(worst, a.findings[i].Level)
	}
	return out, worst
}
