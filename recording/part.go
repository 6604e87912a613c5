package recording

import (
	"bufio"
	"bytes"
	"container/list"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/ctxio"
	"github.com/aaep-tools/aaepkit/objstore"
)

// Format is the kind of file a part is.
type Format string

// Part formats.
const (
	FormatCapture Format = "capture"
	FormatJSONL   Format = "jsonl"
	// FormatMixed is several parts of both kinds (Summary.Format).
	FormatMixed Format = "mixed"
)

// Part is one file or object of a recording: a whole capture, one part of
// a rotated recording, or a JSON Lines file.
type Part struct {
	// Name is how messages and reports refer to the part: a path, "-" or
	// a URL.
	Name string
	// Format is capture or JSON Lines, found when the recording was opened
	// ("" for standard input, which is looked at only when it is read).
	Format Format
	// Header is a capture's header (zero for JSON Lines).
	Header capfile.Header
	// Number is the part number the recorder wrote into a rotated part's
	// header ("part"), 0 for a capture that is not a rotated part.
	Number int
	// Previous is the base name of the part before this one ("previous"
	// in a rotated part's header), "" for the first part.
	Previous string

	path   string         // a local file, or ""
	store  objstore.Store // an object, or nil
	key    string
	stdin  io.Reader // standard input, or nil
	opened *opened   // standard input once looked at (read once)
	size   int64     // bytes, -1 when unknown (a stream)
	stamp  Stamp     // what a listing said of it (Options.Changed)
	known  bool      // its header came from Options.Known, not from the part
	// peekHead: the header is read from the first bytes only
	// (Options.PeekHead).
	peekHead bool

	mu sync.Mutex
	// openMu makes concurrent first opens of an object through its index
	// (a viewer opens several readers at once) wait for the one that
	// fetches the index, instead of each fetching it.
	openMu sync.Mutex
	// An object's layout, once an open learnt it: its header (peek), then
	// its stored index (the first open through the index). Later opens in
	// the run read neither again.
	layout    capfile.Layout
	hasLayout bool
	indexed   bool
	fetched   objstore.RemoteStats      // what the object handles closed fetched
	remotes   map[*objstore.Remote]bool // the object handles open
	// whole is a small object's bytes, all of them, fetched by its
	// first open (the header's peek): the next open reads them instead of
	// fetching them again, and lets them go (see keepWhole).
	whole []byte

	// follow is set for the part of a followed recording (Following),
	// read with a live reader; followOf is the part it follows, whose
	// liveIndex is the follower's index so far, for its own readers.
	follow    *Follow
	followOf  *Part
	liveIndex atomic.Pointer[capfile.Index]

	// localFile is the local file as it was when an open learnt its
	// layout and stored index (layout, indexed): a file changed since, or
	// grown, is read afresh.
	localFile os.FileInfo

	// keptAt is the part's place among those keeping an index (on
	// keptIndexes.mu), nil when it keeps none; keptBytes its index's size.
	keptAt    *list.Element
	keptBytes int64
}

func filePart(path string) *Part { return &Part{Name: path, path: path, size: -1} }

func objectPart(store objstore.Store, key string) *Part {
	return &Part{Name: store.Describe(key), store: store, key: key, size: -1}
}

func stdinPart(r io.Reader) *Part { return &Part{Name: "-", stdin: r, size: -1} }

// Streamed reports whether the part is read once, as a stream: standard
// input, a FIFO, a device.
func (p *Part) Streamed() bool { return p.stdin != nil }

// Size returns the part's size in bytes, or -1 when it is a stream
// (standard input, a FIFO).
func (p *Part) Size() int64 { return p.size }

// Recording returns a recording of this part alone (to read one part of a
// rotated recording on its own, as info does).
func (p *Part) Recording() *Recording {
	r := &Recording{Parts: []*Part{p}}
	r.finish()
	return r
}

// Path returns the local file path of the part, or "" for standard input
// and objects.
func (p *Part) Path() string { return p.path }

// base is the part's file or object name without its directory.
func (p *Part) base() string {
	if p.store != nil {
		return path.Base(p.key)
	}
	return filepath.Base(p.Name)
}

// dir is the directory (or prefix) the part is in, to find its previous part.
func (p *Part) dir() string {
	if p.store != nil {
		return p.store.Describe(path.Dir(p.key))
	}
	return filepath.Dir(p.Name)
}

