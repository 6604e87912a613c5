package capedit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/timing"
)

// CutOptions select the part of a capture that Cut keeps.
type CutOptions struct {
	// From is the first position kept; unset means the start.
	From timing.Position
	// To is the last position kept (inclusive, as aaep-replay serve reads
	// --to); unset means the end. So "--to #99" and "--from #100" split a
	// capture without losing or repeating a record.
	To timing.Position
	Output
	// TimeShift re-anchors the output's wall clock (see TimeShift).
	TimeShift TimeShift
	Input
}

// Cut writes the records of in from opts.From to opts.To (both included) to out. It
// seeks through the index, so only the frames it keeps are decompressed.
//
// The output's start is moved to the cut's start (From as a time, or the
// first kept record's time when From is a record number) and the records'
// times are shifted to match, so their absolute times are unchanged and a
// replay of the cut starts at once; Merge puts the pieces back together.
func Cut(ctx context.Context, ins []string, out string, opts CutOptions) (*Result, error) {
	in := inputName(ins)
	src, err := openEdit(ctx, ins, out, opts.Output, opts.Input)
	if err != nil {
		return nil, err
	}
	defer src.close()
	if err := CheckSelectionOf(in, src.r, Selection{From: opts.From, To: opts.To}); err != nil {
		return nil, err
	}
	res := &Result{}
	empty := false
	if opts.From.Set {
		if empty, err = seekTo(src, opts.From); err != nil {
			return nil, err
		}
	}
	hdr := cloneHeader(src.r.Header())
	hdr.Meta[capfile.MetaDerivedFrom] = derivedFrom(ins)
	hdr.Meta["cut"] = describeCut(opts)
	err = opts.write(out, ins, func(w io.Writer) error {
		var cw *capfile.Writer
		defer func() {
			if cw != nil {
				cw.Close() // after damage: the records before it stay readable
			}
		}()
		var shift int64
		start := func(first *capfile.Record) error {
			switch {
			case opts.From.Set && !opts.From.ByIndex:
				shift = int64(opts.From.Time)
			case opts.From.Set && first != nil:
				shift = first.Time
			}
			hdr.Start = opts.TimeShift.shiftHeader(hdr.Start.Add(time.Duration(shift)), hdr.Meta)
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
			if opts.To.Set {
				if opts.To.ByIndex && src.r.Index() > opts.To.Index {
					break
				}
				if !opts.To.ByIndex && rec.Time > int64(opts.To.Time) {
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
		if res.Written == 0 {
			return fmt.Errorf("%s: no record from %s to %s: the range %w; %s",
				in, describePos(opts.From, "the start"), describePos(opts.To, "the end"), ErrEmptySelection, describePath(ins[0]))
		}
		if err := cw.Close(); err != nil {
			return fmt.Errorf("write output: %w", err)
		}
		return nil
	})
	src.warn(&res.Warnings)
	return res, err
}

// seekTo positions src at p. It reports true when p is past the end.
func seekTo(src *input, p timing.Position) (bool, error) {
	var err error
	if p.ByIndex {
		var x *capfile.Index
		if x, err = src.r.FileIndex(); err == nil {
			if p.Index > x.Records {
				return true, nil
			}
			err = src.r.SeekRecord(p.Index)
		}
	} else {
		err = src.r.SeekTime(int64(p.Time))
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("%s: seek to %v: %w", src.path, p, err)
	}
	return false, nil
}

func describePos(p timing.Position, unset string) string {
	if !p.Set {
		return unset
	}
	return p.String()
}

func describeCut(o CutOptions) string {
	from, to := "start", "end"
	if o.From.Set {
		from = o.From.String()
	}
	if o.To.Set {
		to = o.To.String()
	}
	return "from " + from + " to " + to
}
