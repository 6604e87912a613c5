package aaep

// Whole-stream tests of the sequence checker: realistic interleaved
// sessions, several subscriptions, synthetic steps, session summaries,
// bounded memory, the steps golden file and benchmarks.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/internal/sample"
	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol"
)

// update rewrites the golden files under testdata/seq/.
var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// sampleMessages turns a generated stream into engine messages.
func sampleMessages(msgs []sample.Msg) []*protocol.Message {
	out := make([]*protocol.Message, len(msgs))
	start := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	for i, m := range msgs {
		dir := protocol.FromProducer
		if m.FromSubscriber {
			dir = protocol.ToProducer
		}
		out[i] = &protocol.Message{Index: int64(i), Offset: m.Offset, Received: start.Add(m.Offset), Dir: dir, Raw: m.JSON}
	}
	return out
}

// TestInterleavedSessions: eight realistic sessions interleaved in one
// stream are all followed to their end without sequence findings, each with
// its own complete summary and its own steps.
func TestInterleavedSessions(t *testing.T) {
	msgs := sample.Stream(sample.Options{Sessions: 8, Seed: 11})
	res := runMessages(t, "", protocol.StreamInfo{}, sampleMessages(msgs))
	if ids := res.seqIDs(); len(ids) != 0 {
		t.Errorf("clean interleaved sessions gave sequence findings %v\n%s", ids, res.describe())
	}
	perSession := map[string]int{}
	for _, m := range msgs {
		perSession[m.Session]++
	}
	if len(res.summaries) != len(perSession) {
		t.Fatalf("%d summaries for %d sessions", len(res.summaries), len(perSession))
	}
	interleaved := false
	for i := 1; i < len(msgs); i++ {
		if msgs[i].Session != msgs[i-1].Session {
			interleaved = true
		}
	}
	if !interleaved {
		t.Fatal("the sample stream is not interleaved; the test proves nothing")
	}
	for _, s := range res.summaries {
		if !s.Complete || (s.State != StateCompleted && s.State != StateErrored) {
			t.Errorf("session %s ended as %+v", s.Session, s)
		}
		if s.Messages != perSession[s.Session] {
			t.Errorf("session %s: %d messages in the summary, %d in the stream", s.Session, s.Messages, perSession[s.Session])
		}
	}
	steps := map[string]int{}
	for _, s := range res.steps {
		if !s.Synthetic {
			steps[s.Session]++
		}
	}
	for id, n := range perSession {
		if steps[id] != n {
			t.Errorf("session %s: %d steps for %d messages", id, steps[id], n)
		}
	}
}

// TestInterleavedViolations: the sample's broken sessions are caught in
// their own session and nowhere else.
func TestInterleavedViolations(t *testing.T) {
	msgs := sample.Stream(sample.Options{Sessions: 8, Seed: 5, Violations: true})
	res := runMessages(t, "", protocol.StreamInfo{}, sampleMessages(msgs))
	broken := map[string]bool{}
	byRule := map[string]int{}
	for _, f := range res.findings {
		if strings.HasPrefix(f.RuleID, "SEQ-") {
			broken[f.Session] = true
			byRule[f.RuleID]++
		}
	}
	if len(broken) != 2 {
		t.Errorf("sequence findings in %d sessions, want the 2 broken ones\n%s", len(broken), res.describe())
	}
	if byRule["SEQ-STATE-CHAIN"] != 2 || byRule["SEQ-TOOL-PAIR-PRECEDED"] != 2 {
		t.Errorf("findings by rule %v, want a chain break and an unpaired completion in each broken session", byRule)
	}
}

// TestMultipleSubscriptions: the same session delivered on two sources is
// followed once (one step per event), and per-channel rules still apply to
// each source.
func TestMultipleSubscriptions(t *testing.T) {
	msgs := stream(
		both("evt_a", S(), SC("idle", "thinking"), SC("thinking", "calling_tool"), TI("fetch", "call_1")),
		TC("fetch", "call_1", "success").id("evt_tc").src(0),
		SC("calling_tool", "thinking").id("evt_sc").src(0),
		// The slower second subscription catches up after the first one ended.
		C().id("evt_c").src(0),
		TC("fetch", "call_1", "success").id("evt_tc").src(1),
		SC("calling_tool", "thinking").id("evt_sc").src(1),
		C().id("evt_c").src(1),
	)
	res := run(t, "", msgs...)
	if ids := res.seqIDs(); len(ids) != 0 {
		t.Fatalf("findings %v\n%s", ids, res.describe())
	}
	if len(res.steps) != 7 {
		t.Errorf("%d steps, want 7 (one per event, not per copy)", len(res.steps))
	}
	if len(res.summaries) != 1 || res.summaries[0].State != StateCompleted {
		t.Errorf("summaries %+v", res.summaries)
	}

	// An event after the end on the lagging source is still late.
	late := append(msgs, PU().src(1))
	res = run(t, "", late...)
	if ids := res.seqIDs(); len(ids) != 1 || ids[0] != "SEQ-NOTHING-AFTER-TERMINAL" {
		t.Errorf("late event on the second source: findings %v\n%s", ids, res.describe())
	}
}

