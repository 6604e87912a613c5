package recording

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/progress"
	"github.com/aaep-tools/aaepkit/protocol"
)

// MaxLine bounds one JSONL line (the same 16 MiB bound aaep-capture applies to a message).
const MaxLine = 16 << 20

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

// ReadOptions tune Read.
type ReadOptions struct {
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
	// From, when its Part is above 0, reads a recording's parts from that
	// one on: those before it were read by an earlier run (a check that
	// goes on where the last one ended, protocol/check.Resume). Records
	// are numbered and timed as a read of every part numbers and times
	// them. Joined recordings (Join) cannot be read from a part.
	From From
}

// From is where ReadOptions.From starts: part Part (an index into
// Recording.Parts), whose first record is record number Index of the
// recording (the records of the parts before it).
type From struct {
	Part  int
	Index int64
}

// Read passes the recording's header, messages in order and (for captures)
// connection records to h; a Message and its Raw bytes are valid only
// during the call. A torn tail is not an error but Summary.Torn, after
// every intact message (a torn part that is not the last ends only that
// part); other damage stops the read with an error naming part and offset.
//
// Parts are read one after the other, joined recordings (Join) interleaved
// by absolute time (Merge; a JSON Lines message at its own timestamp; equal
// times in part order). Offsets count from the earliest start, Index is the
// record number "aaep-replay merge" of the same parts would give (JSON
// Lines lines counted), and origins are numbered as in Recording.Origins.
//
// Unless opts.Sequential, parts are read, decompressed, parsed and decoded
// (Message.Doc; prepared with opts.Prepare) on a goroutine of their own, a
// bounded few batches (at most 256 messages or 512 KiB each) ahead of h, so
// that reading and handling use two cores. h is still called on the
// caller's goroutine, in order; an input's error comes after every message
// before it; when h fails or ctx ends, Read returns once reading has
// stopped.
func (rec *Recording) Read(ctx context.Context, opts ReadOptions, h Handler) (Summary, error) {
	sum := Summary{Files: len(rec.Parts)}
	var chains []*chain
	defer func() {
		for _, c := range chains {
			c.close()
		}
	}()
	origins := rec.originMap()
	groups := [][]*Part{rec.Parts}
	if rec.joined != nil {
		groups = groups[:0]
		for _, r := range rec.joined {
			groups = append(groups, r.Parts)
		}
	}
	if opts.From.Part > 0 {
		if rec.joined != nil || opts.From.Part >= len(rec.Parts) {
			return sum, fmt.Errorf("%s: cannot be read from its part %d", rec.Name, opts.From.Part+1)
		}
		groups = [][]*Part{rec.Parts[opts.From.Part:]}
	}
	first := opts.From.Part
	for _, parts := range groups {
		c := &chain{parts: parts, first: first, meter: opts.Progress}
		first += len(parts)
		chains = append(chains, c)
	}
	// The first part of every chain is opened now: its format and header
	// are known before the first message, and a part that cannot be
	// opened is an error before anything is read.
	haveHeader := false
	for _, c := range chains {
		if err := c.openFirst(ctx); err != nil {
			return sum, err
		}
	}
	if opts.From.Part > 0 {
		// Offsets count from the recording's start, its first part's.
		if st := rec.Parts[0].Header.Start; !st.IsZero() {
			chains[0].start, chains[0].hasStart = st.UnixNano(), true
		}
	}
	for i, p := range rec.Parts {
		f := p.Format
		switch {
		case i == 0:
			sum.Format = f
		case sum.Format != f:
			sum.Format = FormatMixed
		}
		if f == FormatCapture && !haveHeader {
			sum.Header, haveHeader = rec.Header(), true
		}
	}
	if h.Header != nil {
		h.Header(sum.Format, sum.Header)
	}
	read := func(ctx context.Context, sum *Summary, h Handler) error {
		if len(chains) == 1 && len(rec.Parts) == 1 {
			return chains[0].cur.each(ctx, sum, h)
		}
		return eachMerged(ctx, chains, origins, opts.From.Index, sum, opts.Progress, h)
	}
	var err error
	if opts.Sequential || rec.followed() {
		// A followed recording hands each message on as it arrives,
		// not in batches.
		err = read(ctx, &sum, h)
	} else {
		err = readAhead(ctx, &sum, h, opts.Prepare, read)
	}
	sum.Empty = err == nil && sum.Messages == 0
	for _, c := range chains {
		for _, r := range c.done {
			sum.Empty = sum.Empty && r.jsl != nil && len(r.jsl.oversized) == 0
			if r.jsl != nil {
				for _, line := range r.jsl.oversized {
					sum.Oversized = append(sum.Oversized, line)
					if len(rec.Parts) > 1 {
						sum.OversizedIn = append(sum.OversizedIn, r.name)
					}
				}
			}
			if r.torn != nil && sum.Torn == nil {
				sum.Torn = r.torn
				if len(rec.Parts) > 1 {
					sum.Torn = fmt.Errorf("%s: %w", r.name, r.torn)
				}
			}
		}
	}
	return sum, err
}

