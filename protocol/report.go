package protocol

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// DefaultMaxFindings bounds how many findings a Report keeps; later ones are
// only counted.
const DefaultMaxFindings = 100000

// Report collects a run's findings and session summaries, grouped by
// session, and writes them as text or JSON. Use its Sink as the engine's sink.
type Report struct {
	// Input names what was checked (a file name).
	Input string
	// MaxFindings bounds the findings kept (DefaultMaxFindings when 0).
	MaxFindings int

	Stats    Stats
	sessions map[sessionKey]*SessionReport
	kept     int
	dropped  int64
	counts   map[Level]int64
}

type sessionKey struct{ protocol, session string }

// SessionReport is one session's part of a report.
type SessionReport struct {
	SessionSummary
	Findings []Finding `json:"findings"`
}

// NewReport returns an empty report for input.
func NewReport(input string) *Report {
	return &Report{Input: input, sessions: map[sessionKey]*SessionReport{}, counts: map[Level]int64{}}
}

// Sink returns a sink that adds to the report; steps are passed to step
// (which may be nil).
func (r *Report) Sink(step func(Step)) Sink {
	return Sink{Finding: r.AddFinding, SessionDone: r.AddSession, Step: step}
}

func (r *Report) session(protocol, id string) *SessionReport {
	k := sessionKey{protocol, id}
	s := r.sessions[k]
	if s == nil {
		s = &SessionReport{SessionSummary: SessionSummary{Protocol: protocol, Session: id, First: -1}}
		r.sessions[k] = s
	}
	return s
}

// AddFinding adds one finding.
func (r *Report) AddFinding(f Finding) {
	r.counts[f.Level]++
	limit := r.MaxFindings
	if limit == 0 {
		limit = DefaultMaxFindings
	}
	if r.kept >= limit {
		r.dropped++
		return
	}
	r.kept++
	s := r.session(f.Protocol, f.Session)
	s.Findings = append(s.Findings, f)
	if s.First < 0 && f.Index >= 0 {
		s.First = f.Offset
	}
}

// AddSession records a session's summary.
func (r *Report) AddSession(sum SessionSummary) {
	s := r.session(sum.Protocol, sum.Session)
	s.SessionSummary = sum
}

// Count returns how many findings of level l were reported (including dropped ones).
func (r *Report) Count(l Level) int64 { return r.counts[l] }

// Failed reports whether any finding is at or above threshold.
func (r *Report) Failed(threshold Level) bool {
	for l, n := range r.counts {
		if l >= threshold && n > 0 {
			return true
		}
	}
	return false
}

// Sessions returns the sessions in a deterministic order: by first
// appearance, then protocol and ID; stream-level findings come last.
func (r *Report) Sessions() []*SessionReport {
	out := make([]*SessionReport, 0, len(r.sessions))
	for _, s := range r.sessions {
		sort.SliceStable(s.Findings, func(i, j int) bool {
			a, b := s.Findings[i], s.Findings[j]
			if (a.Index < 0) != (b.Index < 0) {
				return b.Index < 0
			}
			if a.Index != b.Index {
				return a.Index < b.Index
			}
			return a.RuleID < b.RuleID
		})
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if (a.Protocol == StreamProtocol) != (b.Protocol == StreamProtocol) {
			return b.Protocol == StreamProtocol
		}
		if a.First != b.First {
			return a.First < b.First
		}
		if a.Protocol != b.Protocol {
			return a.Protocol < b.Protocol
		}
		return a.Session < b.Session
	})
	return out
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// WriteText writes the report for people: a summary line, then each session
// with its findings (rule, level, message index, time offset, explanation).
func (r *Report) WriteText(w io.Writer, threshold Level) error {
	sessions := r.Sessions()
	var nsess int64
	for _, s := range sessions {
		if s.Protocol != StreamProtocol {
			nsess++
		}
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
	fmt.Fprintf(w, "%s: %s%s, %s; %s MUST, %s SHOULD, %s INFO\n",
		r.Input, plural(r.Stats.Messages, "message", "messages"), protoText, plural(nsess, "session", "sessions"),
		fmt.Sprint(r.counts[Must]), fmt.Sprint(r.counts[Should]), fmt.Sprint(r.counts[Info]))
	for _, s := range sessions {
		fmt.Fprintln(w)
		if s.Protocol == StreamProtocol {
			fmt.Fprintln(w, "stream (messages no protocol could take)")
		} else {
			state := s.State
			if !s.Complete {
				state += ", incomplete"
			}
			name := "session " + s.Session
			if s.Session == "" {
				name = "(messages outside any session)"
			}
			fmt.Fprintf(w, "%s %s: %s, %s to %s, ended in %s",
				s.Protocol, name, plural(int64(s.Messages), "message", "messages"),
				FormatOffset(max(s.First, 0)), FormatOffset(s.Last), state)
			if len(s.Findings) == 0 {
				fmt.Fprint(w, ": clean")
			}
			fmt.Fprintln(w)
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, f := range s.Findings {
			where := "end"
			if f.Index >= 0 {
				where = fmt.Sprintf("#%d\t+%s", f.Index, FormatOffset(f.Offset))
			} else {
				where += "\t"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", f.Level, f.RuleID, where, f.Message)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if r.dropped > 0 {
		fmt.Fprintf(w, "\n%d more findings were counted but not listed (limit %d)\n", r.dropped, r.kept)
	}
	verdict := "PASS"
	if r.Failed(threshold) {
		verdict = "FAIL"
	}
	_, err := fmt.Fprintf(w, "\n%s: %s at or above %s\n", verdict, plural(r.countFrom(threshold), "finding", "findings"), threshold)
	return err
}

func (r *Report) countFrom(threshold Level) int64 {
	var n int64
	for l, c := range r.counts {
		if l >= threshold {
			n += c
		}
	}
	return n
}

// jsonReport is the JSON shape of a report; field names are part of the CLI contract.
type jsonReport struct {
	Input     string           `json:"input"`
	Messages  int64            `json:"messages"`
	Protocols map[string]int64 `json:"protocols"`
	Counts    map[string]int64 `json:"counts"`
	Threshold string           `json:"fail_on"`
	Failed    bool             `json:"failed"`
	Dropped   int64            `json:"unlisted_findings"`
	Sessions  []*SessionReport `json:"sessions"`
}

// WriteJSON writes the report as one JSON document (for CI).
func (r *Report) WriteJSON(w io.Writer, threshold Level) error {
	sessions := r.Sessions()
	for _, s := range sessions {
		if s.Findings == nil {
			s.Findings = []Finding{}
		}
	}
	doc := jsonReport{
		Input:     r.Input,
		Messages:  r.Stats.Messages,
		Protocols: r.Stats.ByProtocol,
		Counts:    map[string]int64{"MUST": r.counts[Must], "SHOULD": r.counts[Should], "INFO": r.counts[Info]},
		Threshold: threshold.String(),
		Failed:    r.Failed(threshold),
		Dropped:   r.dropped,
		Sessions:  sessions,
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
