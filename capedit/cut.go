package capedit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
)

// CutOptions select the part of a capture that Cut keeps.
type CutOptions struct {
	// From is the first position kept; nil means the start.
	From *Position
	// To is the last position kept (inclusive, as aaep-replay serve reads
	// --to); nil means the end. So "--to #99" and "--from #100" split a
	// capture without losing or repeating a record.
	To *Position
}

// Cut writes the records of in from opts.From to opts.To (both included) to out. It
// seeks through the index, so only the frames it keeps are decompressed.
//
// The output's start is moved to the cut's start (From as a time, or the
// first kept record's time when From is a record number) and the records'
// times are shifted to match, so their absolute times are unchanged and a
// replay of the cut starts at once; Merge puts the pieces back together.
func Cut(ctx context.Context, in, out string, opts CutOptions) (*Result, error) {
	if opts.From != nil && opts.To != nil && opts.From.IsRecord == opts.To.IsRecord {
		if (opts.From.IsRecord && opts.To.Record < opts.From.Record) || (!opts.From.IsRecord && opts.To.Offset < opts.From.Offset) {
			return nil, fmt.Errorf("cut range %v to %v ends before it starts", opts.From, opts.To)
		}
	}
	if err := CheckOutput(out, in); err != nil {
		return nil, err
	}
	src, err := openInput(in)
	if err != nil {
		return nil, err
	}
	defer src.close()
	res := &Result{}
	empty := false
	if opts.From != nil {
		if empty, err = seekTo(src, *opts.From); err != nil {
			return nil, err
		}
	}
	hdr := cloneHeader(src.r.Header())
	hdr.Meta["derived_from"] = filepath.Base(in)
	hdr.Meta["cut"] = describeCut(opts)
	err = WriteFile(out, []string{in}, func(w io.Writer) error {
		var cw *capfile.Writer
		var shift int64
		start := func(first *capfile.Record) error {
			switch {
			case opts.From != nil && !opts.From.IsRecord:
				shift = int64(opts.From.Offset)
			case opts.From != nil && first != nil:
				shift = first.Time
			}
			hdr.Start = hdr.Start.Add(time.Duration(shift))
			var err error
			cw, err = newCaptureWriter(w, hdr)
			return err
		}
		cc := ctxCheck{ctx: ctx}
		for !empty {
			if err := cc.err(); err != nil {
				return err
			}
			rec, err := src.next()
			if err != nil {
				return err
			}
			if rec == nil {
				break
			}
			res.Read++
			if opts.To != nil {
				if opts.To.IsRecord && src.r.Index() > opts.To.Record {
					break
				}
				if !opts.To.IsRecord && rec.Time > int64(opts.To.Offset) {
					break
				}
			}
			if cw == nil {
				if err := start(rec); err != nil {
					return err
				}
			}
			o := *rec
			o.Time -= shift
			if err := cw.Append(&o); err != nil {
				return fmt.Errorf("write output: %w", err)
			}
			res.Written++
		}
		if cw == nil {
			if err := start(nil); err != nil {
				return err
			}
		}
		if err := cw.Close(); err != nil {
			return fmt.Errorf("write output: %w", err)
		}
		return nil
	})
	if src.torn != nil {
		res.Warnings = append(res.Warnings, *src.torn)
	}
	return res, err
}

// seekTo positions src at p. It reports true when p is past the end.
func seekTo(src *input, p Position) (bool, error) {
	var err error
	if p.IsRecord {
		var x *capfile.Index
		if x, err = src.r.FileIndex(); err == nil {
			if p.Record > x.Records {
				return true, nil
			}
			err = src.r.SeekRecord(p.Record)
		}
	} else {
		err = src.r.SeekTime(int64(p.Offset))
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("%s: seek to %v: %w", src.path, p, err)
	}
	return false, nil
}

func describeCut(o CutOptions) string {
	from, to := "start", "end"
	if o.From != nil {
		from = o.From.String()
	}
	if o.To != nil {
		to = o.To.String()
	}
	return "from " + from + " to " + to
}
