package capfile

// The reader's index and trailer: loading a closed file's index, checking
// index frames met while reading, and seeking by time, record or session.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// loadIndex reads the trailer and index of a file; on any failure the capture
// is treated as not cleanly closed.
func (r *Reader) loadIndex() {
	if r.size < r.dataStart+trailerLen {
		return
	}
	var t [trailerLen]byte
	if _, err := r.ra.ReadAt(t[:], r.size-trailerLen); err != nil {
		return
	}
	if binary.LittleEndian.Uint32(t[:]) != trailerMagic || binary.LittleEndian.Uint32(t[4:]) != trailerContentLen {
		return
	}
	off, n, err := decodeTrailer(t[skippableHeaderLen:])
	if err != nil || off < r.dataStart || off+n != r.size-trailerLen || n < skippableHeaderLen+12 || n > skippableHeaderLen+maxIndexSize {
		return
	}
	buf := make([]byte, n)
	if _, err := r.ra.ReadAt(buf, off); err != nil {
		return
	}
	if binary.LittleEndian.Uint32(buf) != indexMagic || int64(binary.LittleEndian.Uint32(buf[4:])) != n-skippableHeaderLen {
		return
	}
	idx, err := decodeIndex(buf[skippableHeaderLen:], r.dataStart, off)
	if err != nil {
		return
	}
	r.idx, r.clean, r.dataEnd = idx, true, off
}

// endsWithTrailer reports whether the file (not a stream) ends with the
// content of a trailer: its signature and checksum where a trailer's are.
// Only a capture's close writes one, so a file that has it was closed
// whatever its other bytes say.
func (r *Reader) endsWithTrailer() bool {
	if r.ra == nil || r.size < trailerLen {
		return false
	}
	var t [trailerLen]byte
	if _, err := r.ra.ReadAt(t[:], r.size-trailerLen); err != nil {
		return false
	}
	_, _, err := decodeTrailer(t[skippableHeaderLen:])
	return err == nil
}

type indexError struct{ error }

// checkIndexFrame verifies the checksum of an index frame while skipping it.
func (r *Reader) checkIndexFrame(size int64) error {
	if size < 12 || size > maxIndexSize {
		return indexError{fmt.Errorf("index frame size %d out of range", size)}
	}
	var h [12]byte
	if err := r.src.readFull(h[:]); err != nil {
		return err
	}
	if string(h[:8]) != indexSig {
		return indexError{errors.New("index frame lacks the AAEPINDX signature")}
	}
	crc := uint32(0)
	for left := size - 12; left > 0; {
		b, err := r.src.r.Peek(int(min(left, 32<<10)))
		if len(b) == 0 {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		crc = crc32.Update(crc, castagnoli, b)
		r.src.r.Discard(len(b))
		r.src.off += int64(len(b))
		left -= int64(len(b))
	}
	if want := binary.LittleEndian.Uint32(h[8:]); crc != want {
		return indexError{fmt.Errorf("index checksum mismatch (stored %08x, computed %08x)", want, crc)}
	}
	return nil
}

func (r *Reader) readTrailer(off, size int64) error {
	if size != trailerContentLen {
		return r.corrupt(off, r.n, fmt.Errorf("trailer frame size %d, want %d", size, trailerContentLen))
	}
	var c [trailerContentLen]byte
	if err := r.src.readFull(c[:]); err != nil {
		return r.endErr(off, err, "the trailer")
	}
	ioff, ilen, err := decodeTrailer(c[:])
	if err != nil {
		return r.corrupt(off, r.n, err)
	}
	if r.indexAt < 0 || ioff != r.indexAt || ioff+ilen != off {
		return r.corrupt(off, r.n, fmt.Errorf("trailer points to an index at %d+%d, but the index was at %d", ioff, ilen, r.indexAt))
	}
	var one [1]byte
	if n, _ := io.ReadFull(r.src.r, one[:]); n != 0 {
		return r.corrupt(off+trailerLen, r.n, errors.New("data after the trailer"))
	}
	r.clean = true
	return io.EOF
}

// FileIndex returns the capture's index: the one stored in the file, or, when
// it is missing or damaged, one rebuilt by scanning every record up to the
// first damage (Index.Rebuilt is then true). A streaming reader returns ErrNoIndex.
func (r *Reader) FileIndex() (*Index, error) {
	if r.tail != nil {
		return r.liveIndex(), nil
	}
	if r.idx != nil || r.idxErr != nil {
		return r.idx, r.idxErr
	}
	if r.ra == nil {
		return nil, ErrNoIndex
	}
	s := &Reader{dataEnd: -1, indexAt: -1, strs: r.strs, ib: &indexBuilder{}, hdr: r.hdr}
	s.src.reset(io.NewSectionReader(r.ra, r.dataStart, r.size-r.dataStart), r.dataStart)
	for {
		if _, err := s.Next(); err != nil {
			var ce *CorruptionError
			if err != io.EOF && !errors.As(err, &ce) {
				r.idxErr = fmt.Errorf("capfile: rebuild index: %w", err)
				return nil, r.idxErr
			}
			break
		}
	}
	s.Close()
	s.ib.idx.Rebuilt = true
	r.idx = &s.ib.idx
	return r.idx, nil
}

// seekIndex is the index seeks use; a live reader does not seek.
func (r *Reader) seekIndex() (*Index, error) {
	if r.tail != nil {
		return nil, ErrNoIndex
	}
	return r.FileIndex()
}

// seekFrame positions the reader at the start of frame k of the index (or at
// the end of the indexed data when k == len(Frames)).
func (r *Reader) seekFrame(x *Index, k int) {
	var off, first int64
	switch {
	case k < len(x.Frames):
		off, first = x.Frames[k].Offset, x.Frames[k].FirstRecord
	case len(x.Frames) > 0:
		f := x.Frames[len(x.Frames)-1]
		off, first = f.Offset+f.Size, x.Records
	default:
		off = r.dataStart
	}
	r.src.reset(io.NewSectionReader(r.ra, off, max(r.dataLimit()-off, 0)), off)
	r.inFrame, r.err, r.n, r.lastTime = false, nil, first, 0
	r.skipRec, r.skipTime = 0, 0
}

// SeekTime positions the reader so that Next returns the first record whose
// Time is at least t. Only the frame holding that record is decompressed.
func (r *Reader) SeekTime(t int64) error {
	x, err := r.seekIndex()
	if err != nil {
		return err
	}
	r.seekFrame(x, x.frameForTime(t))
	r.skipTime = t
	return nil
}

// SeekRecord positions the reader so that Next returns record number i
// (counting from 0). i may equal the number of records (the end).
func (r *Reader) SeekRecord(i int64) error {
	x, err := r.seekIndex()
	if err != nil {
		return err
	}
	if i < 0 || i > x.Records {
		return fmt.Errorf("capfile: seek to record %d: the capture holds records 0 to %d (%d, the end, may be sought too)", i, x.Records-1, x.Records)
	}
	r.seekFrame(x, x.frameForRecord(i))
	r.skipRec = i
	return nil
}

// SeekSession positions the reader so that Next returns the first record of
// session id. Later records of other sessions follow; the caller filters them.
func (r *Reader) SeekSession(id string) error {
	x, err := r.seekIndex()
	if err != nil {
		return err
	}
	s, ok := x.Session(id)
	if !ok {
		return fmt.Errorf("%w: %q", ErrSessionNotFound, id)
	}
	return r.SeekRecord(s.FirstRecord)
}
