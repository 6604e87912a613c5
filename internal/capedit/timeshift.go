package capedit

import (
	"fmt"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
)

// TimeShift re-anchors a capture's wall clock: the header's start moves,
// the records keep their times relative to it, so every record's absolute
// time moves with it. Payloads (and the timestamps inside them) are never
// touched. Use it to align captures of machines whose clocks differ before
// merging them.
type TimeShift struct {
	// By moves the start by this much (negative: earlier).
	By time.Duration
	// To, when not zero, is the new start itself (By is then ignored).
	To time.Time
}

// ParseTimeShift reads a shift: a signed duration ("+1.5s", "-200ms",
// "2h") or the new start as an RFC 3339 time ("2026-11-02T09:00:00Z").
func ParseTimeShift(s string) (TimeShift, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return TimeShift{}, fmt.Errorf("empty time shift")
	}
	if d, err := time.ParseDuration(strings.TrimPrefix(s, "+")); err == nil {
		return TimeShift{By: d}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		if !capfile.InRange(t) {
			// Refused, never clamped nor ignored (0001-01-01T00:00:00Z is
			// also Go's zero time, which read as "no shift").
			return TimeShift{}, fmt.Errorf("time shift %s: %w: outside the times a capture can hold (%s to %s)", s, ErrTimeRange,
				capfile.MinTime.Format(time.RFC3339), capfile.MaxTime.Format(time.RFC3339))
		}
		return TimeShift{To: t}, nil
	}
	return TimeShift{}, fmt.Errorf("time shift %q: want a duration such as +1.5s or -200ms, or a start time such as 2026-11-02T09:00:00Z", s)
}

// IsZero reports whether the shift changes nothing.
func (ts TimeShift) IsZero() bool { return ts.By == 0 && ts.To.IsZero() }

// Apply returns the shifted start.
func (ts TimeShift) Apply(start time.Time) time.Time {
	if !ts.To.IsZero() {
		return ts.To
	}
	return start.Add(ts.By)
}

// String writes the shift as ParseTimeShift reads it.
func (ts TimeShift) String() string {
	if !ts.To.IsZero() {
		return ts.To.Format(time.RFC3339Nano)
	}
	if ts.By >= 0 {
		return "+" + ts.By.String()
	}
	return ts.By.String()
}

// shiftHeader applies ts to a header (a copy made by cloneHeader) and notes
// it in the header's meta.
func (ts TimeShift) shiftHeader(start time.Time, meta map[string]string) time.Time {
	if ts.IsZero() {
		return start
	}
	shifted := ts.Apply(start)
	meta["time_shift"] = (shifted.Sub(start)).String()
	if d := shifted.Sub(start); d >= 0 {
		meta["time_shift"] = "+" + d.String()
	}
	return shifted
}
