package recording

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/aaep-tools/aaepkit/capfile"
)

// Reader reads a recording's records in order, as one capture would hold
// them, and seeks through its parts' indexes: a cursor over the parts, so
// that nothing is merged into a temporary file. Record numbers (Index,
// SeekRecord) run over all the parts; record times (Record.Time, SeekTime)
// count from the recording's start (Header().Start); source ids are the
// recording's (Recording.Origins). Joined recordings (Join) are
// interleaved by time, as merge --join-sources writes them.
//
// *Reader implements serve.Cursor. It is not safe for concurrent use; open
// one Reader per timeline.
type Reader struct {
	rec   *Recording
	ctx   context.Context
	hdr   capfile.Header
	smap  *OriginMap
	start int64 // the recording's start, ns since the epoch

	// One recording: its parts, read one after the other.
	parts []*partCursor
	k     int   // the part being read
	base  int64 // the joint number of part k's first record
	last  int64 // the joint number of the record Next returned last (-1: none)
	n     int64 // joined: the joint number of the next record
	out   capfile.Record
	torn  error
	// lastRaw is the source id the last record has in its part.
	lastRaw uint16

	// Joined recordings: one Reader each, merged by time.
	subs   []*Reader
	first  []int // the number of each sub's first part among the joined parts
	h      readerHeap
	primed bool
	cur    int // the sub whose record was returned last (-1: none)
}

// partCursor is one part of a Reader.
type partCursor struct {
	p      *Part
	no     int   // the part's number among the recording's parts (OriginMap input)
	offset int64 // the part's start minus the recording's, ns
	o      *opened
	r      *capfile.Reader
	count  int64 // records in the part, -1 until known
}

// Records opens a Reader over the recording's records. The parts are
// opened as they are reached; standard input can be read once and not
// seeked. JSON Lines parts are not records: Records refuses them.
func (rec *Recording) Records(ctx context.Context) (*Reader, error) {
	r := &Reader{rec: rec, ctx: ctx, hdr: rec.Header(), smap: rec.originMap(), cur: -1, last: -1}
	if !r.hdr.Start.IsZero() {
		r.start = r.hdr.Start.UnixNano()
	}
	if rec.joined != nil {
		no := 0
		for _, j := range rec.joined {
			sub, err := j.Records(ctx)
			if err != nil {
				r.Close()
				return nil, err
			}
			r.subs = append(r.subs, sub)
			r.first = append(r.first, no)
			no += len(j.Parts)
		}
		return r, nil
	}
	for i, p := range rec.Parts {
		if p.Format == FormatJSONL {
			return nil, fmt.Errorf("%s: a JSON Lines file, not a capture (aaep-replay import turns it into one): %w", p.Name, capfile.ErrNotCapture)
		}
		pc := &partCursor{p: p, no: i, count: -1}
		if r.start != 0 && !p.Header.Start.IsZero() {
			pc.offset = p.Header.Start.UnixNano() - r.start
		}
		r.parts = append(r.parts, pc)
	}
	if _, err := r.open(0); err != nil {
		return nil, err
	}
	return r, nil
}

// open opens part k (if it is not open yet) and returns its reader.
func (r *Reader) open(k int) (*capfile.Reader, error) {
	pc := r.parts[k]
	if pc.r != nil {
		return pc.r, nil
	}
	o, err := pc.p.open(r.ctx)
	if err != nil {
		return nil, err
	}
	cr, err := o.capture()
	if err != nil {
		o.close()
		return nil, err
	}
	if pc.p.Format == "" {
		pc.p.setHeader(cr.Header())
	}
	pc.o, pc.r = o, cr
	return cr, nil
}

// closePart closes part k.
func (r *Reader) closePart(k int) {
	pc := r.parts[k]
	if pc.r != nil {
		pc.r.Close()
		if pc.p.stdin == nil {
			pc.o.close()
		}
		pc.r, pc.o = nil, nil
	}
}

// countOf returns the number of records of part k, from its index.
func (r *Reader) countOf(k int) (int64, error) {
	pc := r.parts[k]
	if pc.count >= 0 {
		return pc.count, nil
	}
	cr, err := r.open(k)
	if err != nil {
		return 0, err
	}
	x, err := cr.FileIndex()
	if k != r.k {
		r.closePart(k)
	}
	if err != nil {
		return 0, fmt.Errorf("%s: %w", pc.p.Name, err)
	}
	pc.count = x.Records
	return pc.count, nil
}

