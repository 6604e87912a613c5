package aaep_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/internal/sample"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/aaep"
	"github.com/aaep-tools/aaepkit/protocol/protocoltest"
	"github.com/aaep-tools/aaepkit/protocol/report"
)

// ruleCase is one single-message case: a message, the rule it exercises,
// and the single-message findings it must produce (none for a passing case).
type ruleCase struct {
	name    string
	rule    string   // the rule the case exercises
	msg     []byte   // the message
	want    []string // the single-message rule IDs expected, sorted; nil: clean
	profile string   // "" (lenient) or "strict"
	force   bool     // hand the message to AAEP without recognition
}

// pass and fail build cases.
func pass(rule, name string, msg []byte) ruleCase {
	return ruleCase{name: name, rule: rule, msg: msg}
}

func fail(rule, name string, msg []byte, also ...string) ruleCase {
	want := append([]string{rule}, also...)
	sort.Strings(want)
	return ruleCase{name: name, rule: rule, msg: msg, want: slices.Compact(want)}
}

func strict(c ruleCase) ruleCase { c.profile = "strict"; return c }
func forced(c ruleCase) ruleCase { c.force = true; return c }

// allCases gathers the tables of envelope_test.go, events_test.go and
// messages_test.go.
func allCases() []ruleCase {
	var all []ruleCase
	all = append(all, envCases()...)
	all = append(all, evtCases()...)
	return append(all, msgCases()...)
}

// singleRule reports whether id is a single-message rule (this file's
// subject); sequence rules (SEQ-, NEG-, TRN-) are tested elsewhere.
func singleRule(id string) bool {
	return strings.HasPrefix(id, "ENV-") || strings.HasPrefix(id, "EVT-") || strings.HasPrefix(id, "MSG-")
}

// run feeds msgs through a real engine with the AAEP model and returns the
// report.
func run(t testing.TB, profile, force string, msgs ...[]byte) *report.Report {
	t.Helper()
	rep := report.New("test")
	eng, err := protocol.NewEngine([]protocol.Model{aaep.New()}, force, &protocol.Options{Profile: protocol.Profile(profile)}, protocol.StreamInfo{}, rep.Sink(nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range singleMessages(msgs...) {
		eng.Feed(m)
	}
	eng.Finish()
	rep.Stats = eng.Stats()
	return rep
}

// singleMessages makes msgs a stream: message i is received i ms after the
// start, towards the producer when it is a request, a renegotiation or a
// reply.
func singleMessages(msgs ...[]byte) []*protocol.Message {
	base := time.Date(2026, 5, 24, 14, 22, 11, 0, time.UTC)
	out := make([]*protocol.Message, len(msgs))
	for i, raw := range msgs {
		m := &protocol.Message{Index: int64(i), Offset: time.Duration(i) * time.Millisecond, Received: base.Add(time.Duration(i) * time.Millisecond), Raw: raw}
		if typ, _ := peekType(raw); typ == aaep.MsgSubscriptionRequest || typ == aaep.MsgSubscriptionRenegotiate ||
			typ == aaep.MsgConfirmationReply || typ == aaep.MsgClarificationReply {
			m.Dir = protocol.ToProducer
		}
		out[i] = m
	}
	return out
}

func peekType(raw []byte) (string, bool) {
	var v struct {
		Type string `json:"type"`
	}
	err := json.Unmarshal(raw, &v)
	return v.Type, err == nil
}

// findingsAt returns the single-message findings at message index.
func findingsAt(rep *report.Report, index int64) []protocol.Finding {
	var out []protocol.Finding
	for _, s := range rep.Sessions() {
		for _, f := range s.Findings {
			if f.Index == index && singleRule(f.RuleID) {
				out = append(out, f)
			}
		}
	}
	return out
}

func ruleIDs(fs []protocol.Finding) []string {
	var ids []string
	for _, f := range fs {
		ids = append(ids, f.RuleID)
	}
	sort.Strings(ids)
	return slices.Compact(ids)
}

// prelude is a valid first message, so that a broken second message is
// attributed to AAEP as the only protocol of the stream.
var prelude = event(aaep.TypeSessionStarted, set("session_id", "sess_prelude"), set("event_id", "evt_prelude"))

// singleRuleCases states the cases of allCases in the shared rule-case
// harness: the prelude, then the case's message; Want is the set of
// single-message findings the two yield (the prelude yields none).
func singleRuleCases() []protocoltest.RuleCase {
	var out []protocoltest.RuleCase
	for _, c := range allCases() {
		force := ""
		if c.force {
			force = "aaep"
		}
		out = append(out, protocoltest.RuleCase{Rule: c.rule, Name: c.name, Profile: c.profile, Force: force,
			Stream:   func() []*protocol.Message { return singleMessages(prelude, c.msg) },
			Want:     c.want,
			Keep:     func(f protocol.Finding) bool { return singleRule(f.RuleID) },
			Distinct: true})
	}
	return out
}

func describeFindings(fs []protocol.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "\n  %s %s [%s] %s", f.Level, f.RuleID, f.Short, f.Message)
	}
	return b.String()
}

