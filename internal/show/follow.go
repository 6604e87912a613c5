package show

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/recording"
)

// DefaultPoll is how often a followed capture is looked at for new records.
const DefaultPoll = 250 * time.Millisecond

// maxStuckPolls is how many polls in a row a followed capture may end in
// damage other than a torn tail before that damage is reported: a recorder
// in the middle of a write looks like that for a moment, a damaged file for ever.
const maxStuckPolls = 40

// records reads a capture's records in order. With follow set, it waits at
// the end of a capture that is still being written (no index yet) and goes
// on with the records appended to it, until the recorder closes it cleanly or
// ctx ends.
type records struct {
	rec    *recording.Recording
	path   string
	follow bool
	poll   time.Duration
	rd     *recording.Reader
	hdr    capfile.Header
	next   int64 // index of the next record to return
	stuck  int
	torn   error
}

func openRecords(ctx context.Context, rec *recording.Recording, follow bool, poll time.Duration) (*records, error) {
	if poll <= 0 {
		poll = DefaultPoll
	}
	r := &records{rec: rec, path: rec.Name, follow: follow, poll: poll}
	rd, err := rec.Records(ctx)
	if err != nil {
		return nil, err
	}
	r.rd, r.hdr = rd, rd.Header()
	return r, nil
}

// recording is the position of the last record's recording among
// recordings read joined (recording.Reader.Recording).
func (r *records) recording() int {
	if r.rd == nil {
		return 0
	}
	return r.rd.Recording()
}

// read returns the next record and its index, or io.EOF at the end (a clean
// end, or a torn tail when not following: see torn).
func (r *records) read(ctx context.Context) (*capfile.Record, int64, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		if r.rd == nil {
			rd, err := r.rec.Records(ctx)
			if err != nil {
				return nil, 0, err
			}
			r.rd = rd
		}
		rec, err := r.rd.Next()
		if err == nil {
			idx := r.rd.Index()
			if idx < r.next {
				continue // read before the last reopening
			}
			r.next, r.stuck = idx+1, 0
			return rec, idx, nil
		}
		if errors.Is(err, io.EOF) && (r.rd.Clean() || !r.follow) {
			return nil, 0, io.EOF
		}
		if !r.follow {
			if capfile.IsTorn(err) {
				r.torn = err
				return nil, 0, io.EOF
			}
			return nil, 0, err
		}
		// Following: the recorder has not written more yet. Damage that
		// stays in place over many polls is real.
		if !capfile.IsTorn(err) && !errors.Is(err, io.EOF) {
			if r.stuck++; r.stuck > maxStuckPolls {
				return nil, 0, err
			}
		}
		r.rd.Close()
		r.rd = nil
		t := time.NewTimer(r.poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, 0, ctx.Err()
		case <-t.C:
		}
	}
}

func (r *records) close() {
	if r.rd != nil {
		r.rd.Close()
		r.rd = nil
	}
}
