package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/protocol"
)

// SchemaVersion is the version of the JSON report's schema
// ("schema_version"). Version 3 has one shape whatever was read: a
// "recordings" array with one object per recording (its parts, sessions,
// streams, counts and counts_by_party), a "total" and the overall
// "verdict"; a recording's "streams" lists each of its streams with the
// findings about it that belong to no session (StreamFindings), which
// version 2 listed among the sessions (its "streams" named the streams
// only). Version 1 (no "schema_version") had two shapes: one capture's
// report at the top level, and {"captures", "summary"} for an object
// storage prefix.
const SchemaVersion = 3

// Batch writes the reports of several recordings as one report: each
// recording's sessions and summary under its name, in the order the
// reports were added, then (text, several recordings) one line per
// recording and a total, and the overall verdict. As JSON it is one
// document of schema SchemaVersion. The first report streams to the
// writer; the others are held until the reports before them are written,
// so that recordings can be checked in parallel.
type Batch struct {
	w         io.Writer
	asJSON    bool
	threshold protocol.Level
	many      bool // several recordings: text reports get headings, lines and a total

	mu      sync.Mutex
	reports []*batchEntry
	written int // reports written out so far
	err     error
}

type batchEntry struct {
	r        *Report
	buf      bytes.Buffer
	done     bool
	sessions int64
}

// NewBatch starts a batch of the reports of n recordings written to w (as
// JSON when asJSON), judged against threshold.
func NewBatch(w io.Writer, asJSON bool, threshold protocol.Level, n int) *Batch {
	return &Batch{w: w, asJSON: asJSON, threshold: threshold, many: n > 1}
}

// Add returns the streaming report of the next recording, named name (parts
// lists its files or objects). Close it (Report.Close) when the recording
// has been checked; it may be filled and closed on any goroutine.
func (b *Batch) Add(name string, parts []string) *Report {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := New(name)
	r.Parts = parts
	r.batch, r.pos = b, len(b.reports)
	e := &batchEntry{r: r}
	b.reports = append(b.reports, e)
	var w io.Writer = &e.buf
	if r.pos == 0 {
		w = b.w
		var err error
		switch {
		case b.asJSON:
			_, err = b.w.Write(appendDocumentStart(nil, b.threshold))
		case b.many:
			_, err = fmt.Fprintf(b.w, "=== %s\n", cli.Quote(name))
		}
		if err != nil {
			b.err = err
		}
	}
	r.Stream(w, b.asJSON, b.threshold)
	return r
}

// done is called by a report's Close: the reports finished in order are
// written out.
func (b *Batch) done(r *Report) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.reports[r.pos]
	e.done, e.sessions = true, r.out.sessions
	for b.written < len(b.reports) && b.reports[b.written].done {
		e := b.reports[b.written]
		if b.written > 0 {
			b.write(e)
		}
		b.written++
	}
	return b.err
}

// write writes a held report, with its heading in a text report.
func (b *Batch) write(e *batchEntry) {
	if b.err != nil {
		return
	}
	if !b.asJSON {
		if _, b.err = fmt.Fprintf(b.w, "\n=== %s\n", cli.Quote(e.r.Input)); b.err != nil {
			return
		}
	}
	_, b.err = b.w.Write(e.buf.Bytes())
	e.buf = bytes.Buffer{}
}

// Close writes the reports still held, then the per-recording lines and the
// total (text, several recordings) or the document's end (JSON). Every
// report must have been closed.
func (b *Batch) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return b.err
	}
	for _, e := range b.reports {
		if !e.done {
			return fmt.Errorf("report of %s was not closed", e.r.Input)
		}
	}
	t := newTotal()
	for _, e := range b.reports {
		t.add(e.r, b.threshold, e.sessions)
	}
	if len(b.reports) == 0 {
		// Nothing to check (an incremental check with nothing new)
		// passes.
		t.Verdict = VerdictPass
		if b.threshold >= protocol.Never {
			t.Verdict = VerdictNotGated
		}
	}
	if b.asJSON {
		if len(b.reports) == 0 {
			_, b.err = b.w.Write(appendDocumentStart(nil, b.threshold))
		}
		if b.err == nil {
			_, b.err = b.w.Write(t.appendDocumentEnd(nil, b.threshold))
		}
		return b.err
	}
	if !b.many {
		return nil
	}
	var s strings.Builder
	fmt.Fprintf(&s, "\n%s checked:\n", plural(int64(len(b.reports)), "recording", "recordings"))
	for _, e := range b.reports {
		r := e.r
		fmt.Fprintf(&s, "  %-10s %s: %s, %s; %d MUST, %d SHOULD, %d INFO\n", r.Verdict(b.threshold), cli.Quote(r.Input),
			plural(r.Stats.Messages, "message", "messages"), plural(e.sessions, "session", "sessions"),
			r.counts[protocol.Must], r.counts[protocol.Should], r.counts[protocol.Info])
	}
	fmt.Fprintf(&s, "total: %s, %s, %s; %d MUST, %d SHOULD, %d INFO: %s\n",
		plural(int64(len(b.reports)), "recording", "recordings"), plural(t.Messages, "message", "messages"),
		plural(t.Sessions, "session", "sessions"), t.Counts["MUST"], t.Counts["SHOULD"], t.Counts["INFO"], t.verdictText(b.threshold))
	if line := t.CountsByParty.Line(); line != "" {
		fmt.Fprintf(&s, "%s\n", line)
	}
	_, b.err = io.WriteString(b.w, s.String())
	return b.err
}

