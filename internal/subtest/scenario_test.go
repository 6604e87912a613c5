package subtest

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const fullScenario = `# every key of the schema
name: refund-check
level: 2
sections: ["§6.3", "§9.4.2(4)"]
description: A refund the user rejects.
user: Reject the refund.
decisions:
  - {token: rpl_abc, decision: reject, delay: 300ms}
  - {token: rpl_q, response: roll_in}
  - {action: renegotiate, after: evt_a10000, capabilities: {preferred_verbosity: terse}, delay: 1s}
  - {action: shutdown, after: evt_a10003}
capture: refund.jsonl
speed: 2
keepalive: 2s
linger: 1s
reject: rate_limit
honor_max_events_per_second: 2
faults:
  - {cut: 3}
  - {pause: 40s, after: 5}
  - {redeliver: 4}
  - {slow: 0.2, after: 2}
expect:
  - reply: {token: rpl_abc, decision: reject, within: 5s}
  - reply: {token: rpl_q, response: roll_in, once: true}
  - no_reply: {token: rpl_abc}
  - no_reply:
  - request: {capabilities: {supports_confirmation_reply: true}, transport: sse}
  - sends: {type: subscription.renegotiate, fields: {capabilities: {preferred_verbosity: terse}}}
  - stays_connected: {}
  - resumes: {within: 3s}
    required: true
  - reply: {token: rpl_abc}
    required: false
`

func TestParseEveryKey(t *testing.T) {
	sc, err := Parse("refund.yaml", []byte(fullScenario))
	if err != nil {
		t.Fatal(err)
	}
	if sc.Name != "refund-check" || sc.Level != 2 || strings.Join(sc.Sections, " ") != "§6.3 §9.4.2(4)" ||
		sc.Description != "A refund the user rejects." || sc.User != "Reject the refund." || sc.Capture != "refund.jsonl" ||
		sc.Speed != 2 || sc.Keepalive != 2*time.Second || sc.Linger != time.Second || sc.Reject != "rate_limit" || sc.HonorMaxRate != 2 {
		t.Errorf("scenario %+v", sc)
	}
	if d := sc.Decisions; len(d) != 4 || d[0].Action != ActionReply || d[0].Token != "rpl_abc" || d[0].Decision != "reject" || d[0].Delay != 300*time.Millisecond ||
		d[0].Line != 8 || d[1].Action != ActionReply || d[1].Token != "rpl_q" || string(d[1].Response) != `"roll_in"` ||
		d[2].Action != ActionRenegotiate || d[2].After != "evt_a10000" || string(d[2].Capabilities) != `{"preferred_verbosity":"terse"}` || d[2].Delay != time.Second ||
		d[3].Action != ActionShutdown || d[3].After != "evt_a10003" {
		t.Errorf("decisions %+v", sc.Decisions)
	}
	wantFaults := []Fault{
		{Kind: FaultCut, After: 3, Line: 19},
		{Kind: FaultPause, After: 5, For: 40 * time.Second, Line: 20},
		{Kind: FaultRedeliver, After: 4, Line: 21},
		{Kind: FaultSlow, After: 2, Speed: 0.2, Line: 22},
	}
	if len(sc.Faults) != len(wantFaults) {
		t.Fatalf("faults %+v", sc.Faults)
	}
	for i, f := range wantFaults {
		if sc.Faults[i] != f {
			t.Errorf("fault %d: %+v, want %+v", i, sc.Faults[i], f)
		}
	}
	type want struct {
		name     string
		required bool
		line     int
	}
	wants := []want{
		{"reply rpl_abc decision=reject within 5s", true, 24},
		{`reply rpl_q response="roll_in" within 30s once`, true, 25},
		{"no_reply rpl_abc", true, 26},
		{"no_reply at all", true, 27},
		{`request over sse capabilities={"supports_confirmation_reply":true}`, true, 28},
		{`sends subscription.renegotiate capabilities={"preferred_verbosity":"terse"}`, true, 29},
		{"stays_connected", false, 30},
		{"resumes within 3s", true, 31},
		{"reply rpl_abc within 30s", false, 33},
	}
	if len(sc.Expect) != len(wants) {
		t.Fatalf("%d expectations, want %d", len(sc.Expect), len(wants))
	}
	for i, w := range wants {
		e := sc.Expect[i]
		if e.Name() != w.name || e.Required != w.required || e.Line != w.line {
			t.Errorf("expectation %d: %q required=%v line %d, want %q %v %d", i, e.Name(), e.Required, e.Line, w.name, w.required, w.line)
		}
	}
}

