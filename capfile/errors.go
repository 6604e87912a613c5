package capfile

import (
	"errors"
	"fmt"
	"io"
)

// Sentinel errors. Test for them with errors.Is.
var (
	// ErrClosed is returned by Writer methods called after Close.
	ErrClosed = errors.New("capfile: writer is closed")
	// ErrNotCapture is returned when a file does not start with a capture header.
	ErrNotCapture = errors.New("capfile: not a capture file")
	// ErrUnsupportedVersion is returned for a format version newer than Version.
	ErrUnsupportedVersion = errors.New("capfile: unsupported format version")
	// ErrTimeOrder is returned by Writer.Append for a record whose Time is
	// before the previous record's Time.
	ErrTimeOrder = errors.New("capfile: record time goes backwards")
	// ErrNoIndex is returned by the seek methods of a streaming Reader, which
	// cannot reach the index.
	ErrNoIndex = errors.New("capfile: no index on a streaming reader")
	// ErrSessionNotFound is returned by SeekSession for an unknown session.
	ErrSessionNotFound = errors.New("capfile: session not found")
)

// CorruptionError reports damage found while reading a capture: a bad
// checksum, an impossible length, an undecodable zstd frame, or (with Err
// io.ErrUnexpectedEOF) a torn tail, meaning the file ends before the writer
// closed it.
type CorruptionError struct {
	// Offset is the byte offset in the file of the structure that is damaged:
	// the skippable frame, or the zstd frame holding the damaged record.
	Offset int64
	// Index is the number of the record that could not be read (the count of
	// records read before it), or -1 when the damage is outside the records.
	Index int64
	// Err says what is wrong. It is io.ErrUnexpectedEOF for a torn tail.
	Err error
	// Size is, for a torn tail, the size of the capture (where it ends);
	// 0 when unknown. See Unreadable.
	Size int64
	// Live is set for a torn tail met while the file was being written
	// (BeingWritten): not a tear, only the end of what was written so far.
	Live bool
}

// Unreadable returns how many bytes of a torn tail yielded no record: from
// the start of the frame that the file ends inside to the end of the file.
// It is 0 for other damage, or when the size is not known.
func (e *CorruptionError) Unreadable() int64 {
	if e.Size <= e.Offset || !errors.Is(e.Err, io.ErrUnexpectedEOF) {
		return 0
	}
	return e.Size - e.Offset
}

func (e *CorruptionError) Error() string {
	what := "corrupt capture"
	switch {
	case e.Live && e.Index >= 0:
		return fmt.Sprintf("capfile: capture being written (its recorder holds it open): %d records so far, the rest still to come", e.Index)
	case e.Live:
		return "capfile: capture being written (its recorder holds it open): its header is still to come"
	case errors.Is(e.Err, io.ErrUnexpectedEOF):
		what = "torn capture tail"
	}
	lost := ""
	if n := e.Unreadable(); n > 0 {
		lost = fmt.Sprintf(" (%d bytes unreadable, to the end at byte %d)", n, e.Size)
	}
	if e.Index >= 0 {
		return fmt.Sprintf("capfile: %s at byte %d, record %d: %v%s", what, e.Offset, e.Index, e.Err, lost)
	}
	return fmt.Sprintf("capfile: %s at byte %d: %v%s", what, e.Offset, e.Err, lost)
}

func (e *CorruptionError) Unwrap() error { return e.Err }

// IsTorn reports whether err is a torn tail: the capture ends where the
// writer stopped (a crash or a copy of a file still being written). Every
// record before it is intact.
func IsTorn(err error) bool {
	var ce *CorruptionError
	return errors.As(err, &ce) && errors.Is(ce.Err, io.ErrUnexpectedEOF)
}

// tornError wraps a detail message so that it still matches io.ErrUnexpectedEOF.
type tornError struct{ msg string }

func (e tornError) Error() string        { return e.msg }
func (e tornError) Is(target error) bool { return target == io.ErrUnexpectedEOF }

// ErrNothingRead is the error of a capture that holds bytes past its header
// of which no record could be read (a copy cut off inside its first frame):
// a read that yields nothing, which no command passes as a success.
var ErrNothingRead = errors.New("no record could be read")

// ReadPolicy is how a command judges the way a read of a capture ended
// (Judge): what is only a warning, and what fails the command.
type ReadPolicy struct {
	// AllowIncomplete makes damage, and a capture of which no record could
	// be read, warnings: the command goes on with what was read.
	AllowIncomplete bool
	// Strict makes a torn tail an error too (unless AllowIncomplete).
	Strict bool
}

// Judge judges err, the error that ended reading a capture after records
// records were read. A clean end (nil or io.EOF) is neither an error nor a
// warning. A torn tail (IsTorn) is a warning, unless no record could be
// read although bytes were there (ErrNothingRead; an err that already
// wraps it is judged so whatever records says) or the policy is Strict:
// then it fails. Other damage (a *CorruptionError) fails. AllowIncomplete
// turns every failure of a *CorruptionError into a warning. Any other error
// is returned as fail, unchanged.
func (p ReadPolicy) Judge(err error, records int64) (fail, warn error) {
	if err == nil || errors.Is(err, io.EOF) {
		return nil, nil
	}
	var ce *CorruptionError
	if !errors.As(err, &ce) {
		return err, nil
	}
	bad := err
	switch {
	case errors.Is(err, ErrNothingRead):
	case ce.Live && !p.Strict:
		// Being written: what follows is still to come.
		return nil, err
	case IsTorn(err) && records == 0 && ce.Unreadable() > 0:
		bad = fmt.Errorf("%w: %w", ErrNothingRead, err)
	case IsTorn(err) && !p.Strict:
		return nil, err
	case IsTorn(err):
		bad = fmt.Errorf("%w (--strict: a torn tail is an error)", err)
	}
	if p.AllowIncomplete {
		return nil, bad
	}
	return bad, nil
}
