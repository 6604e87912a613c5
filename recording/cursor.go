package recording

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/aaep-tools/aaepkit/capfile"
)

// cursor reads one recording's parts one after the other, numbering their
// records and timing them from the recording's start.
type cursor struct {
	ctx   context.Context
	smap  *OriginMap
	start int64 // the recording's start, ns since the epoch
	parts []*partCursor
	k     int   // the part being read
	base  int64 // the joint number of part k's first record
	last  int64 // the joint number of the record Next returned last (-1: none)
	out   capfile.Record
	torn  error
	// lastRaw is the origin id the last record has in its part.
	lastRaw uint16
}

// partCursor is one part of a cursor.
type partCursor struct {
	p      *Part
	no     int   // the part's number among the recording's parts (OriginMap input)
	offset int64 // the part's start minus the recording's, ns
	o      *opened
	r      *capfile.Reader
	count  int64 // records in the part, -1 until known
}

// newCursor opens a cursor over rec's parts, whose joint header is hdr,
// and opens its first part.
func newCursor(ctx context.Context, rec *Recording, hdr capfile.Header) (*cursor, error) {
	r := &cursor{ctx: ctx, smap: rec.originMap(), start: startOf(hdr), last: -1}
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
func (r *cursor) open(k int) (*capfile.Reader, error) {
	pc := r.parts[k]
	if pc.r != nil {
		return pc.r, nil
	}
	if pc.p.follow != nil {
		cr, err := pc.p.openLive(r.ctx)
		if err != nil {
			return nil, err
		}
		pc.r = cr
		return cr, nil
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
func (r *cursor) closePart(k int) {
	pc := r.parts[k]
	if pc.r != nil {
		pc.r.Close()
		if pc.p.stdin == nil && pc.o != nil {
			pc.o.close()
		}
		pc.r, pc.o = nil, nil
	}
}

// countOf returns the number of records of part k, from its index.
func (r *cursor) countOf(k int) (int64, error) {
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
func (r *cursor) baseOf(k int) (int64, error) {
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

// Next reads the parts in turn: see Reader.Next.
func (r *cursor) Next() (*capfile.Record, error) {
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

// Torn: see Reader.Torn.
func (r *cursor) Torn() error { return r.torn }

// Index: see Reader.Index.
func (r *cursor) Index() int64 { return r.last }

// Recording is 0: one recording.
func (r *cursor) Recording() int { return 0 }

// next is the joint number of the record Next returns next.
func (r *cursor) next() int64 { return r.last + 1 }

// SeekTime finds the part that holds time t: see Reader.SeekTime.
func (r *cursor) SeekTime(t int64) error {
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

// SeekRecord finds the part that holds record i: see Reader.SeekRecord.
func (r *cursor) SeekRecord(i int64) error {
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
func (r *cursor) switchTo(k int) {
	if r.k != k && r.k < len(r.parts) {
		r.closePart(r.k)
	}
	r.k = k
}

// Clean: see Reader.Clean.
func (r *cursor) Clean() bool {
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

// FileIndex joins the parts' indexes: see Reader.FileIndex.
func (r *cursor) FileIndex() (*capfile.Index, error) {
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
		s.FirstRecord += base
		s.Frames = frames
		addSession(out, sessions, s, offset)
	}
	out.Records += x.Records
	out.Rebuilt = out.Rebuilt || x.Rebuilt
}

// addSession adds s, timed from offset, to out's sessions, or to the
// session of its id already there (sessions: their positions by id).
func addSession(out *capfile.Index, sessions map[string]int, s capfile.SessionInfo, offset int64) {
	s.FirstTime += offset
	s.LastTime += offset
	if i, ok := sessions[s.ID]; ok {
		o := &out.Sessions[i]
		o.Records += s.Records
		o.FirstTime = min(o.FirstTime, s.FirstTime)
		o.LastTime = max(o.LastTime, s.LastTime)
		o.Frames = append(o.Frames, s.Frames...)
		return
	}
	sessions[s.ID] = len(out.Sessions)
	out.Sessions = append(out.Sessions, s)
}

// JoinedSessions is nil: one recording.
func (r *cursor) JoinedSessions() ([][]capfile.SessionInfo, error) { return nil, nil }

// Close closes every part opened.
func (r *cursor) Close() error {
	for k := range r.parts {
		r.closePart(k)
	}
	return nil
}
