package protocoltest_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/kahn"
	"github.com/aaep-tools/aaepkit/protocol/protocoltest"
)

// fakeTB records what a helper reports; Fatal and Fatalf stop the helper
// like the real ones do (here by a panic that capture recovers).
type fakeTB struct {
	testing.TB
	msgs  []string
	fatal bool
}

var errStop = errors.New("stop")

func (f *fakeTB) Helper()                        {}
func (f *fakeTB) Errorf(format string, a ...any) { f.msgs = append(f.msgs, fmt.Sprintf(format, a...)) }
func (f *fakeTB) Fatalf(format string, a ...any) {
	f.Errorf(format, a...)
	f.fatal = true
	panic(errStop)
}
func (f *fakeTB) Fatal(a ...any) { f.Fatalf("%s", fmt.Sprint(a...)) }

// capture runs fn with a fakeTB and returns what it reported.
func capture(fn func(tb testing.TB)) (msgs string, fatal bool) {
	f := &fakeTB{}
	func() {
		defer func() {
			if r := recover(); r != nil && r != errStop {
				panic(r)
			}
		}()
		fn(f)
	}()
	return strings.Join(f.msgs, "\n"), f.fatal
}

const (
	start = `{"ts":"2026-05-05T09:00:00.000Z","run_id":"r1","event":"agent_run_start","agent_id":"a","task":"t"}`
	bad   = `{"ts":"2026-05-05T09:00:01.000Z","run_id":"r1","event":"agent_transition","agent_id":"a","step":0,"from":"thinking","to":"response"}`
	end   = `{"ts":"2026-05-05T09:00:02.000Z","run_id":"r1","event":"agent_run_end","agent_id":"a","outcome":"aborted","total_steps":1,"total_tool_calls":0,"total_audit_checkpoints":0,"audits_passed":0,"audits_failed":0,"total_duration_s":2}`
)

func TestRunAndResult(t *testing.T) {
	r := protocoltest.Run(t, []protocol.Model{kahn.New()}, "", "", []string{start, bad, `{"hello":"world"}`, end})
	if got := strings.Join(r.Rules(), " "); got != "KA-S02 STREAM-UNKNOWN-PROTOCOL" {
		t.Errorf("Rules() = %s", got)
	}
	if !r.Has("KA-S02") || r.Has("KA-S01") || r.Count("KA-S02") != 1 || r.Count("KA-S01") != 0 {
		t.Errorf("Has/Count disagree with %v", r.Rules())
	}
	if len(r.Steps) != 3 || r.Steps[1].Index != 1 || r.Steps[1].Offset != 100*time.Millisecond || r.Steps[2].Offset != 300*time.Millisecond {
		t.Errorf("steps %+v, want one a KAHN line at i×100 ms", r.Steps)
	}
	if len(r.Sessions) != 1 || r.Sessions[0].Session != "r1/a" || !r.Sessions[0].Complete {
		t.Errorf("sessions %+v", r.Sessions)
	}
	if r.Stats.Messages != 4 || r.Stats.ByProtocol["kahn"] != 3 {
		t.Errorf("stats %+v", r.Stats)
	}
	d := r.Dump()
	for _, want := range []string{"MUST KA-S02 #1 [r1/a]: ", "step #1 r1/a thinking → response agent_transition"} {
		if !strings.Contains(d, want) {
			t.Errorf("Dump lacks %q:\n%s", want, d)
		}
	}
	// A strict run, forced: the unknown line becomes a KAHN finding.
	if r := protocoltest.Run(t, []protocol.Model{kahn.New()}, "kahn", "strict", []string{`{"hello":"world"}`}); !r.Has("KA-B01") {
		t.Errorf("forced run: %v", r.Rules())
	}
}

func TestRecognizeAndHandle(t *testing.T) {
	if !protocoltest.Recognize(t, kahn.New(), start) {
		t.Error("a KAHN start is not recognised")
	}
	if protocoltest.Recognize(t, kahn.New(), `{"type":"aaep:agent.session.started","session_id":"s"}`) {
		t.Error("an AAEP event is recognised as KAHN")
	}
	// Handle must fill the routing fields: without them the checker would
	// take the lines for non-objects and open no session.
	rep := &protocoltest.SessionCounter{}
	c := kahn.New().NewChecker(rep, nil)
	protocoltest.Handle(c, 0, start)
	protocoltest.Handle(c, 1, end)
	if rep.Done != 1 {
		t.Errorf("%d sessions done, want 1", rep.Done)
	}
}

