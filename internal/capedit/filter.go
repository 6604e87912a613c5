package capedit

import (
	"context"
	"fmt"
	"strings"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/msgfilter"
	"github.com/aaep-tools/aaepkit/payload"
)

// FilterOptions select the records Filter keeps.
type FilterOptions struct {
	// Match selects messages (received and sent) by type, session and
	// urgency, with the semantics of aaep-capture's filters: a type matches
	// exactly or as a suffix, a session matches the AAEP session_id, the ASP
	// sessionId or the KAHN run_id.
	Match msgfilter.Filter
	// MessagesOnly also drops connection events and markers, which are
	// otherwise kept: they describe the transport, not one session.
	MessagesOnly bool
	Output
	// TimeShift re-anchors the output's wall clock (see TimeShift).
	TimeShift TimeShift
	Input
}

// Filter writes the records of in that opts selects to out. Times and the
// header's start are unchanged.
func Filter(ctx context.Context, ins []string, out string, opts FilterOptions) (*Result, error) {
	in := inputName(ins)
	src, err := openEdit(ctx, ins, out, opts.Output, opts.Input)
	if err != nil {
		return nil, err
	}
	defer src.close()
	res := &Result{}
	hdr := cloneHeader(src.r.Header())
	hdr.Meta[capfile.MetaDerivedFrom] = derivedFrom(ins)
	hdr.Meta["filter"] = describeFilter(opts)
	hdr.Start = opts.TimeShift.shiftHeader(hdr.Start, hdr.Meta)
	matched := int64(0)
	var doc payload.Doc
	err = opts.writeCapture(out, ins, hdr, func(cw *capfile.Writer) error {
		cc := ctxCheck{ctx: ctx}
		for {
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
			if !keep(rec, &opts, &doc) {
				continue
			}
			if rec.Kind == capfile.KindReceived || rec.Kind == capfile.KindSent {
				matched++
			}
			if err := cw.Append(rec); err != nil {
				return fmt.Errorf("write output: %w", err)
			}
			res.Written++
		}
		if res.Written == 0 || (!opts.Match.Empty() && matched == 0) {
			return fmt.Errorf("%s: no message matches %s: the filter %w; %s", in, describeFilter(opts), ErrEmptySelection, describePath(ins[0]))
		}
		return nil
	})
	src.warn(&res.Warnings)
	return res, err
}

// keep reports whether opts selects rec; d decodes the payload.
func keep(rec *capfile.Record, opts *FilterOptions, d *payload.Doc) bool {
	switch rec.Kind {
	case capfile.KindReceived, capfile.KindSent:
		if opts.Match.Empty() {
			return true
		}
		d.Decode(rec.Payload)
		return opts.Match.Match(&d.Routing)
	default:
		return !opts.MessagesOnly
	}
}

func describeFilter(o FilterOptions) string {
	var parts []string
	add := func(name string, vals []string) {
		if len(vals) > 0 {
			parts = append(parts, name+"="+strings.Join(vals, ","))
		}
	}
	add("type", o.Match.Types)
	add("session", o.Match.Sessions)
	add("urgency", o.Match.Urgencies)
	if o.MessagesOnly {
		parts = append(parts, "messages-only")
	}
	return strings.Join(parts, " ")
}
