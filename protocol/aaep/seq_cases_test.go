package aaep

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/protocoltest"
)

// seqCase is one stream and the sequence findings it must produce, exactly
// (sorted rule IDs of SEQ-*, NEG-* and TRN-* findings). rule names the rule
// the case is about: a case whose want holds rule is a failing case for it,
// one whose want lacks it is a passing case.
type seqCase struct {
	name    string
	rule    string
	profile string
	msgs    []*tm
	want    []string
}

// Common fragments.
func pre() []*tm { return []*tm{S(), SC("idle", "thinking")} }

// preConf opens a session and enters awaiting_input.
func preConf() []*tm { return []*tm{S(), SC("idle", "thinking"), SC("thinking", "awaiting_input")} }

// handshake is a request/accept pair on source src with the given capabilities.
func handshake(src int, sub string, req, honored map[string]any) []*tm {
	return []*tm{SREQ(req).src(src), SACC(sub, honored).src(src)}
}

func jws(header, payload string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(header)) + "." + enc([]byte(payload)) + "." + enc([]byte("signature"))
}

// both sends each message on sources 0 and 1 with one event_id per pair.
func both(id string, msgs ...*tm) []*tm {
	var out []*tm
	for i, m := range msgs {
		m.id(id + string(rune('a'+i)))
		out = append(out, m.on(0), m.on(1))
	}
	return out
}

