package capfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sort"
)

// FrameInfo describes one zstd data frame of a capture.
type FrameInfo struct {
	// Offset is the byte offset of the frame in the file.
	Offset int64
	// Size is the frame's compressed size in bytes.
	Size int64
	// RawSize is the size of the frame's decompressed record stream.
	RawSize int64
	// FirstRecord is the number of the frame's first record.
	FirstRecord int64
	// Records is how many records the frame holds.
	Records int64
	// FirstTime and LastTime are the Time of the frame's first and last record.
	FirstTime, LastTime int64
}

// SessionInfo summarises the records of one session key.
type SessionInfo struct {
	// ID is the session key (Record.Session).
	ID string
	// FirstRecord is the number of the session's first record.
	FirstRecord int64
	// Records is how many records carry this session key.
	Records int64
	// FirstTime and LastTime are the Time of the session's first and last record.
	FirstTime, LastTime int64
	// Frames lists, in ascending order, the positions in Index.Frames of the
	// frames holding at least one record of the session.
	Frames []int
}

// Index locates frames, times and sessions in a capture. A cleanly closed
// capture stores it at its end; Reader.FileIndex rebuilds it by scanning when
// it is missing.
type Index struct {
	// Frames lists the data frames in file order.
	Frames []FrameInfo
	// Sessions lists the non-empty session keys in order of first appearance.
	Sessions []SessionInfo
	// Records is the total number of records.
	Records int64
	// Rebuilt is true when the index was rebuilt by scanning the records
	// rather than read from the file.
	Rebuilt bool
}

// Session returns the summary of session id.
func (x *Index) Session(id string) (*SessionInfo, bool) {
	for i := range x.Sessions {
		if x.Sessions[i].ID == id {
			return &x.Sessions[i], true
		}
	}
	return nil, false
}

// FirstTime returns the Time of the first record, or 0 for an empty capture.
func (x *Index) FirstTime() int64 {
	if len(x.Frames) == 0 {
		return 0
	}
	return x.Frames[0].FirstTime
}

// LastTime returns the Time of the last record, or 0 for an empty capture.
func (x *Index) LastTime() int64 {
	if len(x.Frames) == 0 {
		return 0
	}
	return x.Frames[len(x.Frames)-1].LastTime
}

// frameForTime returns the position of the first frame whose LastTime >= t,
// or len(Frames) when every record is earlier than t.
func (x *Index) frameForTime(t int64) int {
	return sort.Search(len(x.Frames), func(i int) bool { return x.Frames[i].LastTime >= t })
}

// frameForRecord returns the position of the frame holding record i, or
// len(Frames) when i == Records.
func (x *Index) frameForRecord(i int64) int {
	return sort.Search(len(x.Frames), func(k int) bool {
		f := &x.Frames[k]
		return f.FirstRecord+f.Records > i
	})
}

// indexBuilder accumulates an Index as records are written or scanned.
type indexBuilder struct {
	idx      Index
	sessions map[string]int
	cur      *FrameInfo
}

func (b *indexBuilder) startFrame(off int64) {
	b.idx.Frames = append(b.idx.Frames, FrameInfo{Offset: off, FirstRecord: b.idx.Records})
	b.cur = &b.idx.Frames[len(b.idx.Frames)-1]
}

func (b *indexBuilder) add(t int64, session string, rawLen int) {
	f := b.cur
	if f.Records == 0 {
		f.FirstTime = t
	}
	f.LastTime = t
	f.Records++
	f.RawSize += int64(rawLen)
	if session != "" {
		if b.sessions == nil {
			b.sessions = make(map[string]int)
		}
		fi := len(b.idx.Frames) - 1
		k, ok := b.sessions[session]
		if !ok {
			k = len(b.idx.Sessions)
			b.sessions[session] = k
			b.idx.Sessions = append(b.idx.Sessions, SessionInfo{ID: session, FirstRecord: b.idx.Records, FirstTime: t})
		}
		s := &b.idx.Sessions[k]
		s.Records++
		s.LastTime = t
		if n := len(s.Frames); n == 0 || s.Frames[n-1] != fi {
			s.Frames = append(s.Frames, fi)
		}
	}
	b.idx.Records++
}

