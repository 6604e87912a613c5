package capfile

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// maxDecoderWindow bounds the zstd window a reader accepts (and so the
// decoder's history buffer). Writers of this package use at most 8 MiB.
const maxDecoderWindow = 16 << 20

// readBufferSize is the buffer between the decompressor and the record
// parser; records up to this size are returned without another copy.
const readBufferSize = 256 << 10

// decoders holds idle decompressors (a zstd decoder and the buffer behind
// it); creating one is costly. Decoders in synchronous mode (concurrency 1)
// own no goroutines, so one that is dropped instead of returned is simply
// collected.
var decoders sync.Pool

type decoder struct {
	dec *zstd.Decoder
	br  *bufio.Reader // over dec
}

func getDecoder() (*decoder, error) {
	if d, ok := decoders.Get().(*decoder); ok {
		return d, nil
	}
	zd, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(maxDecoderWindow), zstd.WithDecoderLowmem(true))
	if err != nil {
		return nil, fmt.Errorf("capfile: zstd decoder: %w", err)
	}
	return &decoder{dec: zd, br: bufio.NewReaderSize(zd, readBufferSize)}, nil
}

// Reader reads records from a capture.
//
// Next returns io.EOF only at a clean end: after the last record of a capture
// whose index and trailer are intact. Any other end is a *CorruptionError: a
// torn tail (the writer did not finish; Err is io.ErrUnexpectedEOF and every
// record before it is intact) or damage (bad checksum, impossible length,
// undecodable frame). Errors are sticky until the next successful seek.
// A Reader is not safe for concurrent use.
type Reader struct {
	ra     io.ReaderAt // nil for a streaming reader
	size   int64
	closer io.Closer

	src       offsetReader
	hdr       Header
	dataStart int64 // offset of the first byte after the header frame
	dataEnd   int64 // offset of the index frame when clean, else -1
	clean     bool
	idx       *Index
	idxErr    error

	d        *decoder // from the pool; dec and br are its fields
	dec      *zstd.Decoder
	fr       frameReader
	inFrame  bool
	frameOff int64
	rawOff   int64 // bytes of the current frame's record stream consumed
	indexAt  int64 // offset where the index frame was seen while streaming, or -1

	br        *bufio.Reader // over dec
	pending   int           // bytes of the last record still to discard from br
	framePrev int64         // Time of the previous record in the frame
	buf       []byte
	rec       Record
	attrs     []Attr
	strs      stringCache
	n         int64 // records decoded so far (number of the next record)
	lastTime  int64
	err       error

	// lenient reads a header whose magic or signature is damaged (for
	// Repair; its checksum must still hold).
	lenient bool
	// damagedLead describes the damaged magic or signature a lenient read
	// accepted ("" when they were intact).
	damagedLead string

	skipRec  int64 // skip records numbered below this
	skipTime int64 // skip records earlier than this
	ib       *indexBuilder

	// tail is the source of a live reader (OpenLive), else nil.
	tail *tailSource
}

// NewReader reads a capture from a stream, such as standard input. It reads
// and validates the header before returning. A streaming reader cannot seek:
// FileIndex and the Seek methods return ErrNoIndex.
func NewReader(r io.Reader) (*Reader, error) {
	rd := &Reader{dataEnd: -1, indexAt: -1, strs: make(stringCache)}
	rd.src.reset(r, 0)
	if err := rd.readHeader(); err != nil {
		return nil, err
	}
	rd.dataStart = rd.src.off
	return rd, nil
}

// Open opens the capture file at path. It validates the header and loads the
// index from the end of the file when the capture was closed cleanly.
func Open(path string) (*Reader, error) { return openFile(path, false) }

// openFile is Open; lenient accepts a damaged header magic or signature
// (see Reader.lenient).
func openFile(path string, lenient bool) (*Reader, error) {
	f, err := os.Open(path) // its *fs.PathError names the path
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	r, err := newReaderAt(f, st.Size(), lenient)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%w (file %s)", err, path)
	}
	r.closer = f
	return r, nil
}

