package capedit

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/progress"
)

// Total sums the summaries of several captures (a rotated set, a
// directory of captures).
type Total struct {
	Files int `json:"files"`
	// Status counts the files by status (clean, torn, damaged).
	Status map[string]int `json:"files_by_status"`
	// Start and End span the captures: the earliest start, the latest end.
	Start    time.Time        `json:"start"`
	End      time.Time        `json:"end"`
	Duration time.Duration    `json:"duration_ns"`
	Records  int64            `json:"records"`
	Kinds    map[string]int64 `json:"records_by_kind"`
	// Sessions counts the distinct session keys of all the files.
	Sessions          int   `json:"sessions"`
	SessionsTruncated bool  `json:"sessions_truncated,omitempty"`
	Reconnects        int64 `json:"reconnects"`
	Gaps              int64 `json:"gaps"`
	// Overlaps counts files that start before the previous one (in time
	// order) ends: captures of one time recorded twice, or clocks apart.
	Overlaps int         `json:"overlaps"`
	Size     SizeSummary `json:"size"`
}

// Sum returns the total of sums (nil ones, for files that could not be
// opened, are left out).
func Sum(sums []*Summary) *Total {
	t := &Total{Status: map[string]int{}, Kinds: map[string]int64{}}
	seen := map[string]bool{}
	var ordered []*Summary
	for _, s := range sums {
		if s == nil {
			continue
		}
		ordered = append(ordered, s)
		t.Files++
		t.Status[s.Status]++
		if t.Files == 1 || s.Start.Before(t.Start) {
			t.Start = s.Start
		}
		if s.End.After(t.End) {
			t.End = s.End
		}
		t.Records += s.Records
		for k, n := range s.Kinds {
			t.Kinds[k] += n
		}
		for _, ss := range s.Sessions {
			if len(seen) >= maxSessions {
				t.SessionsTruncated = true
				break
			}
			seen[ss.ID] = true
		}
		t.SessionsTruncated = t.SessionsTruncated || s.SessionsTruncated
		t.Reconnects += s.Connection.Reconnects
		t.Gaps += s.Gaps.Count
		t.Size.File += s.Size.File
		t.Size.Records += s.Size.Records
		t.Size.Payloads += s.Size.Payloads
		t.Size.Frames += s.Size.Frames
	}
	t.Sessions = len(seen)
	t.Duration = t.End.Sub(t.Start)
	if t.Size.File > 0 {
		t.Size.Ratio = float64(t.Size.Records) / float64(t.Size.File)
	}
	sort.SliceStable(ordered, func(i, j int) bool { return ordered[i].Start.Before(ordered[j].Start) })
	for i := 1; i < len(ordered); i++ {
		if ordered[i].Start.Before(ordered[i-1].End) {
			t.Overlaps++
		}
	}
	return t
}

// WriteText writes t for people to read.
func (t *Total) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k, format string, args ...any) { fmt.Fprintf(tw, "%s:\t%s\n", k, fmt.Sprintf(format, args...)) }
	var status []string
	for _, st := range []string{"clean", "writing", "torn", "damaged"} {
		if n := t.Status[st]; n > 0 {
			status = append(status, fmt.Sprintf("%d %s", n, st))
		}
	}
	row("total", "%s (%s)", plural(int64(t.Files), "file"), strings.Join(status, ", "))
	row("start", "%s", t.Start.Format(time.RFC3339Nano))
	row("end", "%s", t.End.Format(time.RFC3339Nano))
	row("span", "%s", t.Duration)
	if t.Overlaps > 0 {
		row("overlaps", "%s start before the previous one ends (align clocks with --time-shift before merge)", plural(int64(t.Overlaps), "file"))
	}
	var kinds []string
	for _, k := range capfile.Kinds {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, t.Kinds[k.String()]))
	}
	row("records", "%d (%s)", t.Records, strings.Join(kinds, ", "))
	more := ""
	if t.SessionsTruncated {
		more = " (more not counted)"
	}
	row("sessions", "%d distinct%s", t.Sessions, more)
	row("connection", "%s", plural(t.Reconnects, "reconnect"))
	row("gaps", "%s", plural(t.Gaps, "silence"))
	row("size", "%s on disk, %s uncompressed records, ratio %.1f", progress.Size(t.Size.File), progress.Size(t.Size.Records), t.Size.Ratio)
	return tw.Flush()
}
