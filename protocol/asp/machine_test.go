package asp_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/asp"
	"github.com/aaep-tools/aaepkit/protocol/protocoltest"
)

// The machine's table drives both the checker and the drawing; these tests
// hold the two against each other: every edge drawn is one the checker
// takes (message by message, clock by clock, violation by violation), and
// every state change the checker makes is drawn.

type pair struct{ from, to string }

// drawn returns the (from, to) pairs of Machine() with their labels.
func drawn(t *testing.T) map[pair]string {
	t.Helper()
	m := asp.New().Machine()
	protocoltest.CheckMachine(t, m)
	out := map[pair]string{}
	for _, tr := range m.Transitions {
		k := pair{tr.From, tr.To}
		if _, dup := out[k]; dup {
			t.Errorf("%s→%s drawn twice", tr.From, tr.To)
		}
		out[k] = tr.Label
	}
	return out
}

// escalatable lists the states a message edge leaves for ESCALATED.
func escalatable() []string {
	var out []string
	for _, r := range asp.MachineEdges() {
		if r.To == "ESCALATED" && r.From != "ESCALATED" && len(r.On) > 0 {
			out = append(out, r.From)
		}
	}
	return out
}

// TestMachineDrawsTheTable: the drawing has exactly the table's edges, and
// each drawn label names the performatives or the row labels behind it.
func TestMachineDrawsTheTable(t *testing.T) {
	d := drawn(t)
	want := map[pair][]asp.MachineEdge{}
	for _, r := range asp.MachineEdges() {
		if r.To == asp.ToPrevious {
			for _, s := range escalatable() {
				want[pair{r.From, s}] = append(want[pair{r.From, s}], r)
			}
			continue
		}
		want[pair{r.From, r.To}] = append(want[pair{r.From, r.To}], r)
	}
	for k, rows := range want {
		label, ok := d[k]
		if !ok {
			t.Errorf("table edge %s→%s is not drawn", k.from, k.to)
			continue
		}
		for _, r := range rows {
			switch {
			case r.Label != "" && !strings.Contains(label, r.Label):
				t.Errorf("%s→%s drawn as %q, without its row %q", k.from, k.to, label, r.Label)
			case r.Timer != "" && !strings.Contains(label, r.Timer+" timeout"):
				t.Errorf("%s→%s drawn as %q, without its %s timeout", k.from, k.to, label, r.Timer)
			case r.Label == "" && r.Timer == "":
				for _, p := range r.On {
					if !strings.Contains(label, p) {
						t.Errorf("%s→%s drawn as %q, without %s", k.from, k.to, label, p)
					}
				}
			}
		}
	}
	for k := range d {
		if _, ok := want[k]; !ok {
			t.Errorf("%s→%s is drawn but not in the table", k.from, k.to)
		}
	}
}

// prefix returns the messages that leave a session of c in state from,
// ready for a message with performative perf that takes an edge to to.
func prefix(c *conv, from, perf, to string) []string {
	switch from {
	case "INVITED":
		pre := []string{c.invite(alpha, beta, 0)}
		if perf == "INFORM" {
			pre = append(pre, c.msg(beta, 1*sec, "ACCEPT", obj{{"proposalId", "inv_" + c.sid[:8]}}))
			if to == "INTRODUCED" {
				pre = append(pre, c.msg(beta, 2*sec, "INFORM", obj{{"informType", "identity"}, {"agentCard", "https://widgets.co/.well-known/agent-card.json"}}))
			}
		}
		return pre
	case "INTRODUCED":
		return c.intro(alpha, beta, 0)
	case "CONVERSING":
		return c.conversing(alpha, beta, 0)
	case "AGREEING":
		return c.agreeing(alpha, beta, 0)
	case "EXECUTING":
		return c.executing(alpha, beta, 0)
	case "ESCALATED":
		// A resolution returns to the state the escalation left (to).
		left := "CONVERSING"
		if perf == "INFORM" {
			left = to
		}
		return append(prefix(c, left, "ESCALATE", "ESCALATED"), c.msg(beta, 8*sec, "ESCALATE", obj{{"reason", "needs approval"}, {"urgency", "high"}}))
	}
	return nil
}

