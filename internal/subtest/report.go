package subtest

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/protocol"
)

// Verdicts of a run and of a whole report.
const (
	VerdictPass   = "PASS"
	VerdictFail   = "FAIL"
	VerdictNotRun = "NOT RUN"
	// VerdictNotApplicable: the scenario does not apply to the
	// subscriber (its transport); neither passed nor failed.
	VerdictNotApplicable = "NOT APPLICABLE"
)

// Verdict is the result's verdict.
func (r *Result) Verdict() string {
	switch {
	case r.NotRun != "":
		return VerdictNotRun
	case r.NotApplicable != "":
		return VerdictNotApplicable
	case r.Passed():
		return VerdictPass
	}
	return VerdictFail
}

// Summary counts a report's results.
type Summary struct {
	Verdict string `json:"verdict"`
	Passed  int    `json:"passed"`
	Failed  int    `json:"failed"`
	NotRun  int    `json:"not_run"`
	// NotApplicable counts scenarios that do not apply to the subscriber.
	NotApplicable int `json:"not_applicable"`
	// Unverified counts checks passed by absence, with nothing to show
	// the subscriber took in the events.
	Unverified int `json:"unverified"`
	// NotObservable counts checks of what the user was told that nothing
	// observed (no --page, no --announcements).
	NotObservable int `json:"not_observable"`
}

// Summarize counts results; the verdict is NOT RUN when any could not
// run, else FAIL when any failed.
func Summarize(results []*Result) Summary {
	var s Summary
	for _, r := range results {
		for _, o := range r.Outcomes {
			if o.Unverified && o.Passed {
				s.Unverified++
			}
			if o.NotObservable {
				s.NotObservable++
			}
		}
		switch r.Verdict() {
		case VerdictPass:
			s.Passed++
		case VerdictFail:
			s.Failed++
		case VerdictNotApplicable:
			s.NotApplicable++
		default:
			s.NotRun++
		}
	}
	switch {
	case s.NotRun > 0:
		s.Verdict = VerdictNotRun
	case s.Failed > 0:
		s.Verdict = VerdictFail
	default:
		s.Verdict = VerdictPass
	}
	return s
}

func records(rs []int64) string {
	if len(rs) == 0 {
		return ""
	}
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("#%d", r)
	}
	return strings.Join(parts, ", ")
}

