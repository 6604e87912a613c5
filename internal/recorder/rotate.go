package recorder

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/outfile"
	"github.com/aaep-tools/aaepkit/payload"
)

func (r *Recorder) maybeRotate(t int64) error {
	every := int64(r.cfg.RotateEvery)
	switch {
	case every > 0 && t-r.fileBase >= every:
		return r.rotate(r.fileBase + (t-r.fileBase)/every*every)
	case r.cfg.RotateSize > 0 && r.w.Stats().FileBytes >= r.cfg.RotateSize:
		return r.rotate(t)
	}
	return nil
}

// rotate closes the current file and starts the next part at clock time base.
func (r *Recorder) rotate(base int64) error {
	if err := r.closeFile(); err != nil {
		return err
	}
	if err := r.openPart(base); err != nil {
		return err
	}
	if r.compacted {
		// A part written again leaves garbage (its reading, the writer's
		// buffers), and a recorder at a few events per second makes so
		// little else that the collector, left to itself, lets the heap
		// grow to twice what is live (an encoder and a decoder, about 5
		// MiB) before it runs, and keeps the pages: to s3:// with a part
		// every 5 s, +2-4 MiB resident over two minutes. So once the new
		// part's writer holds the encoder the old one left (a collection
		// before would free that spare), the garbage is collected and its
		// pages returned, on a goroutine of their own: the writer does not
		// wait. Only after a compaction, i.e. at under 8 records a flush.
		r.compacted = false
		go debug.FreeOSMemory()
	}
	return nil
}

// compactBelow: a closed file whose flushes held fewer records than this
// on average is written again compactly (capfile.Compact): at 10 events/s
// that makes it 25-35% smaller; at 1,000 events/s, 100 records a flush,
// it would gain little for the CPU.
const compactBelow = 8

// closeFile closes the current file. A file that recorded neither a message
// nor a connection (only failures to connect, or nothing) is removed: a
// recording that fails before it records anything leaves no file behind.
func (r *Recorder) closeFile() error {
	if r.w == nil {
		return nil
	}
	keep := r.keep()
	err := r.w.Close()
	ws := r.w.Stats()
	r.closedB += ws.FileBytes
	r.w = nil
	if !r.shown && !keep && r.out.Kind() == outfile.Regular {
		if r.out.Replaces() {
			r.mu.Lock()
			r.stats.NotReplaced = append(r.stats.NotReplaced, r.curPath)
			r.mu.Unlock()
		}
		r.out.Discard()
		return nil
	}
	if err == nil && !r.shown {
		err = r.publish()
	}
	if cerr := r.out.Commit(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%w: close %s: %w", ErrWrite, r.curPath, err)
	}
	if r.out.Kind() == outfile.Regular && ws.Flushes*compactBelow > ws.Records {
		// Written live, a block per flush of a few records: written again
		// in large blocks, now that the 100 ms bound is kept (a file that
		// cannot be is left as it was).
		if before, after, err := capfile.Compact(r.curPath); err == nil {
			r.closedB += after - before
		}
		r.compacted = true
	}
	if r.cfg.OnPartClosed != nil {
		r.cfg.OnPartClosed(r.curPath)
	}
	return nil
}

// keep reports whether the current file holds what is worth keeping: a
// message or a connection; and, when it would replace an existing file
// (--force), a message of the producer (fromProducer). What the recorder
// writes itself, connection events and its own side of the handshake, is
// not a recording: an endpoint that answered, read the subscription.request
// and closed never replaces a capture.
func (r *Recorder) keep() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.worth && (r.produced || !r.out.Replaces())
}

// fromProducer reports whether msg, a received message, is one the
// producer sent of its own: anything but the subscription handshake's
// answers (subscription.accepted, .rejected), which only answer the
// recorder's request. A message that is not a JSON object counts: garbage
// is what the producer sent too. It decodes msg into d.
func fromProducer(d *payload.Doc, msg []byte) bool {
	d.DecodeOnly(msg, payload.NeedRouting)
	return !d.IsObject() || !isHandshake(d.Routing.Type)
}

// publish makes the current file visible at its path and lists it; with a
// ring, the oldest file beyond it is removed.
func (r *Recorder) publish() error {
	if err := r.out.Publish(); err != nil {
		return fmt.Errorf("%w: %w", ErrWrite, err)
	}
	r.shown = true
	r.files = append(r.files, r.curPath)
	if r.cfg.Ring > 0 && len(r.files) > r.cfg.Ring {
		old := r.files[0]
		r.files = r.files[1:]
		if err := os.Remove(old); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%w: ring: %w", ErrWrite, err)
		}
	}
	r.mu.Lock()
	r.stats.Files = append(r.stats.Files[:0], r.files...)
	r.mu.Unlock()
	return nil
}

// checkParts refuses an earlier rotated capture with the same pattern: a
// non-empty file named like one of its parts.
func checkParts(path string) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	ext := filepath.Ext(base)
	prefix := strings.TrimSuffix(base, ext) + "-"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil // the part's own open reports what is wrong
	}
	for _, e := range ents {
		n := e.Name()
		digits := strings.TrimSuffix(strings.TrimPrefix(n, prefix), ext)
		if len(n) != len(prefix)+6+len(ext) || !strings.HasPrefix(n, prefix) || !strings.HasSuffix(n, ext) || strings.Trim(digits, "0123456789") != "" {
			continue
		}
		if st, err := os.Stat(filepath.Join(dir, n)); err == nil && st.Mode().IsRegular() && st.Size() > 0 {
			return fmt.Errorf("%w: %w", ErrWrite, &outfile.Error{Op: "refuse", Path: filepath.Join(dir, n), Err: outfile.ErrExists})
		}
	}
	return nil
}

// partPath names part n (1-based) of a rotated capture.
func partPath(path string, n int) string {
	ext := filepath.Ext(path)
	return fmt.Sprintf("%s-%06d%s", strings.TrimSuffix(path, ext), n, ext)
}

func (r *Recorder) openPart(base int64) error {
	r.part++
	path := r.cfg.Path
	h := r.cfg.Header
	h.Start = r.cfg.Clock.Start().Add(time.Duration(base))
	h.Redacted = append([]string(nil), r.cfg.Redact...)
	if r.rotating {
		path = partPath(r.cfg.Path, r.part)
		if r.cfg.PartName != nil {
			path = r.cfg.PartName(r.part, h.Start)
		}
		meta := map[string]string{}
		for k, v := range r.cfg.Header.Meta {
			meta[k] = v
		}
		meta["part"] = strconv.Itoa(r.part)
		if r.part > 1 {
			meta["previous"] = filepath.Base(r.curPath)
		}
		h.Meta = meta
	}
	// A live recording: never over an input or (without Force) an earlier
	// recording; out of sight until publish.
	out, err := outfile.Open(path, outfile.Options{Inputs: r.cfg.Inputs, Stdout: r.cfg.Stdout, Binary: true, Live: true, Force: r.cfg.Force})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrWrite, err)
	}
	w, err := capfile.NewWriter(out, h, &r.cfg.Writer)
	if err != nil {
		out.Discard()
		return fmt.Errorf("%w: %s: %w", ErrWrite, path, err)
	}
	r.w, r.out, r.shown = w, out, false
	r.curPath = path
	r.fileBase = base
	return nil
}