// edgeCase builds the stream that takes one message edge: the prefix that
// leaves the session in from, then a message with performative perf that
// satisfies the edge's guard.
func edgeCase(from, perf, to string) (lines []string, want string) {
	c := newConv()
	pre := prefix(c, from, perf, to)
	sender, body := beta, obj{}
	switch perf {
	case "PROPOSE":
		if from == "IDLE" {
			return []string{c.invite(alpha, beta, 0)}, to
		}
		body = obj{{"proposalId", "prp_9"}, {"type", "service-agreement"}, {"subject", "Widgets"}, {"terms", obj{}}}
	case "ACCEPT":
		switch from {
		case "INVITED":
			body = obj{{"proposalId", "inv_" + c.sid[:8]}}
		case "AGREEING":
			sender, body = alpha, obj{{"commitmentId", "cmt_1"}}
		default:
			body = obj{{"proposalId", "prp_1"}}
		}
	case "REJECT", "WITHDRAW", "CLOSE":
		body = obj{{"reason", "no longer needed"}, {"code", "unspecified"}}
	case "COUNTER":
		body = obj{{"proposalId", "prp_2"}, {"terms", obj{}}}
	case "INFORM":
		switch from {
		case "INVITED":
			if to == "INTRODUCED" {
				sender = alpha
			}
			body = obj{{"informType", "identity"}, {"agentCard", "https://example.com/agent-card.json"}}
		case "EXECUTING":
			body = obj{{"informType", "progress"}}
		case "ESCALATED":
			body = obj{{"informType", "resolution"}}
		default:
			body = obj{{"informType", "quote"}}
		}
	case "QUERY":
		body = obj{{"queryId", "qry_9"}, {"queryType", "status"}}
	case "CLARIFY":
		body = obj{{"question", "which model?"}}
	case "COMMIT":
		body = commitBody("cmt_9")
	case "DELEGATE":
		body = obj{{"delegateTo", gamma.id}}
	case "OBSERVE":
		body = obj{{"topic", "delivery"}}
	case "ESCALATE":
		body = obj{{"reason", "needs approval"}, {"urgency", "high"}}
	}
	return append(pre, c.msg(sender, 10*sec, perf, body)), to
}

// stepOf returns the non-synthetic step message index made.
func stepOf(r *result, index int64) (protocol.Step, bool) {
	for _, s := range r.Steps {
		if s.Index == index && !s.Synthetic {
			return s, true
		}
	}
	return protocol.Step{}, false
}

// reportedAt reports whether rule was reported at message index.
func reportedAt(r *result, rule string, index int64) bool {
	for _, f := range r.Findings {
		if f.RuleID == rule && f.Index == index {
			return true
		}
	}
	return false
}

// TestCheckerTakesEveryEdge: each message edge of the table, built as a
// stream, moves the checker from its state to its target in the profiles
// that take it; a lenient edge is refused (ASP-S02) by the strict profile.
func TestCheckerTakesEveryEdge(t *testing.T) {
	for _, r := range asp.MachineEdges() {
		targets := []string{r.To}
		if r.To == asp.ToPrevious {
			targets = escalatable()
		}
		for _, perf := range r.On {
			for _, to := range targets {
				for _, profile := range []string{"lenient", "strict"} {
					if r.From == "ESCALATED" && profile == "strict" && (to == "INVITED" || to == "INTRODUCED") {
						continue // only the lenient profile escalates from there
					}
					name := fmt.Sprintf("%s/%s/%s/%s", r.From, perf, to, profile)
					t.Run(name, func(t *testing.T) {
						lines, want := edgeCase(r.From, perf, to)
						strictOnly := profile == "strict"
						res := check(t, profile, lines)
						st, ok := stepOf(res, int64(len(lines)-1))
						if !ok {
							t.Fatalf("no step for the %s message:\n%s", perf, res.Dump())
						}
						if r.Lenient && strictOnly {
							if !reportedAt(res, "ASP-S02", int64(len(lines)-1)) || st.To != r.From {
								t.Errorf("strict profile took the lenient edge %s→%s:\n%s", st.From, st.To, res.Dump())
							}
							return
						}
						if st.From != r.From || st.To != want {
							t.Errorf("step %s→%s, want %s→%s:\n%s", st.From, st.To, r.From, want, res.Dump())
						}
						last := int64(len(lines) - 1)
						for _, rule := range []string{"ASP-S02", "ASP-S03", "ASP-S05", "ASP-S06", "ASP-S10"} {
							if reportedAt(res, rule, last) {
								t.Errorf("the edge's message was refused (%s):\n%s", rule, res.Dump())
							}
						}
						if r.Lenient != reportedAt(res, "ASP-S02W", last) {
							t.Errorf("lenient edge %v, ASP-S02W reported %v:\n%s", r.Lenient, !r.Lenient, res.Dump())
						}
					})
				}
			}
		}
	}
}

