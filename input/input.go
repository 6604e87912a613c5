// Package input reads the messages of captures and JSONL files, for the
// commands that check and draw streams. It turns capture records (or JSONL
// lines) into protocol.Messages: payload bytes untouched, with their index,
// receive offset and direction. Several inputs (a rotated set, captures of
// several machines) are read as one stream ordered by absolute time.
package input

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/inputs"
	"github.com/aaep-tools/aaepkit/internal/progress"
	"github.com/aaep-tools/aaepkit/protocol"
)

// MaxLine bounds one JSONL line (the same 16 MiB bound aaep-capture applies to a message).
const MaxLine = 16 << 20

// Format is the kind of file that was read.
type Format string

// Input formats.
const (
	FormatCapture Format = "capture"
	FormatJSONL   Format = "jsonl"
	// FormatMixed is several inputs of both kinds.
	FormatMixed Format = "mixed"
)

// Summary says what reading the inputs found besides their messages.
type Summary struct {
	Format Format
	// Header is the (first) capture's header (zero for JSONL).
	Header capfile.Header
	// Files is the number of inputs read.
	Files int
	// Messages is the number of messages passed on.
	Messages int64
	// Skipped counts capture records that are not messages (connection
	// events, markers) or JSONL lines that are blank.
	Skipped int64
	// Torn is set when a capture ends in a torn tail (the recorder did not
	// close it): every message before it was read. With several inputs it
	// names the file.
	Torn error
	// Oversized lists the JSONL lines (1-based) longer than MaxLine: they
	// were skipped, the lines after them read. With several inputs,
	// OversizedIn names the file of each.
	Oversized   []int64
	OversizedIn []string
	// Empty is set when the input (every input) holds no bytes but blanks.
	Empty bool
}

// Gaps describes what of the input was not read although reading went on,
// one sentence each: lines over the size limit, an empty input. A torn tail
// is in Torn, not here.
func (s *Summary) Gaps() []string {
	var out []string
	for i, line := range s.Oversized {
		where := ""
		if i < len(s.OversizedIn) {
			where = s.OversizedIn[i] + ": "
		}
		out = append(out, fmt.Sprintf("%sline %d is longer than %d bytes and was skipped", where, line, MaxLine))
	}
	if s.Empty {
		out = append(out, "empty file: it holds no messages")
	}
	return out
}

// Handler receives what Read finds. Message is required; the others may be nil.
type Handler struct {
	// Header is called once, before anything else, with the capture's
	// header (the zero header for JSONL; the first capture's of several).
	Header func(Format, capfile.Header)
	// Message is called for every message in order. The Message and its
	// Raw bytes are valid only during the call.
	Message func(*protocol.Message) error
	// Conn is called for every connection record of a capture (connected,
	// disconnected, closed...): its index, source, offset and payload (a
	// JSON object whose "event" names what happened; valid only during the
	// call).
	Conn func(c *protocol.Conn)
}

// Started reports whether reading got as far as the first message (so an
// error came part-way through, not from a file that could not be read).
func (s *Summary) Started() bool { return s.Messages > 0 }

// Options tune ReadSources.
type Options struct {
	// Progress counts the records read (nil: no progress display).
	Progress *progress.Meter
	// Sequential reads on the caller's goroutine, one record at a time,
	// instead of ahead of the handler on a goroutine of its own (see
	// ReadSources).
	Sequential bool
	// Prepare, when set, also prepares each message read ahead for the
	// models of the engine it comes from (Engine.Preparation), on the
	// reading goroutine, so that the engine does less on the handler's.
	// It is ignored with Sequential.
	Prepare *protocol.Preparation
}

// Each reads path (a capture file, a JSONL file, or "-" for standard input)
// and calls fn for every message in order. The Message passed to fn, and its
// Raw bytes, are valid only during the call. A torn capture tail is not an
// error: it is reported in Summary.Torn after every intact message was read.
// Other damage stops the read with an error naming the file and offset.
func Each(ctx context.Context, path string, fn func(*protocol.Message) error) (Summary, error) {
	return Read(ctx, path, Handler{Message: fn})
}

