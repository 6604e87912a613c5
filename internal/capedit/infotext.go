package capedit

import (
	"fmt"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/progress"
)

// maxTextRows bounds the sessions and types listed by WriteText.
const maxTextRows = 20

// WriteText writes s for people to read.
func (s *Summary) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k, format string, args ...any) { fmt.Fprintf(tw, "%s:\t%s\n", k, fmt.Sprintf(format, args...)) }
	row("file", "%s", cli.Quote(s.File))
	row("format", "version %d, written by %s", s.Version, orNone(s.Tool))
	switch s.Status {
	case "clean":
		row("status", "closed cleanly")
	case "writing":
		row("status", "being written (its recorder holds it open), %d records so far", s.Records)
	case "torn":
		row("status", "not closed cleanly (torn tail), %d intact records read; %s", s.Records, s.Problem)
	default:
		row("status", "damaged after %d records: %s", s.Records, s.Problem)
	}
	row("start", "%s", s.Start.Format(time.RFC3339Nano))
	row("end", "%s", s.End.Format(time.RFC3339Nano))
	row("duration", "%s", s.Duration)
	var kinds []string
	for _, k := range capfile.Kinds {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, s.Kinds[k.String()]))
	}
	var other []string
	for k := range s.Kinds {
		if _, err := capfile.ParseKind(k); err != nil || strings.HasPrefix(k, "kind:") {
			other = append(other, k)
		}
	}
	sort.Strings(other)
	for _, k := range other {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, s.Kinds[k]))
	}
	row("records", "%d (%s)", s.Records, strings.Join(kinds, ", "))
	for i, src := range s.Origins {
		k := ""
		if i == 0 {
			k = "sources"
		}
		desc := src.Describe()
		if !src.Listed {
			desc = "(not in the header's source table)"
		}
		fmt.Fprintf(tw, "%s\t#%d %s: %s\n", suffix(k), src.ID, desc, plural(src.Records, "record"))
	}
	if len(s.Origins) == 0 {
		row("sources", "none")
	}
	more := ""
	if s.SessionsTruncated {
		more = " (more not counted)"
	}
	row("sessions", "%d%s", len(s.Sessions), more)
	for i, ss := range s.Sessions {
		if i == maxTextRows {
			fmt.Fprintf(tw, "\t... %d more\n", len(s.Sessions)-i)
			break
		}
		fmt.Fprintf(tw, "\t%s: %s, %s to %s\n", ss.ID, plural(ss.Records, "record"), ms(ss.First), ms(ss.Last))
	}
	row("connection", "%s; %s", countList(s.Connection.Events), plural(s.Connection.Reconnects, "reconnect"))
	gaps := fmt.Sprintf("%s of %s or more between received messages", plural(s.Gaps.Count, "silence"), s.Gaps.Threshold)
	if len(s.Gaps.Longest) > 0 {
		g := s.Gaps.Longest[0]
		gaps += fmt.Sprintf("; longest %s from %s (before record #%d)", ms(g.Length), ms(g.At), g.Record)
	}
	row("gaps", "%s", gaps)
	row("invalid", "%d invalid JSON, %d invalid UTF-8 (%d redacted, %d without receive time)",
		s.Invalid.JSON, s.Invalid.UTF8, s.Invalid.Redacted, s.Invalid.NoRecvTime)
	row("size", "%s on disk, %s uncompressed records (%s payloads), ratio %.1f, %s",
		progress.Size(s.Size.File), progress.Size(s.Size.Records), progress.Size(s.Size.Payloads), s.Size.Ratio, plural(int64(s.Size.Frames), "frame"))
	idle := ""
	if s.Replay.MaxIdle > 0 {
		idle = fmt.Sprintf(", idle capped at %s", s.Replay.MaxIdle)
	}
	row("replay", "%s at speed %g%s", ms(s.Replay.Duration), s.Replay.Speed, idle)
	if len(s.Meta) > 0 {
		keys := make([]string, 0, len(s.Meta))
		for k := range s.Meta {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for i, k := range keys {
			label := ""
			if i == 0 {
				label = "meta"
			}
			fmt.Fprintf(tw, "%s\t%s = %s\n", suffix(label), k, s.Meta[k])
		}
	}
	if len(s.Redacted) > 0 {
		row("redacted", "%s", strings.Join(s.Redacted, ", "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "messages by type:\n")
	if len(s.Types) == 0 {
		fmt.Fprintf(tw, "  (none)\n")
	}
	for i, t := range s.Types {
		if i == maxTextRows {
			fmt.Fprintf(tw, "  ... %d more types\n", len(s.Types)-i)
			break
		}
		fmt.Fprintf(tw, "  %s\t%s\t%d\n", t.Type, t.Dir, t.Count)
	}
	return tw.Flush()
}

// ms rounds d to the millisecond for display.
func ms(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func suffix(k string) string {
	if k == "" {
		return ""
	}
	return k + ":"
}

func orNone(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

func countList(m map[string]int64) string {
	if len(m) == 0 {
		return "no events"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
