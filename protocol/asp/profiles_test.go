package asp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/asp"
	"github.com/aaep-tools/aaepkit/protocol/protocoltest"
)

func lastStep(r *result, session string) protocol.Step {
	var last protocol.Step
	for _, s := range r.Steps {
		if s.Session == session {
			last = s
		}
	}
	return last
}

func summary(t *testing.T, r *result, session string) protocol.SessionSummary {
	t.Helper()
	for _, s := range r.Sessions {
		if s.Session == session {
			return s
		}
	}
	t.Fatalf("no summary for session %s:\n%s", session, r.Dump())
	return protocol.SessionSummary{}
}

// A refused message: lenient keeps the state and takes the REJECT answer;
// strict fails the session (synthetic step) and still takes the answer.
func TestRefusalProfiles(t *testing.T) {
	build := func() (*conv, []string) {
		c := newConv()
		return c, cat(c.intro(alpha, beta, 0),
			c.msg(beta, 5*sec, "COMMIT", commitBody("cmt_1")),
			c.msg(alpha, 6*sec, "REJECT", obj{{"code", "invalid_state_transition"}, {"reason", "not yet conversing"}}),
			c.msg(beta, 7*sec, "QUERY", obj{{"queryId", "q"}}))
	}
	c, lines := build()
	r := check(t, "lenient", lines)
	if got := r.Rules(); len(got) != 1 || got[0] != "ASP-S02" {
		t.Fatalf("lenient findings %v, want [ASP-S02]\n%s", got, r.Dump())
	}
	if s := summary(t, r, c.sid); s.State != "CONVERSING" || s.Complete {
		t.Errorf("lenient: session ended %s complete=%v, want CONVERSING incomplete", s.State, s.Complete)
	}

	c, lines = build()
	r = check(t, "strict", lines)
	if r.Count("ASP-S02") != 1 || r.Count("ASP-S07") != 1 || len(r.Findings) != 2 {
		t.Fatalf("strict findings %v, want ASP-S02 then ASP-S07 for the QUERY after FAILED\n%s", r.Rules(), r.Dump())
	}
	var syn *protocol.Step
	for i := range r.Steps {
		if r.Steps[i].Synthetic {
			syn = &r.Steps[i]
		}
	}
	if syn == nil || syn.From != "INTRODUCED" || syn.To != "FAILED" || syn.Index != 4 || syn.Label != "protocol violation" {
		t.Errorf("strict: synthetic step %+v, want INTRODUCED→FAILED at #4", syn)
	}
	if s := summary(t, r, c.sid); s.State != "FAILED" || !s.Complete {
		t.Errorf("strict: session %s complete=%v, want FAILED complete", s.State, s.Complete)
	}
}

// The invitation deadline is checked at the end of the stream against the
// latest timestamp of the whole stream.
func TestTimeoutAtEndOfStream(t *testing.T) {
	c1, c2 := newConv(), newConv()
	lines := cat(c1.invite(alpha, beta, 0), c2.conversing(alpha, gamma, 40*sec))
	r := check(t, "", lines)
	if r.Count("ASP-T01") != 1 {
		t.Fatalf("want one ASP-T01:\n%s", r.Dump())
	}
	for _, f := range r.Findings {
		if f.RuleID == "ASP-T01" && (f.Index != -1 || f.Session != c1.sid) {
			t.Errorf("T01 finding %+v, want index -1 in session %s", f, c1.sid)
		}
	}
	st := lastStep(r, c1.sid)
	if !st.Synthetic || st.Kind != protocol.StepTimeout || st.From != "INVITED" || st.To != "FAILED" || st.Index != -1 {
		t.Errorf("last step of the timed-out session = %+v", st)
	}
	if s := summary(t, r, c1.sid); s.State != "FAILED" || !s.Complete {
		t.Errorf("timed-out session: %+v", s)
	}
	if s := summary(t, r, c2.sid); s.State != "CONVERSING" || s.Complete {
		t.Errorf("open session: %+v, want CONVERSING incomplete", s)
	}

	// A stream that simply ends after an invitation is incomplete, not failed.
	c3 := newConv()
	r = check(t, "", []string{c3.invite(alpha, beta, 0)})
	if len(r.Findings) != 0 {
		t.Errorf("lone invitation: %v", r.Rules())
	}
	if s := summary(t, r, c3.sid); s.State != "INVITED" || s.Complete {
		t.Errorf("lone invitation: %+v", s)
	}
}