func TestCheckCoverage(t *testing.T) {
	rules := []protocol.Rule{
		{ID: "R-1", Level: protocol.Must, Party: protocol.Producer, Summary: "one"},
		{ID: "R-2", Level: protocol.Should, Party: protocol.Subscriber, Summary: "two"},
	}
	fail := func() []string { return nil }
	stream := func() []*protocol.Message { return nil }
	both := protocoltest.NeedFailing | protocoltest.NeedPassing
	cases := []struct {
		name  string
		rules []protocol.Rule
		cases []protocoltest.RuleCase
		need  protocoltest.Coverage
		want  []string // substrings of the report; none: clean
	}{
		{"covered", rules, []protocoltest.RuleCase{{Rule: "R-1", Fail: fail}, {Rule: "R-2", Fail: fail}}, protocoltest.NeedFailing, nil},
		{"uncovered", rules, []protocoltest.RuleCase{{Rule: "R-1", Fail: fail}}, protocoltest.NeedFailing, []string{"rule R-2 has no failing stream"}},
		{"a case without a stream covers nothing", rules, []protocoltest.RuleCase{{Rule: "R-1", Fail: fail}, {Rule: "R-2"}}, protocoltest.NeedFailing, []string{"rule R-2 has no failing stream"}},
		{"unknown rule", rules, []protocoltest.RuleCase{{Rule: "R-1"}, {Rule: "R-2"}, {Rule: "R-3", Name: "x"}}, protocoltest.NeedFailing, []string{"case R-3/x names R-3"}},
		{"no summary", []protocol.Rule{{ID: "R-1", Level: protocol.Must, Party: protocol.Producer}}, []protocoltest.RuleCase{{Rule: "R-1", Fail: fail}}, protocoltest.NeedFailing, []string{"rule R-1 lacks a summary, a level or a party"}},
		{"no level", []protocol.Rule{{ID: "R-1", Party: protocol.Producer, Summary: "s"}}, []protocoltest.RuleCase{{Rule: "R-1", Fail: fail}}, protocoltest.NeedFailing, []string{"rule R-1 lacks a summary, a level or a party"}},
		{"no party", []protocol.Rule{{ID: "R-1", Level: protocol.Must, Summary: "s"}}, []protocoltest.RuleCase{{Rule: "R-1", Fail: fail}}, protocoltest.NeedFailing, []string{"rule R-1 lacks a summary, a level or a party"}},
		{"listed twice", append(rules, rules[0]), []protocoltest.RuleCase{{Rule: "R-1", Fail: fail}, {Rule: "R-2", Fail: fail}}, protocoltest.NeedFailing, []string{"rule R-1 is listed twice"}},
		{"pairs cover both", rules, []protocoltest.RuleCase{{Rule: "R-1", Fail: fail, Pass: fail}, {Rule: "R-2", Fail: fail, Pass: fail}}, both, nil},
		{"no passing stream", rules, []protocoltest.RuleCase{{Rule: "R-1", Fail: fail, Pass: fail}, {Rule: "R-2", Fail: fail}}, both, []string{"rule R-2 has no passing stream"}},
		{"streams: Want fails its rules, passes Rule when it lacks it", rules, []protocoltest.RuleCase{
			{Rule: "R-1", Stream: stream, Want: []string{"R-1", "R-2"}}, {Rule: "R-1", Stream: stream}, {Rule: "R-2", Stream: stream, Want: []string{"R-1"}}}, both, nil},
		{"streams: another rule's finding is no passing case", rules, []protocoltest.RuleCase{
			{Rule: "R-1", Stream: stream, Want: []string{"R-1", "R-2"}}, {Rule: "R-1", Stream: stream}}, both, []string{"rule R-2 has no passing stream"}},
		{"a strict-only rule broken in the lenient profile", []protocol.Rule{{ID: "R-1", Level: protocol.Must, Party: protocol.Producer, Summary: "one", Profiles: protocol.Profiles{Lenient: protocol.NotChecked, Strict: "reported"}}},
			[]protocoltest.RuleCase{{Rule: "R-1", Name: "x", Fail: fail}, {Rule: "R-1", Name: "y", Profile: "strict", Fail: fail}}, protocoltest.NeedFailing, []string{"case R-1/x breaks R-1 in the lenient profile, but the rule is checked in the strict profile only"}},
		{"a lenient-only rule broken in the strict profile", []protocol.Rule{{ID: "R-1", Level: protocol.Must, Party: protocol.Producer, Summary: "one", Profiles: protocol.Profiles{Lenient: "reported", Strict: protocol.NotChecked + ": R-2 instead"}}},
			[]protocoltest.RuleCase{{Rule: "R-1", Name: "x", Stream: stream, Profile: "strict", Want: []string{"R-1"}}}, protocoltest.NeedFailing, []string{"case R-1/x breaks R-1 in the strict profile, but the rule is checked in the lenient profile only"}},
		{"streams: Want names an unknown rule", rules, []protocoltest.RuleCase{
			{Rule: "R-1", Name: "x", Stream: stream, Want: []string{"R-1", "R-2", "R-9"}}, {Rule: "R-1", Stream: stream}}, protocoltest.NeedFailing, []string{"case R-1/x expects R-9"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msgs, _ := capture(func(tb testing.TB) { protocoltest.CheckCoverage(tb, tc.rules, tc.cases, tc.need) })
			if len(tc.want) == 0 && msgs != "" {
				t.Errorf("unexpected report: %s", msgs)
			}
			for _, w := range tc.want {
				if !strings.Contains(msgs, w) {
					t.Errorf("report %q lacks %q", msgs, w)
				}
			}
		})
	}
}

