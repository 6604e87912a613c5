package transport

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
)

// Framing is how messages are delimited on a byte stream (Unix sockets).
type Framing int

const (
	// FramingAuto looks at the first byte of each connection: a JSON
	// opening ('{', '[') or whitespace means NDJSON, anything else
	// length-prefixed.
	FramingAuto Framing = iota
	// FramingLP is a 4-byte big-endian length followed by that many bytes.
	FramingLP
	// FramingNDJSON is one message per line ("\n", optionally "\r\n").
	FramingNDJSON
)

// ParseFraming parses "auto", "lp" or "ndjson".
func ParseFraming(s string) (Framing, error) {
	switch s {
	case "auto", "":
		return FramingAuto, nil
	case "lp":
		return FramingLP, nil
	case "ndjson":
		return FramingNDJSON, nil
	}
	return 0, fmt.Errorf("unknown framing %q (want lp, ndjson or auto)", s)
}

func (f Framing) String() string {
	switch f {
	case FramingLP:
		return "lp"
	case FramingNDJSON:
		return "ndjson"
	}
	return "auto"
}

// readBufferSize is the buffer of every framed reader: large enough that
// a read system call brings many messages.
const readBufferSize = 64 << 10

// frameReader splits a byte stream into messages. The slices it returns are
// valid until its next call.
type frameReader struct {
	br      *bufio.Reader
	max     int64
	framing Framing
	// lastLineIsMessage: at EOF, an unterminated last line is a message (a
	// file), not a torn one (a connection).
	lastLineIsMessage bool

	buf []byte  // long frames
	hdr [4]byte // length prefix
	// partial is the number of bytes of the incomplete frame pending when
	// the last call failed.
	partial int64
	eof     bool
}

func newFrameReader(r io.Reader, framing Framing, max int64) *frameReader {
	if max <= 0 {
		max = DefaultMaxMessageSize
	}
	return &frameReader{br: bufio.NewReaderSize(r, readBufferSize), max: max, framing: framing}
}

// detect resolves FramingAuto from the first byte of the stream.
func (f *frameReader) detect() error {
	if f.framing != FramingAuto {
		return nil
	}
	b, err := f.br.Peek(1)
	if err != nil {
		return err
	}
	switch b[0] {
	case '{', '[', ' ', '\t', '\r', '\n':
		f.framing = FramingNDJSON
	default:
		f.framing = FramingLP
	}
	return nil
}

// next returns the next message. At a clean end it returns io.EOF; when the
// stream ends inside a message it returns io.ErrUnexpectedEOF and sets
// partial. A message over the limit is skipped and reported as a
// *FrameTooLargeError; the reader stays usable.
func (f *frameReader) next() ([]byte, error) {
	f.partial = 0
	if f.eof {
		return nil, io.EOF
	}
	if err := f.detect(); err != nil {
		return nil, err
	}
	if f.framing == FramingLP {
		return f.nextLP()
	}
	return f.nextLine()
}

