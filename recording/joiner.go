package recording

import (
	"context"
	"errors"
	"io"

	"github.com/aaep-tools/aaepkit/capfile"
)

// joiner reads joined recordings (Join), one cursor each, merged by time.
type joiner struct {
	smap  *OriginMap
	start int64 // the joint start, ns since the epoch
	subs  []*cursor
	first []int             // the number of each sub's first part among the joined parts
	recs  []*capfile.Record // each sub's current record
	merge *Merge
	cur   int   // the sub whose record was returned last (-1: none)
	n     int64 // the joint number of the next record
	out   capfile.Record
	torn  error
}

// newJoiner opens a cursor over each of the recordings rec joins, whose
// joint header is hdr.
func newJoiner(ctx context.Context, rec *Recording, hdr capfile.Header) (*joiner, error) {
	j := &joiner{smap: rec.originMap(), start: startOf(hdr)}
	no := 0
	for _, sub := range rec.joined {
		c, err := newCursor(ctx, sub, sub.Header())
		if err != nil {
			j.Close()
			return nil, err
		}
		j.subs = append(j.subs, c)
		j.first = append(j.first, no)
		no += len(sub.Parts)
	}
	j.recs = make([]*capfile.Record, len(j.subs))
	j.restart()
	return j, nil
}

// restart starts the merge again from each sub's position.
func (r *joiner) restart() {
	streams := make([]Stream, len(r.subs))
	for i := range r.subs {
		streams[i] = subStream{r, i}
	}
	r.merge, r.cur = NewMerge(streams), -1
}

// subStream is sub i of a joiner as a Stream of its Merge.
type subStream struct {
	j *joiner
	i int
}

// Next reads the sub's next record; a torn tail ends that sub only.
func (s subStream) Next() (int64, bool, error) {
	sub := s.j.subs[s.i]
	rec, err := sub.Next()
	if err != nil {
		if errors.Is(err, io.EOF) || capfile.IsTorn(err) {
			if capfile.IsTorn(err) && s.j.torn == nil {
				s.j.torn = err
			}
			return 0, false, nil
		}
		return 0, false, err
	}
	s.j.recs[s.i] = rec
	return sub.start + rec.Time, true, nil
}

// Next returns the earliest current record of the joined recordings.
func (r *joiner) Next() (*capfile.Record, error) {
	i, at, ok, err := r.merge.Next()
	if err != nil {
		return nil, err
	}
	if !ok {
		r.cur = -1
		return nil, io.EOF
	}
	r.cur = i
	r.n++
	s := r.subs[i]
	r.out = *r.recs[i]
	r.out.Time = at - r.start
	r.out.Origin = r.smap.ID(r.first[i]+s.parts[s.k].no, s.lastRaw)
	return &r.out, nil
}

// Torn returns the first torn tail a sub ended with.
func (r *joiner) Torn() error { return r.torn }

// Index returns the joint number of the record Next returned last.
func (r *joiner) Index() int64 { return r.n - 1 }

// Recording returns the sub of the record Next returned last.
func (r *joiner) Recording() int { return max(r.cur, 0) }

// SeekTime seeks every sub to time t and starts the merge again.
func (r *joiner) SeekTime(t int64) error {
	return r.seek(func(s *cursor) error { return s.SeekTime(t + r.start - s.start) })
}

// seek seeks every sub with seek and starts the merge again.
func (r *joiner) seek(seek func(*cursor) error) error {
	var n int64
	for _, s := range r.subs {
		if err := seek(s); err != nil {
			return err
		}
		n += s.next()
	}
	r.n = n
	r.restart()
	return nil
}

// SeekRecord goes back to the start and skips i records.
func (r *joiner) SeekRecord(i int64) error {
	if err := r.seek(func(s *cursor) error { return s.SeekRecord(0) }); err != nil {
		return err
	}
	for r.n < i {
		if _, err := r.Next(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
	return nil
}

// Clean reports whether every sub is clean.
func (r *joiner) Clean() bool {
	for _, s := range r.subs {
		if !s.Clean() {
			return false
		}
	}
	return true
}

// JoinedSessions returns each sub's sessions, timed from the joint start.
func (r *joiner) JoinedSessions() ([][]capfile.SessionInfo, error) {
	out := make([][]capfile.SessionInfo, len(r.subs))
	for i, s := range r.subs {
		x, err := s.FileIndex()
		if err != nil {
			return nil, err
		}
		off := s.start - r.start
		for _, ss := range x.Sessions {
			ss.FirstTime += off
			ss.LastTime += off
			ss.Frames = nil
			out[i] = append(out[i], ss)
		}
	}
	return out, nil
}

// FileIndex is the index of joined recordings: their record count,
// sessions and span, as one frame (their records interleave).
func (r *joiner) FileIndex() (*capfile.Index, error) {
	out := &capfile.Index{}
	first := true
	var fr capfile.FrameInfo
	sessions := map[string]int{}
	for _, s := range r.subs {
		x, err := s.FileIndex()
		if err != nil {
			return nil, err
		}
		off := s.start - r.start
		if len(x.Frames) > 0 {
			if first || x.FirstTime()+off < fr.FirstTime {
				fr.FirstTime = x.FirstTime() + off
			}
			fr.LastTime = max(fr.LastTime, x.LastTime()+off)
			first = false
		}
		for _, ss := range x.Sessions {
			addSession(out, sessions, capfile.SessionInfo{ID: ss.ID, Records: ss.Records, FirstTime: ss.FirstTime, LastTime: ss.LastTime}, off)
		}
		out.Records += x.Records
		out.Rebuilt = out.Rebuilt || x.Rebuilt
	}
	for i := range out.Sessions {
		out.Sessions[i].Frames = []int{0} // the one frame
	}
	fr.Records = out.Records
	if out.Records > 0 {
		out.Frames = []capfile.FrameInfo{fr}
	}
	return out, nil
}

// Close closes every sub.
func (r *joiner) Close() error {
	for _, s := range r.subs {
		s.Close()
	}
	return nil
}
