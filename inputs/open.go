package inputs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"

	"strings"

	"github.com/aaep-tools/aaepkit/capfile"
)

// Opened is an open source whose first bytes were looked at, so that a
// capture can be told from JSON Lines.
type Opened struct {
	Source
	h  Handle
	br *bufio.Reader
}

// Open opens src and looks at its first bytes.
func Open(ctx context.Context, src Source) (*Opened, error) {
	h, err := src.Open(ctx)
	if err != nil {
		return nil, named(src.Name(), err)
	}
	o := &Opened{Source: src, h: h, br: bufio.NewReaderSize(h, 1<<16)}
	return o, nil
}

// named prefixes err with name unless it already says it.
func named(name string, err error) error {
	if strings.Contains(err.Error(), name) {
		return err
	}
	return fmt.Errorf("%s: %w", name, err)
}

// IsText reports whether the input starts like JSON text (JSON Lines), or
// holds nothing but blanks in its first bytes, rather than a capture, which
// starts with a binary zstd frame.
// A file that starts like a capture (capfile.Detect), even a damaged one
// whose first byte reads '{', is never text.
func (o *Opened) IsText() bool {
	head, _ := o.br.Peek(capfile.SniffLen)
	if capfile.Detect(head) != capfile.NotCapture {
		return false
	}
	head = bytes.TrimLeft(head, " \t\r\n\xef\xbb\xbf")
	return len(head) == 0 || head[0] == '{' || head[0] == '['
}

// Text returns a buffered reader of the input from its start.
func (o *Opened) Text() *bufio.Reader { return o.br }

// Size returns the input's size in bytes, or -1 when it is a stream.
func (o *Opened) Size() int64 {
	if r, ok := o.h.(Random); ok {
		return r.Size()
	}
	return -1
}

// Capture opens the input as a capture: through its index when the handle
// can be read at any offset, else as a stream. Errors name the input.
func (o *Opened) Capture() (*capfile.Reader, error) {
	var (
		r   *capfile.Reader
		err error
	)
	if ra, ok := o.h.(Random); ok {
		r, err = capfile.NewReaderAt(ra, ra.Size())
	} else {
		r, err = capfile.NewReader(o.br)
	}
	if err != nil {
		if errors.Is(err, capfile.ErrNotCapture) && o.IsText() {
			return nil, fmt.Errorf("%s: a JSON Lines file, not a capture (aaep-replay import turns it into one): %w", o.Name(), err)
		}
		return nil, named(o.Name(), err)
	}
	return r, nil
}

// Close closes the input.
func (o *Opened) Close() error { return o.h.Close() }

// OpenCapture opens src as a capture. Close the reader, then the Opened.
func OpenCapture(ctx context.Context, src Source) (*capfile.Reader, *Opened, error) {
	o, err := Open(ctx, src)
	if err != nil {
		return nil, nil, err
	}
	r, err := o.Capture()
	if err != nil {
		o.Close()
		return nil, nil, err
	}
	return r, o, nil
}

// Total returns the number of records of a cleanly closed capture from its
// index, or -1 (a torn capture would need a full scan to count them).
func Total(r *capfile.Reader) int64 {
	if !r.Clean() {
		return -1
	}
	x, err := r.FileIndex()
	if err != nil || x == nil {
		return -1
	}
	return x.Records
}
