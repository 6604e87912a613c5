package recording

import (
	"errors"
	"fmt"
	"io"

	"github.com/aaep-tools/aaepkit/capfile"
)

// Gap is a byte range of one part that Resume skipped.
type Gap struct {
	// Part names the part (its file or object name); the range's offsets
	// are in it.
	Part string
	capfile.DroppedRange
	// End is set when nothing readable follows: the recording ends here.
	End bool
}

// errNoResume is Resume's error when there is nothing it can skip.
var errNoResume = errors.New("recording: no damaged part to read on after")

// Resume goes on reading after the damage that ended Next, as repair does
// (capfile.Reader.Resume): the rest of the damaged frame is skipped and Next
// returns the first record after it, or, when nothing readable follows in
// that part, the next part's first. It returns the range skipped. The error
// is nil when reading goes on, io.EOF when nothing readable follows (the
// last part's torn tail: the recording ends there, as a clean end would),
// and otherwise the error that cannot be skipped (a part read as a stream,
// an I/O error). Joined recordings (Join) cannot be resumed.
func (r *Reader) Resume() (Gap, error) {
	c, ok := r.rd.(*cursor)
	if !ok {
		return Gap{}, errNoResume
	}
	return c.resume()
}

func (r *cursor) resume() (Gap, error) {
	if r.k >= len(r.parts) || r.parts[r.k].r == nil {
		return Gap{}, errNoResume
	}
	pc := r.parts[r.k]
	d, err := pc.r.Resume()
	g := Gap{Part: pc.p.Name, DroppedRange: d}
	switch {
	case err == nil:
		return g, nil
	case err != io.EOF:
		return g, err
	case r.k+1 >= len(r.parts):
		g.End = true
		return g, io.EOF
	}
	if pc.count < 0 {
		pc.count = pc.r.Index() + 1
	}
	r.base += pc.count
	r.closePart(r.k)
	r.k++
	return g, nil
}

// String says what was skipped, where and why, in the words every command
// uses for a gap: "bytes 5163..9260 of rec.aaep skipped (12 records lost):
// record checksum mismatch (…)".
func (g Gap) String() string {
	return fmt.Sprintf("bytes %d..%d of %s skipped (%s): %s", g.Offset, g.Offset+g.Length, g.Part, g.Lost(), g.Reason)
}

// Lost says how many records the gap lost: "12 records lost", "no record
// lost", "an unknown number of records lost".
func (g Gap) Lost() string {
	switch {
	case g.Records == 0:
		return "no record lost"
	case g.Records == 1:
		return "1 record lost"
	case g.Records > 1:
		return fmt.Sprintf("%d records lost", g.Records)
	}
	return "an unknown number of records lost"
}

// SkipWarning is what a replay says, before it starts, of damage err that it
// will skip as gap: the reader's words for the damage, then the range
// skipped, the same in every command that replays.
func SkipWarning(err error, g Gap) string {
	return fmt.Sprintf("%v; the replay skips bytes %d..%d (%s), as repair does", err, g.Offset, g.Offset+g.Length, g.Lost())
}