// NewReaderAt reads a capture of size bytes from ra, as Open does for a file.
func NewReaderAt(ra io.ReaderAt, size int64) (*Reader, error) { return newReaderAt(ra, size, false) }

func newReaderAt(ra io.ReaderAt, size int64, lenient bool) (*Reader, error) {
	r := &Reader{ra: ra, size: size, dataEnd: -1, indexAt: -1, strs: make(stringCache), lenient: lenient}
	r.src.reset(io.NewSectionReader(ra, 0, size), 0)
	if err := r.readHeader(); err != nil {
		return nil, err
	}
	r.dataStart = r.src.off
	r.loadIndex()
	if r.clean {
		r.src.reset(io.NewSectionReader(ra, r.dataStart, r.dataEnd-r.dataStart), r.dataStart)
	}
	return r, nil
}

// dataLimit is where reading records stops: the index when it is intact
// (what follows it is never read then), else the end of the file.
func (r *Reader) dataLimit() int64 {
	if r.clean && r.dataEnd >= 0 {
		return r.dataEnd
	}
	return r.size
}

// describeMagic names what a file starting with b looks like.
func describeMagic(b []byte) string {
	switch {
	case len(b) == 0:
		return "an empty file"
	case len(b) >= 4 && binary.LittleEndian.Uint32(b) == zstdFrameMagic:
		return "a plain zstd frame (magic 28 b5 2f fd), not a capture header (compressed JSON Lines? decompress it first: zstd -d)"
	case len(b) >= 4 && binary.LittleEndian.Uint32(b) == headerMagic:
		return "a skippable frame with a capture header's magic but without the AAEPCAPF signature"
	case len(b) >= 4 && isSkippable(binary.LittleEndian.Uint32(b)):
		return fmt.Sprintf("a zstd skippable frame with magic %#08x", binary.LittleEndian.Uint32(b))
	case len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b:
		return "gzip data (compressed JSON Lines? decompress it first: gunzip)"
	case b[0] == '{' || b[0] == '[':
		return "JSON text"
	}
	return fmt.Sprintf("bytes % x", b)
}

func (r *Reader) readHeader() error {
	var b [skippableHeaderLen]byte
	n, err := io.ReadFull(r.src.r, b[:])
	r.src.off += int64(n)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			if Detect(b[:n]) == Capture {
				return &CorruptionError{Offset: 0, Index: -1, Size: int64(n), Err: tornError{"file ends inside the header"}}
			}
			return fmt.Errorf("%w: found %s of %d bytes", ErrNotCapture, describeMagic(b[:n]), n)
		}
		return fmt.Errorf("capfile: read header: %w", err)
	}
	sig, _ := r.src.r.Peek(len(headerSig))
	switch Detect(append(b[:], sig...)) {
	case NotCapture, OtherZstd:
		return fmt.Errorf("%w: found %s", ErrNotCapture, describeMagic(b[:]))
	case DamagedCapture:
		r.damagedLead = fmt.Sprintf("damaged capture header: it starts % x, a capture starts % x", append(b[:4:4], sig...), headerLead)
		if !r.lenient {
			return &CorruptionError{Offset: 0, Index: -1, Err: errors.New(r.damagedLead)}
		}
	}
	size := binary.LittleEndian.Uint32(b[4:])
	if size < headerFixedLen+2 || size > headerFixedLen+MaxHeaderSize {
		return &CorruptionError{Offset: 0, Index: -1, Err: fmt.Errorf("header frame size %d out of range [%d, %d]", size, headerFixedLen+2, headerFixedLen+MaxHeaderSize)}
	}
	c := make([]byte, size)
	if err := r.src.readFull(c); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return &CorruptionError{Offset: 0, Index: -1, Size: r.src.off, Err: tornError{"file ends inside the header"}}
		}
		return fmt.Errorf("capfile: read header: %w", err)
	}
	v := binary.LittleEndian.Uint16(c[8:])
	if v == 0 || v > Version {
		return fmt.Errorf("%w: file has version %d, this reader supports 1 to %d", ErrUnsupportedVersion, v, Version)
	}
	js := c[headerFixedLen:]
	if got, want := crc32.Checksum(js, castagnoli), binary.LittleEndian.Uint32(c[12:]); got != want {
		return &CorruptionError{Offset: 0, Index: -1, Err: fmt.Errorf("header checksum mismatch (stored %08x, computed %08x)", want, got)}
	}
	if err := json.Unmarshal(js, &r.hdr); err != nil {
		return &CorruptionError{Offset: 0, Index: -1, Err: fmt.Errorf("header JSON: %w", err)}
	}
	r.hdr.Version = int(v)
	return nil
}