func (f *frameReader) nextLP() ([]byte, error) {
	n, err := io.ReadFull(f.br, f.hdr[:])
	if err != nil {
		if err == io.ErrUnexpectedEOF {
			f.partial = int64(n)
		}
		return nil, err
	}
	size := int64(binary.BigEndian.Uint32(f.hdr[:]))
	if size > f.max && looksLikeText(f.hdr[:]) {
		// '{"ty' read as a length is some 2 GB: not a frame to wait for.
		return nil, &FramingError{Prefix: f.hdr, Size: size}
	}
	if size > f.max {
		left := size
		for left > 0 {
			step := left
			if step > 1<<30 {
				step = 1 << 30
			}
			d, err := f.br.Discard(int(step))
			left -= int64(d)
			if err != nil {
				f.partial = 4 + size - left
				return nil, unexpected(err)
			}
		}
		return nil, &FrameTooLargeError{Size: size, Limit: f.max}
	}
	if int(size) <= f.br.Size() {
		b, err := f.br.Peek(int(size))
		if err != nil {
			f.partial = 4 + int64(len(b))
			return nil, unexpected(err)
		}
		_, _ = f.br.Discard(int(size))
		return b, nil
	}
	if int64(cap(f.buf)) < size {
		f.buf = make([]byte, size)
	}
	f.buf = f.buf[:size]
	if n, err := io.ReadFull(f.br, f.buf); err != nil {
		f.partial = 4 + int64(n)
		return nil, unexpected(err)
	}
	return f.buf, nil
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// nextLine returns the next non-empty line without its "\n" or "\r\n".
func (f *frameReader) nextLine() ([]byte, error) {
	for {
		b, err := f.br.ReadSlice('\n')
		if err == nil {
			b = trimEOL(b)
			if len(b) == 0 {
				continue
			}
			if int64(len(b)) > f.max {
				return nil, &FrameTooLargeError{Size: int64(len(b)), Limit: f.max}
			}
			return b, nil
		}
		if err != bufio.ErrBufferFull {
			if len(b) == 0 {
				return nil, err
			}
			if err == io.EOF && f.lastLineIsMessage {
				f.eof = true
				if int64(len(b)) > f.max {
					return nil, &FrameTooLargeError{Size: int64(len(b)), Limit: f.max}
				}
				return trimEOL(b), nil
			}
			f.partial = int64(len(b))
			return nil, unexpected(err)
		}
		line, size, err := f.longLine(b)
		if err != nil {
			return nil, err
		}
		if size > f.max {
			return nil, &FrameTooLargeError{Size: size, Limit: f.max}
		}
		if len(line) == 0 {
			continue
		}
		return line, nil
	}
}

// longLine reads the rest of a line longer than the read buffer, whose first
// part is first. It keeps at most max+2 bytes and returns the line's size
// (without terminator); the line itself is nil when it is too large.
func (f *frameReader) longLine(first []byte) ([]byte, int64, error) {
	f.buf = append(f.buf[:0], first...)
	size := int64(len(first))
	over := false
	for {
		b, err := f.br.ReadSlice('\n')
		size += int64(len(b))
		if !over {
			if int64(len(f.buf)+len(b)) > f.max+2 {
				over = true
				f.buf = f.buf[:0]
			} else {
				f.buf = append(f.buf, b...)
			}
		}
		switch {
		case err == nil:
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && f.lastLineIsMessage:
			f.eof = true
		default:
			f.partial = size
			return nil, 0, unexpected(err)
		}
		if over {
			// Without the terminator (at most 2 bytes).
			return nil, size - eolLen(b), nil
		}
		line := trimEOL(f.buf)
		return line, int64(len(line)), nil
	}
}

func eolLen(b []byte) int64 {
	n := len(b)
	switch {
	case n >= 2 && b[n-2] == '\r' && b[n-1] == '\n':
		return 2
	case n >= 1 && b[n-1] == '\n':
		return 1
	}
	return 0
}

func trimEOL(b []byte) []byte {
	n := len(b)
	if n > 0 && b[n-1] == '\n' {
		n--
		if n > 0 && b[n-1] == '\r' {
			n--
		}
	}
	return b[:n]
}

// appendLP appends msg with a 4-byte big-endian length prefix.
func appendLP(dst, msg []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(msg)))
	return append(dst, msg...)
}

// FramingError: the stream does not look length-prefixed: what should be a
// frame's length reads as text (NDJSON, most likely), and as a length it is
// past the message size limit. Retrying cannot help.
type FramingError struct {
	Prefix [4]byte
	Size   int64
}

func (e *FramingError) Error() string {
	return fmt.Sprintf("the framing looks wrong: a length prefix reads as the text %q (a length of %d bytes); the producer seems to send NDJSON, not length-prefixed frames (--framing ndjson, or auto)", e.Prefix[:], e.Size)
}

// looksLikeText reports whether a length prefix is JSON or printable text
// rather than a big-endian length.
func looksLikeText(b []byte) bool {
	if b[0] == '{' || b[0] == '[' {
		return true
	}
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}
