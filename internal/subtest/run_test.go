package subtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/testdeps"
)

// runTimeout bounds every run of a test (attach, play, linger, analysis).
const runTimeout = 60 * time.Second

// attachBound is how long a run of a test waits for its subscriber to
// attach, unless the test sets Options.AttachTimeout.
const attachBound = 40 * time.Second

// subPy is the scripted SSE subscriber (testdata/sub.py).
func subPy(t *testing.T, mode string) string {
	t.Helper()
	testdeps.Command(t, "python3", "python3")
	abs, err := filepath.Abs(filepath.Join("testdata", "sub.py"))
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("python3 %s {url} %s", abs, mode)
}

// run plays sc with o, keeping the recording in the test's directory.
func run(t *testing.T, sc *Scenario, o Options) (*Result, *exchange) {
	t.Helper()
	// Its turn first (main_test.go): the time bound below is the run's.
	defer turns.take(expectedLength(sc))()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	dir := t.TempDir()
	o.Record = func(sc *Scenario, _ string, h capfile.Header) (Recorder, error) {
		return createRecording(filepath.Join(dir, sc.Name+".aaep"), h)
	}
	var out strings.Builder
	if o.Output == nil {
		o.Output = &lockedWriter{b: &out}
	}
	if o.AttachTimeout == 0 {
		// A bound on a subscriber that never comes, not a figure: a
		// Python subscriber started beside the race-checked suite on a
		// loaded machine took longer than the default 10 s to attach.
		o.AttachTimeout = attachBound
	}
	res, err := Run(ctx, sc, o)
	if err != nil {
		t.Fatalf("%s: %v", sc.Name, err)
	}
	if res.NotRun != "" || res.Record == "" {
		return res, nil
	}
	x, err := readExchange(res.Record)
	if err != nil {
		t.Fatal(err)
	}
	return res, x
}

