// Package input reads the messages of a capture file or a JSONL file, for the
// commands that check and draw streams. It turns capture records (or JSONL
// lines) into protocol.Messages: payload bytes untouched, with their index,
// receive offset and direction.
package input

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/peek"
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
)

// Summary says what reading a file found besides its messages.
type Summary struct {
	Format Format
	// Header is the capture's header (zero for JSONL).
	Header capfile.Header
	// Messages is the number of messages passed on.
	Messages int64
	// Skipped counts capture records that are not messages (connection
	// events, markers) or JSONL lines that are blank.
	Skipped int64
	// Torn is set when the capture ends in a torn tail (the recorder did not
	// close it): every message before it was read.
	Torn error
	// Oversized lists the JSONL lines (1-based) longer than MaxLine: they
	// were skipped, the lines after them read.
	Oversized []int64
	// Empty is set when the input holds no bytes but blanks.
	Empty bool
}

// Gaps describes what of the input was not read although reading went on,
// one sentence each: lines over the size limit, an empty input. A torn tail
// is in Torn, not here.
func (s *Summary) Gaps() []string {
	var out []string
	for _, line := range s.Oversized {
		out = append(out, fmt.Sprintf("line %d is longer than %d bytes and was skipped", line, MaxLine))
	}
	if s.Empty {
		out = append(out, "empty file: it holds no messages")
	}
	return out
}

// Handler receives what Read finds. Message is required; the others may be nil.
type Handler struct {
	// Header is called once, before anything else, with the capture's
	// header (the zero header for JSONL).
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
	var r io.Reader
	if path == "-" {
		r = os.Stdin
	} else {
		f, err := os.Open(path)
		if err != nil {
			return Summary{}, err
		}
		defer f.Close()
		r = f
	}
	br := bufio.NewReaderSize(r, 1<<16)
	head, _ := br.Peek(8)
	if len(bytes.TrimSpace(head)) == 0 {
		// Nothing but blanks so far: an empty input, or JSON lines that
		// start with blank ones.
		sum, err := eachJSONL(ctx, path, br, h)
		sum.Empty = err == nil && sum.Messages == 0 && len(sum.Oversized) == 0
		return sum, err
	}
	if !looksLikeJSON(head) {
		if path != "-" {
			// A file: open it by name so the reader can use its index.
			return eachCapture(ctx, path, nil, h)
		}
		return eachCapture(ctx, path, br, h)
	}
	return eachJSONL(ctx, path, br, h)
}

// looksLikeJSON reports whether a file starting with head is text JSON
// (JSONL) rather than a capture (which starts with a binary zstd frame).
func looksLikeJSON(head []byte) bool {
	head = bytes.TrimLeft(head, " \t\r\n\xef\xbb\xbf")
	return len(head) > 0 && (head[0] == '{' || head[0] == '[')
}

func eachCapture(ctx context.Context, path string, stream io.Reader, h Handler) (Summary, error) {
	var (
		rd  *capfile.Reader
		err error
	)
	if stream != nil {
		rd, err = capfile.NewReader(stream)
	} else {
		rd, err = capfile.Open(path)
	}
	if err != nil {
		if errors.Is(err, capfile.ErrNotCapture) {
			return Summary{}, fmt.Errorf("%s: neither a capture file nor JSON lines: %w", path, err)
		}
		return Summary{}, fmt.Errorf("%s: %w", path, err)
	}
	defer rd.Close()
	sum := Summary{Format: FormatCapture, Header: rd.Header()}
	if h.Header != nil {
		h.Header(sum.Format, sum.Header)
	}
	attrs := map[string]string{}
	var m protocol.Message
	for {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		rec, err := rd.Next()
		if err == io.EOF {
			return sum, nil
		}
		if err != nil {
			if capfile.IsTorn(err) {
				sum.Torn = err
				return sum, nil
			}
			return sum, fmt.Errorf("%s: %w (aaep-replay repair can save the intact records)", path, err)
		}
		if rec.Kind == capfile.KindConn && h.Conn != nil {
			h.Conn(&protocol.Conn{Index: rd.Index(), Offset: time.Duration(rec.Time), Source: int(rec.Source), Raw: rec.Payload})
		}
		if rec.Kind != capfile.KindReceived && rec.Kind != capfile.KindSent {
			sum.Skipped++
			continue
		}
		m = protocol.Message{
			Index:  rd.Index(),
			Offset: time.Duration(rec.Time),
			Source: int(rec.Source),
			Raw:    rec.Payload,
		}
		if !sum.Header.Start.IsZero() {
			m.Received = sum.Header.Start.Add(m.Offset)
		}
		// Every capture is written from the subscriber's side: received
		// records came from the producer, sent ones went to it. That holds
		// for aaep-capture and for aaep-replay's --record alike.
		if rec.Kind == capfile.KindSent {
			m.Dir = protocol.ToProducer
		}
		if len(rec.Attrs) > 0 {
			clear(attrs)
			for _, a := range rec.Attrs {
				attrs[a.Key] = a.Value
			}
			m.Attrs = attrs
		}
		sum.Messages++
		if err := h.Message(&m); err != nil {
			return sum, err
		}
	}
}