// Read reads path as Each does and passes what it finds to h: the header,
// every message, and (for captures) the connection records.
func Read(ctx context.Context, path string, h Handler) (Summary, error) {
	src := inputs.File(path)
	switch {
	case path == "-":
		src = inputs.Stdin(os.Stdin)
	case strings.Contains(path, "://"):
		// An object or a prefix of a registered scheme (s3://).
		srcs, err := inputs.Expand(ctx, []string{path}, inputs.Options{})
		if err != nil {
			return Summary{}, err
		}
		return ReadSources(ctx, srcs, Options{}, h)
	}
	return ReadSources(ctx, []inputs.Source{src}, Options{}, h)
}

// ReadSources reads srcs as one stream and passes what it finds to h, as
// Read does for one file. Several inputs are interleaved by absolute time
// (a capture's start plus each record's receive time; a JSONL message's own
// timestamp), equal times in the order of srcs. Then a message's Offset
// counts from the earliest input's start, its Index is its position among
// every record (and JSONL line) of all the inputs in that order, which is
// the record number it has in "aaep-replay merge" of the same inputs, and
// sources with the same transport and endpoint are one source
// (inputs.SourceMap).
//
// Unless opts.Sequential is set, the inputs are read (decompressed,
// checksummed, parsed) on a goroutine of their own, a few hundred messages
// ahead of h, and each message's payload is decoded there too (Message.Doc
// is set, see Message.Decode; and prepared for the engine with
// opts.Prepare), so that reading and handling use two cores.
// h is still called on the caller's goroutine, in order, and an error of
// the input comes after every message read before it. Read-ahead is bounded (a few
// batches of at most 256 messages or 512 KiB), and when h fails or ctx ends
// ReadSources returns only once reading has stopped.
func ReadSources(ctx context.Context, srcs []inputs.Source, opts Options, h Handler) (Summary, error) {
	if len(srcs) == 0 {
		return Summary{}, errors.New("no input")
	}
	readers := make([]*reader, 0, len(srcs))
	defer func() {
		for _, r := range readers {
			r.close()
		}
	}()
	sum := Summary{Files: len(srcs)}
	haveHeader := false
	for i, s := range srcs {
		r, err := openReader(ctx, s, opts.Progress)
		if err != nil {
			return sum, err
		}
		readers = append(readers, r)
		switch {
		case i == 0:
			sum.Format = r.format
		case sum.Format != r.format:
			sum.Format = FormatMixed
		}
		if r.format == FormatCapture && !haveHeader {
			sum.Header, haveHeader = r.hdr, true
		}
	}
	if h.Header != nil {
		h.Header(sum.Format, sum.Header)
	}
	read := func(ctx context.Context, sum *Summary, h Handler) error {
		if len(readers) == 1 {
			return readers[0].each(ctx, sum, h)
		}
		return eachMerged(ctx, readers, sum, opts.Progress, h)
	}
	var err error
	if opts.Sequential {
		err = read(ctx, &sum, h)
	} else {
		err = readAhead(ctx, &sum, h, opts.Prepare, read)
	}
	sum.Empty = err == nil && sum.Messages == 0
	for _, r := range readers {
		sum.Empty = sum.Empty && r.jsl != nil && len(r.jsl.oversized) == 0
		if r.jsl != nil {
			for _, line := range r.jsl.oversized {
				sum.Oversized = append(sum.Oversized, line)
				if len(readers) > 1 {
					sum.OversizedIn = append(sum.OversizedIn, r.name)
				}
			}
		}
		if r.torn != nil && sum.Torn == nil {
			sum.Torn = r.torn
			if len(readers) > 1 {
				sum.Torn = fmt.Errorf("%s: %w", r.name, r.torn)
			}
		}
	}
	return sum, err
}

// eachMerged interleaves the readers by time.
func eachMerged(ctx context.Context, readers []*reader, sum *Summary, meter *progress.Meter, h Handler) error {
	streams := make([]inputs.Stream, len(readers))
	sources := inputs.NewSourceMap()
	for i, r := range readers {
		streams[i] = r
		sources.Add(i, r.hdr)
	}
	merge := inputs.NewMerge(streams)
	var (
		index  int64
		base   int64
		primed bool
		last   = -1
	)
	for {
		if index&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		i, at, ok, err := merge.Next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if !primed {
			// Every reader has read its first item: the earliest start is known.
			primed = true
			base = at
			for _, r := range readers {
				if r.hasStart {
					base = min(base, r.start)
				}
			}
		}
		r := readers[i]
		if i != last {
			meter.File(r.name)
			last = i
		}
		index++
		if r.jsl != nil {
			r.conn = nil
		}
		if c := r.conn; c != nil && h.Conn != nil {
			c.Index = index - 1
			c.Offset = time.Duration(at - base)
			c.Source = int(sources.ID(i, uint16(c.Source)))
			h.Conn(c)
		}
		if r.cur == nil {
			if !(r.jsl != nil && r.jsl.lastOversized) {
				sum.Skipped++
			}
			continue
		}
		m := r.cur
		m.Index = index - 1
		m.Offset = time.Duration(at - base)
		m.Source = int(sources.ID(i, uint16(m.Source)))
		sum.Messages++
		if err := h.Message(m); err != nil {
			return err
		}
	}
	return nil
}