// Size returns the size in bytes of a capture opened by Open or
// NewReaderAt, or 0 for a stream.
func (r *Reader) Size() int64 { return r.size }

// Header returns the capture's header.
func (r *Reader) Header() Header { return r.hdr }

// Clean reports whether the capture was closed cleanly: for a file, its index
// and trailer are intact; for a stream, Next has reached the verified trailer.
func (r *Reader) Clean() bool { return r.clean }

// Index returns the number of the record last returned by Next (counting
// from 0), or -1 before the first.
func (r *Reader) Index() int64 { return r.n - 1 }

// Next returns the next record. The Record and the slices it holds (Payload,
// Attrs) are valid only until the next call to Next or a seek; copy what must
// outlive it. Strings are immutable and may be kept.
func (r *Reader) Next() (*Record, error) {
	if r.err != nil {
		return nil, r.err
	}
	for {
		rec, err := r.next()
		if err != nil {
			if r.tail != nil && r.tail.ctx.Err() != nil {
				err = context.Cause(r.tail.ctx)
			}
			r.err = err
			if r.ib != nil && r.ib.cur != nil {
				r.ib.endFrame(r.src.off)
			}
			return nil, err
		}
		if rec.Time < r.skipTime || r.n-1 < r.skipRec {
			continue
		}
		r.skipTime, r.skipRec = 0, 0
		return rec, nil
	}
}

func (r *Reader) corrupt(off int64, index int64, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		// Reading was stopped (Ctrl-C, a deadline), not the capture
		// damaged: no record is judged lost, no repair advised.
		return err
	}
	ce := &CorruptionError{Offset: off, Index: index, Err: err}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		// A torn tail: the input ran out, so it ends where reading stopped.
		ce.Size = max(r.size, r.src.off)
		// The end of a file its writer still holds (a live reader
		// waits instead, until the writer is gone).
		ce.Live = r.tail == nil && r.BeingWritten()
	}
	return ce
}

func (r *Reader) next() (*Record, error) {
	for {
		for !r.inFrame {
			if err := r.nextFrame(); err != nil {
				return nil, err
			}
		}
		rec, err := r.readRecord()
		if rec != nil || err != nil {
			return rec, err
		}
		// The frame ended on a record boundary.
		if err := r.endFrame(); err != nil {
			return nil, err
		}
	}
}

