package show

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/recording"
)

// DefaultPoll is how often a followed capture is looked at for new records
// while its recorder has written nothing more.
const DefaultPoll = capfile.DefaultLivePoll

// records reads a capture's records in order. With follow set, it reads a
// capture being written as it grows (recording.Following: one tail reader
// that waits at the end while the recorder holds the file open, reading
// nothing twice), until the recorder closes it, the recorder is gone (a
// torn tail) or ctx ends.
type records struct {
	rd   *recording.Reader
	hdr  capfile.Header
	torn error
}

func openRecords(ctx context.Context, rec *recording.Recording, follow bool, poll time.Duration) (*records, error) {
	if follow {
		if poll <= 0 {
			poll = DefaultPoll
		}
		var err error
		if rec, err = rec.Following(recording.Follow{Poll: poll}); err != nil {
			return nil, err
		}
	}
	rd, err := rec.Records(ctx)
	if err != nil {
		return nil, err
	}
	return &records{rd: rd, hdr: rd.Header()}, nil
}

// recording is the position of the last record's recording among
// recordings read joined (recording.Reader.Recording).
func (r *records) recording() int { return r.rd.Recording() }

// read returns the next record and its index, or io.EOF at the end (a clean
// end, or a torn tail: see torn).
func (r *records) read(ctx context.Context) (*capfile.Record, int64, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	rec, err := r.rd.Next()
	switch {
	case err == nil:
		return rec, r.rd.Index(), nil
	case errors.Is(err, io.EOF):
		return nil, 0, io.EOF
	case capfile.IsTorn(err):
		r.torn = err
		return nil, 0, io.EOF
	}
	return nil, 0, err
}

func (r *records) close() { r.rd.Close() }