// TestParseErrors: every mistake names the file and line and says what
// is wanted; none panics.
func TestParseErrors(t *testing.T) {
	const head = "level: 2\nexpect:\n  - no_reply: {}\n"
	cases := []struct{ name, src, err string }{
		{"not YAML", "level: [2\n", "s.yaml:1: not valid YAML: did not find expected ',' or ']'"},
		{"empty", "", "s.yaml: empty scenario file"},
		{"not a mapping", "- 1\n", "s.yaml:1: scenario: want a mapping (key: value), got a list"},
		{"unknown key", head + "colour: blue\n", `s.yaml:4: scenario: unknown key "colour" (known: name, level, sections, description, user, decisions, capture, speed, no_delay, keepalive, linger, reject, honor_max_events_per_second, faults, expect)`},
		{"key twice", head + "level: 3\n", "s.yaml:4: scenario: level given twice"},
		{"no level", "expect:\n  - no_reply: {}\n", "s.yaml:1: no level: say which conformance level the scenario tests (level: 1, 2 or 3)"},
		{"level out of range", "level: 4\nexpect:\n  - no_reply: {}\n", "s.yaml:1: level: want 1, 2 or 3, got 4"},
		{"level not a number", "level: two\nexpect:\n  - no_reply: {}\n", `s.yaml:1: level: want a whole number from 1, got "two"`},
		{"no expectations", "level: 1\n", "s.yaml:1: no expectations: list what the subscriber must do under expect:"},
		{"bad name", head + "name: a b\n", `s.yaml:4: name: "a b": use letters, digits and - only`},
		{"speed too high", head + "speed: 5000\n", `s.yaml:4: speed: want a number from 0.01 to 1000, got "5000"`},
		{"bad duration", head + "linger: soon\n", `s.yaml:4: linger: want a positive duration such as 30s or 500ms, got "soon"`},
		{"keepalive too short", head + "keepalive: 200ms\n", "s.yaml:4: keepalive: 200ms is under the 1s serve allows"},
		{"no_delay not bool", head + "no_delay: sometimes\n", `s.yaml:4: no_delay: want true or false, got "sometimes"`},
		{"unknown reason", head + "reject: nope\n", `s.yaml:4: reject: "nope" is not a subscription.rejected reason code (version_unsupported, manifest_signature_required, capabilities_incompatible, rate_limit, authentication_required, authorization_denied, transport_unavailable, unknown)`},
		{"sections not a list", head + "sections: §6\n", `s.yaml:4: sections: want a list of sections such as ["§6.4"], got "§6"`},
		{"unknown expectation", "level: 2\nexpect:\n  - reboots: {}\n", `s.yaml:3: expectation: unknown key "reboots" (known: reply, no_reply, request, sends, stays_connected, resumes, announce, required)`},
		{"two kinds in one item", "level: 2\nexpect:\n  - {reply: {token: rpl_a}, no_reply: {}}\n", "s.yaml:3: expectation: one of reply, no_reply, request, sends, stays_connected, resumes, announce per item (reply and no_reply given)"},
		{"required alone", "level: 2\nexpect:\n  - required: true\n", "s.yaml:3: expectation: say which (reply, no_reply, request, sends, stays_connected, resumes, announce)"},
		{"reply without token", "level: 2\nexpect:\n  - reply: {decision: reject}\n", "s.yaml:3: reply: say which reply_token (token: rpl_...)"},
		{"token without rpl_", "level: 2\nexpect:\n  - reply: {token: abc}\n", `s.yaml:3: reply.token: a reply_token starts with rpl_ (§6.2.1), got "abc"`},
		{"bad decision", "level: 2\nexpect:\n  - reply: {token: rpl_a, decision: maybe}\n", `s.yaml:3: reply.decision: want accept or reject, got "maybe"`},
		{"decision and response", "level: 2\nexpect:\n  - reply: {token: rpl_a, decision: reject, response: x}\n", "s.yaml:3: reply: a decision (confirmation) or a response (clarification), not both"},
		{"unknown reply key", "level: 2\nexpect:\n  - reply:\n      token: rpl_a\n      colour: red\n", `s.yaml:5: reply: unknown key "colour" (known: token, decision, response, within, once)`},
		{"sends without type", "level: 2\nexpect:\n  - sends: {fields: {a: 1}}\n", "s.yaml:3: sends: say which message type (type: subscription.renegotiate, ...)"},
		{"bad transport", "level: 3\nexpect:\n  - request: {transport: carrier-pigeon}\n", `s.yaml:3: request.transport: want sse, websocket or grpc, got "carrier-pigeon"`},
		{"capabilities not a mapping", "level: 3\nexpect:\n  - request: {capabilities: 3}\n", `s.yaml:3: request.capabilities: want a mapping of capabilities, got "3"`},
		{"required not bool", "level: 2\nexpect:\n  - no_reply: {}\n    required: yes please\n", `s.yaml:4: required: want true or false, got "yes please"`},
		{"stays_connected takes nothing", "level: 1\nexpect:\n  - stays_connected: {through: 40s}\n", `s.yaml:3: stays_connected: unknown key "through" (known: )`},
		{"fault without kind", head + "faults:\n  - {after: 3}\n", "s.yaml:5: fault: say which (cut, pause, redeliver, slow)"},
		{"pause without after", head + "faults:\n  - {pause: 40s}\n", "s.yaml:5: fault pause: say after which event (after: N, counting events from 1)"},
		{"cut at zero", head + "faults:\n  - {cut: 0}\n", `s.yaml:5: cut (the event after which to cut): want a whole number from 1, got "0"`},
		{"slow too fast", head + "faults:\n  - {slow: 2, after: 1}\n", `s.yaml:5: slow (a speed factor): want a number from 0.01 to 1, got "2"`},
		{"two faults in one item", head + "faults:\n  - {cut: 1, redeliver: 2}\n", "s.yaml:5: fault: one of cut, pause, redeliver, slow per item (cut and redeliver given)"},
		{"decision without token", head + "decisions:\n  - {decision: reject}\n", "s.yaml:5: decision: say which prompt (token: rpl_...)"},
		{"unknown action", head + "decisions:\n  - {action: dance, after: evt_1}\n", `s.yaml:5: decisions.action: want reply, renegotiate or shutdown, got "dance"`},
		{"renegotiate without after", head + "decisions:\n  - {action: renegotiate, capabilities: {preferred_verbosity: terse}}\n", "s.yaml:5: decision: say after which event the user does it (after: evt_...)"},
		{"renegotiate without capabilities", head + "decisions:\n  - {action: renegotiate, after: evt_1}\n", "s.yaml:5: decision: say what the renegotiation asks for (capabilities: {...})"},
		{"shutdown with a token", head + "decisions:\n  - {action: shutdown, after: evt_1, token: rpl_a}\n", "s.yaml:5: decision: a shutdown acts after an event (after: evt_...), on no prompt: no token, decision or response"},
		{"capabilities not an object", head + "decisions:\n  - {action: renegotiate, after: evt_1, capabilities: terse}\n", "s.yaml:5: decisions.capabilities: want a capabilities object (§5.3)"},
		{"honoured rate not positive", head + "honor_max_events_per_second: 0\n", `s.yaml:4: honor_max_events_per_second: want a whole number from 1, got "0"`},
		{"faults not a list", head + "faults: {cut: 1}\n", "s.yaml:4: faults: want a list, got a mapping"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("s.yaml", []byte(tc.src))
			if err == nil {
				t.Fatalf("no error, want %q", tc.err)
			}
			var se *ScenarioError
			if !errors.As(err, &se) {
				t.Errorf("error %T, want *ScenarioError", err)
			}
			if err.Error() != tc.err {
				t.Errorf("error\n\t%s\nwant\n\t%s", err, tc.err)
			}
		})
	}
}