// TestTimeoutStep: a timeout noticed at a later event is drawn as a
// synthetic step at the deadline.
func TestTimeoutStep(t *testing.T) {
	res := run(t, "", stream(preConf(), AC("rpl_1", "reject", 60).set("risk_level", "medium"),
		SC("awaiting_input", "thinking").at(90*time.Second), C())...)
	var got *protocol.Step
	for i := range res.steps {
		if res.steps[i].Synthetic {
			got = &res.steps[i]
		}
	}
	if got == nil {
		t.Fatalf("no synthetic step in %+v", res.steps)
	}
	want := protocol.Step{Protocol: "aaep", Session: defSess, Index: 4, Offset: 300*time.Millisecond + 60*time.Second,
		From: stateAwaitingInput, To: stateAwaitingInput, Label: "timeout", Detail: "rpl_1 → default reject", Kind: protocol.StepTimeout, Synthetic: true}
	if *got != want {
		t.Errorf("timeout step\n got %+v\nwant %+v", *got, want)
	}
}

// TestSummaries: a cut-off session ends incomplete in its last state, and
// the subscription gets its own summary, marked a handshake (about the
// stream, not a session).
func TestSummaries(t *testing.T) {
	res := run(t, "", stream(handshake(0, "sub_1", caps{}, caps{}), S(), SC("idle", "thinking"), S().sess("sess_b"), C().sess("sess_b"))...)
	got := map[string]protocol.SessionSummary{}
	for _, s := range res.summaries {
		got[s.Session] = s
	}
	want := map[string]protocol.SessionSummary{
		"sess_a":         {Protocol: "aaep", Session: "sess_a", Messages: 2, First: 200 * time.Millisecond, Last: 300 * time.Millisecond, State: stateThinking, Complete: false},
		"sess_b":         {Protocol: "aaep", Session: "sess_b", Messages: 2, First: 400 * time.Millisecond, Last: 500 * time.Millisecond, State: StateCompleted, Complete: true},
		"subscription-0": {Protocol: "aaep", Session: "subscription-0", Messages: 2, First: 0, Last: 100 * time.Millisecond, State: "active", Complete: false, Handshake: true},
	}
	if len(got) != len(want) {
		t.Fatalf("summaries %+v", res.summaries)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("summary %s\n got %+v\nwant %+v", k, got[k], w)
		}
	}
	var incomplete *protocol.Finding
	for i, f := range res.findings {
		if f.RuleID == "SEQ-SESSION-INCOMPLETE" {
			incomplete = &res.findings[i]
		}
	}
	if incomplete == nil || incomplete.Session != "sess_a" || incomplete.Index != -1 || !strings.Contains(incomplete.Message, "unfinished") {
		t.Errorf("incomplete finding %+v", incomplete)
	}
}

// recorder is a protocol.Reporter that keeps counts only.
type recorder struct{ findings, steps, done int }

func (r *recorder) Report(*protocol.Rule, string, *protocol.Message, string, string, ...any) {
	r.findings++
}
func (r *recorder) Step(protocol.Step)                  { r.steps++ }
func (r *recorder) SessionDone(protocol.SessionSummary) { r.done++ }

// TestBoundedMemory: after many sessions have ended, the checker holds no
// per-session state: sessions, event ids and reply tokens are dropped, and
// what is remembered of closed sessions is bounded.
func TestBoundedMemory(t *testing.T) {
	defer func(v int) { idSweepSlack = v }(idSweepSlack)
	idSweepSlack = 256
	rec := &recorder{}
	c := New().NewChecker(rec, nil).(*checker)
	var n int
	for round := uint64(0); n < 2500; round++ {
		for _, m := range sampleMessages(sample.Stream(sample.Options{Sessions: 8, Seed: round})) {
			m.Index = int64(n)
			m.Decode(new(payload.Doc))
			c.Handle(m)
			n++
		}
		s := c.seq
		if s.sessions.Len() > 8 || len(s.ids) > 2*200+idSweepSlack+1 || len(s.tokens) > 8 {
			t.Fatalf("after %d messages: %d sessions, %d ids, %d tokens open", n, s.sessions.Len(), len(s.ids), len(s.tokens))
		}
	}
	c.Finish()
	s := c.seq
	if s.sessions.Len() != 0 || s.liveIDs != 0 || len(s.ids) > 2*200+idSweepSlack+1 || len(s.tokens) != 0 || len(s.draining) != 0 {
		t.Errorf("after the end: %d sessions, %d live ids (%d kept), %d tokens, %d draining", s.sessions.Len(), s.liveIDs, len(s.ids), len(s.tokens), len(s.draining))
	}
	if len(s.closed) > protocol.DefaultClosedMemory || len(s.retired) > maxRetiredTokens {
		t.Errorf("closed memory %d, retired tokens %d", len(s.closed), len(s.retired))
	}
	if rec.done == 0 || rec.steps < n {
		t.Errorf("%d summaries, %d steps for %d messages", rec.done, rec.steps, n)
	}
}

