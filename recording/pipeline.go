package recording

import (
	"context"
	"errors"
	"maps"

	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol"
)

// The read-ahead pipeline. Reading an input (zstd decoding, checksums,
// record parsing, JSON lines) does not depend on what the handler does with
// the messages, so ReadSources reads on a goroutine of its own and hands
// the messages to the handler on the caller's goroutine, in batches: two
// cores work at once. The reading goroutine also decodes each message's
// payload (Message.Decode), which the protocol engine would otherwise do
// on the handler's. The batches are recycled and their number is fixed,
// so memory stays bounded however far reading could run ahead.
const (
	// batchItems is the number of items (messages and connection records)
	// after which a batch is handed over.
	batchItems = 256
	// batchBytes is the payload size after which a batch is handed over
	// (a single larger message makes a batch of its own).
	batchBytes = 512 << 10
	// batchesInFlight is the number of batches: one being filled, one
	// being handled and the rest waiting between the two.
	batchesInFlight = 4
	// keepArena is the largest payload buffer a batch keeps when it is
	// recycled; one grown past it by an outsized message is dropped.
	keepArena = 4 * batchBytes
)

// errStopped ends the reading goroutine when the handler side has stopped.
var errStopped = errors.New("input: reading stopped by the handler side")

type entryKind uint8

const (
	entryMessage entryKind = iota
	entryConn
)

// entry is one message or connection record of a batch, in input order.
type entry struct {
	kind entryKind
	// i indexes the batch's msgs or conns.
	i int32
	// skipped is the reading's Summary.Skipped when the entry was read.
	skipped int64
	// raw is where the payload is in the batch's arena.
	rawStart, rawEnd int
}

// batch carries items from the reading goroutine to the handler's.
type batch struct {
	items []entry
	msgs  []protocol.Message
	conns []protocol.Conn
	docs  []payload.Doc    // docs[i] is the decoding of msgs[i], reused
	slots []*protocol.Slot // slots[i] is the preparation of msgs[i], reused
	arena []byte           // the payloads, copied
	// last marks the final batch: err is the reading's result (nil at a
	// clean end) and skipped its final Summary.Skipped.
	last    bool
	err     error
	skipped int64
}

func (b *batch) reset() {
	b.items, b.msgs, b.conns = b.items[:0], b.msgs[:0], b.conns[:0]
	if cap(b.arena) > keepArena {
		b.arena = nil
	}
	b.arena = b.arena[:0]
	b.last, b.err, b.skipped = false, nil, 0
}

func (b *batch) full() bool { return len(b.items) >= batchItems || len(b.arena) >= batchBytes }

// seal points the payloads at their copies (the arena may have moved while
// it grew), decodes the messages and, with prep, prepares them (ahead: the
// handler side has batches waiting, see pipe.ahead).
func (b *batch) seal(interned *payload.Doc, prep *protocol.Preparation, ahead bool) {
	if n := len(b.msgs); len(b.docs) < n {
		// Grown, not replaced: the Docs keep their buffers.
		old := len(b.docs)
		b.docs = append(b.docs, make([]payload.Doc, n-old)...)
		for i := old; i < n; i++ {
			b.docs[i].ShareInterned(interned)
		}
	}
	for i := range b.items {
		it := &b.items[i]
		raw := b.arena[it.rawStart:it.rawEnd:it.rawEnd]
		if it.kind == entryConn {
			b.conns[it.i].Raw = raw
			continue
		}
		m := &b.msgs[it.i]
		m.Raw = raw
		m.Decode(&b.docs[it.i])
		if prep != nil {
			for len(b.slots) <= int(it.i) {
				b.slots = append(b.slots, prep.NewSlot())
			}
			prep.Prepare(m, b.slots[it.i], ahead)
		}
	}
}

// pipe is the reading goroutine's side of the pipeline.
type pipe struct {
	full    chan *batch   // filled batches, to the handler side
	free    chan *batch   // handled batches, back to the reader
	stop    chan struct{} // closed when the handler side stops early
	cur     *batch
	stopped bool    // the handler side has stopped: drop what is read
	sum     Summary // the reading's own counts
	// interned holds the routing strings every batch's Docs intern.
	interned payload.Doc
	// prep prepares the messages for the engine (nil: not at all).
	prep *protocol.Preparation
}

// ahead reports whether the handler side has a batch waiting: reading is
// ahead of handling, so the reading goroutine takes on the optional part
// of preparing (protocol.Prep) and the two sides balance batch by batch.
func (p *pipe) ahead() bool { return len(p.full) > 0 }

// take gets an empty batch to fill.
func (p *pipe) take() error {
	select {
	case b := <-p.free:
		b.reset()
		p.cur = b
		return nil
	case <-p.stop:
		return errStopped
	}
}

