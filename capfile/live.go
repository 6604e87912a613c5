package capfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"syscall"
	"time"
)

// A capture being written, and reading one as it grows.
//
// A Writer marks the regular file it writes (an advisory lock, flock(2)),
// from the header on, and lets go of the mark when Close has written the
// index and trailer. The kernel drops the mark with the writer's process
// however it ends, kill -9 included. So a file that ends early while
// marked is being written (its end is only "not yet"), and one that ends
// early unmarked is torn (its writer is gone). BeingWritten tests the mark;
// a torn tail met while it is held is a CorruptionError with Live set, which
// says so instead of "torn capture tail".
//
// OpenLive reads a capture as it grows, as a tail -f: its source waits at
// the end of the file, a record cut in the middle by a write in progress
// included, for as long as the writer holds the mark, and the reader goes on
// where it was. Nothing is read twice, so following a session costs what
// the session holds, not its square. Its FileIndex is the index of the
// records read so far, extended as they arrive.

// DefaultLivePoll is how often a live reader at the end of a capture being
// written looks at the file again.
const DefaultLivePoll = 50 * time.Millisecond

// LiveOptions tune OpenLive.
type LiveOptions struct {
	// Poll is how often the end of the file is looked at again while the
	// writer has written nothing more (0: DefaultLivePoll).
	Poll time.Duration
	// Report, when set, is called on the goroutine calling Next each time
	// the reader has caught up with the writer, before it waits (what it
	// has returned so far is all there is for now), and every ReportEvery
	// while it reads on without catching up (a reader slower than the
	// writer still reports).
	Report func()
	// ReportEvery is how often Report is called while the reader has not
	// caught up (0: every 10 polls).
	ReportEvery time.Duration
}

// BeingWritten reports whether the capture at path is being written: a
// Writer holds it open and has not closed it. A reader that meets the end
// of such a file before its index has met "not yet", not a torn tail.
func BeingWritten(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return markedWriting(f)
}

// BeingWritten reports whether the file the reader reads (Open,
// NewReaderAt over an *os.File) is being written, as the function
// BeingWritten does; false for a stream or other readers.
func (r *Reader) BeingWritten() bool {
	if sc, ok := r.ra.(syscall.Conn); ok {
		return markedWriting(sc)
	}
	if r.tail != nil {
		return markedWriting(r.tail.f)
	}
	return false
}

// IsLive reports whether err is the end of a capture that was being
// written when it was met (a CorruptionError with Live set): the records
// after it are still to come.
func IsLive(err error) bool {
	var ce *CorruptionError
	return errors.As(err, &ce) && ce.Live
}

// OpenLive opens the capture file at path to read it as it is written. Next
// waits for records not written yet while the writer holds the file open
// (BeingWritten), calling opts.Report each time it has caught up, and returns
// io.EOF at the clean end (Clean is then true), a torn tail once the writer
// is gone without closing the file, damage as Open's readers do, or ctx's
// error when ctx ends. FileIndex returns the index of the records read so
// far (a copy; Rebuilt is set). A live reader does not seek. Like any
// Reader it is not safe for concurrent use: call FileIndex where Next is
// called, or from Report, which runs there.
//
// The header is waited for too: a file just created reads once its
// writer has written it.
func OpenLive(ctx context.Context, path string, opts *LiveOptions) (*Reader, error) {
	var o LiveOptions
	if opts != nil {
		o = *opts
	}
	if o.Poll <= 0 {
		o.Poll = DefaultLivePoll
	}
	if o.ReportEvery <= 0 {
		o.ReportEvery = 10 * o.Poll
	}
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	t := &tailSource{ctx: ctx, f: f, poll: o.Poll, report: o.Report, every: o.ReportEvery, reported: time.Now()}
	r := &Reader{dataEnd: -1, indexAt: -1, strs: make(stringCache), ib: &indexBuilder{}, tail: t, closer: f}
	r.src.reset(t, 0)
	if err := r.readHeader(); err != nil {
		f.Close()
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, fmt.Errorf("%w (file %s)", err, path)
	}
	r.dataStart = r.src.off
	return r, nil
}

// tailSource reads a file from an offset on; at its end it waits while the
// file is being written.
type tailSource struct {
	ctx  context.Context
	f    *os.File
	off  int64
	poll time.Duration
	// report is LiveOptions.Report, called at each catching up and every
	// while reading on; reported is when it was last called.
	report   func()
	every    time.Duration
	reported time.Time
	// caught is set once report was called for the current wait.
	caught bool
}

// reportNow calls report, if any.
func (t *tailSource) reportNow() {
	if t.report != nil {
		t.reported = time.Now()
		t.report()
	}
}

func (t *tailSource) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		n, err := t.f.ReadAt(p, t.off)
		if n > 0 {
			t.off += int64(n)
			t.caught = false
			if t.report != nil && time.Since(t.reported) >= t.every {
				t.reportNow()
			}
			return n, nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if !markedWriting(t.f) {
			// The writer may have written its last bytes and let go
			// of the mark since the read above.
			if n, _ := t.f.ReadAt(p, t.off); n > 0 {
				t.off += int64(n)
				return n, nil
			}
			return 0, io.EOF
		}
		if !t.caught {
			t.caught = true
			t.reportNow()
		}
		if timer == nil {
			timer = time.NewTimer(t.poll)
		} else {
			timer.Reset(t.poll)
		}
		select {
		case <-t.ctx.Done():
			return 0, context.Cause(t.ctx)
		case <-timer.C:
		}
	}
}

// liveIndex is a live reader's index so far: the records read, the frame
// being read included (its Size what was read of it).
func (r *Reader) liveIndex() *Index {
	b := r.ib
	x := Index{Records: b.idx.Records, Rebuilt: true, Frames: slices.Clone(b.idx.Frames), Sessions: slices.Clone(b.idx.Sessions)}
	for i := range x.Sessions {
		// A session's frame list only grows: the copy shares what is
		// there now (capped, so the builder's appends never show).
		f := x.Sessions[i].Frames
		x.Sessions[i].Frames = f[:len(f):len(f)]
	}
	if n := len(x.Frames); n > 0 && b.cur != nil {
		f := &x.Frames[n-1]
		if f.Records == 0 {
			// A frame started, none of its records read yet.
			x.Frames = x.Frames[:n-1]
		} else {
			f.Size = r.src.off - f.Offset
		}
	}
	return &x
}

// UseIndex makes a reader of a capture that was not closed cleanly seek
// with x, the index a live reader of the same file (OpenLive) has built so
// far, instead of rebuilding one by reading the whole file (FileIndex).
// Records written after x's are read on from its end. It does nothing for
// a capture closed cleanly or a stream.
func (r *Reader) UseIndex(x *Index) {
	if r.clean || r.ra == nil || x == nil {
		return
	}
	r.idx, r.idxErr = x, nil
}