// readRecord reads the next record of the current frame. It returns nil and
// no error at the frame's end.
func (r *Reader) readRecord() (*Record, error) {
	if r.pending > 0 {
		r.br.Discard(r.pending) // bytes already buffered: cannot fail
		r.pending = 0
	}
	hdr, err := r.br.Peek(maxRecordHeader)
	if len(hdr) == 0 {
		if err == io.EOF && !r.fr.torn && r.fr.err == nil {
			return nil, nil
		}
		return nil, r.frameErr(err, "record header")
	}
	size, k := binary.Uvarint(hdr)
	switch {
	case k == 0 && len(hdr) < maxRecordHeader:
		return nil, r.frameErr(err, "record header")
	case k <= 0 || k > 4:
		return nil, r.corrupt(r.frameOff, r.n, fmt.Errorf("bad record length varint % x at stream offset %d of the frame", hdr, r.rawOff))
	case size < minRecordBody || size > maxRecordBody:
		return nil, r.corrupt(r.frameOff, r.n, fmt.Errorf("record length %d out of range [%d, %d] at stream offset %d of the frame", size, minRecordBody, maxRecordBody, r.rawOff))
	case len(hdr) < k+4:
		return nil, r.frameErr(err, "record header")
	}
	crc := binary.LittleEndian.Uint32(hdr[k:])
	total := k + 4 + int(size)
	var body []byte
	if total <= r.br.Size() {
		p, err := r.br.Peek(total)
		if len(p) < total {
			return nil, r.frameErr(err, "record body")
		}
		body, r.pending = p[k+4:], total
	} else {
		r.br.Discard(k + 4)
		if body, err = r.readBody(int(size)); err != nil {
			return nil, r.frameErr(err, "record body")
		}
	}
	if got := crc32.Checksum(body, castagnoli); got != crc {
		return nil, r.corrupt(r.frameOff, r.n, fmt.Errorf("record checksum mismatch (stored %08x, computed %08x)", crc, got))
	}
	if err := decodeBody(body, r.framePrev, &r.rec, &r.attrs, r.strs); err != nil {
		return nil, r.corrupt(r.frameOff, r.n, err)
	}
	if r.rec.Time < r.lastTime {
		return nil, r.corrupt(r.frameOff, r.n, fmt.Errorf("record time %d is before the previous record's %d", r.rec.Time, r.lastTime))
	}
	r.lastTime, r.framePrev = r.rec.Time, r.rec.Time
	r.rawOff += int64(total)
	if r.ib != nil {
		r.ib.add(r.rec.Time, r.rec.Session, total)
	}
	r.n++
	return &r.rec, nil
}

// readBody reads a record body of size bytes. A buffer larger than 1 MiB
// grows only as the bytes arrive, so a damaged length cannot make the reader
// allocate memory the frame does not back with data.
func (r *Reader) readBody(size int) ([]byte, error) {
	if size <= cap(r.buf) {
		r.buf = r.buf[:size]
		_, err := io.ReadFull(r.br, r.buf)
		return r.buf, err
	}
	have := 0
	for have < size {
		if have == cap(r.buf) {
			c := min(max(2*cap(r.buf), 64<<10), size)
			if have < 1<<20 {
				c = min(max(c, 1<<20), size)
			}
			nb := make([]byte, have, c)
			copy(nb, r.buf[:have])
			r.buf = nb
		}
		n, err := io.ReadFull(r.br, r.buf[have:cap(r.buf)])
		have += n
		r.buf = r.buf[:have]
		if err != nil {
			return nil, err
		}
	}
	return r.buf, nil
}

// frameErr classifies an error met while decompressing the current frame.
func (r *Reader) frameErr(err error, what string) error {
	switch {
	case r.fr.torn:
		return r.corrupt(r.frameOff, r.n, tornError{fmt.Sprintf("file ends inside a zstd frame (while reading a %s)", what)})
	case r.fr.err != nil:
		return r.corrupt(r.frameOff, r.n, r.fr.err)
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return r.corrupt(r.frameOff, r.n, fmt.Errorf("zstd frame ends inside a %s", what))
	}
	return r.corrupt(r.frameOff, r.n, fmt.Errorf("zstd frame: %w", err))
}

// endFrame finishes the current frame after its last record.
func (r *Reader) endFrame() error {
	if !r.fr.done() {
		if _, err := io.Copy(io.Discard, &r.fr); err != nil || !r.fr.done() {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return r.frameErr(err, "frame end")
		}
	}
	r.inFrame = false
	if r.ib != nil {
		r.ib.endFrame(r.src.off)
	}
	return nil
}