func seqCases() []seqCase {
	var cases []seqCase
	add := func(c ...seqCase) { cases = append(cases, c...) }

	// §3.1 lifecycle.
	add(
		seqCase{"clean session", "SEQ-START-FIRST", "", stream(S(), C()), nil},
		seqCase{"event before started", "SEQ-START-FIRST", "", stream(SC("idle", "thinking"), S(), C()), []string{"SEQ-START-FIRST"}},
		seqCase{"started twice", "SEQ-START-ONCE", "", stream(S(), S(), C()), []string{"SEQ-START-ONCE"}},
		seqCase{"one started", "SEQ-START-ONCE", "", stream(pre(), C()), nil},
		// §5.8: either side may close at any time; a session cut off by the
		// subscriber's close, a dropped connection or the end of the
		// recording is unfinished, in both profiles.
		seqCase{"subscriber closed before the end (§5.8)", "SEQ-TERMINAL-PRESENT", "",
			stream(handshake(0, "sub_1", caps{}, caps{}), pre(), SCLOSE("sub_1")), []string{"SEQ-SESSION-INCOMPLETE"}},
		seqCase{"strict: subscriber closed before the end (§5.8)", "SEQ-TERMINAL-PRESENT", "strict",
			stream(handshake(0, "sub_1", caps{}, caps{}), pre(), SCLOSE("sub_1")), []string{"SEQ-SESSION-INCOMPLETE"}},
		seqCase{"producer closed before the end", "SEQ-TERMINAL-PRESENT", "",
			stream(handshake(0, "sub_1", caps{}, caps{}), pre(), producerClose("sub_1")), []string{"SEQ-SESSION-INCOMPLETE"}},
		// Strict reads §4.1/§4.5.1 for what the producer itself delivered.
		seqCase{"strict: producer closed before the end (§4.5.1)", "SEQ-TERMINAL-PRESENT", "strict",
			stream(handshake(0, "sub_1", caps{}, caps{}), pre(), producerClose("sub_1")), []string{"SEQ-TERMINAL-PRESENT"}},
		seqCase{"ended before the close", "SEQ-TERMINAL-PRESENT", "",
			stream(handshake(0, "sub_1", caps{}, caps{}), pre(), C(), SCLOSE("sub_1")), nil},
		seqCase{"recording cut off", "SEQ-SESSION-INCOMPLETE", "", stream(pre()), []string{"SEQ-SESSION-INCOMPLETE"}},
		seqCase{"recording complete", "SEQ-SESSION-INCOMPLETE", "", stream(pre(), C()), nil},
		seqCase{"A.8.2 multiple terminal events", "SEQ-TERMINAL-ONCE", "", stream(S(), C(), E()), []string{"SEQ-TERMINAL-ONCE"}},
		seqCase{"errored only", "SEQ-TERMINAL-ONCE", "", stream(S(), E()), nil},
		seqCase{"A.8.3 events after terminal event", "SEQ-NOTHING-AFTER-TERMINAL", "",
			stream(S(), C(), TI("fetch", "call_1")), []string{"SEQ-NOTHING-AFTER-TERMINAL"}},
		seqCase{"terminal delivered on a second subscription", "SEQ-NOTHING-AFTER-TERMINAL", "", stream(both("evt_t", S(), C())), nil},
		seqCase{"session id reused", "SEQ-SESSION-ID-REUSE", "", stream(S(), C(), S(), C()), []string{"SEQ-SESSION-ID-REUSE"}},
		seqCase{"two sessions", "SEQ-SESSION-ID-REUSE", "", stream(S(), C(), S().sess("sess_b"), C().sess("sess_b")), nil},
		seqCase{"tool after handoff", "SEQ-HANDOFF-END", "",
			stream(pre(), HR(), SC("handing_off", "calling_tool"), TI("x", "call_1"), TC("x", "call_1", "success"), C()),
			[]string{"SEQ-HANDOFF-END"}},
		seqCase{"handoff then end", "SEQ-HANDOFF-END", "", stream(pre(), HR(), SC("handing_off", "idle"), C()), nil},
		seqCase{"A.7 output right after started (strict)", "SEQ-A7-TABLES", "strict",
			stream(S(), OS("out_1", 0, "Hi", true), C()), []string{"SEQ-A7-TABLES", "SEQ-STATE-L1-COVERAGE"}},
		seqCase{"A.7 tables are strict only", "SEQ-A7-TABLES", "",
			stream(S(), OS("out_1", 0, "Hi", true), C()), []string{"SEQ-STATE-L1-COVERAGE"}},
		seqCase{"A.7 output after writing_output (strict)", "SEQ-A7-TABLES", "strict",
			stream(S(), SC("idle", "writing_output"), OS("out_1", 0, "Hi", false), OS("out_1", 2, "!", true), C()), nil},
	)

	// §3.2 identity, time and numbering.
	add(
		seqCase{"event_id reused by another event", "SEQ-EVENT-ID-UNIQUE", "",
			stream(S().id("evt_1"), SC("idle", "thinking").id("evt_2"), PU().id("evt_2"), C()), []string{"SEQ-EVENT-ID-UNIQUE"}},
		seqCase{"event_id reused across open sessions", "SEQ-EVENT-ID-UNIQUE", "",
			stream(S().id("evt_1"), S().sess("sess_b").id("evt_1"), C(), C().sess("sess_b")), []string{"SEQ-EVENT-ID-UNIQUE"}},
		seqCase{"same event_id on two subscriptions", "SEQ-EVENT-ID-UNIQUE", "",
			stream(both("evt_s", S(), SC("idle", "thinking"), C())), nil},
		seqCase{"identical redelivery", "SEQ-EVENT-ID-REDELIVERED", "",
			stream(S(), SC("idle", "thinking").id("evt_5").ts(time.Second), SC("idle", "thinking").id("evt_5").ts(time.Second), C().ts(2*time.Second)),
			[]string{"SEQ-EVENT-ID-REDELIVERED"}},
		seqCase{"no redelivery", "SEQ-EVENT-ID-REDELIVERED", "", stream(pre(), C()), nil},
		seqCase{"timestamp goes back", "SEQ-TIMESTAMP-ORDER", "",
			stream(S().ts(2*time.Second), SC("idle", "thinking").ts(time.Second), C().ts(3*time.Second)), []string{"SEQ-TIMESTAMP-ORDER"}},
		seqCase{"equal instants in other offsets", "SEQ-TIMESTAMP-ORDER", "",
			stream(S().ts(time.Second), SC("idle", "thinking").set("timestamp", "2026-05-24T15:22:01.000+01:00"), C().ts(2*time.Second)), nil},
		seqCase{"two producers' clocks", "SEQ-TIMESTAMP-ORDER", "",
			stream(S().ts(2*time.Second), SC("idle", "thinking").ts(time.Second).set("producer", map[string]any{"agent_id": "helper"}), C().ts(3*time.Second)), nil},
		seqCase{"future timestamp", "SEQ-TIMESTAMP-NOT-FUTURE", "",
			stream(S().set("timestamp", "2030-01-01T00:00:00.000Z"), C().set("timestamp", "2030-01-01T00:00:01.000Z")), []string{"SEQ-TIMESTAMP-NOT-FUTURE"}},
		seqCase{"backdated timestamp is not future-dated", "SEQ-TIMESTAMP-NOT-FUTURE", "",
			stream(S().ts(-2*time.Hour), C()), []string{"SEQ-TIMESTAMP-BACKDATED"}},
		seqCase{"timestamps near receive time", "SEQ-TIMESTAMP-NOT-FUTURE", "", stream(S().ts(time.Minute), C().ts(time.Minute)), nil},
		seqCase{"backdated timestamp", "SEQ-TIMESTAMP-BACKDATED", "",
			stream(S().ts(-2*time.Hour), C().ts(-2*time.Hour+time.Second)), []string{"SEQ-TIMESTAMP-BACKDATED"}},
		seqCase{"both future-dated and backdated events", "SEQ-TIMESTAMP-BACKDATED", "",
			stream(S().ts(-2*time.Hour), SC("idle", "thinking").set("timestamp", "2030-01-01T00:00:00.000Z"), C().set("timestamp", "2030-01-01T00:00:01.000Z")),
			[]string{"SEQ-TIMESTAMP-BACKDATED", "SEQ-TIMESTAMP-NOT-FUTURE"}},
		seqCase{"delay within the hour", "SEQ-TIMESTAMP-BACKDATED", "", stream(S().ts(-50*time.Minute), C().ts(-50*time.Minute)), nil},
		seqCase{"sequence_number on some events", "SEQ-SEQNO-ALL-OR-NONE", "",
			stream(S().seq(0), SC("idle", "thinking"), C().seq(2)), []string{"SEQ-SEQNO-ALL-OR-NONE"}},
		seqCase{"sequence_number on all events", "SEQ-SEQNO-ALL-OR-NONE", "",
			stream(S().seq(0), SC("idle", "thinking").seq(1), C().seq(2)), nil},
		seqCase{"started not numbered 0", "SEQ-SEQNO-ZERO", "",
			stream(S().seq(1), SC("idle", "thinking").seq(2), C().seq(3)), []string{"SEQ-SEQNO-ZERO"}},
		seqCase{"started numbered 0", "SEQ-SEQNO-ZERO", "", stream(S().seq(0), C().seq(1)), nil},
		seqCase{"sequence_number gap", "SEQ-SEQNO-INCREMENT", "",
			stream(S().seq(0), SC("idle", "thinking").seq(1), PU().seq(3), C().seq(4)), []string{"SEQ-SEQNO-INCREMENT"}},
		seqCase{"sequence_number repeated", "SEQ-SEQNO-INCREMENT", "",
			stream(S().seq(0), SC("idle", "thinking").seq(1), PU().seq(1), C().seq(2)), []string{"SEQ-SEQNO-INCREMENT"}},
		seqCase{"gap on a filtered subscription", "SEQ-SEQNO-INCREMENT", "",
			stream(handshake(0, "sub_1", caps{"event_filters": caps{"exclude": []string{"aaep:agent.progress.updated"}}},
				caps{"event_filters": caps{"exclude": []string{"aaep:agent.progress.updated"}}}),
				S().seq(0), SC("idle", "thinking").seq(1), C().seq(3)), nil},
		seqCase{"late arrival", "SEQ-DELIVERY-ORDER", "",
			stream(S().seq(0), PU().seq(2).ts(200*time.Millisecond), SC("idle", "thinking").seq(1).ts(100*time.Millisecond), C().seq(3)), []string{"SEQ-DELIVERY-ORDER"}},
		seqCase{"in order", "SEQ-DELIVERY-ORDER", "", stream(S().seq(0), SC("idle", "thinking").seq(1), PU().seq(2), C().seq(3)), nil},
		seqCase{"progress every 1% (§4.2.2)", "SEQ-PROGRESS-COALESCE", "",
			stream(pre(), pct(1), pct(2), pct(3), pct(4), C()), []string{"SEQ-PROGRESS-COALESCE"}},
		seqCase{"progress every 5% (§4.2.2)", "SEQ-PROGRESS-COALESCE", "",
			stream(pre(), pct(5), pct(10), pct(15), pct(20), C()), nil},
		seqCase{"progress every 1%, a second apart", "SEQ-PROGRESS-COALESCE", "",
			stream(pre(), pct(1).at(time.Second), pct(2).at(2*time.Second), pct(3).at(3*time.Second), C()), nil},
	)

	// §3.3 state chain.
	add(
		seqCase{"first state change not from idle", "SEQ-STATE-FIRST-IDLE", "",
			stream(S(), SC("thinking", "calling_tool"), C()), []string{"SEQ-STATE-FIRST-IDLE"}},
		seqCase{"first state change from the implicit state", "SEQ-STATE-FIRST-IDLE", "",
			stream(S(), TI("fetch", "call_1"), TC("fetch", "call_1", "success"), SC("calling_tool", "thinking"), C()), nil},
		seqCase{"first state change from the implicit state (strict)", "SEQ-STATE-FIRST-IDLE", "strict",
			stream(S(), TI("fetch", "call_1"), TC("fetch", "call_1", "success"), SC("calling_tool", "thinking"), C()),
			[]string{"SEQ-A7-TABLES", "SEQ-STATE-FIRST-IDLE"}},
		seqCase{"broken chain", "SEQ-STATE-CHAIN", "",
			stream(pre(), SC("deciding", "thinking"), C()), []string{"SEQ-STATE-CHAIN"}},
		seqCase{"§4.6 example (lenient)", "SEQ-STATE-CHAIN", "", section46(), []string{"SEQ-STATE-AWAITING-ENTER"}},
		seqCase{"§4.6 example (strict)", "SEQ-STATE-CHAIN", "strict", section46(),
			[]string{"SEQ-A7-TABLES", "SEQ-STATE-AWAITING-ENTER", "SEQ-STATE-AWAITING-EXIT", "SEQ-STATE-CHAIN"}},
		seqCase{"§6.10 example (strict)", "SEQ-STATE-AWAITING-EXIT", "strict",
			stream(preConf(), AC("rpl_xyz", "reject", 300), CR("rpl_xyz", "accept"), SC("awaiting_input", "calling_tool"),
				TIrr("transfer_funds", "call_1"), TC("transfer_funds", "call_1", "success"), SC("calling_tool", "thinking"), C()), nil},
		seqCase{"confirmation without awaiting_input", "SEQ-STATE-AWAITING-ENTER", "",
			stream(pre(), AC("rpl_1", "reject", 300), CR("rpl_1", "reject"), SC("awaiting_input", "thinking"), C()),
			[]string{"SEQ-STATE-AWAITING-ENTER"}},
		seqCase{"confirmation after awaiting_input", "SEQ-STATE-AWAITING-ENTER", "",
			stream(preConf(), AC("rpl_1", "reject", 300), CR("rpl_1", "reject"), SC("awaiting_input", "thinking"), C()), nil},
		seqCase{"clarification answered, then the end", "SEQ-STATE-AWAITING-EXIT", "",
			stream(preConf(), AQ("rpl_2", 120), QR("rpl_2", "savings"), C()), []string{"SEQ-STATE-AWAITING-EXIT"}},
		seqCase{"clarification answered, then a state change", "SEQ-STATE-AWAITING-EXIT", "",
			stream(preConf(), AQ("rpl_2", 120), QR("rpl_2", "savings"), SC("awaiting_input", "thinking"), C()), nil},
		seqCase{"accept then action without state change (strict)", "SEQ-STATE-AWAITING-EXIT", "strict",
			stream(preConf(), AC("rpl_1", "reject", 300), CR("rpl_1", "accept"), TIrr("transfer", "call_1"),
				TC("transfer", "call_1", "success"), C()),
			[]string{"SEQ-STATE-AWAITING-EXIT", "SEQ-STATE-L1-COVERAGE"}},
		seqCase{"accept then action without state change (lenient)", "SEQ-STATE-AWAITING-EXIT", "",
			stream(preConf(), AC("rpl_1", "reject", 300), CR("rpl_1", "accept"), TIrr("transfer", "call_1"),
				TC("transfer", "call_1", "success"), C()),
			[]string{"SEQ-STATE-L1-COVERAGE"}},
		seqCase{"other state during a tool", "SEQ-STATE-CALLING-TOOL", "",
			stream(pre(), TI("x", "call_1"), SC("thinking", "deciding"), TC("x", "call_1", "success"),
				SC("deciding", "calling_tool"), TI("y", "call_2"), TC("y", "call_2", "success"), SC("calling_tool", "thinking"), C()),
			[]string{"SEQ-STATE-CALLING-TOOL"}},
		seqCase{"calling_tool during a tool", "SEQ-STATE-CALLING-TOOL", "",
			stream(pre(), SC("thinking", "calling_tool"), TI("x", "call_1"), TC("x", "call_1", "success"), SC("calling_tool", "thinking"), C()), nil},
		seqCase{"tools and output without state changes", "SEQ-STATE-L1-COVERAGE", "",
			stream(S(), TI("x", "call_1"), TC("x", "call_1", "success"), OS("out_1", 0, "a", true), C()), []string{"SEQ-STATE-L1-COVERAGE"}},
		seqCase{"tools and output with state changes", "SEQ-STATE-L1-COVERAGE", "",
			stream(S(), SC("idle", "calling_tool"), TI("x", "call_1"), TC("x", "call_1", "success"), SC("calling_tool", "writing_output"),
				OS("out_1", 0, "a", true), C()), nil},
	)

	// §3.4 tool pairing.
	tool := func(parts ...*tm) []*tm {
		return stream(S(), SC("idle", "calling_tool"), parts, SC("calling_tool", "thinking"), C())
	}
	add(
		seqCase{"A.8.1 tool completion without invocation", "SEQ-TOOL-PAIR-PRECEDED", "",
			stream(S(), TC("fetch", "call_1", "success"), C()), []string{"SEQ-TOOL-PAIR-PRECEDED"}},
		seqCase{"paired by id", "SEQ-TOOL-PAIR-PRECEDED", "", tool(TI("fetch", "call_1"), TC("fetch", "call_1", "success")), nil},
		seqCase{"paired by name", "SEQ-TOOL-PAIR-PRECEDED", "", tool(TI("fetch", ""), TC("fetch", "", "success")), nil},
		seqCase{"id completion never pairs by name", "SEQ-TOOL-PAIR-PRECEDED", "",
			tool(TI("fetch", ""), TC("fetch", "call_1", "success")),
			[]string{"SEQ-TOOL-BEFORE-STATE", "SEQ-TOOL-PAIR-COMPLETED", "SEQ-TOOL-PAIR-PRECEDED"}},
		seqCase{"tool never completed", "SEQ-TOOL-PAIR-COMPLETED", "",
			stream(S(), SC("idle", "calling_tool"), TI("fetch", "call_1"), C()), []string{"SEQ-TOOL-PAIR-COMPLETED"}},
		seqCase{"abandoned tool completed with timeout", "SEQ-TOOL-PAIR-COMPLETED", "",
			tool(TI("fetch", "call_1"), TC("fetch", "call_1", "timeout")), nil},
		seqCase{"name-paired tool completed twice", "SEQ-TOOL-COMPLETE-ONCE", "",
			tool(TI("x", ""), TC("x", "", "success"), TC("x", "", "success")), []string{"SEQ-TOOL-COMPLETE-ONCE"}},
		seqCase{"id-paired tool completed twice", "SEQ-TOOL-COMPLETE-ONCE", "",
			tool(TI("x", "call_1"), TC("x", "call_1", "success"), TC("x", "call_1", "success")), []string{"SEQ-TOOL-COMPLETE-ONCE"}},
		seqCase{"two calls, two completions", "SEQ-TOOL-COMPLETE-ONCE", "",
			tool(TI("x", "call_1"), TI("x", "call_2"), TC("x", "call_2", "success"), TC("x", "call_1", "success")), nil},
		seqCase{"tool_call_id reused", "SEQ-TOOL-CALL-ID-UNIQUE", "",
			tool(TI("x", "call_1"), TC("x", "call_1", "success"), TI("y", "call_1"), TC("y", "call_1", "success")), []string{"SEQ-TOOL-CALL-ID-UNIQUE"}},
		seqCase{"distinct tool_call_ids", "SEQ-TOOL-CALL-ID-UNIQUE", "",
			tool(TI("x", "call_1"), TC("x", "call_1", "success"), TI("y", "call_2"), TC("y", "call_2", "success")), nil},
		seqCase{"completion echoes the id", "SEQ-TOOL-CALL-ID-ECHO", "", tool(TI("x", "call_1"), TC("x", "call_1", "success")), nil},
		seqCase{"completion names the same tool", "SEQ-TOOL-NAME-MATCH", "", tool(TI("fetch", "call_1"), TC("fetch", "call_1", "success")), nil},
		seqCase{"completion before the state change", "SEQ-TOOL-BEFORE-STATE", "",
			stream(S(), SC("idle", "calling_tool"), TI("x", "call_1"), TC("x", "call_1", "success"), SC("calling_tool", "thinking"), C()), nil},
		seqCase{"completion without the id", "SEQ-TOOL-CALL-ID-ECHO", "",
			tool(TI("x", "call_1"), TC("x", "", "success")), []string{"SEQ-TOOL-CALL-ID-ECHO"}},
		seqCase{"completion with another id", "SEQ-TOOL-CALL-ID-ECHO", "",
			tool(TI("x", "call_1"), TC("x", "call_2", "success")), []string{"SEQ-TOOL-CALL-ID-ECHO"}},
		seqCase{"completion names another tool", "SEQ-TOOL-NAME-MATCH", "",
			tool(TI("fetch", "call_1"), TC("send", "call_1", "success")), []string{"SEQ-TOOL-NAME-MATCH"}},
		seqCase{"concurrent calls without ids", "SEQ-TOOL-ID-SHOULD", "",
			tool(TI("x", ""), TI("x", ""), TC("x", "", "success"), TC("x", "", "success")), []string{"SEQ-TOOL-ID-SHOULD"}},
		seqCase{"sequential calls without ids", "SEQ-TOOL-ID-SHOULD", "",
			tool(TI("x", ""), TC("x", "", "success"), TI("x", ""), TC("x", "", "success")), nil},
		seqCase{"state leaves calling_tool before the completion", "SEQ-TOOL-BEFORE-STATE", "",
			stream(S(), SC("idle", "calling_tool"), TI("x", "call_1"), SC("calling_tool", "thinking"), TC("x", "call_1", "success"), C()),
			[]string{"SEQ-TOOL-BEFORE-STATE"}},
		seqCase{"tool not announced", "SEQ-TOOL-AVAILABLE", "",
			stream(S("tools_available", []string{"a"}), SC("idle", "calling_tool"), TI("b", "call_1"), TC("b", "call_1", "success"), C()),
			[]string{"SEQ-TOOL-AVAILABLE"}},
		seqCase{"tool announced", "SEQ-TOOL-AVAILABLE", "",
			stream(S("tools_available", []string{"a"}), SC("idle", "calling_tool"), TI("a", "call_1"), TC("a", "call_1", "success"), C()), nil},
		seqCase{"wrong tool count", "SEQ-COMPLETED-COUNTS", "",
			stream(S(), SC("idle", "calling_tool"), TI("x", "call_1"), TC("x", "call_1", "success"), C("tool_invocations_count", 3)),
			[]string{"SEQ-COMPLETED-COUNTS"}},
		seqCase{"tool duration longer than it took", "SEQ-COMPLETED-COUNTS", "",
			stream(S(), SC("idle", "calling_tool"), TI("x", "call_1"), TC("x", "call_1", "success").set("duration_ms", 5000), C()),
			[]string{"SEQ-COMPLETED-COUNTS"}},
		seqCase{"counts agree", "SEQ-COMPLETED-COUNTS", "",
			stream(S(), SC("idle", "calling_tool"), TI("x", "call_1"), TC("x", "call_1", "success").set("duration_ms", 90),
				C("tool_invocations_count", 1, "duration_ms", 400)), nil},
	)

	// §3.5 confirmations, clarifications, replies.
	add(seqConfCases()...)

	// §3.6 streaming.
	out := func(parts ...*tm) []*tm { return stream(S(), SC("idle", "writing_output"), parts, C()) }
	add(
		seqCase{"output never completed", "SEQ-STREAM-ONE-COMPLETE", "", out(OS("out_1", 0, "Hi", false)), []string{"SEQ-STREAM-ONE-COMPLETE"}},
		seqCase{"implicit output never completed", "SEQ-STREAM-ONE-COMPLETE", "", out(OS("", 0, "Hi", false)), []string{"SEQ-STREAM-ONE-COMPLETE"}},
		seqCase{"cancelled session still completes its output", "SEQ-STREAM-ONE-COMPLETE", "",
			stream(S(), SC("idle", "writing_output"), OS("out_1", 0, "Hi", false), X()), []string{"SEQ-STREAM-ONE-COMPLETE"}},
		seqCase{"two outputs completed", "SEQ-STREAM-ONE-COMPLETE", "",
			out(OS("out_1", 0, "Hi", false), OS("out_2", 0, "Yo", true), OS("out_1", 2, "!", true)), nil},
		seqCase{"A.8.6 streaming output after completion", "SEQ-STREAM-AFTER-COMPLETE", "",
			stream(OS("out_1", 0, "Hi.", true), OS("out_1", 3, " More", false)),
			[]string{"SEQ-SESSION-INCOMPLETE", "SEQ-START-FIRST", "SEQ-STREAM-AFTER-COMPLETE"}},
		seqCase{"chunk after complete", "SEQ-STREAM-AFTER-COMPLETE", "",
			out(OS("out_1", 0, "Hi.", true), OS("out_1", 3, " More", false)), []string{"SEQ-STREAM-AFTER-COMPLETE"}},
		seqCase{"chunks until complete", "SEQ-STREAM-AFTER-COMPLETE", "", out(OS("out_1", 0, "Hi.", false), OS("out_1", 3, " More", true)), nil},
		seqCase{"implicit output continues after complete", "SEQ-STREAM-AFTER-COMPLETE", "",
			out(OS("", 0, "Hi.", true), OS("", 3, " More", true)), []string{"SEQ-STREAM-AFTER-COMPLETE"}},
		seqCase{"A.8.7 out-of-order streaming positions", "SEQ-STREAM-POSITION-MONOTONIC", "",
			stream(OS("out_1", 0, strings.Repeat("a", 50), false), OS("out_1", 50, strings.Repeat("b", 30), false), OS("out_1", 30, "c", false)),
			[]string{"SEQ-SESSION-INCOMPLETE", "SEQ-START-FIRST", "SEQ-STREAM-POSITION-MONOTONIC"}},
		seqCase{"position goes back", "SEQ-STREAM-POSITION-MONOTONIC", "",
			out(OS("out_1", 0, strings.Repeat("a", 50), false), OS("out_1", 50, "b", false), OS("out_1", 30, "c", false), OS("out_1", 31, "", true)),
			[]string{"SEQ-STREAM-POSITION-MONOTONIC"}},
		seqCase{"position repeats", "SEQ-STREAM-POSITION-MONOTONIC", "",
			out(OS("out_1", 0, "a", false), OS("out_1", 0, "b", true)), []string{"SEQ-STREAM-POSITION-MONOTONIC"}},
		seqCase{"equal position after an empty chunk", "SEQ-STREAM-POSITION-MONOTONIC", "",
			out(OS("out_1", 0, "", false), OS("out_1", 0, "Hi", true)), nil},
		seqCase{"position skips (§4.3.3)", "SEQ-STREAM-POSITION-JUMP", "",
			out(OS("out_1", 0, "Hello. ", false), OS("out_1", 12, "Bye.", true)), []string{"SEQ-STREAM-POSITION-JUMP"}},
		seqCase{"strict: position skips (§4.3.3)", "SEQ-STREAM-POSITION-JUMP", "strict",
			out(OS("out_1", 0, "😀é", false), OS("out_1", 4, "b", true)), []string{"SEQ-STREAM-POSITION-JUMP"}},
		seqCase{"positions continue", "SEQ-STREAM-POSITION-JUMP", "",
			out(OS("out_1", 0, "Hello. ", false), OS("out_1", 7, "Bye.", true)), nil},
		seqCase{"position jumps across a sequence_number gap", "SEQ-STREAM-POSITION-JUMP", "",
			stream(S().seq(0), SC("idle", "writing_output").seq(1), OS("out_1", 0, "Hello. ", false).seq(2), OS("out_1", 12, "Bye.", true).seq(4), C().seq(5)),
			[]string{"SEQ-SEQNO-INCREMENT", "SEQ-STREAM-POSITION-CONTIGUOUS"}},
		seqCase{"position overlaps", "SEQ-STREAM-POSITION-CONTIGUOUS", "",
			out(OS("out_1", 0, "Hello. ", false), OS("out_1", 3, "Bye.", true)), []string{"SEQ-STREAM-POSITION-CONTIGUOUS"}},
		seqCase{"first position not 0", "SEQ-STREAM-POSITION-CONTIGUOUS", "",
			out(OS("out_1", 5, "Hello.", true)), []string{"SEQ-STREAM-POSITION-CONTIGUOUS"}},
		seqCase{"positions count code points", "SEQ-STREAM-POSITION-CONTIGUOUS", "",
			out(OS("out_1", 0, "😀é", false), OS("out_1", 2, "b", true)), nil},
		seqCase{"strict: positions count code points", "SEQ-STREAM-POSITION-CONTIGUOUS", "strict",
			out(OS("out_1", 0, "😀é", false), OS("out_1", 2, "b", true)), nil},
		// §4.3.3 says "character offset" without defining character: UTF-16
		// code units (the TypeScript reading) differ from code points only
		// on astral characters; lenient accepts them, strict wants code points.
		seqCase{"positions count UTF-16 units (§4.3.3)", "SEQ-STREAM-POSITION-CONTIGUOUS", "",
			out(OS("out_1", 0, "😀é", false), OS("out_1", 3, "b", true)), nil},
		seqCase{"strict: positions count UTF-16 units (§4.3.3)", "SEQ-STREAM-POSITION-CONTIGUOUS", "strict",
			out(OS("out_1", 0, "😀é", false), OS("out_1", 3, "b", true)), []string{"SEQ-STREAM-POSITION-CONTIGUOUS"}},
		// Bytes are no reading of "character" (§4.3.3): "Café " is 5
		// characters in every reading and 6 bytes. Reported once per output.
		seqCase{"positions count bytes (§4.3.3)", "SEQ-STREAM-POSITION-BYTES", "",
			out(OS("out_1", 0, "Café ", false), OS("out_1", 6, "crème ", false), OS("out_1", 13, "brûlée", true)), []string{"SEQ-STREAM-POSITION-BYTES"}},
		seqCase{"strict: positions count bytes (§4.3.3)", "SEQ-STREAM-POSITION-BYTES", "strict",
			out(OS("out_1", 0, "Café ", false), OS("out_1", 6, "au lait", true)), []string{"SEQ-STREAM-POSITION-BYTES"}},
		seqCase{"ASCII positions", "SEQ-STREAM-POSITION-BYTES", "",
			out(OS("out_1", 0, "Cafe ", false), OS("out_1", 5, "au lait", true)), nil},
	)

	// §3.7 negotiated stream.
	add(seqNegCases()...)

	// §3.8 transport frames.
	add(
		seqCase{"SSE id differs from event_id", "TRN-SSE-ID", "", stream(S().id("evt_s").attr("id", "evt_2").attr("event", "aaep.event"), C()), []string{"TRN-SSE-ID"}},
		seqCase{"SSE event name", "TRN-SSE-ID", "", stream(S().id("evt_s").attr("id", "evt_s").attr("event", "message"), C()), []string{"TRN-SSE-ID"}},
		seqCase{"SSE frame as bound", "TRN-SSE-ID", "", stream(S().id("evt_s").attr("id", "evt_s").attr("event", "aaep.event"), C()), nil},
		seqCase{"event sent as a reply method", "TRN-JSONRPC-METHOD", "", stream(S().attr("method", "aaep.reply"), C()), []string{"TRN-JSONRPC-METHOD"}},
		seqCase{"methods as bound", "TRN-JSONRPC-METHOD", "",
			stream(SREQ(caps{}).attr("method", "aaep.subscribe"), SACC("sub_1", caps{}), S().attr("method", "aaep.event"), C().attr("method", "aaep.event")), nil},
		seqCase{"failure reason revealed", "TRN-NO-FAILURE-REASON", "",
			stream(pre(), message("confirmation.reply.result", protocol.FromProducer, "error", "invalid_token",
				"message", "Reply token does not match any outstanding confirmation."), C()),
			[]string{"MSG-TYPE-KNOWN", "TRN-NO-FAILURE-REASON"}},
		seqCase{"the producer's answers are handshake messages", "MSG-TYPE-KNOWN", "",
			stream(SREQ(caps{}), SACC("sub_1", caps{}), S(), C()), nil},
		seqCase{"failure without a reason", "TRN-NO-FAILURE-REASON", "",
			stream(pre(), message("confirmation.reply.result", protocol.FromProducer, "error", "rejected"), C()), []string{"MSG-TYPE-KNOWN"}},
		seqCase{"untyped error answer after a reply (B.1.4)", "TRN-NO-FAILURE-REASON", "",
			stream(preConf(), AC("rpl_1", "reject", 300), CR("rpl_9", "accept"),
				errorAnswer("error", "invalid_token", "message", "Reply token does not match any outstanding confirmation."),
				CR("rpl_1", "reject"), SC("awaiting_input", "thinking"), C()),
			[]string{"SEQ-REPLY-KNOWN-TOKEN", "TRN-NO-FAILURE-REASON"}},
		seqCase{"untyped error answer without a reason", "TRN-NO-FAILURE-REASON", "",
			stream(preConf(), AC("rpl_1", "reject", 300), CR("rpl_9", "accept"), errorAnswer("error", "rejected"),
				CR("rpl_1", "reject"), SC("awaiting_input", "thinking"), C()),
			[]string{"SEQ-REPLY-KNOWN-TOKEN"}},
	)
	add(unseenCases()...)
	return cases
}

