package capfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// offsetReader is a buffered reader that knows the file offset of its next byte.
type offsetReader struct {
	r   *bufio.Reader
	off int64
}

func (s *offsetReader) reset(r io.Reader, off int64) {
	if s.r == nil {
		s.r = bufio.NewReaderSize(r, 64<<10)
	} else {
		s.r.Reset(r)
	}
	s.off = off
}

// readFull reads len(p) bytes. It returns io.EOF if no byte was available and
// io.ErrUnexpectedEOF if only some were.
func (s *offsetReader) readFull(p []byte) error {
	n, err := io.ReadFull(s.r, p)
	s.off += int64(n)
	return err
}

// discard skips n bytes, returning io.ErrUnexpectedEOF if the input ends first.
func (s *offsetReader) discard(n int64) error {
	for n > 0 {
		k := n
		if k > 1<<30 {
			k = 1 << 30
		}
		d, err := s.r.Discard(int(k))
		s.off += int64(d)
		n -= int64(d)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return io.ErrUnexpectedEOF
			}
			return err
		}
	}
	return nil
}

// zstdMaxBlock is the largest zstd block (RFC 8878, Block_Maximum_Size).
const zstdMaxBlock = 128 << 10

// frameReader passes the bytes of exactly one zstd frame from an offsetReader to the
// decompressor, following the frame's block headers so that it stops at the
// frame's end and can tell a frame cut short (torn) from a damaged one.
type frameReader struct {
	src      *offsetReader
	hdr      [18]byte
	pend     []byte // header bytes to hand out before anything else
	remain   int64  // block content bytes still to pass through
	state    int
	checksum bool
	torn     bool  // the input ended inside the frame
	err      error // structural damage
}

const (
	stBlock = iota
	stChecksum
	stDone
)

// start reads the frame header; magic holds the 4 bytes already consumed.
func (f *frameReader) start(src *offsetReader, magic []byte) error {
	*f = frameReader{src: src, hdr: f.hdr}
	copy(f.hdr[:4], magic)
	if err := src.readFull(f.hdr[4:5]); err != nil {
		return f.ioErr(err)
	}
	fhd := f.hdr[4]
	if fhd&0x08 != 0 {
		f.err = fmt.Errorf("zstd frame header has the reserved bit set (descriptor %#02x)", fhd)
		return f.err
	}
	single := fhd&0x20 != 0
	f.checksum = fhd&0x04 != 0
	n := [4]int{0, 1, 2, 4}[fhd&3]
	if !single {
		n++ // window descriptor
	}
	switch fhd >> 6 {
	case 0:
		if single {
			n++
		}
	case 1:
		n += 2
	case 2:
		n += 4
	case 3:
		n += 8
	}
	if err := src.readFull(f.hdr[5 : 5+n]); err != nil {
		return f.ioErr(err)
	}
	f.pend = f.hdr[:5+n]
	return nil
}

func (f *frameReader) ioErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		f.torn = true
		return io.ErrUnexpectedEOF
	}
	f.err = err
	return err
}

func (f *frameReader) Read(p []byte) (int, error) {
	for {
		if f.err != nil {
			return 0, f.err
		}
		if f.torn {
			return 0, io.ErrUnexpectedEOF
		}
		if len(f.pend) > 0 {
			n := copy(p, f.pend)
			f.pend = f.pend[n:]
			return n, nil
		}
		if f.remain > 0 {
			if int64(len(p)) > f.remain {
				p = p[:f.remain]
			}
			n, err := f.src.r.Read(p)
			f.src.off += int64(n)
			f.remain -= int64(n)
			if n > 0 {
				return n, nil
			}
			if err == nil {
				err = io.ErrNoProgress
			}
			return 0, f.ioErr(err)
		}
		switch f.state {
		case stBlock:
			b := f.hdr[:3]
			if err := f.src.readFull(b); err != nil {
				return 0, f.ioErr(err)
			}
			h := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16
			size := int64(h >> 3)
			switch (h >> 1) & 3 {
			case 1: // RLE: one byte repeated size times
				size = 1
			case 3:
				f.err = errors.New("zstd block has the reserved type 3")
				return 0, f.err
			}
			if size > zstdMaxBlock {
				f.err = fmt.Errorf("zstd block size %d exceeds %d", size, zstdMaxBlock)
				return 0, f.err
			}
			f.remain = size
			if h&1 != 0 {
				f.state = stChecksum
				if !f.checksum {
					f.state = stDone
				}
			}
			f.pend = b
		case stChecksum:
			f.remain = 4
			f.state = stDone
		default:
			return 0, io.EOF
		}
	}
}

// done reports whether the whole frame has been passed on.
func (f *frameReader) done() bool {
	return f.state == stDone && f.remain == 0 && len(f.pend) == 0
}