// total sums the reports of a batch.
type total struct {
	Recordings int64            `json:"recordings"`
	Messages   int64            `json:"messages"`
	Sessions   int64            `json:"session_count"`
	Counts     map[string]int64 `json:"counts"`
	// CountsByParty counts the findings per party and level.
	CountsByParty PartyCounts `json:"counts_by_party"`
	Failed        bool        `json:"failed"`
	Complete      bool        `json:"complete"`
	// Incomplete counts the recordings not read whole.
	Incomplete int64  `json:"incomplete_recordings"`
	Verdict    string `json:"verdict"`
	failedN    int64
}

func newTotal() *total {
	return &total{Counts: map[string]int64{"MUST": 0, "SHOULD": 0, "INFO": 0}, CountsByParty: PartyCounts{}, Complete: true}
}

func (t *total) add(r *Report, threshold protocol.Level, sessions int64) {
	t.Recordings++
	t.Messages += r.Stats.Messages
	t.Sessions += sessions
	t.Counts["MUST"] += r.counts[protocol.Must]
	t.Counts["SHOULD"] += r.counts[protocol.Should]
	t.Counts["INFO"] += r.counts[protocol.Info]
	t.CountsByParty.add(r.byParty)
	if r.Failed(threshold) {
		t.Failed = true
		t.failedN++
	}
	if !r.Complete() {
		t.Complete = false
		t.Incomplete++
	}
	t.settle(threshold)
}

// verdictText is the total's verdict with how many recordings made it.
func (t *total) verdictText(threshold protocol.Level) string {
	switch t.Verdict {
	case VerdictIncomplete:
		s := fmt.Sprintf("INCOMPLETE (%d not read whole", t.Incomplete)
		if t.Failed {
			s += fmt.Sprintf(", %d failed", t.failedN)
		}
		return s + ")"
	case VerdictFail:
		return fmt.Sprintf("FAIL (%d of %d at or above %s)", t.failedN, t.Recordings, threshold)
	}
	return t.Verdict
}

// appendDocumentStart appends the opening of a JSON report document.
func appendDocumentStart(b []byte, threshold protocol.Level) []byte {
	b = append(b, "{\n  \"schema_version\": "...)
	b = fmt.Appendf(b, "%d", SchemaVersion)
	b = append(b, ",\n  \"fail_on\": "...)
	b = appendJSONString(b, thresholdName(threshold))
	return append(b, ",\n  \"recordings\": [\n"...)
}

// appendDocumentEnd appends the end of a JSON report document: the total
// and the verdict.
func (t *total) appendDocumentEnd(b []byte, threshold protocol.Level) []byte {
	tb, _ := json.MarshalIndent(t, "  ", "  ")
	b = append(b, "\n  ],\n  \"total\": "...)
	b = append(b, tb...)
	b = append(b, ",\n  \"verdict\": "...)
	b = appendJSONString(b, t.Verdict)
	return append(b, "\n}\n"...)
}

func thresholdName(l protocol.Level) string {
	if l >= protocol.Never {
		return "never"
	}
	return l.String()
}

// appendSummaryJSON appends the fields of a recording's JSON object that
// follow its sessions, each line indented by ind.
func (r *Report) appendSummaryJSON(b []byte, threshold protocol.Level, sessions int64, ind string) []byte {
	reasons := r.incomplete
	if reasons == nil {
		reasons = []string{}
	}
	protocols := r.Stats.ByProtocol
	if protocols == nil {
		protocols = map[string]int64{}
	}
	doc := struct {
		Messages   int64            `json:"messages"`
		Sessions   int64            `json:"session_count"`
		Protocols  map[string]int64 `json:"protocols"`
		Counts     map[string]int64 `json:"counts"`
		ByParty    PartyCounts      `json:"counts_by_party"`
		Failed     bool             `json:"failed"`
		Complete   bool             `json:"complete"`
		Incomplete []string         `json:"incomplete"`
		Verdict    string           `json:"verdict"`
		Dropped    int64            `json:"unlisted_findings"`
	}{r.Stats.Messages, sessions, protocols, map[string]int64{"MUST": r.counts[protocol.Must], "SHOULD": r.counts[protocol.Should], "INFO": r.counts[protocol.Info]},
		r.PartyCounts(), r.Failed(threshold), r.Complete(), reasons, r.Verdict(threshold), r.dropped}
	fb, _ := json.MarshalIndent(doc, ind[:len(ind)-2], "  ")
	fb = bytes.TrimPrefix(fb, []byte("{\n"))
	fb = bytes.TrimSuffix(fb, []byte("\n"+ind[:len(ind)-2]+"}"))
	return append(b, fb...)
}

// appendJSONStrings appends list as a JSON array of strings on one line
// ([] when empty).
func appendJSONStrings(b []byte, list []string, _ string) []byte {
	b = append(b, '[')
	for i, s := range list {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}

// appendSources appends origins as a JSON array on one line, each object
// as the capture header's origin table holds it ([] when empty).
func appendSources(b []byte, origins []capfile.Origin) []byte {
	b = append(b, '[')
	for i, o := range origins {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, `{"id": `...)
		b = strconv.AppendUint(b, uint64(o.ID), 10)
		b = append(b, `, "transport": `...)
		b = appendJSONString(b, o.Transport)
		b = append(b, `, "endpoint": `...)
		b = appendJSONString(b, o.Endpoint)
		if o.Subprotocol != "" {
			b = append(b, `, "subprotocol": `...)
			b = appendJSONString(b, o.Subprotocol)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}
