package capfile

import (
	"fmt"
	"io"
)

// Layout is what opening a capture learnt besides its records: its header,
// where its records start and, for a capture closed cleanly, the index
// stored at its end. A reader opened with it (NewReaderAtLayout) reads
// neither the header nor the index again: for an object in remote storage,
// where each is a request, a program that opens the same capture several
// times (to plan, then to read; once per seek) fetches them once.
//
// A Layout is read-only and may be shared by readers on several
// goroutines. It describes one capture of one size; it is not valid for
// another, or for the same file after it changed.
type Layout struct {
	size      int64 // -1: a stream's (the size is not known)
	hdr       Header
	dataStart int64
	dataEnd   int64 // the index frame's offset, when idx is set
	idx       *Index
}

// Layout returns what the reader learnt of its capture's layout. Indexed
// reports whether it holds the stored index: a reader opened on a stream
// knows only the header, and a capture that was not closed cleanly has no
// stored index (an index rebuilt by FileIndex is never part of a Layout).
func (r *Reader) Layout() (l Layout, indexed bool) {
	l = Layout{size: -1, hdr: r.hdr, dataStart: r.dataStart, dataEnd: -1}
	if r.ra != nil {
		l.size = r.size
	}
	if r.clean && r.ra != nil && r.idx != nil && !r.idx.Rebuilt {
		l.dataEnd, l.idx = r.dataEnd, r.idx
		return l, true
	}
	return l, false
}

// Header returns the header of the capture the layout describes.
func (l Layout) Header() Header { return l.hdr }

// Index returns the stored index of the capture the layout describes, or
// nil when it holds none.
func (l Layout) Index() *Index { return l.idx }

// DataEnd returns the offset where the capture's records end (where its
// index starts), or -1 when the layout holds no index.
func (l Layout) DataEnd() int64 { return l.dataEnd }

// WithoutIndex returns the layout without its index: the header and where
// the records start (a reader opened with it loads the index again).
func (l Layout) WithoutIndex() Layout {
	l.idx, l.dataEnd = nil, -1
	return l
}

// NewReaderAtLayout reads a capture of size bytes from ra, as NewReaderAt
// does, with what l says of it: the header is not read again, nor the
// index when l holds one (else it is loaded from the end, as NewReaderAt
// loads it). l must come from a reader of the same capture (Reader.Layout);
// a layout of a capture of another size is refused.
func NewReaderAtLayout(ra io.ReaderAt, size int64, l Layout) (*Reader, error) {
	if l.dataStart <= 0 || l.dataStart > size || l.size >= 0 && l.size != size {
		return nil, fmt.Errorf("capfile: a layout of a capture of %d bytes (records from byte %d) for one of %d bytes", l.size, l.dataStart, size)
	}
	r := &Reader{ra: ra, size: size, dataStart: l.dataStart, dataEnd: -1, indexAt: -1, strs: make(stringCache), hdr: l.hdr}
	if l.idx != nil {
		r.idx, r.clean, r.dataEnd = l.idx, true, l.dataEnd
	} else {
		r.loadIndex()
	}
	r.src.reset(io.NewSectionReader(ra, l.dataStart, r.dataLimit()-l.dataStart), l.dataStart)
	return r, nil
}
