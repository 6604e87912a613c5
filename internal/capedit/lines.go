package capedit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/aaep-tools/aaepkit/internal/progress"
)

// lineReader reads lines of bounded length, counting them.
type lineReader struct {
	r    *bufio.Reader
	max  int
	buf  []byte
	line int64 // number of the line last returned, from 1
	off  int64 // byte offset of the line last returned
	next int64 // byte offset of the next line
	// meter (which may be nil) counts lines and bytes.
	meter *progress.Meter
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// errLineTooLong is wrapped by the error for a line longer than the limit.
var errLineTooLong = errors.New("line too long")

// read returns the next line without its "\n" or "\r\n", or io.EOF. The
// slice is valid until the next call. A last line without a newline is
// returned like any other.
func (lr *lineReader) read() ([]byte, error) {
	lr.buf = lr.buf[:0]
	for {
		chunk, err := lr.r.ReadSlice('\n')
		if len(lr.buf)+len(chunk) > lr.max+2 {
			return nil, fmt.Errorf("line %d (byte %d): %w: more than %d bytes", lr.line+1, lr.next, errLineTooLong, lr.max)
		}
		lr.buf = append(lr.buf, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("line %d (byte %d): %w", lr.line+1, lr.next, err)
		}
		if len(lr.buf) == 0 {
			return nil, io.EOF
		}
		lr.line++
		lr.off = lr.next
		lr.next += int64(len(lr.buf))
		lr.meter.Bytes(int64(len(lr.buf)))
		lr.meter.Record(-1)
		b := bytes.TrimSuffix(lr.buf, []byte{'\n'})
		b = bytes.TrimSuffix(b, []byte{'\r'})
		if len(b) > lr.max {
			return nil, fmt.Errorf("line %d (byte %d): %w: more than %d bytes", lr.line, lr.off, errLineTooLong, lr.max)
		}
		return b, nil
	}
}
