package report

import (
	"bytes"
	"fmt"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/protocol"
)

// reportWriter writes a report's sessions one at a time, then its summary,
// as text or as one JSON document. It keeps the first write error.
type reportWriter struct {
	w         io.Writer
	r         *Report
	asJSON    bool
	threshold protocol.Level
	sessions  int64 // sessions written (stream-level blocks excluded)
	// streamBlocks are the blocks of findings about a stream, not a
	// session (protocol.SessionSummary.StreamLevel), held to be written
	// after the sessions under their own heading ("streams" in JSON).
	streamBlocks []*Session
	begun        bool
	err          error
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
		rw.buf = append(rw.buf, ",\n      \"sources\": "...)
		rw.buf = appendSources(rw.buf, r.Sources)
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

// session writes one session's block; a block of findings about a stream
// is held until the sessions have been written.
func (rw *reportWriter) session(s *Session) {
	rw.begin()
	if s.StreamLevel() {
		// A clean handshake block has nothing to say about the stream.
		if len(s.Findings) > 0 {
			rw.streamBlocks = append(rw.streamBlocks, s)
		}
		return
	}
	if !lateBlock(s) {
		rw.sessions++
	}
	if rw.asJSON {
		if rw.sessions > 1 {
			rw.buf = append(rw.buf, ',')
		}
		rw.buf = append(rw.buf, "\n"+sessionIndent...)
		rw.buf = appendSessionJSON(rw.buf, s, sessionIndent)
		rw.flush() // a streaming report writes each session when it is done
		return
	}
	rw.textSession(s, func() { rw.sessionText(s) })
}

// lateBlock reports whether s holds findings for a session after the
// session was summarised (a late message; in a streaming report the
// summarised session was written already): the session is counted once,
// with its summary, never again for such a block.
func lateBlock(s *Session) bool { return s.State == "" && s.Messages == 0 }

// streamsFindings gathers the held stream-level blocks by stream: one
// entry for each of the recording's streams (one, named "", for a
// recording of one stream), and one for any other stream a finding names.
func (rw *reportWriter) streamsFindings() []StreamFindings {
	names := rw.r.Streams
	if len(names) == 0 {
		names = []string{""}
	}
	out := make([]StreamFindings, 0, len(names))
	at := map[string]int{}
	for _, n := range names {
		at[n] = len(out)
		out = append(out, StreamFindings{Stream: n})
	}
	for _, b := range rw.streamBlocks {
		i, ok := at[b.Stream]
		if !ok {
			i = len(out)
			at[b.Stream] = i
			out = append(out, StreamFindings{Stream: b.Stream})
		}
		out[i].Findings = append(out[i].Findings, b.Findings...)
	}
	for i := range out {
		sortFindings(out[i].Findings)
	}
	return out
}

// sortStreamBlocks orders the held stream-level blocks for the text
// report: by stream, a source's connection before the messages no
// protocol could take, then by first finding.
func (rw *reportWriter) sortStreamBlocks() {
	sort.SliceStable(rw.streamBlocks, func(i, j int) bool {
		a, b := rw.streamBlocks[i], rw.streamBlocks[j]
		if a.Stream != b.Stream {
			return a.Stream < b.Stream
		}
		if (a.Protocol == protocol.StreamProtocol) != (b.Protocol == protocol.StreamProtocol) {
			return b.Protocol == protocol.StreamProtocol
		}
		if a.First != b.First {
			return a.First < b.First
		}
		return a.Session < b.Session
	})
}

// streamHeading is the heading of the text report's stream-level findings.
const streamHeading = "findings about the stream, not of any session:"

// streamsText writes the stream-level blocks under their heading, after
// the sessions.
func (rw *reportWriter) streamsText() {
	if len(rw.streamBlocks) == 0 {
		return
	}
	lines := int64(2)
	for _, s := range rw.streamBlocks {
		lines += int64(2 + len(s.Findings))
	}
	rw.textBlock(lines, func() {
		rw.printf("\n%s\n", streamHeading)
		for _, s := range rw.streamBlocks {
			rw.sessionText(s)
		}
	})
}

// blockName names a stream-level block in the summary.
func blockName(s *Session) string {
	switch {
	case s.Protocol == protocol.StreamProtocol:
		return streamTag(s.Stream) + "stream (messages no protocol could take)"
	case s.Session == "":
		return streamTag(s.Stream) + s.Protocol + " (messages outside any session)"
	case s.Handshake:
		return fmt.Sprintf("%s%s %s (the source's subscription handshake, ended in %s)", streamTag(s.Stream), s.Protocol, s.Session, s.State)
	}
	return fmt.Sprintf("%s%s %s (the source's connection, no handshake recorded)", streamTag(s.Stream), s.Protocol, s.Session)
}

// sessionText writes one session's block of the text listing.
func (rw *reportWriter) sessionText(s *Session) {
	rw.printf("\n")
	in := streamTag(s.Stream)
	switch {
	case s.Protocol == protocol.StreamProtocol:
		rw.printf("%sstream (messages no protocol could take)\n", in)
	case s.Session == "" && s.State == "":
		rw.printf("%s%s (messages outside any session)\n", in, s.Protocol)
	case s.Handshake:
		// A source's subscription handshake: about the stream, no session.
		rw.printf("%s%s %s: the source's subscription handshake, %s, %s to %s, ended in %s\n", in, s.Protocol, s.Session,
			plural(int64(s.Messages), "message", "messages"), protocol.FormatOffset(max(s.First, 0)), protocol.FormatOffset(s.Last), s.State)
	case s.ConnectionOnly():
		// Findings about a source's connection (redelivery after a
		// reconnect) where no handshake was recorded: not a session.
		rw.printf("%s%s %s: findings about the source's connection (no handshake recorded)\n", in, s.Protocol, s.Session)
	case lateBlock(s):
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
	rw.sortStreamBlocks()
	if rw.asJSON {
		rw.buf = append(rw.buf, "\n      ],\n      \"streams\": ["...)
		for i, st := range rw.streamsFindings() {
			if i > 0 {
				rw.buf = append(rw.buf, ',')
			}
			rw.buf = append(rw.buf, "\n"+sessionIndent...)
			rw.buf = appendStreamJSON(rw.buf, &st, sessionIndent)
		}
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
	rw.streamsText()
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
		cli.Quote(r.Input), plural(r.Stats.Messages, "message", "messages"), protoText, plural(rw.sessions, "session", "sessions"),
		r.counts[protocol.Must], r.counts[protocol.Should], r.counts[protocol.Info])
	if line := r.PartyCounts().Line(); line != "" {
		rw.printf("%s\n", line) // whose duties the findings are (Party)
	}
	if len(r.Sources) > 0 {
		rw.printf("sources: %s\n", capfile.DescribeOrigins(r.Sources))
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
