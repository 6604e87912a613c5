package capedit

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/recording"
)

// ExportOptions select what Export writes.
type ExportOptions struct {
	// WithMeta wraps every record (all kinds) with its receive time, kind,
	// direction, source, session, flags and attributes, after a first line
	// holding the capture header; see MetaVersion for the shape.
	WithMeta bool
	// Sent also exports the messages the recorder sent (without WithMeta only
	// received messages are exported, as the reference aaep-capture records them).
	Sent bool
	Input
}

// ExportStats say what Export wrote.
type ExportStats struct {
	// Read is the number of records read.
	Read int64
	// Lines is the number of lines written (with WithMeta, including the
	// header line).
	Lines int64
	// Skipped counts records of kinds that a plain export leaves out
	// (connection events, markers, and sent messages without Sent).
	Skipped int64
	// Empty counts empty messages a plain export leaves out: an empty line
	// is not a message in JSON Lines (WithMeta keeps them).
	Empty int64
	// Reflowed counts payloads whose line breaks a plain export replaced with
	// spaces so that each message stays on one line (for valid JSON the value
	// is unchanged; use WithMeta for byte-exact output).
	Reflowed int64
	// Warnings lists a torn input.
	Warnings []Warning
}

// Export writes the capture at path to w as JSON Lines.
//
// A plain export writes each received message's payload as one line, byte
// for byte, followed by "\n": the format of the reference Python
// aaep-capture. A payload holding line breaks (JSON pretty-printed by its
// producer) has them replaced with spaces, and is counted in Reflowed.
func Export(ctx context.Context, path string, w io.Writer, opts ExportOptions) (*ExportStats, error) {
	recs, err := recording.Open(ctx, []string{path}, opts.Inputs)
	if err != nil {
		return nil, err
	}
	return ExportRecordings(ctx, recs, w, opts)
}

// ExportRecordings writes recs to w as Export does for one capture. Several
// recordings (or the parts of one) are exported as one, in time order: the
// records (and with WithMeta the header) of "merge --join-sources" of the
// same captures.
func ExportRecordings(ctx context.Context, recs []*recording.Recording, w io.Writer, opts ExportOptions) (*ExportStats, error) {
	in, err := openRecordings(ctx, recs, opts.Progress)
	if err != nil {
		return nil, err
	}
	defer in.close()
	st := &ExportStats{}
	bw := bufio.NewWriterSize(w, 64<<10)
	var line []byte
	if opts.WithMeta {
		if line, err = appendMetaHeader(line[:0], in.r.Header()); err != nil {
			return st, err
		}
		if _, err := bw.Write(line); err != nil {
			return st, fmt.Errorf("write export: %w", err)
		}
		st.Lines++
	}
	cc := ctxCheck{ctx: ctx}
	for {
		if err := cc.err(); err != nil {
			return st, err
		}
		rec, err := in.next()
		if err != nil {
			// Damage: every line before it goes out whole, then the error.
			if ferr := bw.Flush(); ferr != nil {
				return st, fmt.Errorf("write export: %w", ferr)
			}
			return st, err
		}
		if rec == nil {
			break
		}
		st.Read++
		switch {
		case opts.WithMeta:
			line = appendMetaRecord(line[:0], rec)
		case len(rec.Payload) == 0 && (rec.Kind == capfile.KindReceived || (opts.Sent && rec.Kind == capfile.KindSent)):
			st.Empty++
			continue
		case rec.Kind == capfile.KindReceived || (opts.Sent && rec.Kind == capfile.KindSent):
			line = append(line[:0], rec.Payload...)
			if bytes.ContainsAny(line, "\r\n") {
				for i, c := range line {
					if c == '\r' || c == '\n' {
						line[i] = ' '
					}
				}
				st.Reflowed++
			}
			line = append(line, '\n')
		default:
			st.Skipped++
			continue
		}
		if _, err := bw.Write(line); err != nil {
			return st, fmt.Errorf("write export: %w", err)
		}
		st.Lines++
	}
	if err := bw.Flush(); err != nil {
		return st, fmt.Errorf("write export: %w", err)
	}
	in.warn(&st.Warnings)
	return st, nil
}
