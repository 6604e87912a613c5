package report

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/aaep-tools/aaepkit/protocol"
)

// reportWriter writes a report's sessions one at a time, then its summary,
// as text or as one JSON document. It keeps the first write error.
type reportWriter struct {
	w         io.Writer
	r         *Report
	asJSON    bool
	threshold protocol.Level
	sessions  int64 // sessions written (stream-level findings excluded)
	blocks    int64 // blocks written, the stream-level one included
	begun     bool
	err       error
	// buf holds the JSON of a session block (and the document's opening
	// before the first one) until it is written.
	buf []byte

	// The text views (see View): the listing held back while ViewAuto
	// decides, and what the summary shows.
	view      View
	held      bytes.Buffer
	heldLines int64
	summary   summaryView
}

func newReportWriter(w io.Writer, r *Report, asJSON bool, threshold protocol.Level) *reportWriter {
	rw := &reportWriter{w: w, r: r, asJSON: asJSON, threshold: threshold, view: r.View}
	if asJSON {
		rw.view = ViewAll
	}
	return rw
}

// begin writes the opening of the recording's JSON object (and of the
// document, for a report of its own), before the first session or the
// summary, so that nothing is written for a run that never got going.
func (rw *reportWriter) begin() {
	if !rw.begun {
		// The view is read when the first block is written, so that a
		// report's View may be set after Stream.
		rw.view = rw.r.View
		if rw.asJSON {
			rw.view = ViewAll
		}
	}
	if rw.asJSON && !rw.begun {
		r := rw.r
		if r.batch == nil {
			rw.buf = appendDocumentStart(rw.buf, rw.threshold)
		} else if r.pos > 0 {
			rw.buf = append(rw.buf, ",\n"...)
		}
		rw.buf = append(rw.buf, "    {\n      \"recording\": "...)
		rw.buf = appendJSONString(rw.buf, r.Input)
		rw.buf = append(rw.buf, ",\n      \"parts\": "...)
		rw.buf = appendJSONStrings(rw.buf, r.Parts, "      ")
		rw.buf = append(rw.buf, ",\n      \"streams\": "...)
		rw.buf = appendJSONStrings(rw.buf, r.Streams, "      ")
		rw.buf = append(rw.buf, ",\n      \"sessions\": ["...)
	}
	rw.begun = true
}

// flush writes the JSON held in buf.
func (rw *reportWriter) flush() {
	if rw.err == nil && len(rw.buf) > 0 {
		_, rw.err = rw.w.Write(rw.buf)
	}
	rw.buf = rw.buf[:0]
}

