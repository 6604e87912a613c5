package capedit

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Position is a point in a capture: a time offset from the capture's start,
// or a record number.
type Position struct {
	// IsRecord selects Record instead of Offset.
	IsRecord bool
	// Record is a record number, counting from 0.
	Record int64
	// Offset is a time since the capture's start.
	Offset time.Duration
}

// ParsePosition reads a position written as a time offset ("1m30s", "90s",
// "1500ms", or plain seconds "90" or "1.5") or as a record number with a
// leading "#" ("#120"; the first record is #0).
func ParsePosition(s string) (Position, error) {
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(s, "#"); ok {
		n, err := strconv.ParseInt(rest, 10, 64)
		if err != nil || n < 0 {
			return Position{}, fmt.Errorf("bad record number %q: want #N with N >= 0", s)
		}
		return Position{IsRecord: true, Record: n}, nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f < 0 || f > float64(1<<62)/float64(time.Second) {
			return Position{}, fmt.Errorf("time offset %q out of range", s)
		}
		return Position{Offset: time.Duration(f * float64(time.Second))}, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return Position{}, fmt.Errorf("bad position %q: want a time offset such as 1m30s or a record number such as #120", s)
	}
	if d < 0 {
		return Position{}, fmt.Errorf("time offset %q is negative", s)
	}
	return Position{Offset: d}, nil
}

func (p Position) String() string {
	if p.IsRecord {
		return fmt.Sprintf("#%d", p.Record)
	}
	return p.Offset.String()
}
