package recording

import (
	"container/list"
	"sync"
	"unsafe"

	"github.com/aaep-tools/aaepkit/capfile"
)

// indexBudget bounds the memory the indexes kept on parts take (as
// indexMem estimates it). An object's index is kept so that a command
// fetches it once however often it opens the object; a run over a prefix
// of many thousand objects keeps the indexes of those read last, and an
// object whose index was dropped fetches it again when it is opened again.
// An index takes 56 bytes a frame and 72 a session plus its id, and 8 more
// for each frame a session has records in. On keptIndexes.mu.
var indexBudget int64 = 32 << 20

// keptIndexes are the parts that keep an index, least recently used first.
var keptIndexes struct {
	mu    sync.Mutex
	parts list.List // of *Part
	bytes int64
}

// indexMem estimates the memory an index takes.
func indexMem(x *capfile.Index) int64 {
	n := int64(unsafe.Sizeof(*x)) + int64(len(x.Frames))*int64(unsafe.Sizeof(capfile.FrameInfo{}))
	for i := range x.Sessions {
		s := &x.Sessions[i]
		n += int64(unsafe.Sizeof(*s)) + int64(len(s.ID)) + 8*int64(len(s.Frames))
	}
	return n
}

// keepIndex records that p keeps an index of the given size (0: p uses the
// one it keeps), and drops the indexes of the parts used least recently
// while the kept ones take more than indexBudget. p's own is kept.
func keepIndex(p *Part, size int64) {
	k := &keptIndexes
	k.mu.Lock()
	defer k.mu.Unlock()
	switch {
	case p.keptAt != nil:
		k.parts.MoveToBack(p.keptAt)
		if size > 0 {
			k.bytes += size - p.keptBytes
			p.keptBytes = size
		}
	case size > 0:
		p.keptAt, p.keptBytes = k.parts.PushBack(p), size
		k.bytes += size
	default:
		return // its index was dropped since it was opened
	}
	for k.bytes > indexBudget && k.parts.Front() != p.keptAt {
		q := k.parts.Remove(k.parts.Front()).(*Part)
		k.bytes -= q.keptBytes
		q.mu.Lock()
		q.layout, q.indexed = q.layout.WithoutIndex(), false
		q.mu.Unlock()
		q.keptAt, q.keptBytes = nil, 0
	}
}
