package capedit

import (
	"context"
	"fmt"
	"hash/maphash"
	"io"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/payload"
)

// DefaultDedupeWindow is how far back (in capture time) Dedupe looks for
// the first delivery of an event by default.
const DefaultDedupeWindow = time.Hour

// DedupeOptions tune Dedupe.
type DedupeOptions struct {
	// Window is how far back, in capture time, an earlier delivery of an
	// event is remembered; 0 remembers the whole capture (memory grows
	// with the number of events).
	Window time.Duration
	// TimeShift re-anchors the output's wall clock (see TimeShift).
	TimeShift TimeShift
	Output
	Input
}

// DedupeResult says what Dedupe did.
type DedupeResult struct {
	Result
	// Dropped counts the redelivered events left out.
	Dropped int64
	// BySource counts them per source id.
	BySource map[uint16]int64
}

// dedupeKey identifies a delivery: source, event_id, and the payload's
// length and hash.
type dedupeKey struct {
	source uint16
	id     string
	size   int
	sum    uint64
}

type seenAt struct {
	key dedupeKey
	at  int64
}

// Dedupe writes the capture in to out without redelivered events: a
// received message whose source, event_id and bytes equal those of an
// earlier received message (within opts.Window) is left out, as producers
// that re-send their recent events to a reconnecting subscriber make them
// (AAEP allows duplicate delivery). Messages without an event_id, sent
// messages, connection events and markers are all kept. Times and the
// start are unchanged.
//
// Bytes are compared through a 64-bit hash and the length, within one
// source and event_id: two different payloads would have to share all
// three to be taken for one.
func Dedupe(ctx context.Context, ins []string, out string, opts DedupeOptions) (*DedupeResult, error) {
	if opts.Window < 0 {
		return nil, fmt.Errorf("dedupe window %v: must not be negative", opts.Window)
	}
	src, err := openEdit(ctx, ins, out, opts.Output, opts.Input)
	if err != nil {
		return nil, err
	}
	defer src.close()
	res := &DedupeResult{BySource: map[uint16]int64{}}
	hdr := cloneHeader(src.r.Header())
	hdr.Meta[capfile.MetaDerivedFrom] = derivedFrom(ins)
	hdr.Start = opts.TimeShift.shiftHeader(hdr.Start, hdr.Meta)
	seed := maphash.MakeSeed()
	seen := map[dedupeKey]int64{} // key -> time of the latest delivery
	var doc payload.Doc
	var queue []seenAt // in time order, for the window
	err = opts.write(out, ins, func(w io.Writer) error {
		hdr.Meta["dedupe"] = "redelivered events left out (same source, event_id and bytes)"
		cw, err := newCaptureWriter(w, hdr)
		if err != nil {
			return err
		}
		defer cw.Close()
		cc := ctxCheck{ctx: ctx}
		var readErr error
		for {
			if err := cc.err(); err != nil {
				return err
			}
			rec, err := src.next()
			if err != nil {
				readErr = err
				break
			}
			if rec == nil {
				break
			}
			res.Read++
			if rec.Kind == capfile.KindReceived {
				if doc.Decode(rec.Payload); doc.Routing.EventID != "" {
					if opts.Window > 0 {
						for len(queue) > 0 && rec.Time-queue[0].at > int64(opts.Window) {
							if seen[queue[0].key] == queue[0].at {
								delete(seen, queue[0].key)
							}
							queue = queue[1:]
						}
					}
					k := dedupeKey{source: rec.Origin, id: doc.Routing.EventID, size: len(rec.Payload), sum: maphash.Bytes(seed, rec.Payload)}
					_, dup := seen[k]
					seen[k] = rec.Time
					if opts.Window > 0 {
						queue = append(queue, seenAt{k, rec.Time})
					}
					if dup {
						res.Dropped++
						res.BySource[rec.Origin]++
						continue
					}
				}
			}
			if err := cw.Append(rec); err != nil {
				return fmt.Errorf("write output: %w", err)
			}
			res.Written++
		}
		if err := cw.Close(); err != nil {
			return fmt.Errorf("write output: %w", err)
		}
		return readErr
	})
	src.warn(&res.Warnings)
	return res, err
}