// Nested escalations return in order to the state each one left.
func TestNestedEscalation(t *testing.T) {
	c := newConv()
	lines := cat(c.executing(alpha, beta, 0),
		c.msg(beta, 10*sec, "ESCALATE", obj{{"reason", "supplier late"}, {"urgency", "high"}}),
		c.msg(gamma, 20*sec, "ESCALATE", obj{{"reason", "needs board"}, {"urgency", "critical"}}),
		c.msg(gamma, 30*sec, "INFORM", obj{{"informType", "resolution"}}),
		c.msg(gamma, 40*sec, "INFORM", obj{{"informType", "resolution"}}),
		c.msg(beta, 50*sec, "INFORM", obj{{"informType", "result"}}),
		c.msg(beta, 60*sec, "CLOSE", reason("fulfilled")))
	r := check(t, "", lines)
	var path []string
	for _, s := range r.Steps[len(r.Steps)-6:] {
		path = append(path, s.From+">"+s.To)
	}
	want := "EXECUTING>ESCALATED ESCALATED>ESCALATED ESCALATED>ESCALATED ESCALATED>EXECUTING EXECUTING>EXECUTING EXECUTING>CLOSED"
	if got := strings.Join(path, " "); got != want {
		t.Errorf("path %s\nwant %s", got, want)
	}
	// ESCALATE inside ESCALATED is one of the lenient edges.
	if r.Count("ASP-S02W") != 1 || len(r.Findings) != 1 {
		t.Errorf("findings %v, want one ASP-S02W", r.Rules())
	}
}

// The session timeout: lenient fails on an idle gap and only warns about
// the lifetime; strict fails on the lifetime.
func TestSessionTimeoutProfiles(t *testing.T) {
	build := func() (*conv, []string) {
		c := newConv()
		lines := c.conversing(alpha, beta, 0) // proposedDuration 30 min
		for i := 1; i <= 5; i++ {
			lines = append(lines, c.msg(alpha, time.Duration(i)*10*time.Minute, "INFORM", obj{{"informType", "note"}}))
		}
		return c, lines
	}
	c, lines := build()
	r := check(t, "lenient", lines)
	if r.Count("ASP-T03") != 1 || summary(t, r, c.sid).State != "CONVERSING" {
		t.Errorf("lenient: want one lifetime warning and the session still CONVERSING\n%s", r.Dump())
	}
	c, lines = build()
	r = check(t, "strict", lines)
	if r.Count("ASP-T03") != 1 || summary(t, r, c.sid).State != "FAILED" {
		t.Errorf("strict: want the session FAILED by ASP-T03\n%s", r.Dump())
	}
	if r.Count("ASP-S07") != 1 {
		t.Errorf("strict: the message after the timeout should be reported once (ASP-S07)\n%s", r.Dump())
	}
}

// WebSocket: an auth_ok frame naming a session in progress anchors it, so a
// recording that starts mid-session is checked without ASP-S01.
func TestAnchoredByAuthOK(t *testing.T) {
	c := newConv()
	_ = c.conversing(alpha, beta, 0) // advance the chain and sequence numbers
	lines := []string{
		`{"type":"auth_ok","sessionId":"` + c.sid + `","state":"AGREEING","participants":[],"lastSequence":9}`,
		wsFrame("message", c.msg(beta, 20*sec, "COUNTER", obj{{"proposalId", "p3"}})),
		wsFrame("send", c.msg(alpha, 21*sec, "COMMIT", commitBody("cmt_2"))),
		`{"type":"session_state","state":"AGREEING","previous":"CONVERSING","timestamp":"2026-03-07T14:00:21.000Z"}`,
	}
	r := check(t, "", lines)
	if len(r.Findings) != 0 {
		t.Errorf("findings %v\n%s", r.Rules(), r.Dump())
	}
	if len(r.Steps) != 2 || r.Steps[0].From != "AGREEING" || r.Steps[0].To != "CONVERSING" || r.Steps[1].To != "AGREEING" {
		t.Errorf("steps:\n%s", r.Dump())
	}
	if r.Stats.ByProtocol["asp"] != 4 {
		t.Errorf("asp messages %d, want 4", r.Stats.ByProtocol["asp"])
	}
}

