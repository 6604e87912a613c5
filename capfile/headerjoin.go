package capfile

import (
	"slices"
	"strings"
	"time"
)

// HeaderJoin gathers what the headers of several captures read as one say
// together: the earliest start, the highest version, and each tool and each
// redacted field once, in the order met. Both the joint header of a
// recording's parts and a merge's header are made with it.
type HeaderJoin struct {
	// Start is the earliest non-zero start added (zero if none was).
	Start time.Time
	// Version is the highest format version added.
	Version int
	// Redacted lists every redacted field added, each once.
	Redacted []string
	tools    []string
}

// Add takes one capture's header; start is its start as the caller reads
// it (shifted in time by a merge, say).
func (j *HeaderJoin) Add(h Header, start time.Time) {
	if !start.IsZero() && (j.Start.IsZero() || start.Before(j.Start)) {
		j.Start = start
	}
	j.Version = max(j.Version, h.Version)
	if h.Tool != "" && !slices.Contains(j.tools, h.Tool) {
		j.tools = append(j.tools, h.Tool)
	}
	for _, f := range h.Redacted {
		if !slices.Contains(j.Redacted, f) {
			j.Redacted = append(j.Redacted, f)
		}
	}
}

// Tool names every tool added, comma-separated.
func (j *HeaderJoin) Tool() string { return strings.Join(j.tools, ", ") }
