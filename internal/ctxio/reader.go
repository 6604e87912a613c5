// Package ctxio makes reads that may block for ever (a FIFO or a pipe whose
// writer stays silent, standard input) end when a context ends, so that
// Ctrl-C and SIGTERM end every command that reads a stream.
package ctxio

import (
	"context"
	"errors"
	"io"
	"os"
	"time"
)

// Reader returns r read so that a Read blocked in r ends when ctx ends,
// returning ctx's error (context.Cause's, when it was given one). A
// pollable file (a FIFO or pipe opened by name) is woken through its read
// deadline; any other reader but a regular file is read on a goroutine of
// its own, one Read at a time, which is left blocked in r when ctx ends.
func Reader(ctx context.Context, r io.Reader) io.Reader {
	if ctx.Done() == nil {
		return r
	}
	if f, ok := r.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			return r // never blocks
		}
		if f.SetReadDeadline(time.Time{}) == nil {
			context.AfterFunc(ctx, func() { f.SetReadDeadline(time.Now()) })
			return &fileReader{ctx: ctx, f: f}
		}
	}
	return &goReader{ctx: ctx, r: r, res: make(chan result, 1)}
}

// cause is why ctx ended.
func cause(ctx context.Context) error {
	if c := context.Cause(ctx); c != nil {
		return c
	}
	return ctx.Err()
}

type fileReader struct {
	ctx context.Context
	f   *os.File
}

func (r *fileReader) Read(p []byte) (int, error) {
	n, err := r.f.Read(p)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) && r.ctx.Err() != nil {
		err = cause(r.ctx)
	}
	return n, err
}

type result struct {
	n   int
	err error
}

type goReader struct {
	ctx  context.Context
	r    io.Reader
	buf  []byte
	res  chan result
	busy bool // a Read of r is under way on its goroutine
}

func (g *goReader) Read(p []byte) (int, error) {
	if g.ctx.Err() != nil {
		return 0, cause(g.ctx)
	}
	if len(p) == 0 {
		return 0, nil
	}
	if !g.busy {
		if cap(g.buf) < len(p) {
			g.buf = make([]byte, len(p))
		}
		buf := g.buf[:len(p)]
		g.busy = true
		go func() {
			n, err := g.r.Read(buf)
			g.res <- result{n, err}
		}()
	}
	select {
	case res := <-g.res:
		g.busy = false
		return copy(p, g.buf[:res.n]), res.err
	case <-g.ctx.Done():
		// The goroutine keeps g.buf: no Read comes after this one.
		return 0, cause(g.ctx)
	}
}