// section46 is the banking session of §4.6.
func section46() []*tm {
	first := "Transferred $500 successfully."
	return stream(S(), SC("idle", "thinking"), TI("fetch_balance", "call_1"), TC("fetch_balance", "call_1", "success"),
		SC("thinking", "deciding"), SC("deciding", "thinking"), AC("rpl_xyz", "reject", 300), CR("rpl_xyz", "accept"),
		TIrr("transfer_funds", "call_2"), TC("transfer_funds", "call_2", "success"), SC("calling_tool", "writing_output"),
		OS("", 0, first, false), OS("", len([]rune(first)), " New balance: $12,000.", true), C())
}

// timeoutAccept is an irreversible low-risk action run on a defaulted accept.
func timeoutAccept() []*tm {
	return stream(preConf(), AC("rpl_1", "accept", 30).set("risk_level", "low"), SC("awaiting_input", "calling_tool").at(31*time.Second),
		TIrr("delete_draft", "call_1"), TC("delete_draft", "call_1", "success"), SC("calling_tool", "thinking"), C())
}

// criticalExempt: two subscriptions; the second excludes awaiting.* and,
// unless delivered, does not get the critical confirmation.
func criticalExempt(delivered bool) []*tm {
	filt := caps{"supports_confirmation_reply": true, "event_filters": caps{"exclude": []string{"aaep:agent.awaiting.*"}}}
	msgs := stream(handshake(0, "sub_a", caps{"supports_confirmation_reply": true}, caps{}), handshake(1, "sub_b", filt, caps{}),
		both("evt_p", S(), SC("idle", "thinking"), SC("thinking", "awaiting_input")))
	ac := AC("rpl_1", "reject", 300).id("evt_ac")
	msgs = append(msgs, ac.on(0))
	if delivered {
		msgs = append(msgs, ac.on(1))
	}
	msgs = append(msgs, CR("rpl_1", "reject").set("subscription_id", "sub_a"))
	return append(msgs, both("evt_q", SC("awaiting_input", "thinking"), C())...)
}

