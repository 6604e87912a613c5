package capfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
)

// File layout (format version 1; FORMAT.md is the full specification).
//
// A capture is a sequence of zstd frames, so the whole file is a valid zstd
// file:
//
//	header frame   zstd skippable frame, magic 0x184D2A5A
//	data frames    ordinary zstd frames; their concatenated content is the record stream
//	index frame    zstd skippable frame, magic 0x184D2A5B   (absent after a crash)
//	trailer frame  zstd skippable frame, magic 0x184D2A5C, fixed 40 bytes (absent after a crash)
//
// A skippable frame is a 4-byte little-endian magic, a 4-byte little-endian
// content size, then the content. Readers skip skippable frames whose magic is
// 0x184D2A50..0x184D2A5F and that this version does not define.
//
// Header frame content:
//
//	off  size  field
//	0    8     "AAEPCAPF"
//	8    2     format version, uint16 LE (1)
//	10   2     reserved, 0
//	12   4     CRC-32C (Castagnoli) of the JSON bytes
//	16   n     Header as JSON (n = content size - 16, at most MaxHeaderSize)
//
// Record, inside the decompressed data stream (integers little-endian):
//
//	field    size      meaning
//	length   uvarint   body length L (minRecordBody <= L <= maxRecordBody, at most 4 bytes)
//	crc      4         CRC-32C (Castagnoli) of the L body bytes
//	body     L         tdelta   uvarint  Time minus the previous record's Time in the same
//	                                     frame (the Time itself for a frame's first record)
//	                   kind     uint8
//	                   flags    uint8
//	                   source   uint16
//	                   session  uvarint length (<= MaxSession) + bytes
//	                   attrs    uvarint count (<= MaxAttrs), then per attribute:
//	                            uvarint key length + key, uvarint value length + value
//	                            (each <= MaxAttrLen)
//	                   payload  the rest of the body (<= MaxPayload)
//
// The random-looking fields (length, CRC, time delta) come first and the
// stable ones (kind, source, session, the payload's JSON prefix) after, so
// that zstd finds long matches from one record to the next.
//
// A data frame always holds whole records: the writer closes a frame only
// between records.

// Version is the format version this package writes. Readers accept every
// version from 1 up to Version.
const Version = 1

// Limits. They are part of the format: a writer never produces larger values
// and a reader rejects them before allocating.
const (
	// MaxPayload is the largest payload one record may carry (64 MiB).
	MaxPayload = 64 << 20
	// MaxSession is the longest session key in bytes.
	MaxSession = 1024
	// MaxAttrs is the largest number of attributes on one record.
	MaxAttrs = 64
	// MaxAttrLen is the longest attribute key or value in bytes.
	MaxAttrLen = 64 << 10
	// MaxHeaderSize bounds the JSON header (1 MiB).
	MaxHeaderSize = 1 << 20

	// minRecordBody is time delta+kind+flags+source+empty session+zero attrs.
	minRecordBody = 1 + 1 + 1 + 2 + 1 + 1
	// maxRecordMeta bounds the non-payload part of a body.
	maxRecordMeta = minRecordBody + binary.MaxVarintLen64*(3+2*MaxAttrs) + MaxSession + 2*MaxAttrs*MaxAttrLen
	// maxRecordBody bounds a record body.
	maxRecordBody = MaxPayload + maxRecordMeta
	// maxRecordHeader is the longest length and CRC in front of a body.
	maxRecordHeader = 4 + 4
)

// zstd frame magic numbers, as they appear little-endian at the start of a frame.
const (
	zstdFrameMagic     uint32 = 0xFD2FB528
	skippableMagicMin  uint32 = 0x184D2A50
	skippableMagicMask uint32 = 0xFFFFFFF0
	headerMagic        uint32 = 0x184D2A5A
	indexMagic         uint32 = 0x184D2A5B
	trailerMagic       uint32 = 0x184D2A5C
	skippableHeaderLen        = 8
)

// Content signatures of the skippable frames.
const (
	headerSig  = "AAEPCAPF"
	indexSig   = "AAEPINDX"
	trailerSig = "AAEPTRLR"

	headerFixedLen = 16
	// trailer content: index offset u64, index frame length u64, "AAEPTRLR",
	// version u32, CRC-32C u32 of the preceding 28 bytes.
	trailerContentLen = 32
	trailerLen        = skippableHeaderLen + trailerContentLen
	// maxIndexSize bounds the index frame content (256 MiB).
	maxIndexSize = 256 << 20
)

