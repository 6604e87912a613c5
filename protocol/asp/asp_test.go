package asp_test

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/asp"
)

var update = flag.Bool("update", false, "rewrite the testdata fixtures and golden files")

// result is what one run produced.
type result struct {
	findings []protocol.Finding
	steps    []protocol.Step
	sessions []protocol.SessionSummary
	stats    protocol.Stats
}

func (r *result) rules() []string {
	var ids []string
	for _, f := range r.findings {
		ids = append(ids, f.RuleID)
	}
	return ids
}

func (r *result) has(rule string) bool { return slices.Contains(r.rules(), rule) }

func (r *result) count(rule string) int {
	n := 0
	for _, f := range r.findings {
		if f.RuleID == rule {
			n++
		}
	}
	return n
}

func (r *result) dump() string {
	var b strings.Builder
	for _, f := range r.findings {
		fmt.Fprintf(&b, "  %s %s #%d: %s\n", f.Level, f.RuleID, f.Index, f.Message)
	}
	for _, s := range r.steps {
		syn := ""
		if s.Synthetic {
			syn = " (synthetic)"
		}
		fmt.Fprintf(&b, "  step #%d %s → %s %s [%s]%s\n", s.Index, s.From, s.To, s.Label, s.Detail, syn)
	}
	return b.String()
}