// endFrame closes the current frame at file offset end. A frame without
// records is dropped.
func (b *indexBuilder) endFrame(end int64) {
	if b.cur == nil {
		return
	}
	if b.cur.Records == 0 {
		b.idx.Frames = b.idx.Frames[:len(b.idx.Frames)-1]
	} else {
		b.cur.Size = end - b.cur.Offset
	}
	b.cur = nil
}

// encodeIndex returns the content of the index skippable frame.
func encodeIndex(x *Index) []byte {
	var body []byte
	u := func(v uint64) { body = binary.AppendUvarint(body, v) }
	u(uint64(x.Records))
	u(uint64(len(x.Frames)))
	var prevEnd, prevTime int64
	for _, f := range x.Frames {
		u(uint64(f.Offset - prevEnd))
		u(uint64(f.Size))
		u(uint64(f.RawSize))
		u(uint64(f.Records))
		u(uint64(f.FirstTime - prevTime))
		u(uint64(f.LastTime - f.FirstTime))
		prevEnd, prevTime = f.Offset+f.Size, f.LastTime
	}
	u(uint64(len(x.Sessions)))
	for _, s := range x.Sessions {
		u(uint64(len(s.ID)))
		body = append(body, s.ID...)
		u(uint64(s.FirstRecord))
		u(uint64(s.Records))
		u(uint64(s.FirstTime))
		u(uint64(s.LastTime - s.FirstTime))
		u(uint64(len(s.Frames)))
		prev := 0
		for _, fi := range s.Frames {
			u(uint64(fi - prev))
			prev = fi
		}
	}
	out := make([]byte, 0, 12+len(body))
	out = append(out, indexSig...)
	out = binary.LittleEndian.AppendUint32(out, crc32.Checksum(body, castagnoli))
	return append(out, body...)
}

// indexDecoder reads uvarints with a sticky error.
type indexDecoder struct {
	b   []byte
	err error
}