// eachMerged reads the chains one after the other when there is one (the
// parts of a rotated recording), interleaved by time when there are several
// (joined recordings).
// Records are numbered from index.
func eachMerged(ctx context.Context, chains []*chain, origins *OriginMap, index int64, sum *Summary, meter *progress.Meter, h Handler) error {
	streams := make([]Stream, len(chains))
	for i, c := range chains {
		streams[i] = c
	}
	merge := NewMerge(streams)
	var (
		base   int64
		primed bool
		last   *reader
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
			// Every chain has read its first item: the earliest start is known.
			primed = true
			base = at
			for _, c := range chains {
				if c.hasStart {
					base = min(base, c.start)
				}
			}
		}
		c := chains[i]
		r := c.cur
		if r != last {
			meter.File(r.name)
			last = r
		}
		index++
		if r.jsl != nil {
			r.conn = nil
		}
		if cn := r.conn; cn != nil && h.Conn != nil {
			cn.Index = index - 1
			cn.Offset = time.Duration(at - base)
			cn.Source = int(origins.ID(c.first+c.k, uint16(cn.Source)))
			cn.Recording = i
			h.Conn(cn)
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
		m.Source = int(origins.ID(c.first+c.k, uint16(m.Source)))
		m.Recording = i
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
	part   *Part
	name   string
	format Format
	opened *opened
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

var _ Stream = (*reader)(nil)

func openReader(ctx context.Context, p *Part, meter *progress.Meter) (*reader, error) {
	if p.follow != nil {
		return openLiveReader(ctx, p, meter)
	}
	o, err := p.open(ctx)
	if err != nil {
		return nil, err
	}
	r := &reader{part: p, name: p.Name, opened: o, meter: meter}
	if p.Format == FormatJSONL || p.Format == "" && o.isText() {
		r.format, p.Format = FormatJSONL, FormatJSONL
		r.jsl = newJSONLReader(o.br, meter)
		r.hdr = capfile.Header{Origins: []capfile.Origin{{ID: 0, Transport: "jsonl"}}}
		if n := o.size(); n > 0 {
			meter.AddTotalBytes(n)
		}
		return r, nil
	}
	rd, err := o.capture()
	if err != nil {
		o.close()
		if errors.Is(err, capfile.ErrNotCapture) {
			return nil, fmt.Errorf("%s: neither a capture file nor JSON lines: %w", p.Name, err)
		}
		return nil, err
	}
	r.format, r.cap, r.hdr = FormatCapture, rd, rd.Header()
	if p.Format == "" {
		p.setHeader(r.hdr)
	}
	if !r.hdr.Start.IsZero() {
		r.start, r.hasStart = r.hdr.Start.UnixNano(), true
	}
	if n := Total(rd); n > 0 {
		meter.AddTotal(n)
	}
	return r, nil
}

func (r *reader) close() {
	if r.cap != nil {
		r.cap.Close()
		r.cap = nil
	}
	if r.opened != nil && r.part.stdin == nil {
		r.opened.close()
	}
	r.opened = nil
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

// Each reads what name names (a file, a glob, a directory, "-"; several
// recordings joined, as Join) and calls fn for every message in order, on
// the caller's goroutine: a shorthand for tools and tests. The Message and
// its Raw bytes are valid only during the call.
func Each(ctx context.Context, name string, fn func(*protocol.Message) error) (Summary, error) {
	recs, err := Open(ctx, []string{name}, Options{})
	if err != nil {
		return Summary{}, err
	}
	return Join(recs).Read(ctx, ReadOptions{}, Handler{Message: fn})
}
