package asp_test

import (
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/asp"
	"github.com/aaep-tools/aaepkit/protocol/protocoltest"
)

var update = flag.Bool("update", false, "rewrite the testdata fixtures and golden files")

// result is what one run produced.
type result = protocoltest.Result

// check runs lines through the ASP model alone (see protocoltest.Run).
func check(t testing.TB, profile string, lines []string) *result {
	t.Helper()
	return protocoltest.Run(t, models(), "", profile, lines)
}

// models makes the models of a run: an ASP model is used for one run only.
func models() []protocol.Model { return []protocol.Model{asp.New()} }

// withConfig makes the models of a run with an ASP model configured by cfg.
func withConfig(cfg asp.Config) func() []protocol.Model {
	return func() []protocol.Model { return []protocol.Model{asp.NewWithConfig(cfg)} }
}

const sec = time.Second

// ruleCases holds, for every rule, streams that must break it and close
// variants that must not.
func ruleCases() []protocoltest.RuleCase {
	return []protocoltest.RuleCase{
		{Rule: "ASP-E01", Name: "no integrity", Fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(beta, 10*sec, "INFORM", obj{{"informType", "quote"}}, del("integrity")))
		}, Pass: func() []string { c := newConv(); return c.conversing(alpha, beta, 0) }},
		{Rule: "ASP-E01", Name: "not JSON", Fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), `{"performative":"INFORM",`)
		}},
		{Rule: "ASP-E01W", Name: "discovery query", Fail: func() []string {
			c := newConv()
			return []string{c.msg(alpha, 0, "QUERY", obj{{"queryId", "qry_disc_001"}, {"queryType", "capability"}}, del("sessionId"), del("sequenceNumber"))}
		}, Pass: func() []string {
			c := newConv()
			// The same query inside a session carries the session fields.
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "qry_disc_001"}, {"queryType", "capability"}}))
		}},
		{Rule: "ASP-E02", Name: "unsupported version", Fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("version", "asp/2.0")))
		}, Pass: func() []string {
			c := newConv()
			c.version = "asp/1.0"
			return c.conversing(alpha, beta, 0)
		}},
		{Rule: "ASP-E03", Name: "version changes", Fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("version", "asp/1.0")))
		}, Pass: func() []string {
			c := newConv()
			c.version = "asp/1.0"
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("version", "asp/1.0")))
		}},
		{Rule: "ASP-E04", Name: "messageId not a UUID", Fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("messageId", "msg-0001")))
		}},
		{Rule: "ASP-E04", Name: "messageId reused", Fail: func() []string {
			c := newConv()
			l := c.conversing(alpha, beta, 0)
			return append(l, l[len(l)-1])
		}, Pass: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}))
		}},
		{Rule: "ASP-E04W", Name: "UUID v4", Fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("messageId", "3b241101-e2bb-4255-8caf-4136c566a962")))
		}, Pass: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("messageId", uuid7(base.Add(9*sec), 42))))
		}},
		{Rule: "ASP-E05", Name: "ase_ session id", Fail: func() []string {
			c := newConv()
			c.sid = "ase_abc123"
			return c.conversing(alpha, beta, 0)
		}, Pass: func() []string {
			c := newConv()
			return c.conversing(alpha, beta, 0)
		}},
		{Rule: "ASP-E06", Name: "sequence number repeats", Fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("sequenceNumber", 1)))
		}, Pass: func() []string {
			c := newConv()
			// Each sender counts on its own: alpha's next number may equal beta's last.
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("sequenceNumber", 3)))
		}},
		{Rule: "ASP-E06", Name: "sequence number fractional", Fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("sequenceNumber", 7.5)))
		}},
		{Rule: "ASP-E07", Name: "timestamp with offset", Fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("timestamp", "2026-03-07T15:00:09.000+01:00")))
		}, Pass: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("timestamp", "2026-03-07T14:00:09Z")))
		}},
		{Rule: "ASP-E07W", Name: "timestamp goes back", Fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("timestamp", "2026-03-07T13:59:30.000Z")))
		}, Pass: func() []string {
			c := newConv()
			// Equal to the previous message's timestamp: not backwards, and within the UUIDv7 allowance.
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("timestamp", "2026-03-07T14:00:05.000Z")))
		}},
		{Rule: "ASP-E07W", Name: "timestamp far from UUIDv7 time", Fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("messageId", uuid7(base.Add(-time.Hour), 99))))
		}},
		{Rule: "ASP-E08", Name: "sender agentId not agent://", Fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("sender.agentId", "alpha@acme.com")))
		}},
		{Rule: "ASP-E08", Name: "trust score out of range", Fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("sender.trustScore", 140)))
		}, Pass: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("sender.trustScore", 100)))
		}},
		{Rule: "ASP-E09", Name: "recipient not agent://", Fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("recipient", "beta")))
		}, Pass: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("recipient", obj{{"agentId", beta.id}, {"orgId", beta.org}})))
		}},
		{Rule: "ASP-E10", Name: "lower-case performative", Fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "inform", obj{{"informType", "note"}}))
		}, Pass: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "INFORM", obj{{"informType", "note"}}))
		}},
		{Rule: "ASP-E11", Name: "proposal without subject", Fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "PROPOSE", obj{{"proposalId", "p1"}, {"type", "service-agreement"}, {"terms", obj{}}}))
		}, Pass: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "PROPOSE", obj{{"proposalId", "p1"}, {"type", "service-agreement"}, {"subject", "s"}, {"terms", obj{}}}))
		}},
		{Rule: "ASP-E11W", Name: "unknown reject code", Fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(beta, 9*sec, "REJECT", obj{{"code", "not_interested"}, {"reason", "no"}}))
		}, Pass: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(beta, 9*sec, "REJECT", obj{{"code", "budget_exceeded"}, {"reason", "too expensive"}}))
		}},
		{Rule: "ASP-E12", Name: "bad signature", Fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("integrity.signature", "rsa:0011")))
		}},
		{Rule: "ASP-E12", Name: "abbreviated docs hash", Fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("integrity.hash", "sha256:a1b2c3d4...")))
		}},
		{Rule: "ASP-E12", Name: "docs relaxation keeps the prefixes", Models: withConfig(asp.Config{DocsExamples: true}), Fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("integrity.signature", "rsa:0011")))
		}, Pass: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("integrity.hash", "sha256:a1b2c3d4..."), set("integrity.signature", "ed25519:x1y2z3...")))
		}},
		{Rule: "ASP-E02", Name: "configured versions", Models: withConfig(asp.Config{SupportedVersions: []string{"asp/1.0"}}), Fail: func() []string {
			c := newConv()
			return c.conversing(alpha, beta, 0)
		}},
		{Rule: "ASP-H01", Name: "chain does not start at genesis", Fail: func() []string {
			c := newConv()
			c.prev = hashOf("elsewhere")
			return c.intro(alpha, beta, 0)
		}, Pass: func() []string {
			c := newConv()
			return c.intro(alpha, beta, 0)
		}},
		{Rule: "ASP-H02", Name: "chain broken", Fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("integrity.previousHash", hashOf("forged"))))
		}, Pass: func() []string {
			a, b := newConv(), newConv()
			// Two sessions interleaved: each chain links its own messages.
			la, lb := a.conversing(alpha, beta, 0), b.conversing(alpha, gamma, 0)
			var out []string
			for i := range la {
				out = append(out, la[i], lb[i])
			}
			return out
		}},
		{Rule: "ASP-H03", Name: "hash reused", Fail: func() []string {
			c := newConv()
			l := c.conversing(alpha, beta, 0)
			return append(l, c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}, set("integrity.hash", c.prev)))
		}, Pass: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 9*sec, "QUERY", obj{{"queryId", "q2"}}))
		}},
		{Rule: "ASP-S01", Name: "no invitation", Fail: func() []string {
			c := newConv()
			return []string{c.msg(alpha, 0, "QUERY", obj{{"queryId", "q1"}}, set("integrity.previousHash", hashOf("unknown")))}
		}, Pass: func() []string {
			c := newConv()
			return []string{c.invite(alpha, beta, 0)}
		}},
		{Rule: "ASP-S02", Name: "COMMIT while INTRODUCED", Fail: func() []string {
			c := newConv()
			return cat(c.intro(alpha, beta, 0), c.msg(beta, 5*sec, "COMMIT", commitBody("cmt_1")))
		}, Pass: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(beta, 6*sec, "COMMIT", commitBody("cmt_1")))
		}},
		{Rule: "ASP-S02", Name: "CLOSE while INTRODUCED, strict", Profile: "strict", Fail: func() []string {
			c := newConv()
			return cat(c.intro(alpha, beta, 0), c.msg(beta, 5*sec, "CLOSE", reason("changed plans")))
		}},
		{Rule: "ASP-S02W", Name: "CLOSE while INTRODUCED, lenient", Fail: func() []string {
			c := newConv()
			return cat(c.intro(alpha, beta, 0), c.msg(beta, 5*sec, "CLOSE", reason("changed plans")))
		}, Pass: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(beta, 6*sec, "CLOSE", reason("changed plans")))
		}},
		{Rule: "ASP-S02W", Name: "ESCALATE while INVITED", Fail: func() []string {
			c := newConv()
			return []string{c.invite(alpha, beta, 0), c.msg(beta, sec, "ESCALATE", obj{{"reason", "needs approval"}, {"urgency", "high"}})}
		}},
		{Rule: "ASP-S03", Name: "identity before ACCEPT", Fail: func() []string {
			c := newConv()
			return []string{c.invite(alpha, beta, 0), c.msg(beta, sec, "INFORM", obj{{"informType", "identity"}})}
		}, Pass: func() []string {
			c := newConv()
			return c.intro(alpha, beta, 0)
		}},
		{Rule: "ASP-S03", Name: "inviter accepts", Fail: func() []string {
			c := newConv()
			return []string{c.invite(alpha, beta, 0), c.msg(alpha, sec, "ACCEPT", obj{})}
		}},
		{Rule: "ASP-S04", Name: "ACCEPT names no commitment", Fail: func() []string {
			c := newConv()
			return cat(c.agreeing(alpha, beta, 0), c.msg(alpha, 10*sec, "ACCEPT", obj{}))
		}, Pass: func() []string {
			c := newConv()
			return c.executing(alpha, beta, 0)
		}},
		{Rule: "ASP-S05", Name: "ACCEPT of a rejected commitment", Fail: func() []string {
			c := newConv()
			return cat(c.agreeing(alpha, beta, 0), c.msg(alpha, 10*sec, "REJECT", obj{{"code", "budget_exceeded"}, {"reason", "too expensive"}}),
				c.msg(alpha, 11*sec, "ACCEPT", obj{{"commitmentId", "cmt_1"}}))
		}, Pass: func() []string {
			c := newConv()
			return c.executing(alpha, beta, 0)
		}},
		{Rule: "ASP-S06", Name: "PROPOSE while ESCALATED", Fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(beta, 10*sec, "ESCALATE", obj{{"reason", "over budget"}, {"urgency", "high"}}),
				c.msg(alpha, 11*sec, "PROPOSE", obj{{"proposalId", "p9"}, {"type", "service-agreement"}, {"subject", "s"}, {"terms", obj{}}}))
		}, Pass: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(beta, 10*sec, "ESCALATE", obj{{"reason", "over budget"}, {"urgency", "high"}}),
				c.msg(gamma, 20*sec, "INFORM", obj{{"informType", "resolution"}}),
				c.msg(alpha, 21*sec, "PROPOSE", obj{{"proposalId", "p9"}, {"type", "service-agreement"}, {"subject", "s"}, {"terms", obj{}}}))
		}},
		{Rule: "ASP-S07", Name: "INFORM after the mutual close", Fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 10*sec, "CLOSE", reason("done")), c.msg(beta, 11*sec, "CLOSE", reason("done")),
				c.msg(alpha, 12*sec, "INFORM", obj{{"informType", "note"}}))
		}, Pass: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 10*sec, "CLOSE", reason("done")), c.msg(beta, 11*sec, "CLOSE", reason("done")))
		}},
		{Rule: "ASP-S07", Name: "mutual close, strict", Profile: "strict", Fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 10*sec, "CLOSE", reason("done")), c.msg(beta, 11*sec, "CLOSE", reason("done")))
		}},
		{Rule: "ASP-S08", Name: "CLOSE without reason", Fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 10*sec, "CLOSE", obj{}))
		}, Pass: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 10*sec, "ESCALATE", obj{{"reason", "stuck"}, {"urgency", "low"}}), c.msg(alpha, 11*sec, "CLOSE", reason("done")))
		}},
		{Rule: "ASP-S08", Name: "ESCALATE without urgency", Fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(alpha, 10*sec, "ESCALATE", reason("stuck")))
		}},
		{Rule: "ASP-S09", Name: "CLOSE before the result", Fail: func() []string {
			c := newConv()
			return cat(c.executing(alpha, beta, 0), c.msg(beta, 10*sec, "CLOSE", reason("unilateral")))
		}, Pass: func() []string {
			c := newConv()
			return cat(c.executing(alpha, beta, 0), c.msg(beta, 10*sec, "INFORM", obj{{"informType", "result"}}), c.msg(beta, 11*sec, "CLOSE", reason("fulfilled")))
		}},
		{Rule: "ASP-S10", Name: "identity while EXECUTING", Fail: func() []string {
			c := newConv()
			return cat(c.executing(alpha, beta, 0), c.msg(beta, 10*sec, "INFORM", obj{{"informType", "identity"}}))
		}, Pass: func() []string {
			c := newConv()
			return cat(c.executing(alpha, beta, 0), c.msg(beta, 10*sec, "INFORM", obj{{"informType", "progress"}}))
		}},
		{Rule: "ASP-S10", Name: "progress while ESCALATED", Fail: func() []string {
			c := newConv()
			return cat(c.executing(alpha, beta, 0), c.msg(beta, 10*sec, "ESCALATE", obj{{"reason", "late supplier"}, {"urgency", "high"}}),
				c.msg(beta, 11*sec, "INFORM", obj{{"informType", "progress"}}))
		}},
		{Rule: "ASP-S11", Name: "session_state disagrees", Fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), `{"type":"session_state","sessionId":"`+c.sid+`","state":"AGREEING","previous":"INTRODUCED","timestamp":"2026-03-07T14:00:06.000Z"}`)
		}, Pass: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), `{"type":"session_state","sessionId":"`+c.sid+`","state":"CONVERSING","previous":"INTRODUCED","timestamp":"2026-03-07T14:00:06.000Z"}`)
		}},
		{Rule: "ASP-T01", Name: "ACCEPT after 31 s", Fail: func() []string {
			c := newConv()
			return []string{c.invite(alpha, beta, 0, del("content.body.validUntil")), c.msg(beta, 31*sec, "ACCEPT", obj{})}
		}, Pass: func() []string {
			c := newConv()
			return []string{c.invite(alpha, beta, 0, del("content.body.validUntil")), c.msg(beta, 29*sec, "ACCEPT", obj{})}
		}},
		{Rule: "ASP-T01", Name: "identity exchange late, strict", Profile: "strict", Fail: func() []string {
			c := newConv()
			return []string{c.invite(alpha, beta, 0), c.msg(beta, 10*sec, "ACCEPT", obj{}), c.msg(beta, 40*sec, "INFORM", obj{{"informType", "identity"}})}
		}},
		{Rule: "ASP-T02", Name: "reply too late", Fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0),
				c.msg(alpha, 10*sec, "PROPOSE", obj{{"proposalId", "p1"}, {"type", "service-agreement"}, {"subject", "s"}, {"terms", obj{}}}, set("constraints.maxResponseTimeMs", 5000)),
				c.msg(beta, 20*sec, "COUNTER", obj{{"proposalId", "p2"}}))
		}, Pass: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0),
				c.msg(alpha, 10*sec, "PROPOSE", obj{{"proposalId", "p1"}, {"type", "service-agreement"}, {"subject", "s"}, {"terms", obj{}}}, set("constraints.maxResponseTimeMs", 5000)),
				c.msg(alpha, 12*sec, "INFORM", obj{{"informType", "note"}}),
				c.msg(beta, 14*sec, "COUNTER", obj{{"proposalId", "p2"}}))
		}},
		{Rule: "ASP-T03", Name: "idle for two hours", Fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(beta, 2*time.Hour, "INFORM", obj{{"informType", "quote"}}))
		}, Pass: func() []string {
			c := newConv()
			// The invitation's proposedDuration is 30 minutes.
			return cat(c.conversing(alpha, beta, 0), c.msg(beta, 29*time.Minute, "INFORM", obj{{"informType", "quote"}}))
		}},
		{Rule: "ASP-T04", Name: "escalation unresolved", Fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(beta, 10*sec, "ESCALATE", obj{{"reason", "over budget"}, {"urgency", "high"}, {"timeout", 600}}),
				c.msg(gamma, 611*sec, "INFORM", obj{{"informType", "resolution"}}))
		}, Pass: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0), c.msg(beta, 10*sec, "ESCALATE", obj{{"reason", "over budget"}, {"urgency", "high"}, {"timeout", 600}}),
				c.msg(gamma, 600*sec, "INFORM", obj{{"informType", "resolution"}}))
		}},
		{Rule: "ASP-T05", Name: "ACCEPT after validUntil", Fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0),
				c.msg(beta, 10*sec, "PROPOSE", obj{{"proposalId", "p1"}, {"type", "service-agreement"}, {"subject", "s"}, {"terms", obj{}}, {"validUntil", "2026-03-07T14:00:20.000Z"}}),
				c.msg(alpha, 30*sec, "ACCEPT", obj{{"proposalId", "p1"}}))
		}, Pass: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0),
				c.msg(beta, 10*sec, "PROPOSE", obj{{"proposalId", "p1"}, {"type", "service-agreement"}, {"subject", "s"}, {"terms", obj{}}, {"validUntil", "2026-03-07T14:00:20.000Z"}}),
				c.msg(alpha, 19*sec, "ACCEPT", obj{{"proposalId", "p1"}}))
		}},
		{Rule: "ASP-C01", Name: "reply outside allowedPerformatives", Fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0),
				c.msg(alpha, 10*sec, "PROPOSE", obj{{"proposalId", "p1"}, {"type", "service-agreement"}, {"subject", "s"}, {"terms", obj{}}}, set("constraints.allowedPerformatives", []string{"ACCEPT", "REJECT"})),
				c.msg(beta, 12*sec, "COUNTER", obj{{"proposalId", "p2"}}))
		}, Pass: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0),
				c.msg(alpha, 10*sec, "PROPOSE", obj{{"proposalId", "p1"}, {"type", "service-agreement"}, {"subject", "s"}, {"terms", obj{}}}, set("constraints.allowedPerformatives", []string{"ACCEPT", "REJECT"})),
				c.msg(beta, 12*sec, "REJECT", obj{{"code", "budget_exceeded"}, {"reason", "too expensive"}}))
		}},
		{Rule: "ASP-C02", Name: "trust below requirement", Fail: func() []string {
			c := newConv()
			return cat(c.conversing(alpha, beta, 0),
				c.msg(alpha, 10*sec, "PROPOSE", obj{{"proposalId", "p1"}, {"type", "service-agreement"}, {"subject", "s"}, {"terms", obj{}}}, set("constraints.requiredTrustScore", 90)),
				c.msg(beta, 12*sec, "ACCEPT", obj{{"proposalId", "p1"}}))
		}, Pass: func() []string {
			c := newConv()
			// beta's trustScore is 81.
			return cat(c.conversing(alpha, beta, 0),
				c.msg(alpha, 10*sec, "PROPOSE", obj{{"proposalId", "p1"}, {"type", "service-agreement"}, {"subject", "s"}, {"terms", obj{}}}, set("constraints.requiredTrustScore", 81)),
				c.msg(beta, 12*sec, "ACCEPT", obj{{"proposalId", "p1"}}))
		}},
		{Rule: "ASP-C03", Name: "Minimal agent proposes", Models: withConfig(asp.Config{MinimalAgents: []string{beta.id}}), Fail: func() []string {
			c := newConv()
			return c.conversing(alpha, beta, 0)
		}, Pass: func() []string {
			c := newConv()
			// beta, declared Minimal, joins alpha and gamma's session only to ask, inform and leave.
			return cat(c.conversing(alpha, gamma, 0), c.msg(beta, 9*sec, "QUERY", obj{{"queryId", "q2"}}),
				c.msg(beta, 10*sec, "INFORM", obj{{"informType", "note"}}), c.msg(beta, 11*sec, "CLOSE", reason("done")))
		}},
		{Rule: "ASP-X01", Name: "agentsessionprotocol.org message", Fail: func() []string {
			return []string{`{"id":"msg_01","type":"session.message","created_at":1772892000000,"data":{"text":"hi"}}`}
		}, Pass: func() []string {
			c := newConv()
			return c.conversing(alpha, beta, 0)
		}},
	}
}