// closeDefault: the subscription that got a confirmation closes; the
// session goes on over a second (unhandshaked) channel, where an action
// follows when act is set.
func closeDefault(act bool) []*tm {
	msgs := stream(handshake(0, "sub_1", caps{"supports_confirmation_reply": true}, caps{}),
		both("evt_p", S(), SC("idle", "thinking"), SC("thinking", "awaiting_input"), AC("rpl_1", "reject", 300)),
		SCLOSE("sub_1"), SC("awaiting_input", "calling_tool").id("evt_r").src(1))
	if act {
		msgs = append(msgs, TIrr("transfer", "call_1").src(1), TC("transfer", "call_1", "success").src(1))
	}
	return append(msgs, SC("calling_tool", "thinking").src(1), C().src(1))
}

// seqRuleCases states the cases of seqCases in the shared rule-case
// harness: Want is every sequence-level finding (SEQ, NEG, TRN), one per
// finding.
//
// A case's Want names the sequence rules' findings (SEQ, NEG, TRN),
// MSG-TYPE-KNOWN and any other rule it names (kept then), which judges the producer's untyped or unknown answers
// some transport cases send; every other MUST finding of a case's stream
// must be named too (protocoltest.CheckRules), so a valid stream has none.
func seqRuleCases() []protocoltest.RuleCase {
	var out []protocoltest.RuleCase
	for _, c := range seqCases() {
		want := slices.Clone(c.want)
		slices.Sort(want)
		out = append(out, protocoltest.RuleCase{Rule: c.rule, Name: c.name, Profile: c.profile,
			Stream: func() []*protocol.Message { return build(c.msgs) },
			Want:   want,
			Keep: func(f protocol.Finding) bool {
				return isSeqRule(f.RuleID) || f.RuleID == msgTypeKnown.ID || slices.Contains(want, f.RuleID)
			}})
	}
	return out
}

