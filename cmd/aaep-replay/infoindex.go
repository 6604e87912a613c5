package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/capedit"
	"github.com/aaep-tools/aaepkit/recording"
)

// indexNotRead is what info --index-only leaves out: everything only the
// records themselves say.
var indexNotRead = []string{"records by kind", "messages by type", "sources' records", "connection events", "gaps", "invalid messages", "payload bytes", "replay time"}

// indexInfo is info --index-only's summary of one capture: what its header
// and stored index say (or, for a capture without an intact index, the
// same fields of the full summary, which read every record).
type indexInfo struct {
	File     string        `json:"file"`
	Version  int           `json:"format_version"`
	Tool     string        `json:"tool"`
	Status   string        `json:"status"`
	Start    time.Time     `json:"start"`
	End      time.Time     `json:"end"`
	Duration time.Duration `json:"duration_ns"`
	Records  int64         `json:"records"`
	Sessions int           `json:"sessions"`
	Frames   int           `json:"frames"`
	Bytes    int64         `json:"file_bytes"`
	RawBytes int64         `json:"record_bytes"`
	// Read says what was read: "header and index" or "every record".
	Read    string   `json:"read"`
	NotRead []string `json:"not_read"`
	// Fetched is the bytes fetched from object storage (0 for files).
	Fetched int64 `json:"bytes_fetched,omitempty"`
}

// indexInfoOf summarises a capture from its header and stored index.
func indexInfoOf(name string, h capfile.Header, x *capfile.Index, size int64) *indexInfo {
	in := &indexInfo{File: name, Version: h.Version, Tool: h.Tool, Status: "clean", Start: h.Start,
		Duration: time.Duration(x.LastTime()), Records: x.Records, Sessions: len(x.Sessions),
		Frames: len(x.Frames), Bytes: size, Read: "header and index", NotRead: indexNotRead}
	for _, f := range x.Frames {
		in.RawBytes += f.RawSize
	}
	in.End = in.Start.Add(in.Duration)
	return in
}

// indexInfoFull is the index summary's fields of a full summary.
func indexInfoFull(s *capedit.Summary) *indexInfo {
	return &indexInfo{File: s.File, Version: s.Version, Tool: s.Tool, Status: s.Status, Start: s.Start, End: s.End,
		Duration: s.Duration, Records: s.Records, Sessions: len(s.Sessions), Frames: s.Size.Frames,
		Bytes: s.Size.File, RawBytes: s.Size.Records, Read: "every record", NotRead: []string{}}
}

// indexPart summarises one part for --index-only: from its header and
// index when it has an intact one, else from all its records (ok false:
// the caller reads it whole).
func indexPart(o *InfoOptions, part *recording.Part) (*indexInfo, bool, error) {
	h, x, ok, err := part.ReadIndex(o.ctx)
	if err != nil || !ok {
		return nil, false, err
	}
	in := indexInfoOf(part.Name, h, x, part.Size())
	in.Fetched = part.RemoteStats().Bytes
	return in, true, nil
}

// writeText prints the index summary.
func (in *indexInfo) writeText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k, format string, args ...any) { fmt.Fprintf(tw, "%s:\t%s\n", k, fmt.Sprintf(format, args...)) }
	row("file", "%s", in.File)
	row("format", "version %d, written by %s", in.Version, cmpOr(in.Tool, "(none)"))
	switch in.Status {
	case "clean":
		row("status", "closed cleanly")
	default:
		row("status", "%s (no intact index: every record was read)", in.Status)
	}
	row("start", "%s", in.Start.Format(time.RFC3339Nano))
	row("end", "%s", in.End.Format(time.RFC3339Nano))
	row("duration", "%s", in.Duration)
	row("records", "%d", in.Records)
	row("sessions", "%d", in.Sessions)
	row("size", "%d bytes, %d uncompressed record bytes, %d frame(s)", in.Bytes, in.RawBytes, in.Frames)
	read := in.Read
	if in.Fetched > 0 {
		read += fmt.Sprintf(" (%d bytes fetched)", in.Fetched)
	}
	row("read", "%s", read)
	if len(in.NotRead) > 0 {
		row("not read", "%s (info without --index-only reads them)", strings.Join(in.NotRead, ", "))
	}
	return tw.Flush()
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
