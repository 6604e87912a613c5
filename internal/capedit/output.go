package capedit

import (
	"errors"
	"fmt"
	"io"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/outfile"
)

// ErrSameFile is returned when an output names one of the inputs (the
// sentinel of internal/outfile, which every command's outputs go through).
var ErrSameFile = outfile.ErrSameFile

// CheckOutput refuses an output that is, or resolves to, one of inputs (by
// path, symbolic link, hard link or another spelling: errors.Is ErrSameFile),
// an original recording unless force (outfile.ErrOriginal), or any other
// existing file the output policy of internal/outfile refuses, before
// anything is read or written.
func CheckOutput(out string, force bool, inputs ...string) error {
	if out == "" {
		return errors.New("no output file given")
	}
	return outfile.Check(out, outfile.Options{Inputs: inputs, Force: force})
}

// Output is how Cut, Dedupe, Filter, Import and Merge write their output
// capture.
type Output struct {
	// Stdout is where an out of "-" writes; nil refuses "-".
	Stdout io.Writer
	// Force replaces an original recording at out (see internal/outfile).
	Force bool
}

// check is CheckOutput under o.
func (o Output) check(out string, inputs ...string) error {
	return CheckOutput(out, o.Force, inputs...)
}

// write writes a capture to out through fn under the output policy of
// internal/outfile: inputs are never overwritten, a regular file appears only
// when complete (or, after damage in an input, holding every record read
// before it: see outfile.KeepPartial), and a device is written in place.
// "-" writes to o.Stdout, or is refused when it is nil.
func (o Output) write(out string, inputs []string, fn func(w io.Writer) error) error {
	if out == "" {
		return errors.New("no output file given")
	}
	return outfile.WriteFile(out, outfile.Options{Inputs: inputs, Stdout: o.Stdout, Binary: true, Force: o.Force}, fn)
}

// writeCapture writes a capture with header h to out (see write), fill
// appending its records. When fill succeeds the capture is closed (its
// index written) and a failure to close it is reported; after a failure the
// records appended stay readable.
func (o Output) writeCapture(out string, inputs []string, h capfile.Header, fill func(cw *capfile.Writer) error) error {
	return o.write(out, inputs, func(w io.Writer) error {
		cw, err := newCaptureWriter(w, h)
		if err != nil {
			return err
		}
		defer cw.Close()
		if err := fill(cw); err != nil {
			return err
		}
		if err := cw.Close(); err != nil {
			return fmt.Errorf("write output: %w", err)
		}
		return nil
	})
}

// WriteFile writes the output file out through fn under the output policy
// of internal/outfile: it refuses an out that is one of inputs, lets fn
// write to a temporary file and commits it only when fn returns nil (or an
// error marked with outfile.KeepPartial). On any other error an existing
// file at out is kept as it was.
func WriteFile(out string, inputs []string, fn func(w io.Writer) error) error {
	if out == "" {
		return errors.New("no output file given")
	}
	return outfile.WriteFile(out, outfile.Options{Inputs: inputs}, fn)
}