// baseOf returns the joint number of part k's first record.
func (r *Reader) baseOf(k int) (int64, error) {
	var base int64
	for i := range k {
		n, err := r.countOf(i)
		if err != nil {
			return 0, err
		}
		base += n
	}
	return base, nil
}

// Header returns the recording's header with its joint source table
// (Recording.Header).
func (r *Reader) Header() capfile.Header { return r.hdr }

// Next returns the next record, or io.EOF at a clean end. A torn tail ends
// the recording (capfile.IsTorn); a torn part that is not the last ends
// only that part (see Torn). The record and its slices are valid only until
// the next call.
func (r *Reader) Next() (*capfile.Record, error) {
	if r.subs != nil {
		return r.nextJoined()
	}
	for {
		cr, err := r.open(r.k)
		if err != nil {
			return nil, err
		}
		rec, err := cr.Next()
		if err == nil {
			r.last = r.base + cr.Index()
			r.lastRaw = rec.Origin
			if len(r.parts) == 1 {
				return rec, nil
			}
			r.out = *rec
			r.out.Time += r.parts[r.k].offset
			r.out.Origin = r.smap.ID(r.parts[r.k].no, rec.Origin)
			return &r.out, nil
		}
		last := r.k+1 >= len(r.parts)
		switch {
		case errors.Is(err, io.EOF) && !last:
		case capfile.IsTorn(err) && !last:
			r.torn = fmt.Errorf("%s: %w", r.parts[r.k].p.Name, err)
		case len(r.parts) > 1 && !errors.Is(err, io.EOF):
			return nil, fmt.Errorf("%s: %w", r.parts[r.k].p.Name, err)
		default:
			return nil, err
		}
		if r.parts[r.k].count < 0 {
			r.parts[r.k].count = cr.Index() + 1
		}
		r.base += r.parts[r.k].count
		r.closePart(r.k)
		r.k++
	}
}

// Torn returns the torn tail of a part that was not the last, if reading
// passed one (its records before the tear were read).
func (r *Reader) Torn() error { return r.torn }

// Index returns the joint number of the record Next returned last, or -1
// before the first.
func (r *Reader) Index() int64 {
	if r.subs != nil {
		return r.n - 1
	}
	return r.last
}

// Recording is the position, among the recordings read joined (Join), of
// the recording of the record Next returned last (0 for one recording): a
// message's Message.Recording.
func (r *Reader) Recording() int {
	if r.subs == nil || r.cur < 0 {
		return 0
	}
	return r.cur
}

// next is the joint number of the record Next returns next.
func (r *Reader) next() int64 {
	if r.subs != nil {
		return r.n
	}
	return r.last + 1
}

// SeekTime positions the reader so that Next returns the first record whose
// time (from the recording's start) is at least t.
func (r *Reader) SeekTime(t int64) error {
	if r.subs != nil {
		return r.seekJoined(func(s *Reader) error { return s.SeekTime(t + r.start - s.start) })
	}
	k := sort.Search(len(r.parts), func(i int) bool { return r.parts[i].offset > t }) - 1
	k = max(k, 0)
	for ; k < len(r.parts); k++ {
		cr, err := r.open(k)
		if err != nil {
			return err
		}
		x, err := cr.FileIndex()
		if err != nil {
			return fmt.Errorf("%s: %w", r.parts[k].p.Name, err)
		}
		r.parts[k].count = x.Records
		if k+1 < len(r.parts) && (x.Records == 0 || x.LastTime()+r.parts[k].offset < t) {
			continue // every record of this part is earlier
		}
		base, err := r.baseOf(k)
		if err != nil {
			return err
		}
		r.switchTo(k)
		if cr, err = r.open(k); err != nil {
			return err
		}
		if err := cr.SeekTime(t - r.parts[k].offset); err != nil {
			return err
		}
		r.base, r.last = base, base+firstAtOrAfter(x, t-r.parts[k].offset)-1
		return nil
	}
	return nil
}