// run feeds lines to an engine with models and collects what it reports.
// Message i is received i×100 ms after the start.
func run(t testing.TB, models []protocol.Model, force, profile string, lines []string) *result {
	t.Helper()
	r := &result{}
	e, err := protocol.NewEngine(models, force, &protocol.Options{Profile: profile}, protocol.Sink{
		Finding:     func(f protocol.Finding) { r.findings = append(r.findings, f) },
		Step:        func(s protocol.Step) { r.steps = append(r.steps, s) },
		SessionDone: func(s protocol.SessionSummary) { r.sessions = append(r.sessions, s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range lines {
		e.Feed(&protocol.Message{Index: int64(i), Offset: time.Duration(i) * 100 * time.Millisecond, Raw: []byte(l)})
	}
	e.Finish()
	r.stats = e.Stats()
	return r
}

func check(t testing.TB, profile string, lines []string) *result {
	t.Helper()
	return run(t, []protocol.Model{asp.New()}, "", profile, lines)
}

// ruleCase is a stream that must break rule, and optionally a close
// variant that must not.
type ruleCase struct {
	rule    string
	name    string
	profile string
	cfg     *asp.Config
	fail    func() []string
	pass    func() []string
}

const sec = time.Second

func ruleCases() []ruleCase {
	return []ruleCase{
		{rule: "ASP-E01", name: "no integrity", fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(beta, 10*sec, "INFORM", obj{{"informType", "quote"}}, del("integrity")))
		}, pass: func() []string { c := newConv(); return c.conversing(alpha, beta, 0) }},
		{rule: "ASP-E01", name: "not JSON", fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), `{"performative":"INFORM",`)
		}},
		{rule: "ASP-E01W", name: "discovery query", fail: func() []string {
			c := newConv()
			return []string{c.msg(alpha, 0, "QUERY", obj{{"queryId", "qry_disc_001"}, {"queryType", "capability"}}, del("sessionId"), del("sequenceNumber"))}
		}},
		{rule: "ASP-E02", name: "unsupported version", fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("version", "asp/2.0")))
		}, pass: func() []string {
			c := newConv()
			c.version = "asp/1.0"
			return c.conversing(alpha, beta, 0)
		}},
		{rule: "ASP-E03", name: "version changes", fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("version", "asp/1.0")))
		}},
		{rule: "ASP-E04", name: "messageId not a UUID", fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("messageId", "msg-0001")))
		}},
		{rule: "ASP-E04", name: "messageId reused", fail: func() []string {
			c := newConv()
			l := c.conversing(alpha, beta, 0)
			return append(l, l[len(l)-1])
		}},
		{rule: "ASP-E04W", name: "UUID v4", fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("messageId", "3b241101-e2bb-4255-8caf-4136c566a962")))
		}},
		{rule: "ASP-E05", name: "ase_ session id", fail: func() []string {
			c := newConv()
			c.sid = "ase_abc123"
			return c.conversing(alpha, beta, 0)
		}},
		{rule: "ASP-E06", name: "sequence number repeats", fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("sequenceNumber", 1)))
		}},
		{rule: "ASP-E06", name: "sequence number fractional", fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("sequenceNumber", 7.5)))
		}},
		{rule: "ASP-E07", name: "timestamp with offset", fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("timestamp", "2026-03-07T15:00:09.000+01:00")))
		}},
		{rule: "ASP-E07W", name: "timestamp goes back", fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("timestamp", "2026-03-07T13:59:30.000Z")))
		}},
		{rule: "ASP-E07W", name: "timestamp far from UUIDv7 time", fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("messageId", uuid7(base.Add(-time.Hour), 99))))
		}},
		{rule: "ASP-E08", name: "sender agentId not agent://", fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("sender.agentId", "alpha@acme.com")))
		}},
		{rule: "ASP-E08", name: "trust score out of range", fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("sender.trustScore", 140)))
		}},
		{rule: "ASP-E09", name: "recipient not agent://", fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("recipient", "beta")))
		}, pass: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("recipient", obj{{"agentId", beta.id}, {"orgId", beta.org}})))
		}},
		{rule: "ASP-E10", name: "lower-case performative", fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "inform", obj{{"informType", "note"}}))
		}},
		{rule: "ASP-E11", name: "proposal without subject", fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "PROPOSE", obj{{"proposalId", "p1"}, {"type", "service-agreement"}, {"terms", obj{}}}))
		}},
		{rule: "ASP-E11W", name: "unknown reject code", fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(beta, 9*sec, "REJECT", obj{{"code", "not_interested"}, {"reason", "no"}}))
		}, pass: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(beta, 9*sec, "REJECT", obj{{"code", "budget_exceeded"}, {"reason", "too expensive"}}))
		}},
		{rule: "ASP-E12", name: "bad signature", fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("integrity.signature", "rsa:0011")))
		}},
		{rule: "ASP-E12", name: "abbreviated docs hash", fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("integrity.hash", "sha256:a1b2c3d4...")))
		}},
		{rule: "ASP-E12", name: "docs relaxation keeps the prefixes", cfg: &asp.Config{DocsExamples: true}, fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("integrity.signature", "rsa:0011")))
		}, pass: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("integrity.hash", "sha256:a1b2c3d4..."), set("integrity.signature", "ed25519:x1y2z3...")))
		}},
		{rule: "ASP-E02", name: "configured versions", cfg: &asp.Config{SupportedVersions: []string{"asp/1.0"}}, fail: func() []string {
			c := newConv()
			return c.conversing(alpha, beta, 0)
		}},
		{rule: "ASP-H01", name: "chain does not start at genesis", fail: func() []string {
			c := newConv()
			c.prev = hashOf("elsewhere")
			return c.intro(alpha, beta, 0)
		}},
		{rule: "ASP-H02", name: "chain broken", fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("integrity.previousHash", hashOf("forged"))))
		}},
		{rule: "ASP-H03", name: "hash reused", fail: func() []string {
			c := newConv()
			l := c.conversing(alpha, beta, 0)
			return append(l, c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("integrity.hash", c.prev)))
		}},
		{rule: "ASP-S01", name: "no invitation", fail: func() []string {
			c := newConv()
			return []string{c.msg(alpha, 0, "QUERY", obj{{"queryId", "q1"}}, set("integrity.previousHash", hashOf("unknown")))}
		}},
		{rule: "ASP-S02", name: "COMMIT while INTRODUCED", fail: func() []string {
			c := newConv()
			return cat(c.intro(alpha, beta, 0), c.msg(beta, 5*sec, "COMMIT", commitBody("cmt_1")))
		}},
		{rule: "ASP-S02", name: "CLOSE while INTRODUCED, strict", profile: "strict", fail: func() []string {
			c := newConv()
			return cat(c.intro(alpha, beta, 0), c.msg(beta, 5*sec, "CLOSE", reason("changed plans")))
		}},
		{rule: "ASP-S02W", name: "CLOSE while INTRODUCED, lenient", fail: func() []string {
			c := newConv()
			return cat(c.intro(alpha, beta, 0), c.msg(beta, 5*sec, "CLOSE", reason("changed plans")))
		}},
		{rule: "ASP-S02W", name: "ESCALATE while INVITED", fail: func() []string {
			c := newConv()
			return []string{c.invite(alpha, beta, 0), c.msg(beta, sec, "ESCALATE", obj{{"reason", "needs approval"}, {"urgency", "high"}})}
		}},
		{rule: "ASP-S03", name: "identity before ACCEPT", fail: func() []string {
			c := newConv()
			return []string{c.invite(alpha, beta, 0), c.msg(beta, sec, "INFORM", obj{{"informType", "identity"}})}
		}},
		{rule: "ASP-S03", name: "inviter accepts", fail: func() []string {
			c := newConv()
			return []string{c.invite(alpha, beta, 0), c.msg(alpha, sec, "ACCEPT", obj{})}
		}},
		{rule: "ASP-S04", name: "ACCEPT names no commitment", fail: func() []string {
			c := newConv()
			return cat(c.agreeing(alpha, beta, 0), c.msg(alpha, 10*sec, "ACCEPT", obj{}))
		}, pass: func() []string {
			c := newConv()
			return c.executing(alpha, beta, 0)
		}},
		{rule: "ASP-S05", name: "ACCEPT of a rejected commitment", fail: func() []string {
			c := newConv()
			return cat(c.agreeing(alpha, beta, 0), c.msg(alpha, 10*sec, "REJECT", obj{{"code", "budget_exceeded"}, {"reason", "too expensive"}}),
				c.msg(alpha, 11*sec, "ACCEPT", obj{{"commitmentId", "cmt_1"}}))
		}},
		{rule: "ASP-S06", name: "PROPOSE while ESCALATED", fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(beta, 10*sec, "ESCALATE", obj{{"reason", "over budget"}, {"urgency", "high"}}),
				c.msg(alpha, 11*sec, "PROPOSE", obj{{"proposalId", "p9"}, {"type", "service-agreement"}, {"subject", "s"}, {"terms", obj{}}}))
		}},
		{rule: "ASP-S07", name: "INFORM after the mutual close", fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 10*sec, "CLOSE", reason("done")), c.msg(beta, 11*sec, "CLOSE", reason("done")),
				c.msg(alpha, 12*sec, "INFORM", obj{{"informType", "note"}}))
		}, pass: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 10*sec, "CLOSE", reason("done")), c.msg(beta, 11*sec, "CLOSE", reason("done")))
		}},
		{rule: "ASP-S07", name: "mutual close, strict", profile: "strict", fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 10*sec, "CLOSE", reason("done")), c.msg(beta, 11*sec, "CLOSE", reason("done")))
		}},
		{rule: "ASP-S08", name: "CLOSE without reason", fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 10*sec, "CLOSE", obj{}))
		}},
		{rule: "ASP-S08", name: "ESCALATE without urgency", fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 10*sec, "ESCALATE", reason("stuck")))
		}},
		{rule: "ASP-S09", name: "CLOSE before the result", fail: func() []string {
			c := newConv()
			return cat(c.executing(alpha, beta, 0), c.msg(beta, 10*sec, "CLOSE", reason("unilateral")))
		}, pass: func() []string {
			c := newConv()
			return cat(c.executing(alpha, beta, 0), c.msg(beta, 10*sec, "INFORM", obj{{"informType", "result"}}), c.msg(beta, 11*sec, "CLOSE", reason("fulfilled")))
		}},
		{rule: "ASP-S10", name: "identity while EXECUTING", fail: func() []string {
			c := newConv()
			return cat(c.executing(alpha, beta, 0), c.msg(beta, 10*sec, "INFORM", obj{{"informType", "identity"}}))
		}},
		{rule: "ASP-S10", name: "progress while ESCALATED", fail: func() []string {
			c := newConv()
			return cat(c.executing(alpha, beta, 0), c.msg(beta, 10*sec, "ESCALATE", obj{{"reason", "late supplier"}, {"urgency", "high"}}),
				c.msg(beta, 11*sec, "INFORM", obj{{"informType", "progress"}}))
		}},
		{rule: "ASP-S11", name: "session_state disagrees", fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), `{"type":"session_state","sessionId":"`+c.sid+`","state":"AGREEING","previous":"INTRODUCED","timestamp":"2026-03-07T14:00:06.000Z"}`)
		}, pass: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), `{"type":"session_state","sessionId":"`+c.sid+`","state":"CONVERSING","previous":"INTRODUCED","timestamp":"2026-03-07T14:00:06.000Z"}`)
		}},
		{rule: "ASP-T01", name: "ACCEPT after 31 s", fail: func() []string {
			c := newConv()
			return []string{c.invite(alpha, beta, 0, del("content.body.validUntil")), c.msg(beta, 31*sec, "ACCEPT", obj{})}
		}, pass: func() []string {
			c := newConv()
			return []string{c.invite(alpha, beta, 0, del("content.body.validUntil")), c.msg(beta, 29*sec, "ACCEPT", obj{})}
		}},
		{rule: "ASP-T01", name: "identity exchange late, strict", profile: "strict", fail: func() []string {
			c := newConv()
			return []string{c.invite(alpha, beta, 0), c.msg(beta, 10*sec, "ACCEPT", obj{}), c.msg(beta, 40*sec, "INFORM", obj{{"informType", "identity"}})}
		}},
		{rule: "ASP-T02", name: "reply too late", fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0),
				c.msg(alpha, 10*sec, "PROPOSE", obj{{"proposalId", "p1"}, {"type", "service-agreement"}, {"subject", "s"}, {"terms", obj{}}}, set("constraints.maxResponseTimeMs", 5000)),
				c.msg(beta, 20*sec, "COUNTER", obj{{"proposalId", "p2"}}))
		}, pass: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0),
				c.msg(alpha, 10*sec, "PROPOSE", obj{{"proposalId", "p1"}, {"type", "service-agreement"}, {"subject", "s"}, {"terms", obj{}}}, set("constraints.maxResponseTimeMs", 5000)),
				c.msg(alpha, 12*sec, "INFORM", obj{{"informType", "note"}}),
				c.msg(beta, 14*sec, "COUNTER", obj{{"proposalId", "p2"}}))
		}},
		{rule: "ASP-T03", name: "idle for two hours", fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(beta, 2*time.Hour, "INFORM", obj{{"informType", "quote"}}))
		}},
		{rule: "ASP-T04", name: "escalation unresolved", fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(beta, 10*sec, "ESCALATE", obj{{"reason", "over budget"}, {"urgency", "high"}, {"timeout", 600}}),
				c.msg(gamma, 611*sec, "INFORM", obj{{"informType", "resolution"}}))
		}, pass: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(beta, 10*sec, "ESCALATE", obj{{"reason", "over budget"}, {"urgency", "high"}, {"timeout", 600}}),
				c.msg(gamma, 600*sec, "INFORM", obj{{"informType", "resolution"}}))
		}},
		{rule: "ASP-T05", name: "ACCEPT after validUntil", fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0),
				c.msg(beta, 10*sec, "PROPOSE", obj{{"proposalId", "p1"}, {"type", "service-agreement"}, {"subject", "s"}, {"terms", obj{}}, {"validUntil", "2026-03-07T14:00:20.000Z"}}),
				c.msg(alpha, 30*sec, "ACCEPT", obj{{"proposalId", "p1"}}))
		}},
		{rule: "ASP-C01", name: "reply outside allowedPerformatives", fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0),
				c.msg(alpha, 10*sec, "PROPOSE", obj{{"proposalId", "p1"}, {"type", "service-agreement"}, {"subject", "s"}, {"terms", obj{}}}, set("constraints.allowedPerformatives", []string{"ACCEPT", "REJECT"})),
				c.msg(beta, 12*sec, "COUNTER", obj{{"proposalId", "p2"}}))
		}},
		{rule: "ASP-C02", name: "trust below requirement", fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0),
				c.msg(alpha, 10*sec, "PROPOSE", obj{{"proposalId", "p1"}, {"type", "service-agreement"}, {"subject", "s"}, {"terms", obj{}}}, set("constraints.requiredTrustScore", 90)),
				c.msg(beta, 12*sec, "ACCEPT", obj{{"proposalId", "p1"}}))
		}},
		{rule: "ASP-C03", name: "Minimal agent proposes", cfg: &asp.Config{MinimalAgents: []string{beta.id}}, fail: func() []string {
			c := newConv()
			return c.conversing(alpha, beta, 0)
		}},
		{rule: "ASP-X01", name: "agentsessionprotocol.org message", fail: func() []string {
			return []string{`{"id":"msg_01","type":"session.message","created_at":1772892000000,"data":{"text":"hi"}}`}
		}},
	}
}