// isSeqRule reports whether id is a rule of the sequence checker.
func isSeqRule(id string) bool {
	return strings.HasPrefix(id, "SEQ-") || strings.HasPrefix(id, "NEG-") || strings.HasPrefix(id, "TRN-")
}

func TestSeqRules(t *testing.T) {
	protocoltest.CheckRules(t, func() []protocol.Model { return []protocol.Model{New()} }, seqRuleCases())
}

// TestSeqRuleCoverage fails when a rule of seqRules() lacks a failing or a
// passing case, or a case names a rule seqRules() does not list.
func TestSeqRuleCoverage(t *testing.T) {
	// The cases' Want names them (seqRuleCases); the replies' schema rules
	// for a missing subscription_id, which the sequence checker judges.
	rules := append(seqRules(), msgTypeKnown.Rule, evtSchema.Rule, msgConfReplySchema.Rule, msgClarReplySchema.Rule)
	protocoltest.CheckCoverage(t, rules, seqRuleCases(), protocoltest.NeedFailing|protocoltest.NeedPassing)
}

// TestSeqRuleCounts pins the catalog's counts: 56 SEQ rules (plus four
// companions, SEQ-REPLY-UNOBSERVED, SEQ-REPLY-IGNORED, the producer's half
// of the reply rules, and SEQ-PROGRESS-COALESCE, §4.2.2's SHOULD that the
// catalog left out, and SEQ-STREAM-POSITION-JUMP, the MUST half of
// SEQ-STREAM-POSITION-CONTIGUOUS: text lost), 26 NEG (plus NEG-TYPES-WITHHELD and NEG-REPLY-SUBID-UNISSUED, a profile
// reading of a contradiction the catalog does not list), 3 TRN.
func TestSeqRuleCounts(t *testing.T) {
	n := map[string]int{}
	for _, r := range seqRules() {
		n[r.ID[:strings.IndexByte(r.ID, '-')]]++
	}
	if n["SEQ"] != 64 || n["NEG"] != 28 || n["TRN"] != 3 {
		t.Errorf("rule counts %v, want SEQ 64 (56 + 4 companions + SEQ-REPLY-UNOBSERVED + SEQ-REPLY-IGNORED + SEQ-PROGRESS-COALESCE + SEQ-STREAM-POSITION-JUMP), NEG 28 (26 + NEG-TYPES-WITHHELD + NEG-REPLY-SUBID-UNISSUED), TRN 3", n)
	}
}