func TestCheckMachine(t *testing.T) {
	states := []protocol.State{{Name: "a", Kind: protocol.StateInitial}, {Name: "b", Kind: protocol.StateTerminal}}
	cases := []struct {
		name string
		tr   []protocol.Transition
		want string // substring of the report; "": clean
	}{
		{"clean", []protocol.Transition{{From: "a", To: "b", Label: "go"}, {From: "b", To: "b", Label: "stay"}}, ""},
		{"unknown from", []protocol.Transition{{From: "x", To: "b", Label: "go"}}, `transition from unknown state "x"`},
		{"unknown to", []protocol.Transition{{From: "a", To: "y", Label: "go"}}, `transition to unknown state "y"`},
		{"no label", []protocol.Transition{{From: "a", To: "b"}}, "transition a→b has no label"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var kinds map[string]protocol.StateKind
			msgs, _ := capture(func(tb testing.TB) {
				kinds = protocoltest.CheckMachine(tb, protocol.Machine{States: states, Transitions: tc.tr})
			})
			if (tc.want == "") != (msgs == "") || !strings.Contains(msgs, tc.want) {
				t.Errorf("report %q, want %q", msgs, tc.want)
			}
			if len(kinds) != 2 || kinds["a"] != protocol.StateInitial || kinds["b"] != protocol.StateTerminal {
				t.Errorf("kinds %v", kinds)
			}
		})
	}
}

func TestGolden(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.golden")
	if err := os.WriteFile(path, []byte("a\nb\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		path   string
		got    string
		update bool
		want   string // substring of the fatal report; "": passes
	}{
		{"equal", path, "a\nb\nc\n", false, ""},
		{"line differs", path, "a\nB\nc\n", false, "x.golden differs at line 2:\n got: B\nwant: b"},
		{"longer", path, "a\nb\nc\nd\n", false, "differs at line 4:\n got: d\nwant: \n"},
		{"shorter", path, "a\n", false, "differs at line 2:\n got: \nwant: b"},
		{"missing", filepath.Join(dir, "none.golden"), "a\n", false, "run go test -update to create it"},
		{"update writes", filepath.Join(dir, "new.golden"), "n\n", true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msgs, fatal := capture(func(tb testing.TB) { protocoltest.Golden(tb, tc.path, []byte(tc.got), tc.update) })
			if tc.want == "" && (fatal || msgs != "") {
				t.Fatalf("unexpected failure: %s", msgs)
			}
			if tc.want != "" && (!fatal || !strings.Contains(msgs, tc.want)) {
				t.Fatalf("report %q (fatal %v), want one with %q", msgs, fatal, tc.want)
			}
			if tc.update {
				if b, err := os.ReadFile(tc.path); err != nil || string(b) != tc.got {
					t.Fatalf("update wrote %q, %v", b, err)
				}
				if msgs, fatal := capture(func(tb testing.TB) { protocoltest.Golden(tb, tc.path, []byte(tc.got), false) }); fatal {
					t.Fatalf("the written golden does not compare equal: %s", msgs)
				}
			}
		})
	}
}