// firstAtOrAfter is the number of the first record of x whose time is at
// least t, as far as the index tells (a frame's first record when t falls
// inside it: the reader skips the rest).
func firstAtOrAfter(x *capfile.Index, t int64) int64 {
	k := sort.Search(len(x.Frames), func(i int) bool { return x.Frames[i].LastTime >= t })
	if k == len(x.Frames) {
		return x.Records
	}
	return x.Frames[k].FirstRecord
}

// SeekRecord positions the reader so that Next returns joint record number
// i (counting from 0). i may equal the number of records (the end).
func (r *Reader) SeekRecord(i int64) error {
	if r.subs != nil {
		return r.seekJoinedRecord(i)
	}
	if i < 0 {
		return fmt.Errorf("seek to record %d: out of range", i)
	}
	var base int64
	for k := range r.parts {
		n, err := r.countOf(k)
		if err != nil {
			return err
		}
		if i < base+n || k == len(r.parts)-1 {
			r.switchTo(k)
			cr, err := r.open(k)
			if err != nil {
				return err
			}
			if err := cr.SeekRecord(i - base); err != nil {
				return err
			}
			r.base, r.last = base, i-1
			return nil
		}
		base += n
	}
	return nil
}

// switchTo makes part k the one being read, closing the one before.
func (r *Reader) switchTo(k int) {
	if r.k != k && r.k < len(r.parts) {
		r.closePart(r.k)
	}
	r.k = k
}

// Clean reports whether every part was closed cleanly by its writer.
func (r *Reader) Clean() bool {
	if r.subs != nil {
		for _, s := range r.subs {
			if !s.Clean() {
				return false
			}
		}
		return true
	}
	for k := range r.parts {
		cr, err := r.open(k)
		if err != nil || !cr.Clean() {
			return false
		}
		if k != r.k {
			r.closePart(k)
		}
	}
	return true
}

// FileIndex returns the recording's index as one capture's would be: a
// single part's own; for several parts, their indexes joined, record
// numbers and times counted over all the parts (the frames' Offset and
// Size are each part's own, meaningful only with their part).
func (r *Reader) FileIndex() (*capfile.Index, error) {
	if r.subs != nil {
		return r.joinedIndex()
	}
	if len(r.parts) == 1 {
		cr, err := r.open(0)
		if err != nil {
			return nil, err
		}
		return cr.FileIndex()
	}
	out := &capfile.Index{}
	sessions := map[string]int{}
	for k, pc := range r.parts {
		cr, err := r.open(k)
		if err != nil {
			return nil, err
		}
		x, err := cr.FileIndex()
		if k != r.k {
			r.closePart(k)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", pc.p.Name, err)
		}
		pc.count = x.Records
		addIndex(out, sessions, x, out.Records, pc.offset)
	}
	return out, nil
}

// addIndex appends x, whose records are numbered from base and timed from
// offset, to out.
func addIndex(out *capfile.Index, sessions map[string]int, x *capfile.Index, base, offset int64) {
	frame0 := len(out.Frames)
	for _, f := range x.Frames {
		f.FirstRecord += base
		f.FirstTime += offset
		f.LastTime += offset
		out.Frames = append(out.Frames, f)
	}
	for _, s := range x.Sessions {
		frames := make([]int, len(s.Frames))
		for i, k := range s.Frames {
			frames[i] = k + frame0
		}
		if i, ok := sessions[s.ID]; ok {
			o := &out.Sessions[i]
			o.Records += s.Records
			o.FirstTime = min(o.FirstTime, s.FirstTime+offset)
			o.LastTime = max(o.LastTime, s.LastTime+offset)
			o.Frames = append(o.Frames, frames...)
			continue
		}
		sessions[s.ID] = len(out.Sessions)
		out.Sessions = append(out.Sessions, capfile.SessionInfo{ID: s.ID, FirstRecord: s.FirstRecord + base, Records: s.Records,
			FirstTime: s.FirstTime + offset, LastTime: s.LastTime + offset, Frames: frames})
	}
	out.Records += x.Records
	out.Rebuilt = out.Rebuilt || x.Rebuilt
}

// Close closes every part opened.
func (r *Reader) Close() error {
	for _, s := range r.subs {
		s.Close()
	}
	for k := range r.parts {
		r.closePart(k)
	}
	return nil
}