// RemoteStats returns what reading the part from object storage fetched so
// far, over every open of the run (zero for local parts).
func (p *Part) RemoteStats() objstore.RemoteStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.fetched
	for r := range p.remotes {
		rs := r.Stats()
		st.Requests += rs.Requests
		st.Bytes += rs.Bytes
	}
	return st
}

// closeRemote closes object handle r, counting what it fetched.
func (p *Part) closeRemote(r *objstore.Remote) error {
	p.mu.Lock()
	if p.remotes[r] {
		delete(p.remotes, r)
		rs := r.Stats()
		p.fetched.Requests += rs.Requests
		p.fetched.Bytes += rs.Bytes
		if data := r.Whole(); p.whole == nil && rs.Requests > 0 && data != nil && len(data) < objstore.WholeBelow && keepWhole(int64(len(data))) {
			p.whole = data
		}
	}
	p.mu.Unlock()
	return r.Close()
}

// readerAt opens the capture read through ra (a handle of the part) as
// capfile.NewReaderAt does. For an object it uses, and keeps, what earlier
// opens learnt (the header, where the records start, the stored index), so
// that a run fetches the object's head and its index once however often it
// opens it: to plan and then to read, once per seek, per viewer request.
// A local file's header and stored index are read again unless the file
// is the one an earlier open read, unchanged (same file, size and
// modification time): a viewer opens a reader per request, and decoding
// the index of a million records each time took most of a first page's
// time (and each reader held its own copy). One being written has no
// stored index, and grows.
func (p *Part) readerAt(ra random) (*capfile.Reader, error) {
	if p.store == nil {
		fh, _ := ra.(*fileHandle)
		if fh != nil {
			p.mu.Lock()
			l, indexed, was := p.layout, p.indexed, p.localFile
			p.mu.Unlock()
			if indexed && was != nil && sameFile(was, fh.info) {
				r, err := capfile.NewReaderAtLayout(ra, ra.Size(), l)
				if err == nil {
					keepIndex(p, 0)
				}
				return r, err
			}
		}
		r, err := capfile.NewReaderAt(ra, ra.Size())
		if err == nil && !r.Clean() {
			// Followed: seek with the follower's index.
			r.UseIndex(p.liveIndex.Load())
		}
		if err == nil && fh != nil {
			if l, ok := r.Layout(); ok {
				p.mu.Lock()
				p.layout, p.hasLayout, p.indexed, p.localFile = l, true, true, fh.info
				p.mu.Unlock()
				keepIndex(p, indexMem(l.Index()))
			}
		}
		return r, err
	}
	p.mu.Lock()
	indexed := p.indexed
	p.mu.Unlock()
	if !indexed {
		p.openMu.Lock()
		defer p.openMu.Unlock()
	}
	p.mu.Lock()
	l, known, indexed := p.layout, p.hasLayout, p.indexed
	p.mu.Unlock()
	var (
		r   *capfile.Reader
		err error
	)
	if known {
		r, err = capfile.NewReaderAtLayout(ra, ra.Size(), l)
	} else {
		r, err = capfile.NewReaderAt(ra, ra.Size())
	}
	if err != nil {
		return nil, err
	}
	nl, ok := r.Layout()
	if ok {
		// Scans stop before the index and trailer, which are known.
		if rr, can := ra.(interface{ SetReadAhead(int64) }); can {
			rr.SetReadAhead(nl.DataEnd())
		}
	}
	if ok && !indexed || !known {
		p.mu.Lock()
		p.layout, p.hasLayout, p.indexed = nl, true, ok
		p.mu.Unlock()
	}
	switch {
	case ok && !indexed:
		keepIndex(p, indexMem(nl.Index()))
	case indexed:
		keepIndex(p, 0)
	}
	return r, nil
}

// handle is an opened part.
type handle interface {
	io.Reader
	io.Closer
}

// random is implemented by handles that can also be read at any offset (a
// file, a ranged object read); capture readers then use the index.
type random interface {
	io.ReaderAt
	Size() int64
}