// send hands the current batch over and takes the next.
func (p *pipe) send() error {
	p.cur.seal(&p.interned, p.prep, p.ahead())
	select {
	case p.full <- p.cur:
	case <-p.stop:
		p.stopped = true
		return errStopped
	}
	p.cur = nil
	if err := p.take(); err != nil {
		p.stopped = true
		return err
	}
	return nil
}

func (p *pipe) message(m *protocol.Message) error {
	if p.stopped {
		return errStopped
	}
	b := p.cur
	start := len(b.arena)
	b.arena = append(b.arena, m.Raw...)
	b.items = append(b.items, entry{kind: entryMessage, i: int32(len(b.msgs)), skipped: p.sum.Skipped, rawStart: start, rawEnd: len(b.arena)})
	b.msgs = append(b.msgs, *m)
	if len(m.Attrs) > 0 {
		// The reader refills its attribute map for the next record.
		b.msgs[len(b.msgs)-1].Attrs = maps.Clone(m.Attrs)
	}
	if b.full() {
		return p.send()
	}
	return nil
}

func (p *pipe) conn(c *protocol.Conn) {
	if p.stopped {
		return // the reading loop sees its context cancelled soon
	}
	b := p.cur
	start := len(b.arena)
	b.arena = append(b.arena, c.Raw...)
	b.items = append(b.items, entry{kind: entryConn, i: int32(len(b.conns)), skipped: p.sum.Skipped, rawStart: start, rawEnd: len(b.arena)})
	b.conns = append(b.conns, *c)
	if len(c.Attrs) > 0 {
		b.conns[len(b.conns)-1].Attrs = maps.Clone(c.Attrs)
	}
	if b.full() && p.send() != nil {
		p.stopped = true
	}
}

// ReadAhead is Read's read-ahead for a caller that reads records its own
// way (the frames of a capture that hold one session, a filter): read runs
// on a goroutine of its own and passes messages and connection records to
// the Handler it is given (whose Conn is nil when h's is), and they come to
// h on the caller's goroutine, in order, each message decoded there
// (Message.Doc set) and, with prep, prepared for the engine (see
// ReadOptions.Prepare). What read passes need be valid only during the
// call: the payload and attributes are copied. read must return the error
// of a handler that fails, and should return soon once its context ends.
// read's error comes after every message read before it. When h.Message
// fails or ctx ends, reading stops, and ReadAhead returns only once read
// has returned.
func ReadAhead(ctx context.Context, prep *protocol.Preparation, h Handler, read func(context.Context, Handler) error) error {
	var sum Summary
	return readAhead(ctx, &sum, h, prep, func(ctx context.Context, _ *Summary, h Handler) error { return read(ctx, h) })
}

// readAhead runs read on a goroutine of its own and passes what it finds to
// h on the caller's goroutine, in order: every message and connection
// record read before an error, then the error, each message decoded
// (Message.Doc set). sum.Messages and sum.Skipped count what h was given.
// read must call only the Message and Conn handlers it is given, and
// return their error when they fail. When h.Message fails or ctx ends,
// reading stops; readAhead returns only after the reading goroutine has
// ended.
func readAhead(ctx context.Context, sum *Summary, h Handler, prep *protocol.Preparation, read func(context.Context, *Summary, Handler) error) error {
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := &pipe{
		full: make(chan *batch, batchesInFlight),
		free: make(chan *batch, batchesInFlight),
		stop: make(chan struct{}),
		prep: prep,
	}
	for range batchesInFlight {
		p.free <- &batch{}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if p.take() != nil {
			return
		}
		rh := Handler{Message: p.message}
		if h.Conn != nil {
			rh.Conn = p.conn
		}
		err := read(rctx, &p.sum, rh)
		if p.stopped || errors.Is(err, errStopped) {
			return
		}
		b := p.cur
		b.last, b.err, b.skipped = true, err, p.sum.Skipped
		b.seal(&p.interned, p.prep, p.ahead())
		select {
		case p.full <- b:
		case <-p.stop:
		}
	}()
	// halt stops the reading goroutine and waits for it to end.
	halt := func() {
		close(p.stop)
		cancel()
		<-done
	}
	for {
		var b *batch
		select {
		case b = <-p.full:
		case <-ctx.Done():
			halt()
			return context.Cause(ctx)
		}
		for i := range b.items {
			it := &b.items[i]
			sum.Skipped = it.skipped
			if it.kind == entryConn {
				h.Conn(&b.conns[it.i])
				continue
			}
			sum.Messages++
			if err := h.Message(&b.msgs[it.i]); err != nil {
				halt()
				return err
			}
		}
		if b.last {
			sum.Skipped = b.skipped
			<-done
			return b.err
		}
		p.free <- b // never blocks: there are as many places as batches
	}
}
