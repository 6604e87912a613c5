package objstore

import (
	"context"
	"fmt"
	"io"
	"sync"
)

// Read sizes of a Remote. A capture is read at three places: its header at
// the start, its trailer and index at the end, and the frames a seek or a
// scan needs. The first request reads the head (and learns the size), the
// first read near the end takes the whole tail (trailer and index), and a
// read elsewhere takes at least one compressed frame's worth; reads that
// continue where the last one ended double their size up to remoteMaxRead,
// so a scan costs few requests.
//
// The index grows with the capture (frames and sessions), so the tail read
// does too: 1/256 of the object, between remoteTail and remoteMaxTail.
// Measured on the bench's 1 GiB capture (23.7 million events): a fixed
// 512 KiB tail did not hold its index, and the seek took a fourth request.
const (
	remoteHead    = 64 << 10
	remoteTail    = 512 << 10
	remoteMaxTail = 32 << 20
	remoteMinRead = 256 << 10
	remoteMaxRead = 8 << 20
	remoteBlocks  = 4 // blocks kept: head, tail, and the current reads
	// WholeBelow: an object of a known size below it (a listing gave
	// it) is fetched whole by its first read, header and index in one
	// request: a fleet's parts of a few KB cost one GET each, not a head
	// and a tail.
	WholeBelow = 256 << 10
)

// RemoteStats count what a Remote fetched.
type RemoteStats struct {
	Requests int64 // ranged GETs
	Bytes    int64 // bytes received
}

// Remote is an object read through ranged GETs, as an io.ReaderAt. It keeps
// the last few blocks it fetched, so the many small reads of a capture
// reader cost few requests. It is safe for concurrent use.
type Remote struct {
	ctx  context.Context
	s    Store
	key  string
	size int64

	mu      sync.Mutex
	blocks  []remoteBlock // most recently used last
	tailBlk *remoteBlock  // the tail once fetched: kept, never evicted
	lastEnd int64         // end of the last block fetched
	next    int64         // size of the next sequential read
	end     int64         // reads ahead stop here (SetReadAhead), or at size
	stats   RemoteStats
}

type remoteBlock struct {
	off  int64
	data []byte
}

// OpenRemote opens object key of s for reading. It reads the object's first
// bytes in one request, which also gives its size. ctx bounds every later
// read.
func OpenRemote(ctx context.Context, s Store, key string) (*Remote, error) {
	r := &Remote{ctx: ctx, s: s, key: key, next: remoteMinRead}
	buf := make([]byte, remoteHead)
	n, size, err := s.ReadRange(ctx, key, 0, buf)
	r.stats.Requests++
	r.stats.Bytes += int64(n)
	if err != nil {
		return nil, err
	}
	r.size, r.end = size, size
	if n > 0 {
		r.blocks = append(r.blocks, remoteBlock{off: 0, data: buf[:n:n]})
		r.lastEnd = int64(n)
	}
	return r, nil
}

// OpenRemoteSize opens object key of s, whose size an earlier open or a
// listing gave, for reading without a request: nothing is fetched until the
// first ReadAt (a program that opens one object several times fetches its
// head once). A read finding the object's size changed fails. ctx bounds
// every read.
func OpenRemoteSize(ctx context.Context, s Store, key string, size int64) *Remote {
	return &Remote{ctx: ctx, s: s, key: key, size: size, end: size, next: remoteMinRead}
}

// OpenRemoteBytes opens object key of s, whose bytes (all of them) an
// earlier read fetched (Whole): every read is answered from data, without a
// request.
func OpenRemoteBytes(ctx context.Context, s Store, key string, data []byte) *Remote {
	n := int64(len(data))
	return &Remote{ctx: ctx, s: s, key: key, size: n, end: n, next: remoteMinRead, lastEnd: n,
		blocks: []remoteBlock{{off: 0, data: data[:n:n]}}}
}

// Whole returns the object's bytes when one block fetched holds them all,
// else nil.
func (r *Remote) Whole() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	whole := func(b *remoteBlock) bool { return b != nil && b.off == 0 && int64(len(b.data)) == r.size && r.size > 0 }
	if whole(r.tailBlk) {
		return r.tailBlk.data
	}
	for i := range r.blocks {
		if whole(&r.blocks[i]) {
			return r.blocks[i].data
		}
	}
	return nil
}

// SetReadAhead stops reads ahead at byte end: a request reaches past it
// only for bytes a read asks for (a capture reader whose index is known
// sets it to where the records end, so that a scan does not fetch the index
// and trailer it has no use for).
func (r *Remote) SetReadAhead(end int64) {
	r.mu.Lock()
	r.end = min(max(end, 0), r.size)
	r.mu.Unlock()
}

