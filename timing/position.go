package timing

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Position is a point in a capture, as the --from and --to flags of
// aaep-replay name it: a time offset since the capture's start, or a record
// index. The zero Position is unset (an open end of a range).
type Position struct {
	// Set is false for an unset position.
	Set bool
	// ByIndex selects Index rather than Time.
	ByIndex bool
	// Index is a record index, counting from 0 as check and info report
	// them (every record kind counts).
	Index int64
	// Time is an offset since the capture's start.
	Time time.Duration
}

// ParsePosition reads a --from or --to value:
//
//   - a record index: "#120" or plain digits "120" (the first record is 0);
//   - a time offset since the capture's start: a Go duration ("90s",
//     "1m30s", "250ms") or a clock form [[hh:]mm:]ss[.fraction] ("1:30",
//     "01:02:03.5"), minutes and seconds after the first field below 60.
//
// Surrounding white space is ignored. The empty string is an unset
// Position; a value of only white space is an error. Negative positions are
// errors, and so is a clock time too large for a time.Duration.
func ParsePosition(s string) (Position, error) {
	if s == "" {
		return Position{}, nil
	}
	s = strings.TrimSpace(s)
	rest, hash := strings.CutPrefix(s, "#")
	if hash || allDigits(s) {
		n, err := strconv.ParseInt(rest, 10, 64)
		if err != nil || n < 0 {
			return Position{}, fmt.Errorf("bad position %q: want a record number such as #120", s)
		}
		return Position{Set: true, ByIndex: true, Index: n}, nil
	}
	if strings.Contains(s, ":") {
		d, err := parseClock(s)
		if err != nil {
			return Position{}, fmt.Errorf("bad position %q: %w", s, err)
		}
		return Position{Set: true, Time: d}, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return Position{}, fmt.Errorf("bad position %q: want a time offset such as 1m30s or 1:30, or a record number such as #120", s)
	}
	return Position{Set: true, Time: d}, nil
}

// String formats p the way ParsePosition reads it: "#120", a Go duration,
// or "" when p is unset.
func (p Position) String() string {
	switch {
	case !p.Set:
		return ""
	case p.ByIndex:
		return "#" + strconv.FormatInt(p.Index, 10)
	default:
		return p.Time.String()
	}
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