// castagnoli is the CRC-32C table used for every checksum in the format.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func isSkippable(magic uint32) bool { return magic&skippableMagicMask == skippableMagicMin }

// appendSkippable appends a skippable frame with the given magic and content.
func appendSkippable(dst []byte, magic uint32, content []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, magic)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(content)))
	return append(dst, content...)
}

// checkRecord validates rec against the format's limits.
func checkRecord(rec *Record) error {
	switch {
	case rec.Time < 0:
		return fmt.Errorf("capfile: record time %d is negative", rec.Time)
	case len(rec.Payload) > MaxPayload:
		return fmt.Errorf("capfile: payload of %d bytes exceeds MaxPayload (%d)", len(rec.Payload), MaxPayload)
	case len(rec.Session) > MaxSession:
		return fmt.Errorf("capfile: session key of %d bytes exceeds MaxSession (%d)", len(rec.Session), MaxSession)
	case len(rec.Attrs) > MaxAttrs:
		return fmt.Errorf("capfile: %d attributes exceed MaxAttrs (%d)", len(rec.Attrs), MaxAttrs)
	}
	for _, a := range rec.Attrs {
		if len(a.Key) > MaxAttrLen || len(a.Value) > MaxAttrLen {
			return fmt.Errorf("capfile: attribute %.32q longer than MaxAttrLen (%d)", a.Key, MaxAttrLen)
		}
	}
	return nil
}

// appendRecord appends the encoding of rec (length, CRC, body) to dst; prev
// is the Time of the previous record in the same frame (0 for the first).
// rec must have passed checkRecord and rec.Time >= prev.
func appendRecord(dst []byte, rec *Record, prev int64) []byte {
	// Encode the body after room for the longest header, then move the
	// header into place.
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0)
	dst = binary.AppendUvarint(dst, uint64(rec.Time-prev))
	dst = append(dst, byte(rec.Kind), byte(rec.Flags))
	dst = binary.LittleEndian.AppendUint16(dst, rec.Origin)
	dst = binary.AppendUvarint(dst, uint64(len(rec.Session)))
	dst = append(dst, rec.Session...)
	dst = binary.AppendUvarint(dst, uint64(len(rec.Attrs)))
	for _, a := range rec.Attrs {
		dst = binary.AppendUvarint(dst, uint64(len(a.Key)))
		dst = append(dst, a.Key...)
		dst = binary.AppendUvarint(dst, uint64(len(a.Value)))
		dst = append(dst, a.Value...)
	}
	dst = append(dst, rec.Payload...)
	body := dst[start+maxRecordHeader:]
	var h [maxRecordHeader + 2]byte
	n := binary.PutUvarint(h[:], uint64(len(body)))
	binary.LittleEndian.PutUint32(h[n:], crc32.Checksum(body, castagnoli))
	n += 4
	copy(dst[start+maxRecordHeader-n:], h[:n])
	return append(dst[:start], dst[start+maxRecordHeader-n:]...)
}

// stringCache interns short strings (session keys, attribute keys) so decoding
// a record does not allocate for values seen before.
type stringCache map[string]string