func aaepModels() []protocol.Model { return []protocol.Model{aaep.New()} }

// TestSingleRules runs every case through the engine and compares the
// single-message findings with the expectation.
// TestSingleRules runs the single-message rule cases: each stream is one
// or a few messages cut out of a session (a Fragment), judged by the rule
// it names.
func TestSingleRules(t *testing.T) {
	cases := singleRuleCases()
	for i := range cases {
		cases[i].Fragment = true
	}
	protocoltest.CheckRules(t, aaepModels, cases)
}

// TestEveryRuleHasCases makes coverage enforceable: every single-message
// rule of the model must have at least one failing and one passing case
// that names it, and every case must name a rule of the model.
func TestEveryRuleHasCases(t *testing.T) {
	var single []protocol.Rule
	for _, r := range aaep.New().Rules() {
		if singleRule(r.ID) {
			single = append(single, r)
		}
	}
	protocoltest.CheckCoverage(t, single, singleRuleCases(), protocoltest.NeedFailing|protocoltest.NeedPassing)
	// The catalog has 27 ENV, 15 EVT and 9 MSG rules.
	if len(single) != 27+15+9 {
		t.Errorf("the model has %d single-message rules, want 51", len(single))
	}
}

// TestRuleTable checks the rule table: unique IDs, catalog levels, summaries.
func TestRuleTable(t *testing.T) {
	want := map[string]protocol.Level{
		"ENV-SIZE": protocol.Should, "EVT-URGENCY-RECOMMENDED": protocol.Should, "EVT-CONF-DEFAULT-SHOULD": protocol.Should,
		"EVT-CONF-REVERSIBILITY-ONLY": protocol.Info, "EVT-CONF-ALLOWED-REPLIES": protocol.Info, "EVT-CLAR-DEFAULT-RESPONSE": protocol.Info,
		"EVT-PROGRESS-STEP-LE-TOTAL": protocol.Should, "EVT-TOOLC-ERROR-MESSAGE": protocol.Should, "EVT-STREAM-HINT-COMPLETE": protocol.Should,
		"MSG-CLOSE-SHAPE": protocol.Should, "MSG-CAP-UNKNOWN": protocol.Info,
	}
	seen := map[string]bool{}
	counts := map[string]map[protocol.Level]int{"ENV": {}, "EVT": {}, "MSG": {}}
	for _, r := range aaep.New().Rules() {
		if seen[r.ID] {
			t.Errorf("rule %s is listed twice", r.ID)
		}
		seen[r.ID] = true
		if !singleRule(r.ID) {
			continue
		}
		lvl, ok := want[r.ID]
		if !ok {
			lvl = protocol.Must
		}
		if r.Level != lvl {
			t.Errorf("rule %s has level %s, the catalog says %s", r.ID, r.Level, lvl)
		}
		if len(r.Summary) < 20 || !strings.HasSuffix(r.Summary, ".") {
			t.Errorf("rule %s has a poor summary %q", r.ID, r.Summary)
		}
		counts[r.ID[:3]][r.Level]++
	}
	// Catalog §6: ENV 26/1/0, EVT 7/5/3, MSG 7/1/1 (MUST/SHOULD/INFO).
	for cat, w := range map[string][3]int{"ENV": {26, 1, 0}, "EVT": {7, 5, 3}, "MSG": {7, 1, 1}} {
		got := [3]int{counts[cat][protocol.Must], counts[cat][protocol.Should], counts[cat][protocol.Info]}
		if got != w {
			t.Errorf("%s rules by level (MUST, SHOULD, INFO) = %v, catalog says %v", cat, got, w)
		}
	}
}