func (d *indexDecoder) u() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errors.New("truncated or overlong varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// i reads a uvarint that must fit in a non-negative int64 below 1<<62.
func (d *indexDecoder) i() int64 {
	v := d.u()
	if v >= 1<<62 && d.err == nil {
		d.err = fmt.Errorf("value %d out of range", v)
	}
	return int64(v)
}

// count reads a count that cannot exceed the remaining bytes (every element
// takes at least one byte), so a corrupt count never causes a large allocation.
func (d *indexDecoder) count(what string) int {
	v := d.u()
	if d.err == nil && v > uint64(len(d.b)) {
		d.err = fmt.Errorf("%s count %d exceeds the %d remaining bytes", what, v, len(d.b))
	}
	if d.err != nil {
		return 0
	}
	return int(v)
}

// decodeIndex parses the content of an index skippable frame. dataStart and
// dataEnd bound the data frames.
func decodeIndex(content []byte, dataStart, dataEnd int64) (*Index, error) {
	if len(content) < 12 || string(content[:8]) != indexSig {
		return nil, errors.New("index frame lacks the AAEPINDX signature")
	}
	body := content[12:]
	if got, want := crc32.Checksum(body, castagnoli), binary.LittleEndian.Uint32(content[8:]); got != want {
		return nil, fmt.Errorf("index checksum mismatch (stored %08x, computed %08x)", want, got)
	}
	d := &indexDecoder{b: body}
	x := &Index{Records: d.i()}
	nf := d.count("frame")
	x.Frames = make([]FrameInfo, 0, nf)
	var prevEnd, prevTime, recs int64 = dataStart, 0, 0
	for i := 0; i < nf && d.err == nil; i++ {
		var f FrameInfo
		if i == 0 {
			f.Offset = d.i()
			if f.Offset != dataStart && d.err == nil {
				d.err = fmt.Errorf("first frame at offset %d, want %d", f.Offset, dataStart)
			}
		} else {
			f.Offset = prevEnd + d.i()
		}
		f.Size = d.i()
		f.RawSize = d.i()
		f.Records = d.i()
		f.FirstTime = prevTime + d.i()
		f.LastTime = f.FirstTime + d.i()
		f.FirstRecord = recs
		if d.err != nil {
			break
		}
		if f.Size <= 0 || f.Records <= 0 || f.Offset+f.Size > dataEnd || f.Offset < prevEnd || f.FirstTime < 0 || f.LastTime < 0 {
			d.err = fmt.Errorf("frame %d is inconsistent (offset %d, size %d, records %d)", i, f.Offset, f.Size, f.Records)
			break
		}
		recs += f.Records
		prevEnd, prevTime = f.Offset+f.Size, f.LastTime
		x.Frames = append(x.Frames, f)
	}
	if d.err == nil && recs != x.Records {
		d.err = fmt.Errorf("frames hold %d records, index says %d", recs, x.Records)
	}
	ns := d.count("session")
	x.Sessions = make([]SessionInfo, 0, ns)
	for i := 0; i < ns && d.err == nil; i++ {
		var s SessionInfo
		n := d.count("session id byte")
		if d.err != nil {
			break
		}
		if n > MaxSession {
			d.err = fmt.Errorf("session id of %d bytes exceeds MaxSession", n)
			break
		}
		s.ID = string(d.b[:n])
		d.b = d.b[n:]
		s.FirstRecord = d.i()
		s.Records = d.i()
		s.FirstTime = d.i()
		s.LastTime = s.FirstTime + d.i()
		nfr := d.count("session frame")
		s.Frames = make([]int, 0, nfr)
		prev := int64(0)
		for k := 0; k < nfr && d.err == nil; k++ {
			prev += d.i()
			if d.err == nil && (prev >= int64(len(x.Frames)) || (k > 0 && prev == int64(s.Frames[k-1]))) {
				d.err = fmt.Errorf("session %q names frame %d of %d", s.ID, prev, len(x.Frames))
			}
			s.Frames = append(s.Frames, int(prev))
		}
		if d.err == nil && (s.FirstRecord+s.Records > x.Records || s.Records <= 0 || len(s.Frames) == 0) {
			d.err = fmt.Errorf("session %q is inconsistent (first %d, records %d)", s.ID, s.FirstRecord, s.Records)
		}
		x.Sessions = append(x.Sessions, s)
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%d trailing bytes after the index", len(d.b))
	}
	if d.err != nil {
		return nil, fmt.Errorf("bad index: %w", d.err)
	}
	return x, nil
}

// encodeTrailer returns the whole trailer skippable frame.
func encodeTrailer(indexOff, indexLen int64) []byte {
	c := make([]byte, 0, trailerContentLen)
	c = binary.LittleEndian.AppendUint64(c, uint64(indexOff))
	c = binary.LittleEndian.AppendUint64(c, uint64(indexLen))
	c = append(c, trailerSig...)
	c = binary.LittleEndian.AppendUint32(c, Version)
	c = binary.LittleEndian.AppendUint32(c, crc32.Checksum(c, castagnoli))
	return appendSkippable(make([]byte, 0, trailerLen), trailerMagic, c)
}

// decodeTrailer parses trailer frame content.
func decodeTrailer(c []byte) (indexOff, indexLen int64, err error) {
	if len(c) != trailerContentLen {
		return 0, 0, fmt.Errorf("trailer content is %d bytes, want %d", len(c), trailerContentLen)
	}
	if string(c[16:24]) != trailerSig {
		return 0, 0, errors.New("trailer lacks the AAEPTRLR signature")
	}
	if got, want := crc32.Checksum(c[:28], castagnoli), binary.LittleEndian.Uint32(c[28:]); got != want {
		return 0, 0, fmt.Errorf("trailer checksum mismatch (stored %08x, computed %08x)", want, got)
	}
	off, n := binary.LittleEndian.Uint64(c), binary.LittleEndian.Uint64(c[8:])
	if off >= 1<<62 || n >= 1<<62 {
		return 0, 0, fmt.Errorf("trailer index location %d+%d out of range", off, n)
	}
	return int64(off), int64(n), nil
}