// openHandle opens the part for reading from its start.
func (p *Part) openHandle(ctx context.Context) (handle, error) {
	switch {
	case p.stdin != nil:
		// A stream may block for ever (a writer that stays silent): its
		// reads end when ctx does (Ctrl-C, SIGTERM).
		return struct {
			io.Reader
			io.Closer
		}{ctxio.Reader(ctx, p.stdin), io.NopCloser(nil)}, nil
	case p.store != nil:
		var r *objstore.Remote
		if whole := p.takeWhole(); whole != nil {
			// Fetched whole before: read from memory, once.
			r = objstore.OpenRemoteBytes(ctx, p.store, p.key, whole)
		} else if p.size >= 0 {
			// Opened before in this run: its size is known, and its
			// head is fetched only when read.
			r = objstore.OpenRemoteSize(ctx, p.store, p.key, p.size)
		} else {
			var err error
			if r, err = objstore.OpenRemote(ctx, p.store, p.key); err != nil {
				return nil, err
			}
		}
		p.mu.Lock()
		if p.remotes == nil {
			p.remotes = map[*objstore.Remote]bool{}
		}
		p.remotes[r] = true
		p.mu.Unlock()
		return &objectHandle{Remote: r, sr: io.NewSectionReader(r, 0, r.Size()), part: p}, nil
	}
	fh, err := os.Open(p.path)
	if err != nil {
		return nil, err
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, err
	}
	if st.IsDir() {
		fh.Close()
		return nil, fmt.Errorf("%s is a directory", p.path)
	}
	if !st.Mode().IsRegular() {
		// A FIFO or device reads as a stream.
		return fh, nil
	}
	return &fileHandle{File: fh, size: st.Size(), info: st}, nil
}

type fileHandle struct {
	*os.File
	size int64
	info os.FileInfo // as opened
}