// TestSampleStreamsClean runs realistic interleaved sessions: the valid
// ones produce no single-message finding in the lenient profile, and the
// broken session's missing critical urgency is found.
func TestSampleStreamsClean(t *testing.T) {
	for _, violations := range []bool{false, true} {
		msgs := sample.Stream(sample.Options{Sessions: 8, Seed: 7, Violations: violations})
		raws := make([][]byte, len(msgs))
		for i, m := range msgs {
			raws[i] = m.JSON
		}
		rep := run(t, "", "", raws...)
		var got []protocol.Finding
		for i := range raws {
			got = append(got, findingsAt(rep, int64(i))...)
		}
		if !violations {
			if len(got) > 0 {
				t.Errorf("valid sample stream has single-message findings:%s", describeFindings(got))
			}
			continue
		}
		ids := ruleIDs(got)
		if !slices.Equal(ids, []string{"EVT-URGENCY-CRITICAL"}) {
			t.Errorf("broken sample stream: single-message findings %v, want [EVT-URGENCY-CRITICAL]:%s", ids, describeFindings(got))
		}
		if rep.Stats.ByProtocol["aaep"] != int64(len(raws)) {
			t.Errorf("AAEP took %d of %d messages", rep.Stats.ByProtocol["aaep"], len(raws))
		}
	}
}

// TestStrictProfileSample: the compact sample leaves localization_hints out,
// which only the strict profile reports (ENV-LOCHINTS-PRESENT).
func TestStrictProfileSample(t *testing.T) {
	msgs := sample.Stream(sample.Options{Sessions: 4, Seed: 3, Compact: true})
	raws := make([][]byte, len(msgs))
	for i, m := range msgs {
		raws[i] = m.JSON
	}
	for _, profile := range []string{"lenient", "strict"} {
		rep := run(t, profile, "", raws...)
		n := 0
		for i := range raws {
			for _, f := range findingsAt(rep, int64(i)) {
				if f.RuleID == "ENV-LOCHINTS-PRESENT" {
					n++
				}
			}
		}
		if profile == "lenient" && n != 0 {
			t.Errorf("lenient profile reported ENV-LOCHINTS-PRESENT %d times", n)
		}
		if profile == "strict" && n == 0 {
			t.Errorf("strict profile did not report ENV-LOCHINTS-PRESENT on events without localization_hints")
		}
	}
}

// TestDisabledRules: a disabled rule is neither checked nor reported.
func TestDisabledRules(t *testing.T) {
	msg := event(aaep.TypeSessionStarted, set("custom_field", 1), set("event_id", "bad"))
	rep := report.New("t")
	eng, err := protocol.NewEngine([]protocol.Model{aaep.New()}, "", &protocol.Options{Disabled: []string{"ENV-FORBIDDEN-FIELDS"}}, protocol.StreamInfo{}, rep.Sink(nil))
	if err != nil {
		t.Fatal(err)
	}
	eng.Feed(&protocol.Message{Raw: msg})
	eng.Finish()
	if ids := ruleIDs(findingsAt(rep, 0)); !slices.Equal(ids, []string{"ENV-EVENT-ID-FORMAT"}) {
		t.Errorf("findings %v, want only ENV-EVENT-ID-FORMAT", ids)
	}
}

