package capedit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/outfile"
	"github.com/aaep-tools/aaepkit/internal/progress"
	"github.com/aaep-tools/aaepkit/payload"
)

// ImportOptions tune Import.
type ImportOptions struct {
	// Tool names the tool for the header of a plain import, e.g. "aaep-replay/0.1.0".
	Tool string
	// Plain reads every line as a message even when the first line looks
	// like the header of a --with-meta export.
	Plain bool
	Output
	// Progress counts the lines read (nil: no progress display).
	Progress *progress.Meter
}

// ImportStats say what Import did.
type ImportStats struct {
	// WithMeta is true when the input was a --with-meta export.
	WithMeta bool
	// Lines is the number of lines read; Blank of them were empty and skipped.
	Lines, Blank int64
	// Records is the number of records written.
	Records int64
	// Invalid counts lines kept as records flagged invalid JSON or UTF-8.
	Invalid int64
	// Untimed counts messages without a readable timestamp, which took the
	// time of the message before them.
	Untimed int64
	// Backwards counts messages whose timestamp is earlier than an earlier
	// message's; their time was raised to keep the capture's times monotonic.
	Backwards int64
	// Start is the capture's start (the first timestamp found).
	Start time.Time
}

// LineAttr is the attribute holding the line number of an invalid line kept
// by a plain import.
const LineAttr = "line"

// maxMetaLine bounds a --with-meta line: a base64 payload of MaxPayload plus
// room for the attributes.
const maxMetaLine = capfile.MaxPayload/3*4 + 8<<20

// Import reads the JSON Lines file at in and writes the capture out.
//
// A plain file (one message per line, as the reference aaep-capture writes)
// becomes records of kind received from one source, with times taken from
// each message's "timestamp" (AAEP) or "ts" (KAHN) field relative to the
// first such time, which becomes the header's start; the records carry
// capfile.FlagNoRecvTime. Times never go backwards: a message stamped earlier
// than its predecessor gets its predecessor's time (counted in Backwards). A
// line that is not valid JSON or UTF-8 is kept, flagged, with its line number
// in the LineAttr attribute. Blank lines are skipped.
//
// A --with-meta export (see MetaVersion) is recognised by its first line and
// rebuilt into the header and records it was exported from.
func Import(ctx context.Context, in, out string, opts ImportOptions) (*ImportStats, error) {
	st := &ImportStats{}
	if err := opts.check(out, in); err != nil {
		return st, err
	}
	if err := SniffJSONL(in); err != nil {
		return st, err
	}
	f, err := os.Open(in)
	if err != nil {
		return st, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		opts.Progress.AddTotalBytes(fi.Size())
	}
	lr := newLineReader(f, maxMetaLine)
	lr.meter = opts.Progress
	first, err := lr.read()
	if err != nil && !errors.Is(err, io.EOF) {
		return st, fmt.Errorf("%s: %w", in, err)
	}
	if !opts.Plain {
		h, ok, herr := isMetaHeader(first)
		if herr != nil {
			return st, fmt.Errorf("%s: line 1: %w", in, herr)
		}
		if ok {
			st.WithMeta = true
			st.Lines = 1
			st.Start = h.Start
			return st, opts.writeCapture(out, []string{in}, h, func(cw *capfile.Writer) error {
				return importMeta(ctx, in, lr, cw, st)
			})
		}
	}
	start, found, err := firstTimestamp(in)
	if err != nil {
		return st, err
	}
	if !found {
		fi, err := f.Stat()
		if err != nil {
			return st, err
		}
		start = fi.ModTime()
	}
	st.Start = start
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return st, err
	}
	h := capfile.Header{
		Start:   start,
		Tool:    opts.Tool,
		Origins: []capfile.Origin{{ID: 0, Transport: "file", Endpoint: filepath.Base(in)}},
		Meta:    map[string]string{"imported_from": filepath.Base(in)},
	}
	return st, opts.writeCapture(out, []string{in}, h, func(cw *capfile.Writer) error {
		lr := newLineReader(f, capfile.MaxPayload)
		lr.meter = opts.Progress
		return importPlain(ctx, in, lr, cw, h, st)
	})
}

// ErrTimeRange: a timestamp a capture cannot hold (see capfile.InRange).
var ErrTimeRange = errors.New("timestamp out of range")

// checkTime refuses a timestamp (of line) that no capture can hold, rather
// than clamping it into a time the message never had.
func checkTime(t time.Time, line int64) error {
	if capfile.InRange(t) {
		return nil
	}
	return fmt.Errorf("line %d: %w: %s is outside the times a capture can hold (%s to %s); correct the line, then re-anchor with --time-shift if need be",
		line, ErrTimeRange, t.Format(time.RFC3339Nano), capfile.MinTime.Format(time.RFC3339), capfile.MaxTime.Format(time.RFC3339))
}