// TestCheckerTakesAutomaticEdges: each timed edge is the synthetic step of
// its clock; each violation edge the synthetic step of a hash chain break
// and, where the state refuses some performative, of a refused message
// (strict profile).
func TestCheckerTakesAutomaticEdges(t *testing.T) {
	// refused is a performative each state refuses ("": none, CONVERSING
	// allows all 13).
	refused := map[string]string{"INVITED": "OBSERVE", "INTRODUCED": "COMMIT", "AGREEING": "COMMIT", "EXECUTING": "COMMIT", "ESCALATED": "OBSERVE"}
	type want struct {
		lines         []string
		label, detail string
	}
	for _, r := range asp.MachineEdges() {
		if len(r.On) > 0 {
			continue
		}
		if r.Timer == "" && r.Label == "unrecoverable error" {
			continue // row 13: no message marks it; the violation row covers the edge
		}
		var cases []want
		if r.Timer != "" {
			// A message long after every clock ran out.
			c := newConv()
			cases = append(cases, want{append(prefix(c, r.From, "QUERY", r.From), c.msg(beta, 3*time.Hour, "QUERY", obj{{"queryId", "late"}})), "timeout", r.Timer})
		} else {
			c := newConv()
			cases = append(cases, want{append(prefix(c, r.From, "QUERY", r.From), c.msg(beta, 10*sec, "QUERY", obj{{"queryId", "q9"}}, set("integrity.previousHash", genesis))), "hash chain break", ""})
			if p := refused[r.From]; p != "" {
				lines, _ := edgeCase(r.From, p, r.From)
				cases = append(cases, want{lines, "protocol violation", p + " not allowed"})
			}
		}
		for _, w := range cases {
			t.Run(r.From+"/"+w.label, func(t *testing.T) {
				res := check(t, "strict", w.lines)
				for _, s := range res.Steps {
					if s.Synthetic && s.From == r.From && s.To == r.To && s.Label == w.label && s.Detail == w.detail {
						return
					}
				}
				t.Errorf("no synthetic step %s→%s %s [%s]:\n%s", r.From, r.To, w.label, w.detail, res.Dump())
			})
		}
	}
}

// TestCheckerStepsAreDrawn: every state change the checker makes in the
// rule cases and fixtures, in both profiles, is a drawn edge.
func TestCheckerStepsAreDrawn(t *testing.T) {
	d := drawn(t)
	streams := [][]string{negotiation(), violations(), websocket()}
	for _, rc := range ruleCases() {
		if rc.Fail != nil {
			streams = append(streams, rc.Fail())
		}
		if rc.Pass != nil {
			streams = append(streams, rc.Pass())
		}
	}
	changes := 0
	for _, lines := range streams {
		for _, profile := range []string{"lenient", "strict"} {
			for _, s := range check(t, profile, lines).Steps {
				if s.From == s.To {
					continue
				}
				changes++
				if _, ok := d[pair{s.From, s.To}]; !ok {
					t.Errorf("%s profile: step %s→%s (%s %s) is not drawn", profile, s.From, s.To, s.Label, s.Detail)
				}
			}
		}
	}
	if changes < 100 {
		t.Errorf("only %d state changes in the rule cases and fixtures", changes)
	}
}