func TestRecognize(t *testing.T) {
	c := newConv()
	inv := c.invite(alpha, beta, 0)
	cases := []struct {
		name string
		line string
		want bool
	}{
		{"envelope", inv, true},
		{"lower-case performative", `{"performative":"inform"}`, true},
		{"unknown performative", `{"performative":"GREET"}`, false},
		{"ws message frame", wsFrame("message", inv), true},
		{"ws send frame", wsFrame("send", inv), true},
		{"ws frame without ASP envelope", `{"type":"message","envelope":{"text":"hi"}}`, false},
		{"session_state with ASP state", `{"type":"session_state","state":"CONVERSING","previous":"INTRODUCED"}`, true},
		{"session_state with other state", `{"type":"session_state","state":"running"}`, false},
		{"ack before any ASP", `{"type":"ack","messageId":"m","sequenceNumber":1}`, false},
		{"AAEP event", `{"type":"aaep:agent.session.started","session_id":"sess_1"}`, false},
		{"nested performative only", `{"data":{"performative":"PROPOSE"}}`, false},
		{"KAHN event", `{"ts":"2026-05-05T09:00:00.000Z","run_id":"r1","event":"agent_run_start","agent_id":"coder","task":"x"}`, false},
		{"other ASP", `{"id":"m1","type":"session.message","created_at":1,"data":{}}`, true},
		{"session.* without the other ASP's fields", `{"type":"session.message"}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := protocoltest.Recognize(t, asp.New(), tc.line); got != tc.want {
				t.Errorf("Recognize(%s) = %v, want %v", tc.line, got, tc.want)
			}
		})
	}
	// Control frames are ASP once the stream held ASP.
	md := asp.New()
	e, _ := protocol.NewEngine([]protocol.Model{md}, "", nil, protocol.StreamInfo{}, protocol.Sink{})
	e.Feed(&protocol.Message{Raw: []byte(inv)})
	ack := &protocol.Message{Raw: []byte(`{"type":"ack","messageId":"m","sequenceNumber":1}`)}
	e.Feed(ack)
	if !md.Recognize(ack) {
		t.Errorf("ack after an ASP envelope not recognised")
	}
}

func TestForcedProtocol(t *testing.T) {
	// With --protocol asp, messages without a performative are still read as
	// ASP envelopes and their defects reported.
	r := protocoltest.Run(t, models(), "asp", "", []string{`{"hello":"world"}`, `not json`})
	if r.Count("ASP-E01") != 2 {
		t.Errorf("want two ASP-E01:\n%s", r.Dump())
	}
}

// TestProposedDurationUnits: the state machine page gives the session
// timeout as PROPOSE terms.proposed_duration with the default "3600s", so
// that name is in seconds; the sessions page's terms.proposedDuration is in
// milliseconds. A two-hour proposed_duration (7200) keeps a session alive
// through a 90-minute pause; a 60-second one does not.
func TestProposedDurationUnits(t *testing.T) {
	run := func(seconds int, pause time.Duration) *result {
		c := newConv()
		lines := []string{c.invite(alpha, beta, 0, set("content.body.terms", obj{{"proposed_duration", seconds}}))}
		lines = append(lines,
			c.msg(beta, 1*time.Second, "ACCEPT", obj{{"proposalId", "inv_" + c.sid[:8]}}),
			c.msg(beta, 2*time.Second, "INFORM", obj{{"informType", "identity"}}),
			c.msg(alpha, 3*time.Second, "INFORM", obj{{"informType", "identity"}}),
			c.msg(alpha, 5*time.Second, "QUERY", obj{{"queryId", "qry_1"}, {"queryType", "pricing"}}),
			c.msg(beta, 5*time.Second+pause, "INFORM", obj{{"informType", "quote"}}))
		return check(t, "lenient", lines)
	}
	if r := run(7200, 90*time.Minute); r.Count("ASP-T03") != 0 {
		t.Errorf("proposed_duration 7200 s, 90-minute pause: ASP-T03 reported (read as milliseconds?)\n%s", r.Dump())
	}
	if r := run(60, 2*time.Minute); r.Count("ASP-T03") != 1 {
		t.Errorf("proposed_duration 60 s, 2-minute pause: want ASP-T03\n%s", r.Dump())
	}
}