// nextJoined returns the earliest current record of the joined readers.
func (r *Reader) nextJoined() (*capfile.Record, error) {
	if !r.primed {
		r.primed = true
		r.h = r.h[:0]
		for i := range r.subs {
			if err := r.advance(i); err != nil {
				return nil, err
			}
		}
		heap.Init(&r.h)
	} else if r.cur >= 0 {
		if err := r.advance(r.cur); err != nil {
			return nil, err
		}
	}
	if len(r.h) == 0 {
		r.cur = -1
		return nil, io.EOF
	}
	it := r.h[0]
	r.cur = it.i
	r.n++
	s := r.subs[it.i]
	r.out = *it.rec
	r.out.Time = it.at - r.start
	part := s.parts[s.k]
	r.out.Origin = r.smap.ID(r.first[it.i]+part.no, s.lastRaw)
	return &r.out, nil
}

// advance reads sub i's next record into the heap (or drops the sub at its
// end). A torn tail ends that sub only.
func (r *Reader) advance(i int) error {
	s := r.subs[i]
	rec, err := s.Next()
	if err != nil {
		if errors.Is(err, io.EOF) || capfile.IsTorn(err) {
			if capfile.IsTorn(err) && r.torn == nil {
				r.torn = err
			}
			r.remove(i)
			return nil
		}
		return err
	}
	at := s.start + rec.Time
	for k := range r.h {
		if r.h[k].i == i {
			// A sub's records keep their order even if its clock steps back.
			r.h[k].at, r.h[k].rec = max(at, r.h[k].at), rec
			heap.Fix(&r.h, k)
			return nil
		}
	}
	heap.Push(&r.h, readerItem{at: at, i: i, rec: rec})
	return nil
}

func (r *Reader) remove(i int) {
	for k := range r.h {
		if r.h[k].i == i {
			heap.Remove(&r.h, k)
			return
		}
	}
}

// seekJoined seeks every sub with seek and starts the merge again.
func (r *Reader) seekJoined(seek func(*Reader) error) error {
	var n int64
	for _, s := range r.subs {
		if err := seek(s); err != nil {
			return err
		}
		n += s.next()
	}
	r.n, r.primed, r.cur = n, false, -1
	return nil
}

// seekJoinedRecord goes back to the start and skips i records.
func (r *Reader) seekJoinedRecord(i int64) error {
	if err := r.seekJoined(func(s *Reader) error { return s.SeekRecord(0) }); err != nil {
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

// JoinedSessions returns, for joined recordings (Join), each one's sessions
// as its own index lists them, their times counted from the joint start
// (the joint FileIndex lists sessions by id, those of the same id in
// several recordings as one); nil for one recording.
func (r *Reader) JoinedSessions() ([][]capfile.SessionInfo, error) {
	if r.subs == nil {
		return nil, nil
	}
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

// joinedIndex is the index of joined recordings: their record count,
// sessions and span, as one frame (their records interleave).
func (r *Reader) joinedIndex() (*capfile.Index, error) {
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
			if i, ok := sessions[ss.ID]; ok {
				o := &out.Sessions[i]
				o.Records += ss.Records
				o.FirstTime = min(o.FirstTime, ss.FirstTime+off)
				o.LastTime = max(o.LastTime, ss.LastTime+off)
				continue
			}
			sessions[ss.ID] = len(out.Sessions)
			out.Sessions = append(out.Sessions, capfile.SessionInfo{ID: ss.ID, Records: ss.Records, FirstTime: ss.FirstTime + off, LastTime: ss.LastTime + off, Frames: []int{0}})
		}
		out.Records += x.Records
		out.Rebuilt = out.Rebuilt || x.Rebuilt
	}
	fr.Records = out.Records
	if out.Records > 0 {
		out.Frames = []capfile.FrameInfo{fr}
	}
	return out, nil
}

type readerItem struct {
	at  int64
	i   int
	rec *capfile.Record
}

type readerHeap []readerItem

func (h readerHeap) Len() int { return len(h) }
func (h readerHeap) Less(a, b int) bool {
	if h[a].at != h[b].at {
		return h[a].at < h[b].at
	}
	return h[a].i < h[b].i
}
func (h readerHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *readerHeap) Push(x any)   { *h = append(*h, x.(readerItem)) }
func (h *readerHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}
