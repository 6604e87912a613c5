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
}

func (e *CorruptionError) Error() string {
	what := "corrupt capture"
	if errors.Is(e.Err, io.ErrUnexpectedEOF) {
		what = "torn capture tail"
	}
	if e.Index >= 0 {
		return fmt.Sprintf("capfile: %s at byte %d, record %d: %v", what, e.Offset, e.Index, e.Err)
	}
	return fmt.Sprintf("capfile: %s at byte %d: %v", what, e.Offset, e.Err)
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