func (c stringCache) get(b []byte) string {
	if s, ok := c[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(c) < 4096 {
		c[s] = s
	}
	return s
}

// decodeBody decodes a record body (CRC already checked) into rec; prev is
// the Time of the previous record in the frame. The payload aliases body.
func decodeBody(body []byte, prev int64, rec *Record, attrs *[]Attr, strs stringCache) error {
	if len(body) < minRecordBody {
		return fmt.Errorf("record body of %d bytes is shorter than the minimum %d", len(body), minRecordBody)
	}
	d, k := binary.Uvarint(body)
	if k <= 0 {
		return errors.New("bad time varint")
	}
	if d > math.MaxInt64-uint64(prev) {
		return fmt.Errorf("record time %d + %d overflows", prev, d)
	}
	rec.Time = prev + int64(d)
	p := body[k:]
	if len(p) < 6 {
		return fmt.Errorf("record body of %d bytes is too short", len(body))
	}
	rec.Kind = Kind(p[0])
	rec.Flags = Flags(p[1])
	rec.Origin = binary.LittleEndian.Uint16(p[2:])
	p = p[4:]
	readBytes := func(what string, max int) ([]byte, error) {
		n, k := binary.Uvarint(p)
		if k <= 0 {
			return nil, fmt.Errorf("bad %s length varint", what)
		}
		if n > uint64(max) {
			return nil, fmt.Errorf("%s length %d exceeds maximum %d", what, n, max)
		}
		if n > uint64(len(p)-k) {
			return nil, fmt.Errorf("%s length %d overruns the record body", what, n)
		}
		b := p[k : k+int(n)]
		p = p[k+int(n):]
		return b, nil
	}
	s, err := readBytes("session", MaxSession)
	if err != nil {
		return err
	}
	rec.Session = strs.get(s)
	n, k := binary.Uvarint(p)
	if k <= 0 {
		return errors.New("bad attribute count varint")
	}
	if n > MaxAttrs {
		return fmt.Errorf("attribute count %d exceeds maximum %d", n, MaxAttrs)
	}
	p = p[k:]
	as := (*attrs)[:0]
	for i := uint64(0); i < n; i++ {
		key, err := readBytes("attribute key", MaxAttrLen)
		if err != nil {
			return err
		}
		val, err := readBytes("attribute value", MaxAttrLen)
		if err != nil {
			return err
		}
		as = append(as, Attr{Key: strs.get(key), Value: string(val)})
	}
	*attrs = as
	rec.Attrs = nil
	if n > 0 {
		rec.Attrs = as
	}
	if len(p) > MaxPayload {
		return fmt.Errorf("payload of %d bytes exceeds MaxPayload (%d)", len(p), MaxPayload)
	}
	rec.Payload = p
	return nil
}

// SniffLen is how many leading bytes Sniff and Detect look at.
const SniffLen = skippableHeaderLen + len(headerSig)

// Sniff tells from the first bytes of a file (SniffLen of them, or all there
// are) whether it is a capture (its header frame, intact or damaged: see
// Detect), or another zstd stream, skippable frames included.
func Sniff(head []byte) (capture, zstdStream bool) {
	switch Detect(head) {
	case Capture, DamagedCapture:
		return true, true
	case OtherZstd:
		return false, true
	}
	return false, false
}

// Detection is what the first bytes of a file say it is.
type Detection int

const (
	// NotCapture: neither a capture nor zstd (JSON text, say, or nothing).
	NotCapture Detection = iota
	// Capture: the header frame's magic and signature are intact.
	Capture
	// DamagedCapture: most of the header frame's magic and signature bytes
	// are there, not all of them: a capture whose first bytes are damaged.
	// Readers report it as damage at byte 0, never as another kind of file.
	DamagedCapture
	// OtherZstd: a zstd stream (a frame or a skippable frame) that is not a
	// capture.
	OtherZstd
)

// headerLead is the capture header's magic and signature as they appear at
// the start of every capture (the 4 bytes of the frame size between them
// vary).
var headerLead = func() []byte {
	b := binary.LittleEndian.AppendUint32(nil, headerMagic)
	return append(b, headerSig...)
}()

// Detect tells from the first bytes of a file (SniffLen of them, or all
// there are) whether it is a capture, a capture whose first bytes are
// damaged, another zstd stream or none of these. This is the one test
// every reader makes before it decides how to read an input: a file that
// starts like a capture is read as a capture, and reported as damaged if
// it is, however its first byte reads (a '{' included).
//
// A capture's first SniffLen bytes are the header frame's 4-byte magic, its
// 4-byte size and the 8-byte signature "AAEPCAPF"; when at least 9 of the 12
// bytes of magic and signature are right but not all, the capture is
// damaged. A file shorter than SniffLen is a capture when its magic is
// right (a header cut short).
func Detect(head []byte) Detection {
	if len(head) < 4 {
		return NotCapture
	}
	magic := binary.LittleEndian.Uint32(head)
	if len(head) >= SniffLen {
		same := 0
		for i, b := range headerLead {
			at := i
			if i >= 4 {
				at = i + 4 // past the frame size
			}
			if head[at] == b {
				same++
			}
		}
		switch {
		case same == len(headerLead):
			return Capture
		case same >= len(headerLead)-3:
			return DamagedCapture
		}
	} else if magic == headerMagic {
		return Capture
	}
	if magic == zstdFrameMagic || isSkippable(magic) {
		return OtherZstd
	}
	return NotCapture
}