func TestRules(t *testing.T) { protocoltest.CheckRules(t, models, ruleCases()) }

// TestEveryRuleHasCases fails when a rule of the model has no failing
// stream in ruleCases, or a case names a rule the model does not have.
func TestEveryRuleHasCases(t *testing.T) {
	protocoltest.CheckCoverage(t, asp.New().Rules(), ruleCases(), protocoltest.NeedFailing|protocoltest.NeedPassing)
}

// TestLateReplyNamesTheRequest: a reply that came too late relates the
// message that asked for it, which the text names by index.
func TestLateReplyNamesTheRequest(t *testing.T) {
	c := newConv()
	lines := cat(c.conversing(alpha, beta, 0),
		c.msg(alpha, 10*sec, "PROPOSE", obj{{"proposalId", "p1"}, {"type", "service-agreement"}, {"subject", "s"}, {"terms", obj{}}}, set("constraints.maxResponseTimeMs", 5000)),
		c.msg(beta, 20*sec, "COUNTER", obj{{"proposalId", "p2"}}))
	asked := int64(len(lines) - 2)
	r := check(t, "", lines)
	for _, f := range r.Findings {
		if f.RuleID != "ASP-T02" {
			continue
		}
		if len(f.Related) != 1 || f.Related[0].Index != asked || f.Related[0].Offset != time.Duration(asked)*100*time.Millisecond {
			t.Errorf("ASP-T02 relates %+v, want message %d", f.Related, asked)
		}
		if want := fmt.Sprintf("after message %d,", asked); !strings.Contains(f.Message, want) {
			t.Errorf("ASP-T02 says %q, want %q in it", f.Message, want)
		}
		return
	}
	t.Fatalf("no ASP-T02 finding:\n%s", r.Dump())
}