// messageTime returns the time a message stamps itself with.
func messageTime(f *payload.Routing) (time.Time, bool) {
	s := f.Timestamp
	if s == "" {
		s = f.TS
	}
	if s == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		// RFC 3339 allows lower-case "t" and "z".
		if t, err = time.Parse(time.RFC3339Nano, strings.ToUpper(s)); err != nil {
			return time.Time{}, false
		}
	}
	return t, true
}

// firstTimestamp returns the first message time in the file at path.
func firstTimestamp(path string) (time.Time, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return time.Time{}, false, err
	}
	defer f.Close()
	lr := newLineReader(f, capfile.MaxPayload)
	for {
		line, err := lr.read()
		if errors.Is(err, io.EOF) {
			return time.Time{}, false, nil
		}
		if err != nil {
			return time.Time{}, false, nil // damage: the import reports it where it is
		}
		d := payload.Decode(line)
		if t, ok := messageTime(&d.Routing); ok && d.IsObject() {
			if err := checkTime(t, lr.line); err != nil {
				return time.Time{}, false, fmt.Errorf("%s: %w", path, err)
			}
			return t, true, nil
		}
	}
}

// eachImportLine hands fn each non-blank line of an import, counting lines
// and blank lines in st, until the end or an error. A read error keeps what
// was imported before it (outfile.KeepPartial).
func eachImportLine(ctx context.Context, lr *lineReader, path string, st *ImportStats, fn func(line []byte) error) error {
	cc := ctxCheck{ctx: ctx}
	for {
		if err := cc.err(); err != nil {
			return err
		}
		line, err := lr.read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return outfile.KeepPartial(fmt.Errorf("%s: %w", path, err))
		}
		st.Lines++
		if len(bytes.TrimSpace(line)) == 0 {
			st.Blank++
			continue
		}
		if err := fn(line); err != nil {
			return err
		}
	}
}

func importPlain(ctx context.Context, path string, lr *lineReader, cw *capfile.Writer, h capfile.Header, st *ImportStats) error {
	var last int64
	var rec capfile.Record
	var doc payload.Doc
	return eachImportLine(ctx, lr, path, st, func(line []byte) error {
		rec = capfile.Record{Kind: capfile.KindReceived, Flags: capfile.FlagNoRecvTime, Time: last, Payload: line}
		// The flags, the session key and the time are all the import
		// reads of a line.
		doc.DecodeOnly(line, payload.NeedRouting)
		if !doc.UTF8() {
			rec.Flags |= capfile.FlagInvalidUTF8
		}
		if !doc.JSONValid() {
			rec.Flags |= capfile.FlagInvalidJSON
		}
		if rec.Flags&(capfile.FlagInvalidJSON|capfile.FlagInvalidUTF8) != 0 {
			st.Invalid++
			rec.Attrs = []capfile.Attr{{Key: LineAttr, Value: strconv.FormatInt(lr.line, 10)}}
		} else if key := doc.Routing.SessionKey(); len(key) <= capfile.MaxSession {
			rec.Session = key
		}
		if rec.Flags&capfile.FlagInvalidJSON == 0 {
			if t, ok := messageTime(&doc.Routing); ok {
				if err := checkTime(t, lr.line); err != nil {
					return fmt.Errorf("%s: %w", path, err)
				}
				ns := t.Sub(h.Start).Nanoseconds()
				if ns == math.MaxInt64 {
					return fmt.Errorf("%s: line %d: %w: timestamp %s is more than 292 years after the first, %s (a capture's records are at most that far from its start)",
						path, lr.line, ErrTimeRange, t.Format(time.RFC3339Nano), h.Start.Format(time.RFC3339Nano))
				}
				if ns < last {
					st.Backwards++
				} else {
					rec.Time, last = ns, ns
				}
			} else {
				st.Untimed++
			}
		} else {
			st.Untimed++
		}
		if err := cw.Append(&rec); err != nil {
			return fmt.Errorf("%s: line %d: %w", path, lr.line, err)
		}
		st.Records++
		return nil
	})
}

func importMeta(ctx context.Context, path string, lr *lineReader, cw *capfile.Writer, st *ImportStats) error {
	var rec capfile.Record
	return eachImportLine(ctx, lr, path, st, func(line []byte) error {
		if err := parseMetaRecord(line, &rec); err != nil {
			return outfile.KeepPartial(fmt.Errorf("%s: line %d (byte %d): %w", path, lr.line, lr.off, err))
		}
		if err := cw.Append(&rec); err != nil {
			return outfile.KeepPartial(fmt.Errorf("%s: line %d (byte %d): %w", path, lr.line, lr.off, err))
		}
		st.Records++
		if rec.Flags&(capfile.FlagInvalidJSON|capfile.FlagInvalidUTF8) != 0 {
			st.Invalid++
		}
		return nil
	})
}