func (rw *reportWriter) printf(format string, args ...any) {
	if rw.err == nil {
		_, rw.err = fmt.Fprintf(rw.w, format, args...)
	}
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// session writes one session's block.
func (rw *reportWriter) session(s *Session) {
	rw.begin()
	if s.Protocol != protocol.StreamProtocol && !s.ConnectionOnly() {
		rw.sessions++
	}
	rw.blocks++
	if rw.asJSON {
		if rw.blocks > 1 {
			rw.buf = append(rw.buf, ',')
		}
		rw.buf = append(rw.buf, "\n"+sessionIndent...)
		rw.buf = appendSessionJSON(rw.buf, s, sessionIndent)
		rw.flush() // a streaming report writes each session when it is done
		return
	}
	rw.textSession(s, func() { rw.sessionText(s) })
}

// sessionText writes one session's block of the text listing.
func (rw *reportWriter) sessionText(s *Session) {
	rw.printf("\n")
	in := streamTag(s.Stream)
	switch {
	case s.Protocol == protocol.StreamProtocol:
		rw.printf("%sstream (messages no protocol could take)\n", in)
	case s.ConnectionOnly():
		// Findings about a source's connection (redelivery after a
		// reconnect) where no handshake was recorded: not a session.
		rw.printf("%s%s %s: findings about the source's connection (no handshake recorded)\n", in, s.Protocol, s.Session)
	case s.State == "" && s.Messages == 0:
		// Findings for a session the checker had already closed (or never
		// summarised): a late message, for instance.
		rw.printf("%s%s %s (after the session was summarised)\n", in, s.Protocol, sessionName(s.Session))
	default:
		state := s.State
		if !s.Complete {
			state += ", unfinished"
		}
		rw.printf("%s%s %s: %s, %s to %s, ended in %s", in, s.Protocol, sessionName(s.Session),
			plural(int64(s.Messages), "message", "messages"), protocol.FormatOffset(max(s.First, 0)), protocol.FormatOffset(s.Last), state)
		if len(s.Findings) == 0 {
			rw.printf(": clean")
		}
		rw.printf("\n")
	}
	if rw.err != nil || len(s.Findings) == 0 {
		return
	}
	tw := tabwriter.NewWriter(rw.w, 0, 0, 2, ' ', 0)
	for _, f := range s.Findings {
		where := "end\t"
		if f.Index >= 0 {
			where = fmt.Sprintf("#%d\t+%s", f.Index, protocol.FormatOffset(f.Offset))
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", f.Level, f.RuleID, where, f.Message)
	}
	rw.err = tw.Flush()
}

func sessionName(id string) string {
	if id == "" {
		return "(messages outside any session)"
	}
	return "session " + id
}

// finish writes the summary and the verdict.
func (rw *reportWriter) finish() error {
	rw.begin()
	r := rw.r
	failed := r.Failed(rw.threshold)
	verdict := r.Verdict(rw.threshold)
	if rw.asJSON {
		rw.buf = append(rw.buf, "\n      ],\n"...)
		rw.buf = r.appendSummaryJSON(rw.buf, rw.threshold, rw.sessions, "      ")
		rw.buf = append(rw.buf, "\n    }"...)
		if r.batch == nil {
			t := newTotal()
			t.add(r, rw.threshold, rw.sessions)
			rw.buf = t.appendDocumentEnd(rw.buf, rw.threshold)
		}
		rw.flush()
		return rw.err
	}
	switch rw.view {
	case ViewAuto:
		rw.flushHeld()
	case ViewSummary:
		rw.writeSummary()
	}
	var protos []string
	for p, n := range r.Stats.ByProtocol {
		protos = append(protos, fmt.Sprintf("%s %d", p, n))
	}
	sort.Strings(protos)
	protoText := ""
	if len(protos) > 0 {
		protoText = " (" + strings.Join(protos, ", ") + ")"
	}
	rw.printf("\n%s: %s%s, %s; %d MUST, %d SHOULD, %d INFO\n",
		r.Input, plural(r.Stats.Messages, "message", "messages"), protoText, plural(rw.sessions, "session", "sessions"),
		r.counts[protocol.Must], r.counts[protocol.Should], r.counts[protocol.Info])
	if line := r.PartyCounts().Line(); line != "" {
		rw.printf("%s\n", line) // whose duties the findings are (Party)
	}
	if r.dropped > 0 {
		rw.printf("%d more findings were counted but not listed (limit %d)\n", r.dropped, r.kept)
	}
	switch verdict {
	case VerdictIncomplete:
		rw.printf("INCOMPLETE: not all of the input was read: %s\n", strings.Join(r.incomplete, "; "))
		read := "in the " + plural(r.Stats.Messages, "message", "messages") + " read"
		switch {
		case rw.threshold >= protocol.Never:
			rw.printf("INCOMPLETE: %s %s (--fail-on never)\n", plural(r.countFrom(protocol.Info), "finding", "findings"), read)
		case failed:
			rw.printf("INCOMPLETE, FAIL: %s at or above %s %s\n", plural(r.countFrom(rw.threshold), "finding", "findings"), rw.threshold, read)
		default:
			rw.printf("INCOMPLETE: %s at or above %s %s\n", plural(r.countFrom(rw.threshold), "finding", "findings"), rw.threshold, read)
		}
	case VerdictNotGated:
		rw.printf("NOT GATED: %s; --fail-on never fails on none\n", plural(r.countFrom(protocol.Info), "finding", "findings"))
	default:
		rw.printf("%s: %s at or above %s\n", verdict, plural(r.countFrom(rw.threshold), "finding", "findings"), rw.threshold)
	}
	return rw.err
}
