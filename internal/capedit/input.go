package capedit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/outfile"
	"github.com/aaep-tools/aaepkit/internal/progress"
	"github.com/aaep-tools/aaepkit/recording"
)

// Warning is a problem an operation worked around: a torn input whose intact
// records were used.
type Warning struct {
	// File is the input the warning is about.
	File string
	// Records is the number of intact records in File.
	Records int64
	// Err is the torn-tail error (a *capfile.CorruptionError).
	Err error
}

func (w Warning) String() string {
	return fmt.Sprintf("%s: %v; used the %d intact records before it", w.File, w.Err, w.Records)
}

// Result says what an operation that writes a capture did.
type Result struct {
	// Read is the number of records read from the inputs.
	Read int64
	// Written is the number of records written to the output.
	Written int64
	// Warnings lists torn inputs.
	Warnings []Warning
}

// Input is how an edit reads its inputs.
type Input struct {
	// Progress counts the records read (nil: no progress display).
	Progress *progress.Meter
	// Inputs says how inputs are opened (object storage options).
	Inputs recording.Options
}

// input is one capture being read (a file, an object, or every part of a
// rotated recording, or several recordings joined in time order), with the
// bookkeeping every operation needs: the name for errors, the count of
// records read, and the torn-tail warning.
type input struct {
	path  string
	r     *recording.Reader
	read  int64
	torn  *Warning
	meter *progress.Meter
}

// openReader opens what names name (captures, globs, directories, s3://
// objects and prefixes) as one capture: recording.Open with ro, the
// recordings joined in time order.
func openReader(ctx context.Context, names []string, ro recording.Options) (*recording.Reader, error) {
	recs, err := recording.Open(ctx, names, ro)
	if err != nil {
		return nil, err
	}
	return recording.Join(recs).Records(ctx)
}

// openInput opens name (see openReader); meter (which may be nil) counts
// its records.
func openInput(ctx context.Context, name string, ro recording.Options, meter *progress.Meter) (*input, error) {
	return openInputs(ctx, []string{name}, ro, meter)
}

// openInputs opens names as one capture (see openReader), named as
// inputName names them.
func openInputs(ctx context.Context, names []string, ro recording.Options, meter *progress.Meter) (*input, error) {
	r, err := openReader(ctx, names, ro)
	if err != nil {
		return nil, err
	}
	meter.AddTotal(recording.Total(r))
	return &input{path: inputName(names), r: r, meter: meter}, nil
}

// inputName is how messages name the inputs of an operation that reads
// them as one capture: the one name, or every name.
func inputName(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names, " ")
}

// derivedFrom is the header's derived_from of a capture made of names.
func derivedFrom(names []string) string {
	bases := make([]string, len(names))
	for i, n := range names {
		bases[i] = filepath.Base(n)
	}
	return strings.Join(bases, " ")
}

// openRecordings opens recordings already found (export of several
// inputs): joined in time order.
func openRecordings(ctx context.Context, recs []*recording.Recording, meter *progress.Meter) (*input, error) {
	j := recording.Join(recs)
	r, err := j.Records(ctx)
	if err != nil {
		return nil, err
	}
	meter.AddTotal(recording.Total(r))
	return &input{path: j.Name, r: r, meter: meter}, nil
}

// next returns the next intact record, or nil at the end. A torn tail ends
// the input with a warning, unless not one record could be read although
// bytes were there: that is an error wrapping capfile.ErrNothingRead. Other
// damage is an error naming the file, the byte offset and the record,
// marked with outfile.KeepPartial.
func (in *input) next() (*capfile.Record, error) {
	rec, err := in.r.Next()
	if err == nil {
		in.read++
		in.meter.Record(time.Duration(rec.Time))
		return rec, nil
	}
	if errors.Is(err, io.EOF) {
		return nil, nil
	}
	if capfile.IsTorn(err) {
		if fail, _ := (capfile.ReadPolicy{}).Judge(err, in.read); errors.Is(fail, capfile.ErrNothingRead) {
			// Bytes past the header and not one record: nothing to go on
			// with, and no output is written from it.
			return nil, fmt.Errorf("%s: %w", in.path, fail)
		}
		if in.torn == nil {
			in.torn = &Warning{File: in.path, Records: in.r.Index() + 1, Err: err}
		}
		return nil, nil
	}
	// Damage: the records before it were delivered, and an output holding
	// them is kept (outfile.WriteFile commits it, then the error is reported).
	return nil, outfile.KeepPartial(fmt.Errorf("%s: %w", in.path, err))
}

func (in *input) close() { in.r.Close() }

// warn adds in's torn-tail warning, if any, to ws.
func (in *input) warn(ws *[]Warning) {
	if in.torn != nil {
		*ws = append(*ws, *in.torn)
	}
}

// openEdit refuses out under o, then opens ins as one capture (see
// openInputs): the start of an edit of one capture. One open plans and
// reads: an object's head and index are fetched once.
func openEdit(ctx context.Context, ins []string, out string, o Output, i Input) (*input, error) {
	if err := o.check(out, ins...); err != nil {
		return nil, err
	}
	return openInputs(ctx, ins, i.Inputs, i.Progress)
}

// ctxCheck returns ctx's error every 1024 calls, so that long loops notice
// cancellation without paying for it on every record.
type ctxCheck struct {
	ctx context.Context
	n   int
}

func (c *ctxCheck) err() error {
	c.n++
	if c.n&1023 != 0 {
		return nil
	}
	return context.Cause(c.ctx)
}

// newCaptureWriter returns a capture writer tuned for batch output: no timed
// flushes (nothing needs to be readable before Close).
func newCaptureWriter(w io.Writer, h capfile.Header) (*capfile.Writer, error) {
	cw, err := capfile.NewWriter(w, h, &capfile.WriterOptions{FlushInterval: -1})
	if err != nil {
		return nil, fmt.Errorf("write output: %w", err)
	}
	return cw, nil
}

// cloneHeader copies h so that the copy's slices and map can be changed.
func cloneHeader(h capfile.Header) capfile.Header {
	h.Origins = append([]capfile.Origin(nil), h.Origins...)
	h.Redacted = append([]string(nil), h.Redacted...)
	m := make(map[string]string, len(h.Meta)+2)
	for k, v := range h.Meta {
		m[k] = v
	}
	h.Meta = m
	return h
}