// Size is the object's size in bytes.
func (r *Remote) Size() int64 { return r.size }

// Name names the object: "s3://bucket/key".
func (r *Remote) Name() string { return r.s.Describe(r.key) }

// Stats returns the requests made and bytes fetched so far.
func (r *Remote) Stats() RemoteStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

// ReadAt implements io.ReaderAt.
func (r *Remote) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("read %s: negative offset %d", r.Name(), off)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for n < len(p) {
		at := off + int64(n)
		if at >= r.size {
			return n, io.EOF
		}
		if b := r.find(at); b != nil {
			n += copy(p[n:], b.data[at-b.off:])
			continue
		}
		if err := r.fetch(at, int64(len(p)-n)); err != nil {
			return n, err
		}
	}
	return n, nil
}

// find returns the cached block holding byte at, marking it recently used.
func (r *Remote) find(at int64) *remoteBlock {
	if b := r.tailBlk; b != nil && at >= b.off && at < b.off+int64(len(b.data)) {
		return b
	}
	for i := len(r.blocks) - 1; i >= 0; i-- {
		b := r.blocks[i]
		if at >= b.off && at < b.off+int64(len(b.data)) {
			if i != len(r.blocks)-1 {
				copy(r.blocks[i:], r.blocks[i+1:])
				r.blocks[len(r.blocks)-1] = b
			}
			return &r.blocks[len(r.blocks)-1]
		}
	}
	return nil
}

// fetch reads a block holding at least the want bytes at off.
func (r *Remote) fetch(off, want int64) error {
	start, length := off, want
	tail := false
	switch {
	case r.size < WholeBelow && r.stats.Requests == 0 && r.end == r.size:
		// A small object: all of it at once (unless a read-ahead end
		// was set: then only what is asked).
		start, length = 0, r.size
	case off == 0 && r.stats.Requests == 0:
		// The head, as OpenRemote reads it.
		length = max(want, remoteHead)
	case r.end < r.size && off >= r.end:
		// Past the end set (SetReadAhead): only what is asked.
	case r.end == r.size && off >= r.size-r.tail():
		// The trailer or the index: take the whole tail at once (unless
		// where the records end is known: then these are records).
		start = max(0, min(off, r.size-r.tail()))
		length = r.size - start
		tail = true
	case off == r.lastEnd:
		// A scan: read ahead, more each time.
		length = max(want, r.next)
		r.next = min(2*r.next, remoteMaxRead)
	default:
		length = max(want, remoteMinRead)
		r.next = remoteMinRead
	}
	// Do not read ahead past the end set, nor fetch again what a cached
	// block after start already holds.
	if !tail && start < r.end {
		length = max(min(length, r.end-start), want)
	}
	for _, b := range r.blocks {
		if b.off > start && b.off < start+length && b.off >= off+want {
			length = b.off - start
		}
	}
	if b := r.tailBlk; b != nil && b.off > off && b.off < start+length {
		// The tail is kept: ReadAt takes the rest of the read from it.
		length = b.off - start
	}
	length = min(length, r.size-start)
	buf := make([]byte, length)
	n, size, err := r.s.ReadRange(r.ctx, r.key, start, buf)
	r.stats.Requests++
	r.stats.Bytes += int64(n)
	if err != nil {
		return err
	}
	if size >= 0 && size != r.size {
		return fmt.Errorf("read %s: the object is %d bytes now, %d when it was opened (it changed while being read)", r.Name(), size, r.size)
	}
	if int64(n) <= off-start {
		return fmt.Errorf("read %s: object ended at %d, before %d (it changed while being read?)", r.Name(), start+int64(n), off)
	}
	blk := remoteBlock{off: start, data: buf[:n:n]}
	r.lastEnd = start + int64(n)
	if tail && r.tailBlk == nil && r.lastEnd == r.size {
		// The tail (trailer and index): kept, so that a scan reaching it
		// does not fetch it again.
		r.tailBlk = &blk
		return nil
	}
	if len(r.blocks) == remoteBlocks {
		r.blocks = append(r.blocks[:0], r.blocks[1:]...)
	}
	r.blocks = append(r.blocks, blk)
	return nil
}

// tail is how much the first read near the end fetches.
func (r *Remote) tail() int64 {
	return min(max(r.size/256, remoteTail), remoteMaxTail)
}

// Close drops the cached blocks.
func (r *Remote) Close() error {
	r.mu.Lock()
	r.blocks, r.tailBlk = nil, nil
	r.mu.Unlock()
	return nil
}
