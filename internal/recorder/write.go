package recorder

import (
	"fmt"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/payload"
)

// A writer woken for fewer than gatherMin messages waits gatherWait for more.
const (
	gatherMin  = 64
	gatherWait = 250 * time.Microsecond
)

// writer appends batches to the capture until Close.
func (r *Recorder) writer() {
	defer close(r.writerOut)
	for {
		r.mu.Lock()
		for len(r.pending.entries) == 0 && !r.closing {
			r.idle = true
			r.work.Wait()
		}
		r.idle = false
		if n := len(r.pending.entries); n > 0 && n < gatherMin && !r.closing {
			// Woken for a few messages: let more gather, so that a fast
			// stream is not written (and the writer woken) one message at
			// a time. A slow stream only waits gatherWait more.
			r.mu.Unlock()
			time.Sleep(gatherWait)
			r.mu.Lock()
		}
		if len(r.pending.entries) == 0 || r.err != nil {
			r.mu.Unlock()
			break
		}
		b := r.pending
		r.pending, r.spare = r.spare, nil
		r.space.Broadcast()
		r.mu.Unlock()

		err := r.write(b)
		b.reset()
		r.mu.Lock()
		r.spare = b
		if err != nil && r.err == nil {
			r.err = err
			r.space.Broadcast()
		}
		r.mu.Unlock()
	}
	err := r.closeFile()
	r.mu.Lock()
	if err != nil && r.err == nil {
		r.err = err
	}
	r.stats.FileBytes = r.closedB
	r.mu.Unlock()
}

func (r *Recorder) write(b *batch) error {
	var invalid, invalidUTF8 int64
	for i := range b.entries {
		e := &b.entries[i]
		msg := b.data[e.off : e.off+e.n]
		switch {
		case e.scan || e.check:
			// Validity, UTF-8 and the session key are all the writer
			// reads: the front end works out nothing else.
			r.doc.DecodeOnly(msg, payload.NeedSession)
			if e.check {
				f := docFlags(&r.doc)
				e.flags |= f
				if f&capfile.FlagInvalidJSON != 0 {
					invalid++
				}
				if f&capfile.FlagInvalidUTF8 != 0 {
					invalidUTF8++
				}
			}
			if e.scan {
				e.session = r.doc.Routing.SessionKey()
			}
		}
		if !r.produced && e.kind == capfile.KindReceived {
			r.produced = fromProducer(&r.doc, msg)
		}
		if r.rotating {
			if err := r.maybeRotate(e.time); err != nil {
				return err
			}
		}
		r.rec = capfile.Record{
			Kind:    e.kind,
			Flags:   e.flags,
			Origin:  e.src,
			Time:    e.time - r.fileBase,
			Session: e.session,
			Attrs:   b.attrs[e.attrOff : e.attrOff+e.attrN],
			Payload: msg,
		}
		if err := r.w.Append(&r.rec); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrWrite, r.curPath, err)
		}
	}
	if r.keep() && !r.shown {
		if err := r.publish(); err != nil {
			return err
		}
	}
	ws := r.w.Stats()
	r.mu.Lock()
	r.stats.Records += int64(len(b.entries))
	r.stats.InvalidJSON += invalid
	r.stats.InvalidUTF8 += invalidUTF8
	r.stats.PayloadBytes += int64(len(b.data))
	r.stats.FileBytes = r.closedB + ws.FileBytes
	r.mu.Unlock()
	return nil
}