// reader reads one input, a capture or JSON Lines, one item (a record or a
// line) at a time.
type reader struct {
	name   string
	format Format
	opened *inputs.Opened
	meter  *progress.Meter
	hdr    capfile.Header
	// start is the input's start on the shared clock (ns since the epoch):
	// the capture's start, or the first JSONL timestamp.
	start    int64
	hasStart bool

	cap  *capfile.Reader
	jsl  *jsonlReader
	torn error
	captureItem

	// cur is the message of the current item; nil for a skipped one.
	cur *protocol.Message
	// conn is the current item when it is a connection record.
	conn *protocol.Conn
}

var _ inputs.Stream = (*reader)(nil)

func openReader(ctx context.Context, src inputs.Source, meter *progress.Meter) (*reader, error) {
	o, err := inputs.Open(ctx, src)
	if err != nil {
		return nil, err
	}
	r := &reader{name: src.Name(), opened: o, meter: meter}
	if o.IsText() {
		r.format = FormatJSONL
		r.jsl = newJSONLReader(o.Text(), meter)
		r.hdr = capfile.Header{Origins: []capfile.Origin{{ID: 0, Transport: "jsonl"}}}
		if n := o.Size(); n > 0 {
			meter.AddTotalBytes(n)
		}
		return r, nil
	}
	rd, err := o.Capture()
	if err != nil {
		o.Close()
		if errors.Is(err, capfile.ErrNotCapture) {
			return nil, fmt.Errorf("%s: neither a capture file nor JSON lines: %w", src.Name(), err)
		}
		return nil, err
	}
	r.format, r.cap, r.hdr = FormatCapture, rd, rd.Header()
	if !r.hdr.Start.IsZero() {
		r.start, r.hasStart = r.hdr.Start.UnixNano(), true
	}
	if n := inputs.Total(rd); n > 0 {
		meter.AddTotal(n)
	}
	return r, nil
}

func (r *reader) close() {
	if r.cap != nil {
		r.cap.Close()
	}
	r.opened.Close()
}

// Next reads the next item; it implements inputs.Stream.
func (r *reader) Next() (int64, bool, error) {
	if r.jsl != nil {
		m, at, ok, err := r.jsl.next()
		if err != nil {
			return 0, false, fmt.Errorf("%s: %w", r.name, err)
		}
		if ok && !r.hasStart && m != nil && !m.Received.IsZero() {
			r.start, r.hasStart = at, true
		}
		r.cur = m
		return at, ok, nil
	}
	m, c, ok, err := r.nextRecord()
	if err != nil || !ok {
		return 0, ok, err
	}
	r.cur, r.conn = m, c
	return r.start + int64(r.lastTime), true, nil
}

// each passes every message of a single input to fn, numbered and timed as
// the input itself numbers and times them.
func (r *reader) each(ctx context.Context, sum *Summary, h Handler) error {
	for n := 0; ; n++ {
		if n&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		var (
			m   *protocol.Message
			c   *protocol.Conn
			ok  bool
			err error
		)
		if r.jsl != nil {
			m, _, ok, err = r.jsl.next()
			if err != nil {
				err = fmt.Errorf("%s: %w", r.name, err)
			}
		} else {
			m, c, ok, err = r.nextRecord()
		}
		if err != nil || !ok {
			return err
		}
		if c != nil && h.Conn != nil {
			h.Conn(c)
		}
		if m == nil {
			if !(r.jsl != nil && r.jsl.lastOversized) {
				sum.Skipped++
			}
			continue
		}
		sum.Messages++
		if err := h.Message(m); err != nil {
			return err
		}
	}
}