// TestRedeliveryIgnoresOrder: a redelivery re-serialised with another key
// order and spacing counts as identical; a changed value does not.
func TestRedeliveryIgnoresOrder(t *testing.T) {
	first := `{"@context":"https://aaep-protocol.org/context/v1","type":"aaep:agent.state.changed","event_id":"evt_9","session_id":"sess_a","timestamp":"2026-05-24T14:22:01.000Z","producer":{"agent_id":"agent"},"from_state":"idle","to_state":"thinking","summary_normal":"Thinking."}`
	again := `{ "summary_normal":"Thinking.", "to_state" : "thinking", "from_state":"idle", "producer":{"agent_id":"agent"},  "timestamp":"2026-05-24T14:22:01.000Z", "session_id":"sess_a", "event_id":"evt_9", "type":"aaep:agent.state.changed", "@context":"https://aaep-protocol.org/context/v1" }`
	changed := strings.Replace(first, `"to_state":"thinking"`, `"to_state":"deciding"`, 1)
	for _, c := range []struct {
		second string
		want   string
	}{{again, "SEQ-EVENT-ID-REDELIVERED"}, {changed, "SEQ-EVENT-ID-UNIQUE SEQ-STATE-CHAIN"}} {
		// The changed copy is a different event: it is checked as one.
		res := run(t, "", S(), &tm{raw: []byte(first)}, &tm{raw: []byte(c.second)}, C().ts(2*time.Second))
		if ids := strings.Join(res.seqIDs(), " "); ids != c.want {
			t.Errorf("second copy: findings [%s], want [%s]\n%s", ids, c.want, res.describe())
		}
	}
}

// TestStepsGolden compares the steps, summaries and sequence findings of a
// realistic stream (clean and broken sessions) with
// testdata/seq/sample.golden.jsonl; run with -update to rewrite it.
func TestStepsGolden(t *testing.T) {
	res := runMessages(t, "", protocol.StreamInfo{}, sampleMessages(sample.Stream(sample.Options{Sessions: 4, Seed: 3, Violations: true})))
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, s := range res.steps {
		mustEncode(t, enc, map[string]any{"step": s})
	}
	for _, s := range res.summaries {
		mustEncode(t, enc, map[string]any{"session": s})
	}
	for _, f := range res.findings {
		if strings.HasPrefix(f.RuleID, "SEQ-") || strings.HasPrefix(f.RuleID, "NEG-") || strings.HasPrefix(f.RuleID, "TRN-") {
			mustEncode(t, enc, map[string]any{"finding": f})
		}
	}
	path := filepath.Join("testdata", "seq", "sample.golden.jsonl")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestStepsGolden -update to create it)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		gotLines, wantLines := lines(buf.Bytes()), lines(want)
		for i := 0; i < max(len(gotLines), len(wantLines)); i++ {
			g, w := at(gotLines, i), at(wantLines, i)
			if g != w {
				t.Fatalf("golden differs at line %d:\n got %s\nwant %s\n(run with -update if the change is intended)", i+1, g, w)
			}
		}
	}
}

func mustEncode(t *testing.T, enc *json.Encoder, v any) {
	t.Helper()
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
}

func lines(b []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

func at(l []string, i int) string {
	if i < len(l) {
		return l[i]
	}
	return "(end)"
}

// BenchmarkSeq measures the sequence checker on realistic events. Each
// event is decoded into one reused Event, as the checker does; the "decode"
// sub-benchmark runs the same loop without the sequence checker, so the
// difference between the two is the sequence checker's cost.
func BenchmarkSeq(b *testing.B) {
	events := sample.Events(20000, 1)
	msgs := make([]protocol.Message, len(events))
	var size int64
	for i, e := range events {
		msgs[i] = protocol.Message{Index: int64(i), Offset: time.Duration(i) * time.Millisecond, Raw: e}
		size += int64(len(e))
	}
	for _, withSeq := range []bool{true, false} {
		name := "decode+seq"
		if !withSeq {
			name = "decode"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(size / int64(len(events)))
			b.ReportAllocs()
			var ev Event
			s := newSeqChecker(&recorder{}, &protocol.Options{})
			b.ResetTimer()
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				j := i % len(msgs)
				if j == 0 && i > 0 {
					s.finish()
					s = newSeqChecker(&recorder{}, &protocol.Options{})
				}
				if err := decodeBytes(msgs[j].Raw, &ev); err != nil {
					b.Fatal(err)
				}
				if withSeq {
					s.newMessage()
					s.handle(&msgs[j], &ev)
				}
			}
			b.StopTimer()
			cpu := cpuTime() - cpu0
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
			if cpu > 0 {
				b.ReportMetric(float64(b.N)/cpu.Seconds(), "events/cpu-s")
			}
		})
	}
}