// TestRecognize checks which messages the model claims.
func TestRecognize(t *testing.T) {
	cases := []struct {
		raw  string
		want bool
	}{
		{`{"type":"aaep:agent.session.started"}`, true},
		{`{"type":"https://aaep-protocol.org/types/agent.tool.invoked"}`, true},
		{`{"type":"subscription.request"}`, true},
		{`{"type":"clarification.reply"}`, true},
		{`{"type":"subscription.pause"}`, true},
		{`{"type":"medai:patient.consulted","event_id":"evt_1"}`, true},
		{`{"type":"medai:patient.consulted","session_id":"sess_1"}`, true},
		{`{"performative":"PROPOSE","sessionId":"s1"}`, false},
		{`{"event":"agent_transition","run_id":"r1","ts":"2026-01-01T00:00:00Z"}`, false},
		{`{"type":"message"}`, false},
		{`{"@context":"https://aaep-protocol.org/context/v1","event_id":"42"}`, true},
		{`{"type":"x:y","@context":"https://aaep-protocol.org/context/v1"}`, true},
		{`{"type":"note","text":"see https://aaep-protocol.org/context/v1"}`, false},
		{`{}`, false},
	}
	m := aaep.New()
	for _, c := range cases {
		msg := &protocol.Message{Raw: []byte(c.raw)}
		rep := report.New("t")
		eng, _ := protocol.NewEngine([]protocol.Model{m}, "", nil, protocol.StreamInfo{}, rep.Sink(nil))
		eng.Feed(msg) // decodes msg.Doc the way the engine does
		if got := m.Recognize(msg); got != c.want {
			t.Errorf("Recognize(%s) = %v, want %v", c.raw, got, c.want)
		}
	}
}

// TestManifestIgnored: a producer manifest is AAEP but neither an event
// nor a handshake message, so no single-message rule applies.
func TestManifestIgnored(t *testing.T) {
	manifest := []byte(`{"@context":"https://aaep-protocol.org/context/v1","type":"aaep:producer.manifest","agent_id":"x","aaep_versions_supported":["1.0.0"]}`)
	rep := run(t, "", "", prelude, manifest)
	if got := findingsAt(rep, 1); len(got) > 0 {
		t.Errorf("manifest has findings:%s", describeFindings(got))
	}
}

// TestFindingSession: findings of an event are filed under its session_id.
func TestFindingSession(t *testing.T) {
	rep := run(t, "", "", prelude, event(aaep.TypeSessionStarted, set("session_id", "sess_abc"), set("custom", 1)))
	for _, s := range rep.Sessions() {
		for _, f := range s.Findings {
			if f.RuleID == "ENV-FORBIDDEN-FIELDS" && f.Session != "sess_abc" {
				t.Errorf("finding filed under session %q, want sess_abc", f.Session)
			}
		}
	}
}

