package transport

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/ctxio"
)

// followPoll is how often a followed file is checked for new data.
const followPoll = 50 * time.Millisecond

// fileSource reads NDJSON from a file or standard input: one message per
// line, which includes the JSONL files of the reference Python aaep-capture.
type fileSource struct {
	opts Options
	path string
}

func newFile(path string, opts Options) *fileSource { return &fileSource{opts: opts, path: path} }

func (s *fileSource) Info() Info {
	if s.path == "-" {
		return Info{Transport: "file", Endpoint: "stdin"}
	}
	return Info{Transport: "file", Endpoint: s.path}
}

// Run reads the file to its end (or, with Follow, until ctx ends). A file
// that cannot be opened or read is a file error, not an endpoint failure.
func (s *fileSource) Run(ctx context.Context, emit Emit) error {
	e := newEmitter(s.opts.Clock, emit)
	e.url = s.Info().Endpoint
	var r io.Reader
	if s.path == "-" {
		r = ctxio.Reader(ctx, stdinOr(s.opts.Stdin))
	} else {
		f, err := os.Open(s.path)
		if err != nil {
			return fmt.Errorf("open input: %w", err)
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return fmt.Errorf("open input: %w", err)
		}
		switch {
		case !fi.Mode().IsRegular():
			r = ctxio.Reader(ctx, f)
		case s.opts.Follow:
			r = &followReader{ctx: ctx, f: f}
		default:
			r = f
		}
	}
	if err := e.conn(ConnEvent{Event: capfile.ConnConnected}); err != nil {
		return err
	}
	fr := newFrameReader(r, FramingNDJSON, s.opts.maxMessageSize())
	fr.lastLineIsMessage = !s.opts.Follow
	o := readFrames(ctx, e, fr, outcome{connected: true})
	switch {
	case e.err != nil:
		return e.err
	case ctx.Err() != nil:
		return e.conn(ConnEvent{Event: capfile.ConnClosed, Reason: "capture stopped"})
	case o.stop:
		return e.conn(ConnEvent{Event: capfile.ConnClosed, Reason: "end of file"})
	}
	if err := e.conn(ConnEvent{Event: capfile.ConnDisconnected, Error: errText(o.err), Partial: o.ev.Partial}); err != nil {
		return err
	}
	if o.err == io.ErrUnexpectedEOF {
		// Only a followed file ends inside a line, when ctx ends; and a pipe
		// can be closed mid-line by its writer: its last bytes were torn.
		return fmt.Errorf("read %s: last line torn (%d bytes)", e.url, o.ev.Partial)
	}
	return fmt.Errorf("read %s: %w", e.url, o.err)
}

// followReader reads a growing file: at its end it waits for more data
// instead of returning io.EOF, until ctx ends.
type followReader struct {
	ctx context.Context
	f   *os.File
}

func (r *followReader) Read(p []byte) (int, error) {
	for {
		n, err := r.f.Read(p)
		if n > 0 {
			return n, nil
		}
		if err != io.EOF {
			return 0, err
		}
		if !sleep(r.ctx, followPoll) {
			return 0, r.ctx.Err()
		}
	}
}
