package capedit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/msgfilter"
	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/recording"
)

// CheckMatch returns an error wrapping ErrEmptySelection when no message of
// the recording r (read from where it stands to its end) matches m, saying
// what the recording holds: its sessions (from the index) and the types of
// its messages with their counts. It reads until the first match, so a
// selection that selects something costs little. An empty m matches
// everything. Damage ends the scan without a verdict (the command that
// reads the recording next reports it).
func CheckMatch(ctx context.Context, path string, r *recording.Reader, m msgfilter.Filter) error {
	if m.Empty() {
		return nil
	}
	types := map[string]int64{}
	var doc payload.Doc
	cc := ctxCheck{ctx: ctx}
	for {
		if err := cc.err(); err != nil {
			return err
		}
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil // damage: no verdict on what was not read
		}
		if rec.Kind != capfile.KindReceived && rec.Kind != capfile.KindSent {
			continue
		}
		doc.DecodeOnly(rec.Payload, payload.NeedRouting)
		if m.Match(&doc.Routing) {
			return nil
		}
		t := doc.Routing.Type
		if t == "" {
			t = "(no type)"
		}
		types[t]++
	}
	holds := "the capture holds no messages"
	if x, err := r.FileIndex(); err == nil && x != nil {
		holds = Describe(x)
	}
	return fmt.Errorf("%s: %s %w; %s%s", path, describeMatch(m), ErrEmptySelection, holds, describeTypes(types))
}

// describeMatch names the flags of m ("--type nope --urgency critical").
func describeMatch(m msgfilter.Filter) string {
	var parts []string
	add := func(name string, vals []string) {
		if len(vals) > 0 {
			parts = append(parts, "--"+name+" "+strings.Join(vals, ","))
		}
	}
	add("session", m.Sessions)
	add("type", m.Types)
	add("urgency", m.Urgencies)
	return strings.Join(parts, " ")
}

// describeTypes lists the most frequent message types (at most ten) with
// their counts, or "" when there are none.
func describeTypes(types map[string]int64) string {
	if len(types) == 0 {
		return ""
	}
	names := make([]string, 0, len(types))
	for t := range types {
		names = append(names, t)
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(types[b], types[a]), cmp.Compare(a, b))
	})
	var list []string
	for i, t := range names {
		if i == 10 {
			list = append(list, fmt.Sprintf("and %d more", len(names)-10))
			break
		}
		list = append(list, fmt.Sprintf("%s (%d)", t, types[t]))
	}
	return "; its messages are of the types " + strings.Join(list, ", ")
}
