package capfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// RepairReport says what a repair kept and dropped.
type RepairReport struct {
	// SourceClean is true when the source was closed cleanly and undamaged
	// (the copy is then record for record identical).
	SourceClean bool
	// Kept is the number of records written to the destination.
	Kept int64
	// Dropped lists the byte ranges of the source that were not copied, in
	// file order.
	Dropped []DroppedRange
	// LostRecords counts the dropped records whose number is known: records
	// that were intact but out of time order, plus, when the source's index
	// survived, the records the index places in a damaged frame. Records in a
	// torn tail or in damaged frames of a file without index are not counted.
	LostRecords int64
	// Bytes is the size of the destination file.
	Bytes int64
}

// DroppedRange is a byte range of the source that a repair did not copy.
type DroppedRange struct {
	Offset, Length int64
	// Records is the number of records lost in the range, or -1 if unknown.
	Records int64
	// Reason says what was wrong.
	Reason string
}

// String summarises the report in a few lines.
func (rep RepairReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "kept %d records", rep.Kept)
	if rep.SourceClean {
		b.WriteString("; the source was intact")
	}
	if rep.LostRecords > 0 {
		fmt.Fprintf(&b, "; lost at least %d records", rep.LostRecords)
	}
	for _, d := range rep.Dropped {
		n := "an unknown number of"
		if d.Records >= 0 {
			n = fmt.Sprint(d.Records)
		}
		fmt.Fprintf(&b, "\ndropped bytes %d..%d (%d bytes, %s records): %s", d.Offset, d.Offset+d.Length, d.Length, n, d.Reason)
	}
	return b.String()
}

// RepairTo copies every intact record of the capture src into a new,
// cleanly closed capture written to w, with a fresh index. It reads src only:
// src is never modified, renamed or deleted. Where the copy lands, and how a
// file is replaced, is the caller's business (the commands write through
// their output policy). Report.Bytes is what was written to w.
//
// Damage inside a zstd frame loses the rest of that frame; the copy resumes
// at the next frame (found through the source's index when it survived, else
// by scanning for the next frame magic). A header whose first bytes (magic
// or signature) are damaged is read when its checksum holds, and written
// intact. A source whose header is otherwise unreadable cannot be repaired.
func RepairTo(src string, w io.Writer) (rep RepairReport, err error) {
	return RepairToWith(src, w, RepairOptions{})
}

// RepairOptions tune RepairToWith.
type RepairOptions struct {
	// Progress, when set, is called with the time of every record kept (for
	// a progress display); Total, when set, first with the number of records
	// the source's index holds.
	Progress func(recordTime int64)
	Total    func(records int64)
}

// RepairToWith is RepairTo with options.
func RepairToWith(src string, w io.Writer, opts RepairOptions) (rep RepairReport, err error) {
	r, err := openFile(src, true)
	if err != nil {
		return rep, err
	}
	defer r.Close()
	cw, err := NewWriter(w, r.hdr, &WriterOptions{FlushInterval: -1})
	if err != nil {
		return rep, fmt.Errorf("capfile: repair: %w", err)
	}
	if r.damagedLead != "" {
		rep.Dropped = append(rep.Dropped, DroppedRange{Offset: 0, Length: int64(SniffLen), Records: 0,
			Reason: r.damagedLead + " (rewritten: the header's checksum holds)"})
	}
	if opts.Total != nil && r.clean && r.idx != nil {
		opts.Total(r.idx.Records)
	}
	if err := repairCopy(r, cw, &rep, opts.Progress); err != nil {
		cw.Close()
		return rep, err
	}
	if err := cw.Close(); err != nil {
		return rep, fmt.Errorf("capfile: repair: %w", err)
	}
	rep.Bytes = cw.Stats().FileBytes
	// Intact means nothing was dropped: a source with a valid trailer can
	// still hold damaged frames.
	rep.SourceClean = r.clean && len(rep.Dropped) == 0 && rep.LostRecords == 0
	return rep, nil
}

