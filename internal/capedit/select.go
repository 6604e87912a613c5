package capedit

import (
	"context"
	"github.com/aaep-tools/aaepkit/recording"

	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/timing"
)

// ErrEmptySelection is wrapped by the error for a range or session choice
// that selects nothing in a capture (a usage error).
var ErrEmptySelection = errors.New("selects nothing")

// Selection is the part of a capture a command works on: a position range
// (both ends inclusive; unset ends are open) and sessions (none: all).
type Selection struct {
	From, To timing.Position
	// ToFlag names the range-end flag in messages ("--to"; push says "--until").
	ToFlag   string
	Sessions []string
	// Inputs says how inputs are opened (object storage options).
	Inputs recording.Options
}

// CheckSelection returns an error wrapping ErrEmptySelection when sel
// cannot select any record of the capture at path: a range that ends before
// it starts, starts past the last record or ends before the first, or
// sessions none of which the capture holds. The message says what the
// capture does hold (its records, length and sessions). Other errors are
// those of reading the capture's index.
func CheckSelection(ctx context.Context, path string, sel Selection) error {
	r, err := openReader(ctx, []string{path}, sel.Inputs)
	if err != nil {
		return err
	}
	defer r.Close()
	return CheckSelectionOf(path, r, sel)
}

// CheckSelectionOf is CheckSelection for a recording already open, named
// path in messages.
func CheckSelectionOf(path string, r *recording.Reader, sel Selection) error {
	x, err := r.FileIndex()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	toFlag := sel.ToFlag
	if toFlag == "" {
		toFlag = "--to"
	}
	empty := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s %w; %s", path, fmt.Sprintf(format, args...), ErrEmptySelection, Describe(x))
	}
	from, to := sel.From, sel.To
	if from.Set && to.Set && from.ByIndex == to.ByIndex {
		if (from.ByIndex && to.Index < from.Index) || (!from.ByIndex && to.Time < from.Time) {
			return empty("--from %v to %s %v ends before it starts:", from, toFlag, to)
		}
	}
	first, last := time.Duration(x.FirstTime()), time.Duration(x.LastTime())
	switch {
	case x.Records == 0:
		return empty("the capture is empty:")
	case from.Set && from.ByIndex && from.Index >= x.Records:
		return empty("--from %v is past the last record:", from)
	case from.Set && !from.ByIndex && from.Time > last:
		return empty("--from %v is past the last record (at %v):", from, last.Round(time.Millisecond))
	case to.Set && !to.ByIndex && to.Time < first:
		return empty("%s %v is before the first record (at %v):", toFlag, to, first.Round(time.Millisecond))
	}
	if len(sel.Sessions) > 0 {
		known := false
		for _, s := range sel.Sessions {
			if _, ok := x.Session(s); ok {
				known = true
			}
		}
		if !known {
			return empty("--session %s:", strings.Join(sel.Sessions, ","))
		}
	}
	return nil
}

// Describe says in one line what a capture holds: its records, the time
// its records span, and its sessions (the first ten).
func Describe(x *capfile.Index) string {
	if x.Records == 0 {
		return "the capture holds no records"
	}
	ms := func(t int64) time.Duration { return time.Duration(t).Round(time.Millisecond) }
	s := fmt.Sprintf("the capture holds %s (#0 to #%d) from %v to %v (%v long)",
		plural(x.Records, "record"), x.Records-1, ms(x.FirstTime()), ms(x.LastTime()), ms(x.LastTime()-x.FirstTime()))
	if len(x.Sessions) == 0 {
		return s + " and no sessions"
	}
	ids := make([]string, 0, 10)
	for i, si := range x.Sessions {
		if i == 10 {
			ids = append(ids, fmt.Sprintf("and %d more", len(x.Sessions)-10))
			break
		}
		ids = append(ids, si.ID)
	}
	return fmt.Sprintf("%s in %s: %s", s, plural(int64(len(x.Sessions)), "session"), strings.Join(ids, ", "))
}

// describePath is Describe for the capture at path, or "" if it cannot be read.
func describePath(path string) string {
	r, err := capfile.Open(path)
	if err != nil {
		return ""
	}
	defer r.Close()
	x, err := r.FileIndex()
	if err != nil {
		return ""
	}
	return Describe(x)
}