func builtinT(t *testing.T, name string) *Scenario {
	t.Helper()
	sc, err := Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// outcome returns the result's verdict on the expectation of kind k.
func outcome(t *testing.T, r *Result, k ExpectKind) Outcome {
	t.Helper()
	for _, o := range r.Outcomes {
		if o.Kind == k {
			return o
		}
	}
	t.Fatalf("%s: no %s expectation in %+v", r.Name, k, r.Outcomes)
	return Outcome{}
}

func ruleIDs(r *Result) string {
	var ids []string
	for _, f := range r.Findings {
		ids = append(ids, f.Level.String()+" "+f.RuleID)
	}
	return strings.Join(ids, ", ")
}

// TestScriptedSSESubscriber plays built-in scenarios to the scripted SSE
// subscriber: behaving, it passes every one; each misbehaviour breaks the
// expectation (or the rule) it should, with a message that says how.
func TestScriptedSSESubscriber(t *testing.T) {
	t.Parallel()
	cases := []struct {
		scenario, mode string
		profile        string
		pass           bool
		// fails is the expectation that fails; rules the findings made
		// (level and rule id, in order), and msg a part of the failure's
		// message.
		fails, alsoFails ExpectKind
		rules            string
		msg              string
		// notApplicable is the start of the reason it is not applicable.
		notApplicable string
	}{
		{scenario: "unknown-event-type", mode: "good", pass: true},
		{scenario: "unknown-extensions", mode: "good", pass: true},
		{scenario: "critical-urgency", mode: "good", pass: true},
		{scenario: "terminal-events", mode: "good", pass: true},
		{scenario: "confirmation-reject", mode: "good", pass: true},
		{scenario: "confirmation-default-reject", mode: "good", pass: true},
		{scenario: "confirmation-unanswered", mode: "good", pass: true},
		{scenario: "clarification", mode: "good", pass: true},
		{scenario: "confirmation-withdrawn", mode: "good", pass: true},
		{scenario: "cancelled-while-waiting", mode: "good", pass: true},
		{scenario: "handshake-sse", mode: "good", pass: true},
		{scenario: "subscription-rejected", mode: "good", pass: true},
		{scenario: "renegotiation", mode: "good", pass: true},
		{scenario: "reconnect", mode: "good", pass: true},
		{scenario: "redelivery", mode: "good", pass: true},
		{scenario: "malformed-event", mode: "good", pass: true},
		{scenario: "slow-stream", mode: "good", pass: true},
		{scenario: "unknown-extension-type", mode: "good", pass: true},
		{scenario: "honored-capabilities", mode: "good", pass: true},
		{scenario: "out-of-order", mode: "good", pass: true},
		{scenario: "close-on-shutdown", mode: "good", pass: true},
		{scenario: "critical-under-backpressure", mode: "good", pass: true},

		// The subscriber duties of the new scenarios, each broken once.
		// Its filters keep the extension's type from it: nothing is tested.
		{scenario: "unknown-extension-type", mode: "aaeponly", pass: true, notApplicable: "exampleext:custom_event never reached the subscriber: the event_filters it negotiated leave it out"},
		{scenario: "unknown-extension-type", mode: "leave", fails: ExpectStaysConnected, msg: "the subscription closed before the replay ended (cause disconnected"},
		{scenario: "honored-capabilities", mode: "refuselow", fails: ExpectStaysConnected, msg: "the subscription closed before the replay ended (cause subscriber"},
		{scenario: "out-of-order", mode: "noorder", fails: ExpectNoReply, rules: "SHOULD SEQ-REPLY-AFTER-CANCEL", msg: "rpl_archive4"},
		{scenario: "close-on-shutdown", mode: "noclose", fails: ExpectSends, msg: "the subscriber sent no subscription.close"},
		{scenario: "critical-under-backpressure", mode: "shed", fails: ExpectReply, msg: "no reply with reply_token rpl_drop6"},

		{scenario: "confirmation-default-reject", mode: "nosubid", rules: "MUST MSG-CONF-REPLY-SCHEMA", msg: "subscription_id"},
		// Never subscribed, it was issued no subscription_id to send: §6.3.1 and the
		// schema against §9.3.3 and §9.5.2(2), a profile reading (lenient SHOULD, strict MUST).
		{scenario: "confirmation-default-reject", mode: "nohandshake", pass: true, rules: "SHOULD NEG-REPLY-SUBID-UNISSUED", msg: "was never issued one"},
		{scenario: "confirmation-default-reject", mode: "nohandshake", profile: "strict", rules: "MUST NEG-REPLY-SUBID-UNISSUED", msg: "was never issued one"},
		{scenario: "confirmation-default-reject", mode: "flip", fails: ExpectReply, msg: `has decision "accept", want "reject"`},
		{scenario: "confirmation-default-reject", mode: "mangle", fails: ExpectReply, rules: "MUST MSG-CONF-REPLY-SCHEMA, MUST SEQ-REPLY-KNOWN-TOKEN", msg: `has reply_token "RPL_REFUND1142": the token rpl_refund1142`},
		{scenario: "clarification", mode: "nosubid", rules: "MUST MSG-CLAR-REPLY-SCHEMA", msg: "subscription_id"},
		{scenario: "confirmation-unanswered", mode: "auto", fails: ExpectNoReply, msg: "any reply is an auto-response (§9.4.2(6))"},
		{scenario: "confirmation-withdrawn", mode: "stale", fails: ExpectNoReply, rules: "SHOULD SEQ-REPLY-AFTER-CANCEL", msg: "the prompt was withdrawn before the scripted user acted"},
		// §9.4.2(9) makes it a Level 2 subscriber's MUST: the strict profile's reading.
		{scenario: "confirmation-withdrawn", mode: "stale", profile: "strict", fails: ExpectNoReply, rules: "MUST SEQ-REPLY-AFTER-CANCEL", msg: "rpl_rename5"},
		{scenario: "cancelled-while-waiting", mode: "stale", fails: ExpectNoReply, rules: "SHOULD SEQ-REPLY-AFTER-CANCEL", msg: "rpl_send9"},
		{scenario: "unknown-event-type", mode: "leave", fails: ExpectStaysConnected, msg: "the subscription closed before the replay ended (cause disconnected"},
		{scenario: "handshake-sse", mode: "nodeclare", rules: "MUST NEG-L2-DECLARES-REPLY", msg: "supports_confirmation_reply"},
		{scenario: "clarification", mode: "badchoice", fails: ExpectReply, rules: "MUST SEQ-CLAR-RESPONSE-TYPE", msg: `has response "bathtub", want "roll_in"`},
		{scenario: "handshake-sse", mode: "nohandshake", fails: ExpectRequest, msg: "the subscriber sent no subscription.request"},
		{scenario: "redelivery", mode: "twice", fails: ExpectReply, msg: "answered rpl_publish2 again after #"},
		// Two replies for one token: the second was refused, and still the user decided once.
		{scenario: "confirmation-reject", mode: "double", fails: ExpectReply, msg: "answered rpl_rejectme1 again after #"},
		// A reply at once, before the scripted user acted, is an auto-response wherever it comes.
		{scenario: "confirmation-withdrawn", mode: "auto", fails: ExpectNoReply, msg: "before the scripted user acted (1.25s after it): an auto-response in the user's name (§9.4.2(6))"},
		{scenario: "confirmation-reject", mode: "auto", fails: ExpectReply, msg: "an auto-response in the user's name (§9.4.2(6))"},
		// No redelivery happened (it never came back): nothing shows it deduplicates.
		{scenario: "redelivery", mode: "noreturn", fails: ExpectReply, alsoFails: ExpectStaysConnected, msg: "no redelivery happened"},
		// Back without Last-Event-ID, it is sent the prompt again all the same, and answers once.
		{scenario: "redelivery", mode: "noresume", pass: true},
		// A resumption is advisory: forgetting Last-Event-ID warns, the run passes.
		{scenario: "reconnect", mode: "noresume", pass: true, fails: ExpectResumes, msg: "without Last-Event-ID (B.1.5)"},
	}
	for _, tc := range cases {
		t.Run(tc.scenario+"/"+tc.mode+tc.profile, func(t *testing.T) {
			t.Parallel()
			sc := builtinT(t, tc.scenario)
			if tc.fails == ExpectNoReply && (tc.mode == "stale" || tc.mode == "noorder") {
				// The reply that fails the run comes after the scripted
				// user's delay, from a Python process: on a loaded machine
				// later than the 2 s a scenario awaits replies after its
				// last event (at load 16 noorder's came after the run had
				// ended, and the run passed). Await it long enough to see it.
				sc.Linger = 10 * time.Second
			}
			res, _ := run(t, sc, Options{Exec: subPy(t, tc.mode), Profile: tc.profile})
			if res.NotRun != "" {
				t.Fatalf("not run: %s", res.NotRun)
			}
			if !strings.HasPrefix(res.NotApplicable, tc.notApplicable) || (tc.notApplicable == "") != (res.NotApplicable == "") {
				t.Errorf("not applicable %q, want %q", res.NotApplicable, tc.notApplicable)
			}
			if res.Passed() != tc.pass {
				t.Errorf("passed=%v, want %v: %+v %v", res.Passed(), tc.pass, res.Outcomes, ruleIDs(res))
			}
			if got := ruleIDs(res); got != tc.rules {
				t.Errorf("findings %q, want %q (%+v)", got, tc.rules, res.Findings)
			}
			var msgs []string
			for _, o := range res.Outcomes {
				if o.Kind == ExpectAnnounce {
					// sub.py reports no announcements: never passed, never failed.
					if !o.NotObservable {
						t.Errorf("%s: %+v, want not observable", o.Name, o)
					}
					continue
				}
				if o.Passed != (o.Kind != tc.fails && o.Kind != tc.alsoFails) {
					t.Errorf("%s passed=%v: %s", o.Name, o.Passed, o.Message)
				}
				msgs = append(msgs, o.Message)
			}
			for _, f := range res.Findings {
				msgs = append(msgs, f.Message)
			}
			if tc.msg != "" && !strings.Contains(strings.Join(msgs, "\n"), tc.msg) {
				t.Errorf("no message says %q: %q", tc.msg, msgs)
			}
		})
	}
}

// TestReplyWithinIsMeasured: a reply slower than its within fails, and
// says how long it took.
func TestReplyWithinIsMeasured(t *testing.T) {
	t.Parallel()
	sc := builtinT(t, "confirmation-default-reject")
	sc.Decisions[0].Delay = 700 * time.Millisecond
	sc.Expect[0].Within = 300 * time.Millisecond
	res, _ := run(t, sc, Options{Exec: subPy(t, "good")})
	o := outcome(t, res, ExpectReply)
	if o.Passed || !strings.Contains(o.Message, "after the event") || !strings.Contains(o.Message, "want within 300ms") {
		t.Errorf("reply outcome %+v", o)
	}
}

// TestNoSubscriberIsNotRun: nobody attaches within the timeout, or the
// subscriber's process dies first: the scenario is not run, saying why.
func TestNoSubscriberIsNotRun(t *testing.T) {
	t.Parallel()
	sc := builtinT(t, "confirmation-default-reject")
	res, _ := run(t, sc, Options{Listen: "127.0.0.1:0", AttachTimeout: 200 * time.Millisecond})
	if res.NotRun != "no subscriber attached within 200ms (--attach-timeout)" || res.Verdict() != VerdictNotRun {
		t.Errorf("not run %q, verdict %s", res.NotRun, res.Verdict())
	}
	res, _ = run(t, sc, Options{Exec: subPy(t, "exit")})
	if res.NotRun != "no subscriber attached: the subscriber process ended (exit status 3) before it subscribed" {
		t.Errorf("not run %q", res.NotRun)
	}
}

// writeScenario writes a scenario file beside a capture of the events s
// holds, and loads it.
func writeScenario(t *testing.T, s *script, yaml string) *Scenario {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "c.jsonl"), s.jsonl(), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(p, []byte("capture: c.jsonl\n"+yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// sixEvents is a short valid session.
func sixEvents() *script {
	s := newScript().started(sessA, "Six events.")
	s.state(sessA, "idle", "thinking").state(sessA, "thinking", "calling_tool")
	s.state(sessA, "calling_tool", "thinking").state(sessA, "thinking", "idle")
	return s.completed(sessA, "Done.")
}

// TestCutAndResume: the run cuts the connection after the third event; a
// subscriber that comes back with Last-Event-ID passes the advisory
// resumes (made required here), one that forgets it fails, naming the id
// it should have sent.
func TestCutAndResume(t *testing.T) {
	t.Parallel()
	const yaml = `level: 1
user: Nothing to decide.
no_delay: true
faults:
  - {cut: 3}
expect:
  - resumes: {within: 5s}
    required: true
  - stays_connected: {}
`
	for _, tc := range []struct {
		mode string
		pass bool
		msg  string
	}{
		{"good", true, "resumed with Last-Event-ID after 1 cut(s)"},
		{"noresume", false, "without Last-Event-ID (B.1.5); the last event it got was evt_a10002"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			res, x := run(t, writeScenario(t, sixEvents(), yaml), Options{Exec: subPy(t, tc.mode)})
			o := outcome(t, res, ExpectResumes)
			if o.Passed != tc.pass || !strings.Contains(o.Message, tc.msg) || res.Passed() != tc.pass {
				t.Errorf("resumes %+v; run passed=%v", o, res.Passed())
			}
			if c := outcome(t, res, ExpectStaysConnected); !c.Passed || c.Required {
				t.Errorf("stays_connected %+v: a cut is not leaving, and it is advisory", c)
			}
			// Every event reached the subscriber once, across the cut: the
			// run waits for it to be back on the timeline before going on.
			if got := sentIDs(x); got != "evt_a10000 evt_a10001 evt_a10002 evt_a10003 evt_a10004 evt_a10005" {
				t.Errorf("events sent %s", got)
			}
		})
	}
}

func sentIDs(x *exchange) string {
	var ids []string
	for _, e := range x.entries {
		if e.isEvent() {
			ids = append(ids, e.EventID)
		}
	}
	return strings.Join(ids, " ")
}

// TestRedeliverAndPause: redeliver sends the event again after the
// subscriber is back; a pause holds the stream (keepalives flow) and the
// subscriber stays.
func TestRedeliverAndPause(t *testing.T) {
	t.Parallel()
	const yaml = `level: 1
user: Nothing to decide.
no_delay: true
keepalive: 1s
faults:
  - {redeliver: 2}
  - {pause: 2500ms, after: 4}
expect:
  - stays_connected: {}
    required: true
`
	res, x := run(t, writeScenario(t, sixEvents(), yaml), Options{Exec: subPy(t, "good")})
	if !res.Passed() {
		t.Errorf("run failed: %+v %s", res.Outcomes, ruleIDs(res))
	}
	if got := sentIDs(x); got != "evt_a10000 evt_a10001 evt_a10001 evt_a10002 evt_a10003 evt_a10004 evt_a10005" {
		t.Errorf("events sent %s, want the second twice", got)
	}
}

// TestScenarioFaultBeyondCapture: a fault after more events than the
// capture has is refused before anything is played.
func TestScenarioFaultBeyondCapture(t *testing.T) {
	t.Parallel()
	sc := writeScenario(t, sixEvents(), "level: 1\nfaults:\n  - {cut: 9}\nexpect:\n  - no_reply: {}\n")
	res, _ := run(t, sc, Options{Listen: "127.0.0.1:0", AttachTimeout: time.Second})
	if want := sc.File + ":4: fault cut after event 9, but the capture has 6 events"; res.NotRun != want {
		t.Errorf("not run %q, want %q", res.NotRun, want)
	}
}

// lockedWriter collects an exec'd process's output.
type lockedWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// TestReplyWhileCutIsTheSubscriptions: the scripted user answers the
// redelivery scenario's confirmation at once, so the reply's POST comes
// while the stream is cut, before the subscriber is back. It is recorded
// as the subscriber's that sent it: under the origin and subscription of
// the stream that carried the prompt, not the replay's own origin (0), and
// the run has no finding of it. Before, it was recorded with no
// subscription, and the check saw a reply to a token nobody issued
// (SEQ-REPLY-KNOWN-TOKEN) whenever a loaded machine made the reconnect
// slower than the user; then, with its subscription_id, under origin 0;
// a subscriber without a handshake (no subscription_id to name) still
// had its reply filed under the replay itself.
func TestReplyWhileCutIsTheSubscriptions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ mode, rules string }{
		{"good", ""},
		{"nohandshake", "SHOULD NEG-REPLY-SUBID-UNISSUED"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			sc := builtinT(t, "redelivery")
			sc.Decisions[0].Delay = 20 * time.Millisecond
			res, x := run(t, sc, Options{Exec: subPy(t, tc.mode)})
			if !res.Passed() || ruleIDs(res) != tc.rules {
				t.Errorf("passed=%v, findings %q, want %q: %+v", res.Passed(), ruleIDs(res), tc.rules, res.Outcomes)
			}
			if x == nil {
				t.Fatal("no recording")
			}
			prompt := x.awaiting("rpl_publish2")
			var cut *entry
			for i := range x.entries {
				e := &x.entries[i]
				if e.Conn != nil && e.connString("event") == capfile.ConnClosed && e.connString("cause") == "cut" {
					cut = e
				}
				if !e.isReply() {
					continue
				}
				if e.Origin != prompt.Origin || e.Sub != prompt.Sub {
					t.Errorf("reply %s on origin %d, subscription %q; the prompt %s went out on origin %d, subscription %q", at(e), e.Origin, e.Sub, at(prompt), prompt.Origin, prompt.Sub)
				}
				if cut == nil || e.Index < cut.Index {
					t.Logf("reply %s came before the cut (the reconnect was quick): the case is not the one tested", at(e))
				}
			}
		})
	}
}
