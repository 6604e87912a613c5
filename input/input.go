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
	if !looksLikeJSON(head) {
		if path != "-" {
			// A file: open it by name so the reader can use its index.
			return eachCapture(ctx, path, nil, fn)
		}
		return eachCapture(ctx, path, br, fn)
	}
	return eachJSONL(ctx, path, br, fn)
}

// looksLikeJSON reports whether a file starting with head is text JSON
// (JSONL) rather than a capture (which starts with a binary zstd frame).
func looksLikeJSON(head []byte) bool {
	head = bytes.TrimLeft(head, " \t\r\n\xef\xbb\xbf")
	return len(head) > 0 && (head[0] == '{' || head[0] == '[')
}

func eachCapture(ctx context.Context, path string, stream io.Reader, fn func(*protocol.Message) error) (Summary, error) {
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
		if err := fn(&m); err != nil {
			return sum, err
		}
	}
}

// eachJSONL reads one message per line. Messages have no receive times, so
// their offsets come from their own timestamps ("timestamp" or KAHN's "ts"),
// relative to the first one that has a readable timestamp; a line without one
// keeps the previous offset.
func eachJSONL(ctx context.Context, path string, r *bufio.Reader, fn func(*protocol.Message) error) (Summary, error) {
	sum := Summary{Format: FormatJSONL}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), MaxLine)
	var (
		line    int64
		first   time.Time
		lastOff time.Duration
	)
	for sc.Scan() {
		line++
		if line%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return sum, err
			}
		}
		b := bytes.TrimRight(sc.Bytes(), "\r")
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
		if err := fn(&m); err != nil {
			return sum, err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return sum, fmt.Errorf("%s: line %d is longer than %d bytes", path, line+1, MaxLine)
		}
		return sum, fmt.Errorf("%s: line %d: %w", path, line+1, err)
	}
	return sum, nil
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
