package capfile

import (
	"errors"
	"fmt"
	"io"
)

// Resume goes on reading after the damage that ended Next, as RepairTo
// does: it skips the rest of the damaged zstd frame and positions the
// reader at the next frame (found through the stored index when the file
// was closed cleanly, else by scanning for the next frame's magic). It
// returns the byte range skipped, the records lost in it when known
// (Records -1 when not) and what was wrong (Reason, the damage's own
// words).
//
// The error is nil when reading goes on: Next returns the first record
// after the gap (Index counts on from the record before it, or, with a
// stored index, jumps to the number the index gives it). It is io.EOF when
// nothing readable follows: a torn tail (the range is the unreadable
// bytes to the end), or damage in the index or trailer after the last
// record. Otherwise it is the error Next returned: no damage to skip (a
// clean end, an I/O error), or a streaming reader (NewReader), which cannot
// skip.
func (r *Reader) Resume() (DroppedRange, error) {
	var ce *CorruptionError
	if r.err == nil || !errors.As(r.err, &ce) {
		return DroppedRange{}, r.err
	}
	end := r.dataLimit()
	gap := DroppedRange{Offset: ce.Offset, Records: -1, Reason: ce.Err.Error()}
	var stored *Index
	if r.clean {
		stored = r.idx
	}
	first := int64(-1) // the damaged frame's first record, when the index says
	if stored != nil {
		for _, f := range stored.Frames {
			if f.Offset == ce.Offset {
				first = f.FirstRecord
			}
		}
	}
	kept := int64(0) // the damaged frame's records already returned
	if r.frameOff == ce.Offset && first >= 0 {
		kept = r.n - first
	}
	switch {
	case IsTorn(r.err):
		gap.Length = max(r.size, ce.Size) - ce.Offset
		return gap, io.EOF
	case r.ra == nil:
		return DroppedRange{}, r.err
	}
	if m := r.magicAt(ce.Offset); m == indexMagic || m == trailerMagic {
		// Every record is in: only the index or trailer is damaged.
		gap.Length, gap.Records = r.size-ce.Offset, 0
		return gap, io.EOF
	}
	next, lost := r.resumeAfter(ce.Offset, stored)
	if lost >= 0 {
		lost -= kept
	}
	gap.Length, gap.Records = next-ce.Offset, lost
	if kept > 0 {
		gap.Reason += fmt.Sprintf(" (the frame's first %d records were read)", kept)
	}
	if next >= end {
		return gap, io.EOF
	}
	r.src.reset(io.NewSectionReader(r.ra, next, end-next), next)
	r.inFrame, r.err = false, nil
	if stored != nil {
		for _, f := range stored.Frames {
			if f.Offset == next {
				r.n = f.FirstRecord
			}
		}
	}
	return gap, nil
}