func TestLoadResolvesTheCapture(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("c.jsonl", "{}\n")
	sc, err := Load(write("ok.scenario.yaml", "level: 1\ncapture: c.jsonl\nexpect:\n  - no_reply: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if sc.Name != "ok" || sc.Capture != filepath.Join(dir, "c.jsonl") {
		t.Errorf("name %q capture %q", sc.Name, sc.Capture)
	}
	_, err = Load(write("missing.yaml", "level: 1\nexpect:\n  - no_reply: {}\ncapture: gone.jsonl\n"))
	want := filepath.Join(dir, "missing.yaml") + ":4: capture: stat " + filepath.Join(dir, "gone.jsonl") + ": no such file or directory"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
	_, err = Load(write("none.yaml", "level: 1\nexpect:\n  - no_reply: {}\n"))
	if want := filepath.Join(dir, "none.yaml") + ": no capture: name the capture to play (capture: FILE)"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

// TestBuiltinsAreWhole: every built-in names its level, sections and
// scripted user, has expectations, and its tokens are the capture's.
func TestBuiltinsAreWhole(t *testing.T) {
	names := map[string]bool{}
	levels := map[int]int{}
	for _, sc := range Builtins() {
		if names[sc.Name] {
			t.Errorf("two built-ins named %s", sc.Name)
		}
		names[sc.Name] = true
		levels[sc.Level]++
		if sc.Level < 1 || sc.Level > 3 || len(sc.Sections) == 0 || sc.User == "" || sc.Description == "" || len(sc.Expect) == 0 {
			t.Errorf("%s: incomplete: %+v", sc.Name, sc)
		}
		tokens := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(string(sc.jsonl)), "\n") {
			var ev struct {
				Token string `json:"reply_token"`
			}
			if err := json.Unmarshal([]byte(line), &ev); err != nil && sc.Name != "malformed-event" {
				t.Errorf("%s: capture line %q: %v (only malformed-event has a malformed line)", sc.Name, line, err)
			}
			if ev.Token != "" {
				tokens[ev.Token] = true
			}
		}
		for _, e := range sc.Expect {
			if e.Token != "" && !tokens[e.Token] {
				t.Errorf("%s: expectation %s names a token the capture does not carry", sc.Name, e.Name())
			}
		}
		for _, d := range sc.Decisions {
			if d.Action == ActionReply && !tokens[d.Token] {
				t.Errorf("%s: decision for %s, a token the capture does not carry", sc.Name, d.Token)
			}
		}
	}
	if levels[1] < 4 || levels[2] < 5 || levels[3] < 4 {
		t.Errorf("built-ins per level %v, want at least 4, 5 and 4", levels)
	}
	if _, err := Builtin("confirmation-default-reject"); err != nil {
		t.Error(err)
	}
	if _, err := Builtin("nope"); !errors.Is(err, errNoScenario) || !strings.Contains(err.Error(), "confirmation-default-reject") {
		t.Errorf("Builtin(nope) = %v", err)
	}
}