// WriteText writes results for people: per scenario its expectations and
// the subscriber's findings, then the verdict.
func WriteText(w io.Writer, results []*Result) error {
	var b strings.Builder
	for _, r := range results {
		fmt.Fprintf(&b, "%s (level %d; %s)\n", r.Name, r.Level, strings.Join(r.Sections, ", "))
		fmt.Fprintf(&b, "  user: %s\n", r.User)
		if r.NotRun != "" {
			fmt.Fprintf(&b, "  NOT RUN  %s\n\n", r.NotRun)
			continue
		}
		if r.NotApplicable != "" {
			fmt.Fprintf(&b, "  NOT APPLICABLE  %s\n\n", r.NotApplicable)
			continue
		}
		for _, o := range r.Outcomes {
			mark := "ok  "
			switch {
			case o.NotObservable:
				mark = "n/o "
			case !o.Passed && o.Required:
				mark = "FAIL"
			case !o.Passed:
				mark = "warn"
			}
			kind := "required"
			if !o.Required {
				kind = "advisory"
			}
			fmt.Fprintf(&b, "  %s  %s (%s): %s\n", mark, o.Name, kind, o.Message)
		}
		if r.Silence != "" {
			fmt.Fprintf(&b, "  note  %s\n", r.Silence)
		}
		writeHeard(&b, r.Heard)
		if len(r.Findings) == 0 {
			b.WriteString("  ok    subscriber-side rules: no finding on the subscriber's messages\n")
		}
		for _, f := range r.Findings {
			fmt.Fprintf(&b, "  %-6s %s #%d %s  %s\n", f.Level, f.RuleID, f.Index, protocol.FormatOffset(f.Offset), f.Message)
		}
		fmt.Fprintf(&b, "  %s in %s", r.Verdict(), fmtDur(r.Duration))
		if r.Record != "" {
			fmt.Fprintf(&b, "; the exchange is in %s (aaep-replay view %s)", r.Record, r.Record)
		}
		b.WriteString("\n\n")
	}
	s := Summarize(results)
	fmt.Fprintf(&b, "%s: %d scenarios, %d passed, %d failed, %d not applicable, %d not run\n", s.Verdict, len(results), s.Passed, s.Failed, s.NotApplicable, s.NotRun)
	if s.Unverified > 0 {
		fmt.Fprintf(&b, "%d checks passed unverified (not observable: %s; --require-evidence fails them)\n", s.Unverified, Unverified)
	}
	if s.NotObservable > 0 {
		fmt.Fprintf(&b, "%d checks of what the user was told not observable (--page or --announcements observes them; --require-evidence fails them)\n", s.NotObservable)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// jsonReport is the --json document.
type jsonReport struct {
	Summary
	Scenarios []jsonResult `json:"scenarios"`
}

type jsonResult struct {
	*Result
	Verdict string `json:"verdict"`
}

// WriteJSON writes results as one JSON document.
func WriteJSON(w io.Writer, results []*Result) error {
	doc := jsonReport{Summary: Summarize(results), Scenarios: []jsonResult{}}
	for _, r := range results {
		if r.Outcomes == nil {
			r.Outcomes = []Outcome{}
		}
		if r.Findings == nil {
			r.Findings = []Finding{}
		}
		doc.Scenarios = append(doc.Scenarios, jsonResult{Result: r, Verdict: r.Verdict()})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// JUnit XML, as Jenkins and GitLab read it.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
	SystemOut  string          `xml:"system-out,omitempty"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// WriteJUnit writes results as JUnit XML: a testsuite per scenario, a
// testcase per expectation and one for the subscriber-side rules; a
// scenario that could not run is one testcase with an error.
func WriteJUnit(w io.Writer, results []*Result) error {
	doc := junitSuites{Name: "aaep-replay test"}
	var total float64
	for _, r := range results {
		secs := r.Duration.Seconds()
		total += secs
		s := junitSuite{Name: r.Name, Time: fmt.Sprintf("%.3f", secs), Properties: []junitProperty{
			{"level", fmt.Sprint(r.Level)}, {"sections", strings.Join(r.Sections, ", ")}, {"user", r.User},
		}}
		if r.Record != "" {
			s.Properties = append(s.Properties, junitProperty{"record", r.Record})
		}
		s.SystemOut = r.Silence
		class := fmt.Sprintf("aaep.level%d.%s", r.Level, r.Name)
		if r.NotRun != "" {
			s.Cases = append(s.Cases, junitCase{Name: "run", Classname: class, Time: s.Time,
				Error: &junitProblem{Message: r.NotRun, Type: "not_run", Text: r.NotRun}})
			s.Errors++
		}
		if r.NotApplicable != "" {
			s.Cases = append(s.Cases, junitCase{Name: "applies", Classname: class, Time: s.Time,
				Skipped: &junitSkipped{Message: "not applicable: " + r.NotApplicable}})
			s.Skipped++
		}
		for _, o := range r.Outcomes {
			kind := "required"
			if !o.Required {
				kind = "advisory"
			}
			c := junitCase{Name: fmt.Sprintf("%s (%s)", o.Name, kind), Classname: class, Time: seconds(o.Took)}
			text := o.Message
			if rs := records(o.Records); rs != "" {
				text += "\nrecords: " + rs
			}
			switch {
			case o.NotObservable:
				c.Skipped = &junitSkipped{Message: o.Message}
				s.Skipped++
			case !o.Passed && o.Required:
				c.Failure = &junitProblem{Message: o.Message, Type: string(o.Kind), Text: text}
				s.Failures++
			case !o.Passed:
				c.SystemOut = "advisory, not met: " + text
			default:
				c.SystemOut = text
			}
			s.Cases = append(s.Cases, c)
		}
		if r.NotRun == "" && r.NotApplicable == "" {
			c := junitCase{Name: "subscriber-side rules", Classname: class, Time: seconds(r.CheckDuration)}
			var must, other []string
			for _, f := range r.Findings {
				line := fmt.Sprintf("%s %s #%d %s: %s", f.Level, f.RuleID, f.Index, protocol.FormatOffset(f.Offset), f.Message)
				if f.Required {
					must = append(must, line)
				} else {
					other = append(other, line)
				}
			}
			if len(must) > 0 {
				c.Failure = &junitProblem{Message: must[0], Type: "rule", Text: strings.Join(must, "\n")}
				s.Failures++
			}
			c.SystemOut = strings.Join(other, "\n")
			s.Cases = append(s.Cases, c)
		}
		s.Tests = len(s.Cases)
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		doc.Suites = append(doc.Suites, s)
	}
	doc.Time = fmt.Sprintf("%.3f", total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