// nextFrame reads frames until it has started a data frame or met the end.
func (r *Reader) nextFrame() error {
	if r.dataEnd >= 0 && r.src.off >= r.dataEnd {
		return io.EOF
	}
	off := r.src.off
	var m [skippableHeaderLen]byte
	if err := r.src.readFull(m[:4]); err != nil {
		return r.endErr(off, err, "")
	}
	magic := binary.LittleEndian.Uint32(m[:])
	if magic == zstdFrameMagic {
		if r.d == nil {
			d, err := getDecoder()
			if err != nil {
				return err
			}
			r.d, r.dec, r.br = d, d.dec, d.br
		}
		if err := r.fr.start(&r.src, m[:4]); err != nil {
			return r.frameStartErr(off, err)
		}
		if err := r.dec.Reset(&r.fr); err != nil {
			return r.frameStartErr(off, err)
		}
		r.br.Reset(r.dec)
		r.inFrame, r.frameOff, r.rawOff, r.framePrev, r.pending = true, off, 0, 0, 0
		if r.ib != nil {
			r.ib.startFrame(off)
		}
		return nil
	}
	if !isSkippable(magic) {
		return r.corrupt(off, r.n, fmt.Errorf("expected a zstd frame, found %s", describeMagic(m[:4])))
	}
	if err := r.src.readFull(m[4:]); err != nil {
		return r.endErr(off, err, "a skippable frame header")
	}
	size := int64(binary.LittleEndian.Uint32(m[4:]))
	switch magic {
	case headerMagic:
		return r.corrupt(off, r.n, errors.New("a second capture header inside the capture"))
	case indexMagic:
		if err := r.checkIndexFrame(size); err != nil {
			return r.endErr(off, err, "the index")
		}
		r.indexAt = off
	case trailerMagic:
		return r.readTrailer(off, size)
	default:
		// A skippable frame this version does not define: skip it.
		if err := r.src.discard(size); err != nil {
			return r.endErr(off, err, "a skippable frame")
		}
	}
	return nil
}

func (r *Reader) frameStartErr(off int64, err error) error {
	if r.fr.torn {
		return r.corrupt(off, r.n, tornError{"file ends inside a zstd frame header"})
	}
	return r.corrupt(off, r.n, fmt.Errorf("zstd frame header: %w", err))
}

// endErr turns an error met between frames into a torn or corrupt error.
func (r *Reader) endErr(off int64, err error, inside string) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		var torn tornError
		switch {
		case inside != "":
			torn = tornError{"file ends inside " + inside}
		case r.indexAt >= 0:
			torn = tornError{"file ends after the index, without a trailer"}
		default:
			torn = tornError{"file ends without an index (the writer did not close it)"}
		}
		if r.endsWithTrailer() {
			// A writer that stopped early leaves no trailer: this file
			// was closed, and what reads as an early end is damage (a bit
			// flip in the index's or the trailer's frame header).
			return r.corrupt(off, r.n, fmt.Errorf("%s, yet it ends with a trailer, written only when a capture is closed: damaged", torn.msg))
		}
		return r.corrupt(off, r.n, torn)
	}
	var ce *CorruptionError
	if errors.As(err, &ce) {
		return err
	}
	if _, ok := err.(indexError); ok {
		return r.corrupt(off, r.n, err)
	}
	return fmt.Errorf("capfile: read at byte %d: %w", off, err)
}

// Close releases the reader's resources and closes the file opened by Open.
func (r *Reader) Close() error {
	if r.d != nil {
		r.dec.Reset(nil)
		decoders.Put(r.d)
		r.d, r.dec, r.br = nil, nil, nil
	}
	r.err = errors.New("capfile: reader is closed")
	if r.closer != nil {
		c := r.closer
		r.closer = nil
		return c.Close()
	}
	return nil
}
