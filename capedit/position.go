package capedit

import (
	"errors"
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
	// Record is a record number, counting from 0 (all record kinds count).
	Record int64
	// Offset is a time since the capture's start.
	Offset time.Duration
}

// ParsePosition reads a --from or --to value, in the syntax aaep-replay
// serve uses:
//
//   - a record number: "#120" or plain digits "120" (the first record is 0);
//   - a time offset since the capture's start: a Go duration ("90s",
//     "1m30s", "250ms") or a clock form ("1:30", "01:02:03.5").
func ParsePosition(s string) (Position, error) {
	s = strings.TrimSpace(s)
	rest, hash := strings.CutPrefix(s, "#")
	if hash || allDigits(s) {
		n, err := strconv.ParseInt(rest, 10, 64)
		if err != nil || n < 0 {
			return Position{}, fmt.Errorf("bad position %q: want a record number such as #120", s)
		}
		return Position{IsRecord: true, Record: n}, nil
	}
	if strings.Contains(s, ":") {
		d, err := parseClock(s)
		if err != nil {
			return Position{}, fmt.Errorf("bad position %q: %w", s, err)
		}
		return Position{Offset: d}, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return Position{}, fmt.Errorf("bad position %q: want a time offset such as 1m30s or 1:30, or a record number such as #120", s)
	}
	return Position{Offset: d}, nil
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// parseClock reads [[hh:]mm:]ss[.fraction]; minutes and seconds after the
// first field are below 60.
func parseClock(s string) (time.Duration, error) {
	fields := strings.Split(s, ":")
	errForm := errors.New("want a clock time [[hh:]mm:]ss[.fraction]")
	if len(fields) > 3 {
		return 0, errForm
	}
	var whole int64 // seconds from the fields before the last
	for i, f := range fields[:len(fields)-1] {
		if !allDigits(f) || len(f) > 9 {
			return 0, errForm
		}
		v, _ := strconv.ParseInt(f, 10, 64)
		if i > 0 && v >= 60 {
			return 0, errors.New("minutes must be below 60")
		}
		whole = whole*60 + v
	}
	last := fields[len(fields)-1]
	intPart, frac, _ := strings.Cut(last, ".")
	if !allDigits(intPart) || len(intPart) > 9 || (frac != "" && !allDigits(frac)) || strings.HasSuffix(last, ".") {
		return 0, errForm
	}
	sec, _ := strconv.ParseInt(intPart, 10, 64)
	if len(fields) > 1 && sec >= 60 {
		return 0, errors.New("seconds must be below 60")
	}
	f, err := strconv.ParseFloat("0."+frac+"0", 64)
	if err != nil {
		return 0, errForm
	}
	if whole*60+sec > int64(1<<62)/int64(time.Second) {
		return 0, errors.New("time out of range")
	}
	return time.Duration((whole*60+sec)*int64(time.Second) + int64(f*float64(time.Second))), nil
}

func (p Position) String() string {
	if p.IsRecord {
		return fmt.Sprintf("#%d", p.Record)
	}
	return p.Offset.String()
}