func TestGoldenResult(t *testing.T) {
	prefix := filepath.Join(t.TempDir(), "run")
	r := protocoltest.Run(t, []protocol.Model{kahn.New()}, "", "", []string{start, bad, end})
	protocoltest.GoldenResult(t, prefix, r, true)
	for _, part := range []struct {
		suffix string
		lines  int
	}{{".steps.golden", 3}, {".findings.golden", 1}, {".sessions.golden", 1}} {
		b, err := os.ReadFile(prefix + part.suffix)
		if err != nil || strings.Count(string(b), "\n") != part.lines {
			t.Errorf("%s: %d lines, %v; want %d", part.suffix, strings.Count(string(b), "\n"), err, part.lines)
		}
	}
	protocoltest.GoldenResult(t, prefix, r, false)
	r.Findings = nil
	msgs, fatal := capture(func(tb testing.TB) { protocoltest.GoldenResult(tb, prefix, r, false) })
	if !fatal || !strings.Contains(msgs, "run.findings.golden differs at line 1") {
		t.Errorf("changed findings: %q (fatal %v)", msgs, fatal)
	}
}

func TestFixture(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.jsonl")
	long := `{"s":"` + strings.Repeat("x", 200<<10) + `"}` // longer than bufio's default token
	gen := []string{`{"a":1}`, long}
	got := protocoltest.Fixture(t, path, gen, true)
	if len(got) != 2 || got[1] != long {
		t.Fatalf("Fixture returned %d lines", len(got))
	}
	if b, _ := os.ReadFile(path); string(b) != gen[0]+"\n"+long+"\n" {
		t.Error("the fixture file is not the generator's lines, one a line")
	}
	msgs, fatal := capture(func(tb testing.TB) { protocoltest.Fixture(tb, path, []string{`{"a":2}`}, false) })
	if !fatal || !strings.Contains(msgs, "f.jsonl is out of date with its generator") {
		t.Errorf("stale fixture: %q (fatal %v)", msgs, fatal)
	}
	msgs, fatal = capture(func(tb testing.TB) { protocoltest.ReadLines(tb, filepath.Join(dir, "none.jsonl")) })
	if !fatal || !strings.Contains(msgs, "run go test -update to create it") {
		t.Errorf("missing fixture: %q (fatal %v)", msgs, fatal)
	}
}

func TestJSONLines(t *testing.T) {
	got := protocoltest.JSONLines(t, []protocol.Step{{Protocol: "p", Session: "s", From: "a", To: "b", Kind: protocol.StepState}})
	want := `{"protocol":"p","session":"s","index":0,"offset_ns":0,"from":"a","to":"b","label":"","kind":"state"}` + "\n"
	if string(got) != want {
		t.Errorf("JSONLines = %s, want %s", got, want)
	}
	if got := protocoltest.JSONLines[int](t, nil); len(got) != 0 {
		t.Errorf("no items: %q", got)
	}
	msgs, fatal := capture(func(tb testing.TB) { protocoltest.JSONLines(tb, []any{make(chan int)}) })
	if !fatal || !strings.Contains(msgs, "unsupported type") {
		t.Errorf("unencodable item: %q (fatal %v)", msgs, fatal)
	}
}

// pairs is an ordered object for MarshalObject: key, value, key, value, ….
type pairs []any

func (p pairs) MarshalJSON() ([]byte, error) {
	return protocoltest.MarshalObject(len(p)/2, func(i int) (string, any) { return p[2*i].(string), p[2*i+1] })
}

func TestMarshalObject(t *testing.T) {
	cases := []struct {
		name string
		in   pairs
		want string
	}{
		{"empty", pairs{}, `{}`},
		{"order kept", pairs{"z", 1, "a", "x", "m", nil}, `{"z":1,"a":"x","m":null}`},
		{"nested", pairs{"o", pairs{"b", true, "a", []int{1}}}, `{"o":{"b":true,"a":[1]}}`},
		{"key escaped", pairs{`q"<`, 0}, `{"q\"\u003c":0}`},
	}
	for _, tc := range cases {
		b, err := tc.in.MarshalJSON()
		if err != nil || string(b) != tc.want {
			t.Errorf("%s: %s, %v; want %s", tc.name, b, err, tc.want)
		}
	}
	if _, err := (pairs{"c", make(chan int)}).MarshalJSON(); err == nil {
		t.Error("an unencodable value gave no error")
	}
}