// FuzzCheck feeds arbitrary bytes through the whole AAEP check, recognised
// and forced; it must never panic.
func FuzzCheck(f *testing.F) {
	for _, c := range allCases() {
		f.Add(c.msg)
	}
	for _, m := range sample.Stream(sample.Options{Sessions: 4, Seed: 1, Violations: true}) {
		f.Add(m.JSON)
	}
	f.Add([]byte(`{"type":"aaep:agent.session.started","extensions":{"a":{"b":[1,2,{"c":null}]}}}`))
	f.Add([]byte("\xef\xbb\xbf{}"))
	f.Add([]byte(`{"a":"\ud800"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, force := range []string{"", "aaep"} {
			rep := report.New("fuzz")
			eng, err := protocol.NewEngine([]protocol.Model{aaep.New()}, force, &protocol.Options{Profile: "strict"}, protocol.StreamInfo{}, rep.Sink(func(protocol.Step) {}))
			if err != nil {
				t.Fatal(err)
			}
			eng.Feed(&protocol.Message{Index: 0, Raw: prelude})
			eng.Feed(&protocol.Message{Index: 1, Raw: data})
			eng.Feed(&protocol.Message{Index: 2, Raw: data, Dir: protocol.ToProducer})
			eng.Finish()
			var buf bytes.Buffer
			if err := rep.WriteJSON(&buf, protocol.Must); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// BenchmarkCheckSingle measures the whole AAEP check (engine, decoding,
// single-message rules and the sequence checker) over realistic ~430-byte
// events, and reports events per second.
func BenchmarkCheckSingle(b *testing.B) {
	const pool = 20000
	events := sample.Events(pool, 42)
	var size int
	for _, e := range events {
		size += len(e)
	}
	newEngine := func() (*protocol.Engine, *report.Report) {
		rep := report.New("bench")
		eng, err := protocol.NewEngine([]protocol.Model{aaep.New()}, "", nil, protocol.StreamInfo{}, rep.Sink(nil))
		if err != nil {
			b.Fatal(err)
		}
		return eng, rep
	}
	eng, rep := newEngine()
	var msg protocol.Message
	b.SetBytes(int64(size / len(events)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := aaep.ProcessCPU()
	for i := 0; i < b.N; i++ {
		j := i % pool
		if j == 0 && i > 0 {
			b.StopTimer()
			eng.Finish()
			eng, rep = newEngine()
			b.StartTimer()
		}
		msg = protocol.Message{Index: int64(j), Offset: time.Duration(j) * time.Millisecond, Raw: events[j]}
		eng.Feed(&msg)
	}
	b.StopTimer()
	cpu := aaep.ProcessCPU() - cpu0
	eng.Finish()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	if cpu > 0 {
		// CPU time includes the few engine restarts (every 20000 events)
		// and the garbage collector's work on other threads.
		b.ReportMetric(float64(b.N)/cpu.Seconds(), "events/cpu-s")
	}
	if n := rep.Count(protocol.Must); n > 0 && b.N >= pool {
		b.Logf("%d MUST findings in the benchmark stream", n)
	}
}

// TestHostileInputs: huge lists and objects in every checked position are
// handled in linear time (a quadratic check would run for minutes) and
// reported, not crashed on.
func TestHostileInputs(t *testing.T) {
	const n = 50000
	list := make([]string, n)
	ctx := make([]string, n)
	ext := map[string]any{}
	for i := range list {
		list[i] = fmt.Sprintf("x-%d", i)
		ctx[i] = fmt.Sprintf("https://example.org/v%d", i)
		ext[fmt.Sprintf("p%d", i)] = map[string]any{}
	}
	ctx[0] = aaep.ContextV1
	choices := make([]map[string]string, n)
	for i := range choices {
		choices[i] = map[string]string{"value": list[i], "label": list[i]}
	}
	msgs := [][]byte{
		event(started, set("tools_available", list), set("localization_hints.available_languages", list), set("@context", ctx), set("extensions", ext)),
		event(clarify, set("choices", choices)),
		event(confirm, set("allowed_replies", list)),
		message(request, set("capabilities.event_filters.include", list), set("capabilities.languages", list), set("capabilities.supported_extensions", ctx)),
	}
	rep := run(t, "strict", "", msgs...)
	for i := range msgs {
		if len(findingsAt(rep, int64(i))) == 0 {
			t.Errorf("hostile message %d has no findings", i)
		}
	}
}

// The -update flag rewrites golden files. The sequence tests of this
// package's internal test files may define it too; it is registered once.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files under testdata/")
	}
}

func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// TestGoldenFindings writes every case's single-message findings (level,
// rule, short label, sentence) to testdata/single/findings.golden and
// compares: the wording of the findings is part of what users read.
func TestGoldenFindings(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Single-message findings of every rule case (go test -run TestGoldenFindings -update to rewrite).\n")
	for _, c := range allCases() {
		force := ""
		if c.force {
			force = "aaep"
		}
		rep := run(t, c.profile, force, prelude, c.msg)
		msg := string(c.msg)
		if len(msg) > 240 {
			msg = msg[:240] + "..."
		}
		fmt.Fprintf(&b, "\n## %s / %s", c.rule, c.name)
		if c.profile != "" {
			fmt.Fprintf(&b, " (%s)", c.profile)
		}
		fmt.Fprintf(&b, "\nmessage: %s\n", strconv.Quote(msg))
		for _, f := range findingsAt(rep, 1) {
			fmt.Fprintf(&b, "%s %s [%s] %s\n", f.Level, f.RuleID, f.Short, f.Message)
		}
	}
	path := filepath.Join("testdata", "single", "findings.golden")
	if updating() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got := b.String(); got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) && i < len(wl); i++ {
			if gl[i] != wl[i] {
				t.Fatalf("findings differ from %s at line %d:\ngot:  %s\nwant: %s\n(run with -update if the change is intended)", path, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("findings differ from %s in length: %d lines, want %d (run with -update if intended)", path, len(gl), len(wl))
	}
}