func TestRules(t *testing.T) {
	for _, tc := range ruleCases() {
		t.Run(tc.rule+"/"+tc.name, func(t *testing.T) {
			md := asp.New()
			if tc.cfg != nil {
				md = asp.NewWithConfig(*tc.cfg)
			}
			r := run(t, []protocol.Model{md}, "", tc.profile, tc.fail())
			if !r.has(tc.rule) {
				t.Errorf("failing stream: no %s finding; got %v\n%s", tc.rule, r.rules(), r.dump())
			}
			if tc.pass != nil {
				md := asp.New()
				if tc.cfg != nil {
					md = asp.NewWithConfig(*tc.cfg)
				}
				r := run(t, []protocol.Model{md}, "", tc.profile, tc.pass())
				if r.has(tc.rule) {
					t.Errorf("passing stream: unexpected %s finding\n%s", tc.rule, r.dump())
				}
			}
		})
	}
}

// TestEveryRuleHasCases fails when a rule of the model has no failing
// stream in ruleCases, or a case names a rule the model does not have.
func TestEveryRuleHasCases(t *testing.T) {
	covered := map[string]bool{}
	for _, tc := range ruleCases() {
		covered[tc.rule] = true
	}
	known := map[string]bool{}
	for _, r := range asp.New().Rules() {
		known[r.ID] = true
		if !covered[r.ID] {
			t.Errorf("rule %s has no failing stream in ruleCases", r.ID)
		}
		if r.Summary == "" || r.Level == 0 {
			t.Errorf("rule %s lacks a summary or level", r.ID)
		}
	}
	for id := range covered {
		if !known[id] {
			t.Errorf("ruleCases names %s, which asp.New().Rules() does not list", id)
		}
	}
}