// TestA8Cases checks that every invalid sequence of Appendix A §A.8 has
// its own named case.
func TestA8Cases(t *testing.T) {
	for i := 1; i <= 7; i++ {
		prefix := "A.8." + string(rune('0'+i)) + " "
		found := false
		for _, c := range seqCases() {
			if strings.HasPrefix(c.name, prefix) && len(c.want) > 0 {
				found = true
			}
		}
		if !found {
			t.Errorf("no failing case named %q...", prefix)
		}
	}
}

var _ = json.Marshal

// TestSessionReuseWhileDraining: a session id reused while another
// subscription still carries the ended session is a reuse, not a late event.
func TestSessionReuseWhileDraining(t *testing.T) {
	res := run(t, "", stream(both("evt_a", S(), SC("idle", "thinking")), C().id("evt_c").src(0), S().id("evt_s2").src(0), C().id("evt_c2").src(0))...)
	if ids := strings.Join(res.seqIDs(), " "); ids != "SEQ-SESSION-ID-REUSE" {
		t.Errorf("findings [%s], want [SEQ-SESSION-ID-REUSE]\n%s", ids, res.describe())
	}
}

// TestHugeFilterLists: subscriptions with tens of thousands of patterns and
// languages are checked without quadratic work, and their findings stay few.
func TestHugeFilterLists(t *testing.T) {
	const n = 20000
	inc, exc, langs := make([]string, n), make([]string, n), make([]string, n)
	for i := range inc {
		inc[i] = fmt.Sprintf("aaep:agent.x%d.*", i)
		exc[i] = fmt.Sprintf("aaep:agent.y%d", i)
		langs[i] = fmt.Sprintf("x%d-YY", i)
	}
	req := caps{"event_filters": caps{"include": inc, "exclude": exc}, "languages": langs}
	honored := caps{"event_filters": caps{"include": append([]string{"aaep:agent.*"}, inc...), "exclude": []string{}}, "languages": append([]string{"zz"}, langs...)}
	res := run(t, "", stream(handshake(0, "sub_1", req, honored), S(), PU(), C())...)
	counts := map[string]int{}
	for _, id := range res.seqIDs() {
		counts[id]++
	}
	if len(counts) != 2 || counts["NEG-HONORED-FILTERS"] != 8 || counts["NEG-HONORED-LANGUAGES"] != 1 {
		t.Errorf("findings %v, want 8 filter findings (capped) and 1 language finding", counts)
	}
}