// repairCopy streams records from r's data into w, resynchronising after damage.
func repairCopy(r *Reader, w *Writer, rep *RepairReport, progress func(int64)) error {
	var stored *Index
	if r.clean {
		stored = r.idx
	}
	var lastTime int64
	pos := r.dataStart
	for pos < r.size {
		s := r.subReader(pos)
		frameOff, keptInFrame := int64(-1), int64(0)
		var rerr error
		for {
			rec, err := s.Next()
			if err != nil {
				rerr = err
				break
			}
			if s.frameOff != frameOff {
				frameOff, keptInFrame = s.frameOff, 0
			}
			keptInFrame++
			if rec.Time < lastTime {
				rep.LostRecords++
				rep.Dropped = append(rep.Dropped, DroppedRange{Offset: s.frameOff, Records: 1,
					Reason: fmt.Sprintf("record time %d before the previous record's %d", rec.Time, lastTime)})
				continue
			}
			if err := w.Append(rec); err != nil {
				return fmt.Errorf("capfile: repair: %w", err)
			}
			lastTime = rec.Time
			rep.Kept++
			if progress != nil {
				progress(rec.Time)
			}
		}
		s.Close()
		if rerr == io.EOF {
			return nil
		}
		var ce *CorruptionError
		if !errors.As(rerr, &ce) {
			return fmt.Errorf("capfile: repair: %w", rerr)
		}
		if ce.Offset != frameOff {
			keptInFrame = 0
		}
		if m := r.magicAt(ce.Offset); m == indexMagic || m == trailerMagic {
			// The records are all in; only the index or trailer is damaged or
			// cut, and the destination gets a fresh one.
			rep.Dropped = append(rep.Dropped, DroppedRange{Offset: ce.Offset, Length: r.size - ce.Offset, Records: 0, Reason: ce.Err.Error()})
			return nil
		}
		if IsTorn(rerr) {
			reason := ce.Err.Error()
			if keptInFrame > 0 {
				reason += fmt.Sprintf(" (its first %d records were kept)", keptInFrame)
			}
			rep.Dropped = append(rep.Dropped, DroppedRange{Offset: ce.Offset, Length: r.size - ce.Offset, Records: -1, Reason: reason})
			return nil
		}
		next, lost := r.resumeAfter(ce.Offset, stored)
		if lost >= 0 {
			lost -= keptInFrame
			rep.LostRecords += lost
		}
		reason := ce.Err.Error()
		if keptInFrame > 0 {
			reason += fmt.Sprintf(" (the frame's first %d records were kept)", keptInFrame)
		}
		rep.Dropped = append(rep.Dropped, DroppedRange{Offset: ce.Offset, Length: next - ce.Offset, Records: lost, Reason: reason})
		pos = next
	}
	return nil
}

// subReader returns a streaming reader over r's file from offset pos, which
// must be a frame boundary.
func (r *Reader) subReader(pos int64) *Reader {
	s := &Reader{hdr: r.hdr, dataEnd: -1, indexAt: -1, strs: r.strs, n: 0}
	s.src.reset(io.NewSectionReader(r.ra, pos, r.size-pos), pos)
	return s
}

func (r *Reader) magicAt(off int64) uint32 {
	var b [4]byte
	if _, err := r.ra.ReadAt(b[:], off); err != nil {
		return 0
	}
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// resumeAfter finds where to continue after damage at off: the next frame of
// the stored index, else the next zstd frame or index magic found by
// scanning. lost is the number of records the stored index puts in the
// damaged frame, or -1.
func (r *Reader) resumeAfter(off int64, stored *Index) (next, lost int64) {
	if stored != nil {
		for i, f := range stored.Frames {
			if f.Offset == off {
				if i+1 < len(stored.Frames) {
					return stored.Frames[i+1].Offset, f.Records
				}
				return r.dataEnd, f.Records
			}
		}
	}
	return r.scanMagic(off + 1), -1
}

// scanMagic returns the offset of the first zstd frame magic or index magic
// at or after off, or the file size.
func (r *Reader) scanMagic(off int64) int64 {
	zm := []byte{0x28, 0xb5, 0x2f, 0xfd}
	im := []byte{0x5b, 0x2a, 0x4d, 0x18}
	buf := make([]byte, 256<<10)
	for off < r.size {
		n, err := r.ra.ReadAt(buf, off)
		if n < 4 {
			break
		}
		b := buf[:n]
		best := -1
		for _, m := range [][]byte{zm, im} {
			if i := bytes.Index(b, m); i >= 0 && (best < 0 || i < best) {
				best = i
			}
		}
		if best >= 0 {
			return off + int64(best)
		}
		if err != nil {
			break
		}
		off += int64(n - 3)
	}
	return r.size
}