// eachJSONL reads one message per line. Messages have no receive times, so
// their offsets come from their own timestamps ("timestamp" or KAHN's "ts"),
// relative to the first one that has a readable timestamp; a line without one
// keeps the previous offset.
func eachJSONL(ctx context.Context, path string, r *bufio.Reader, h Handler) (Summary, error) {
	sum := Summary{Format: FormatJSONL}
	if h.Header != nil {
		h.Header(sum.Format, capfile.Header{})
	}
	var (
		line    int64
		first   time.Time
		lastOff time.Duration
		long    []byte
	)
	for {
		raw, tooLong, err := readLine(r, &long)
		if err != nil && (err != io.EOF || (len(raw) == 0 && !tooLong)) {
			if err == io.EOF {
				return sum, nil
			}
			return sum, fmt.Errorf("%s: line %d: %w", path, line+1, err)
		}
		line++
		if line%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return sum, err
			}
		}
		if tooLong {
			sum.Oversized = append(sum.Oversized, line)
			continue
		}
		b := bytes.TrimRight(raw, "\r\n")
		if len(bytes.TrimSpace(b)) == 0 {
			sum.Skipped++
			continue
		}
		m := protocol.Message{Index: line - 1, Raw: b}
		f := peek.Peek(b)
		ts := f.Timestamp
		if ts == "" {
			ts = f.TS
		}
		if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
			if first.IsZero() {
				first = t
			}
			if off := t.Sub(first); off > lastOff {
				lastOff = off
			}
			m.Received = t
		}
		m.Offset = lastOff
		if isSubscriberMessage(f.Type) {
			m.Dir = protocol.ToProducer
		}
		sum.Messages++
		if err := h.Message(&m); err != nil {
			return sum, err
		}
	}
}

// readLine reads one line (with its newline, if any) of at most MaxLine
// bytes. A longer line is read to its end and dropped: tooLong is set and
// line is nil. The line is valid until the next call; long is the buffer
// for lines longer than r's buffer.
func readLine(r *bufio.Reader, long *[]byte) (line []byte, tooLong bool, err error) {
	chunk, err := r.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return chunk, false, err
	}
	buf := append((*long)[:0], chunk...)
	for err == bufio.ErrBufferFull {
		chunk, err = r.ReadSlice('\n')
		if !tooLong && len(buf)+len(chunk) > MaxLine+2 { // the line ending is not counted
			tooLong, buf = true, buf[:0]
		}
		if !tooLong {
			buf = append(buf, chunk...)
		}
	}
	if tooLong {
		*long = buf[:0]
		return nil, true, err
	}
	*long = buf
	return buf, false, err
}

// isSubscriberMessage reports whether an AAEP message type is one that only
// subscribers send, so a JSONL file without directions still places replies
// and requests on the right side.
func isSubscriberMessage(typ string) bool {
	switch typ {
	case "subscription.request", "subscription.renegotiate", "confirmation.reply", "clarification.reply":
		return true
	}
	return false
}