// sameFile reports whether a and b describe the same file, unchanged.
func sameFile(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

func (f *fileHandle) Size() int64 { return f.size }

// objectHandle reads an object as a stream (Read) and at any offset
// (ReadAt, Size), so that capture readers use the index.
type objectHandle struct {
	*objstore.Remote
	sr   *io.SectionReader
	part *Part
}

func (h *objectHandle) Read(b []byte) (int, error) { return h.sr.Read(b) }

func (h *objectHandle) Close() error { return h.part.closeRemote(h.Remote) }

// opened is an open part whose first bytes were looked at, so that a
// capture can be told from JSON Lines.
type opened struct {
	part *Part
	name string
	h    handle
	br   *bufio.Reader
}

// open opens the part and looks at its first bytes. Standard input is
// opened once: a second open returns the same reader.
func (p *Part) open(ctx context.Context) (*opened, error) {
	if p.opened != nil {
		return p.opened, nil
	}
	h, err := p.openHandle(ctx)
	if err != nil {
		return nil, named(p.Name, err)
	}
	o := &opened{part: p, name: p.Name, h: h, br: bufio.NewReaderSize(h, 1<<16)}
	if p.stdin != nil {
		p.opened = o
	}
	return o, nil
}

// named prefixes err with name unless it already says it.
func named(name string, err error) error {
	if strings.Contains(err.Error(), name) {
		return err
	}
	return fmt.Errorf("%s: %w", name, err)
}

// isText reports whether the input starts like JSON text (JSON Lines), or
// holds nothing but blanks in its first bytes, rather than a capture, which
// starts with a binary zstd frame. A file that starts like a capture
// (capfile.Detect), even a damaged one whose first byte reads '{', is never
// text.
func (o *opened) isText() bool {
	head, _ := o.br.Peek(capfile.SniffLen)
	if capfile.Detect(head) != capfile.NotCapture {
		return false
	}
	head = bytes.TrimLeft(head, " \t\r\n\xef\xbb\xbf")
	return len(head) == 0 || head[0] == '{' || head[0] == '['
}

// size returns the input's size in bytes, or -1 when it is a stream.
func (o *opened) size() int64 {
	if r, ok := o.h.(random); ok {
		return r.Size()
	}
	return -1
}

// capture opens the input as a capture: through its index when the handle
// can be read at any offset, else as a stream. Errors name the input.
func (o *opened) capture() (*capfile.Reader, error) {
	var (
		r   *capfile.Reader
		err error
	)
	if ra, ok := o.h.(random); ok {
		r, err = o.part.readerAt(ra)
	} else {
		r, err = capfile.NewReader(o.br)
	}
	if err != nil {
		if errors.Is(err, capfile.ErrNotCapture) && o.isText() {
			return nil, fmt.Errorf("%s: a JSON Lines file, not a capture (aaep-replay import turns it into one): %w", o.name, err)
		}
		return nil, named(o.name, err)
	}
	return r, nil
}

func (o *opened) close() error { return o.h.Close() }

// peek reads the part's format and, for a capture, its header (only the
// header: the index at the end is not read). Standard input is left alone.
func (p *Part) peek(ctx context.Context) error {
	if p.stdin != nil {
		return nil
	}
	h, err := p.openHandle(ctx)
	if err != nil {
		return named(p.Name, err)
	}
	defer h.Close()
	if ra, ok := h.(random); ok {
		p.size = ra.Size()
	}
	if oh, ok := h.(*objectHandle); ok && p.peekHead {
		// The header only: reads stop at the peek's buffer.
		oh.SetReadAhead(peekHeadBytes)
	}
	o := &opened{part: p, name: p.Name, h: h, br: bufio.NewReaderSize(h, 4096)}
	if o.isText() {
		p.Format = FormatJSONL
		return nil
	}
	r, err := capfile.NewReader(o.br)
	if err != nil {
		if errors.Is(err, capfile.ErrNotCapture) {
			return fmt.Errorf("%s: neither a capture file nor JSON lines: %w", p.Name, err)
		}
		return named(p.Name, err)
	}
	p.setHeader(r.Header())
	if p.store != nil {
		// The header and where the records start: later opens of the
		// object do not fetch its head for them again.
		l, _ := r.Layout()
		p.mu.Lock()
		p.layout, p.hasLayout = l, true
		p.mu.Unlock()
	}
	r.Close()
	return nil
}

// peekHeadBytes is what a peek of Options.PeekHead reads of an object: a
// capture's header (its first frame) and the first records, as a peek's
// buffer takes them.
const peekHeadBytes = 4 << 10

// setHeader records a capture's header and what it says about rotation.
func (p *Part) setHeader(h capfile.Header) {
	p.Format, p.Header = FormatCapture, h
	if n, err := strconv.Atoi(h.Meta[MetaPart]); err == nil && n > 0 {
		p.Number = n
		p.Previous = h.Meta[MetaPrevious]
	}
}

// Header meta keys this package reads.
const (
	// MetaPart is a rotated part's number (1, 2, ...), written by the
	// recorder and by split.
	MetaPart = "part"
	// MetaPrevious is the base name of the part before a rotated part.
	MetaPrevious = "previous"
	// AttrSubscription is the record attribute naming the subscription of
	// each record of a serve --record recording.
	AttrSubscription = "subscription"
)

// Indexed is what Total reads: a *capfile.Reader or a *Reader.
type Indexed interface {
	Clean() bool
	FileIndex() (*capfile.Index, error)
}

// Total returns the number of records of a cleanly closed capture (or of a
// recording whose parts all are) from its index, or -1 (a torn capture
// would need a full scan to count them).
func Total(r Indexed) int64 {
	if !r.Clean() {
		return -1
	}
	x, err := r.FileIndex()
	if err != nil || x == nil {
		return -1
	}
	return x.Records
}

// wholeBudget bounds the bytes of small objects kept whole between the
// open that fetched them (Open reads every part's header) and the next
// (the check reading it): within it a small part costs one GET in a run;
// past it (a prefix of more small parts than it holds), the parts beyond
// are fetched again when read. On kept.mu.
var wholeBudget int64 = 64 << 20

var kept struct {
	mu    sync.Mutex
	bytes int64
}

// keepWhole takes n bytes of wholeBudget (gives them back when n < 0) and
// reports whether they were within it.
func keepWhole(n int64) bool {
	kept.mu.Lock()
	defer kept.mu.Unlock()
	if n > 0 && kept.bytes+n > wholeBudget {
		return false
	}
	kept.bytes += n
	return true
}

// DropFetched lets go of what the recording's parts keep of small objects
// fetched whole (a recording that will not be read: another shard's).
func (r *Recording) DropFetched() {
	for _, p := range r.Parts {
		p.takeWhole()
	}
}

// takeWhole returns the object's bytes kept whole, if any, and lets them
// go from the part (and from wholeBudget).
func (p *Part) takeWhole() []byte {
	p.mu.Lock()
	whole := p.whole
	p.whole = nil
	p.mu.Unlock()
	if whole != nil {
		keepWhole(-int64(len(whole)))
	}
	return whole
}
