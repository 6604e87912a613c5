package recording

import (
	"context"

	"github.com/aaep-tools/aaepkit/capfile"
)

// Reader reads a recording's records in order, as one capture would hold
// them, and seeks through its parts' indexes, so that nothing is merged
// into a temporary file. Record numbers (Index, SeekRecord) run over all
// the parts; record times (Record.Time, SeekTime) count from the
// recording's start (Header().Start); origin ids are the recording's
// (Recording.Origins). Joined recordings (Join) are interleaved by time,
// as merge --join-sources writes them.
//
// *Reader implements serve.Cursor. It is not safe for concurrent use; open
// one Reader per timeline.
type Reader struct {
	hdr capfile.Header
	rd  records // a *cursor for one recording, a *joiner for several
}

// records is what a Reader reads from: one recording's parts one after the
// other (cursor), or several recordings merged by time (joiner).
type records interface {
	Next() (*capfile.Record, error)
	Torn() error
	Index() int64
	Recording() int
	SeekTime(t int64) error
	SeekRecord(i int64) error
	Clean() bool
	FileIndex() (*capfile.Index, error)
	JoinedSessions() ([][]capfile.SessionInfo, error)
	Close() error
}

// Records opens a Reader over the recording's records. The parts are
// opened as they are reached; standard input can be read once and not
// seeked. JSON Lines parts are not records: Records refuses them.
func (rec *Recording) Records(ctx context.Context) (*Reader, error) {
	hdr := rec.Header()
	if rec.joined != nil {
		j, err := newJoiner(ctx, rec, hdr)
		if err != nil {
			return nil, err
		}
		return &Reader{hdr: hdr, rd: j}, nil
	}
	c, err := newCursor(ctx, rec, hdr)
	if err != nil {
		return nil, err
	}
	if len(rec.Parts) == 1 && rec.Parts[0].Streamed() && c.parts[0].r != nil {
		// A stream (standard input, a FIFO) is not looked at before it is
		// read: its header is the one its reader has just read (show
		// printed times from year 1, info a version 0 capture).
		hdr = c.parts[0].r.Header()
	}
	return &Reader{hdr: hdr, rd: c}, nil
}

// startOf is the time a header's records count from, ns since the epoch
// (0 when the header has no start).
func startOf(h capfile.Header) int64 {
	if h.Start.IsZero() {
		return 0
	}
	return h.Start.UnixNano()
}

// Header returns the recording's header with its joint origin table
// (Recording.Header).
func (r *Reader) Header() capfile.Header { return r.hdr }

// Next returns the next record, or io.EOF at a clean end. A torn tail ends
// the recording (capfile.IsTorn); a torn part that is not the last ends
// only that part (see Torn). The record and its slices are valid only until
// the next call.
func (r *Reader) Next() (*capfile.Record, error) { return r.rd.Next() }

// Torn returns the torn tail of a part that was not the last, if reading
// passed one (its records before the tear were read).
func (r *Reader) Torn() error { return r.rd.Torn() }

// Index returns the joint number of the record Next returned last, or -1
// before the first.
func (r *Reader) Index() int64 { return r.rd.Index() }

// Recording is the position, among the recordings read joined (Join), of
// the recording of the record Next returned last (0 for one recording): a
// message's Message.Recording.
func (r *Reader) Recording() int { return r.rd.Recording() }

// SeekTime positions the reader so that Next returns the first record whose
// time (from the recording's start) is at least t.
func (r *Reader) SeekTime(t int64) error { return r.rd.SeekTime(t) }

// SeekRecord positions the reader so that Next returns joint record number
// i (counting from 0). i may equal the number of records (the end).
func (r *Reader) SeekRecord(i int64) error { return r.rd.SeekRecord(i) }

// Clean reports whether every part was closed cleanly by its writer.
func (r *Reader) Clean() bool { return r.rd.Clean() }

// FileIndex returns the recording's index as one capture's would be: a
// single part's own; for several parts, their indexes joined, record
// numbers and times counted over all the parts (the frames' Offset and
// Size are each part's own, meaningful only with their part). Joined
// recordings have one frame: their records interleave.
func (r *Reader) FileIndex() (*capfile.Index, error) { return r.rd.FileIndex() }

// JoinedSessions returns, for joined recordings (Join), each one's sessions
// as its own index lists them, their times counted from the joint start
// (the joint FileIndex lists sessions by id, those of the same id in
// several recordings as one); nil for one recording.
func (r *Reader) JoinedSessions() ([][]capfile.SessionInfo, error) { return r.rd.JoinedSessions() }

// Close closes every part opened.
func (r *Reader) Close() error { return r.rd.Close() }
