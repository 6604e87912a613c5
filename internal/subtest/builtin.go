package subtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Builtins returns the built-in scenarios, by level then name. Each is a
// fresh value.
func Builtins() []*Scenario {
	out := make([]*Scenario, 0, len(builtins)+len(announceBuiltins))
	for _, b := range slices.Concat(builtins, announceBuiltins) {
		out = append(out, withAnnounceDuties(b()))
	}
	slices.SortStableFunc(out, func(a, b *Scenario) int {
		if a.Level != b.Level {
			return a.Level - b.Level
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// Builtin returns the built-in scenario called name.
func Builtin(name string) (*Scenario, error) {
	var names []string
	for _, sc := range Builtins() {
		if sc.Name == name {
			return sc, nil
		}
		names = append(names, sc.Name)
	}
	return nil, fmt.Errorf("%w %q (built-in: %s)", errNoScenario, name, strings.Join(names, ", "))
}

// BuiltinsAt returns the built-in scenarios of one level.
func BuiltinsAt(level int) []*Scenario {
	var out []*Scenario
	for _, sc := range Builtins() {
		if sc.Level == level {
			out = append(out, sc)
		}
	}
	return out
}

func builtin(name string, level int, sections []string, user, desc string, s *script, expect ...Expectation) *Scenario {
	return &Scenario{Name: name, Level: level, Sections: sections, User: user, Description: desc,
		Speed: 1, Linger: DefaultLinger, Expect: expect, File: "builtin", jsonl: s.jsonl()}
}

// deciding sets the scripted user's decisions (a reply when no action is
// given).
func (sc *Scenario) deciding(ds ...Decision) *Scenario {
	for i := range ds {
		if ds[i].Action == "" {
			ds[i].Action = ActionReply
		}
	}
	sc.Decisions = ds
	return sc
}

// over says the transports the scenario applies to.
func (sc *Scenario) over(transports ...string) *Scenario {
	sc.Transports = transports
	return sc
}

func reply(token, decision string) Expectation {
	return Expectation{Kind: ExpectReply, Token: token, Decision: decision, Within: DefaultWithin, Required: true}
}

func noReply(token string) Expectation {
	return Expectation{Kind: ExpectNoReply, Token: token, Required: true}
}

func staysConnected(required bool) Expectation {
	return Expectation{Kind: ExpectStaysConnected, Required: required}
}

// A few sessions' ids, one per built-in capture.
const (
	sessA = "sess_a1"
	sessB = "sess_b2"
	sessC = "sess_c3"
)

// sessD is the session of a built-in's epilogue.
const sessD = "sess_d4"

// epilogue ends a capture with a short session of its own, so that what a
// scenario tests is never its last event (a subscriber that gives up on
// it is seen to).
func epilogue(s *script) *script {
	s.started(sessD, "Writing the day's log.")
	s.state(sessD, "idle", "thinking").state(sessD, "thinking", "idle")
	return s.completed(sessD, "Log written.")
}

// simple is a short valid session around extra events.
func simple(sess string, extra func(s *script)) *script {
	s := newScript().started(sess, "Tidying the project's notes.")
	s.state(sess, "idle", "thinking")
	extra(s)
	s.state(sess, "thinking", "idle")
	return s.completed(sess, "Notes tidied.")
}

var builtins = []func() *Scenario{
	// Level 1: tolerate what is unknown, keep what is critical.
	func() *Scenario {
		s := simple(sessA, func(s *script) {
			s.ev(sessA, "memory.compacted", "normal", F{"summary_normal": "Compacted the working memory."})
			s.ev(sessA, "progress.updated", "background", F{"progress": F{"description": "Half way", "percent": 50}, "summary_normal": "Half way."})
		})
		return builtin("unknown-event-type", 1, []string{"§9.3.2(5)", "§3.2.2"},
			"Nothing to decide: listen.",
			"An event of a type the subscriber cannot know (aaep:agent.memory.compacted) in the middle of a session: it announces it generically or skips it, and keeps consuming.",
			s, staysConnected(true), noReply(""))
	},
	func() *Scenario {
		s := simple(sessA, func(s *script) {
			// The extension is declared (its context URI names its prefix,
			// §3.4.3): only the subscriber does not know it.
			s.ev(sessA, "progress.updated", "background", F{"progress": F{"description": "Half way", "percent": 50}, "summary_normal": "Half way.",
				"@context":   []string{"https://aaep-protocol.org/context/v1", "https://example.com/aaep/ext/mood/v1"},
				"extensions": F{"mood": F{"mood": "focused", "level": 3}}})
		})
		return builtin("unknown-extensions", 1, []string{"§9.3.2(6)", "§3.4.3"},
			"Nothing to decide: listen.",
			"An event carrying an extensions object the subscriber does not recognise: it ignores the extension and keeps consuming.",
			s, staysConnected(true), noReply(""))
	},
	func() *Scenario {
		s := simple(sessA, func(s *script) {
			// An extension's own event type, outside the aaep: namespace,
			// declared by its context (§3.2.2, §3.4.3), as the reference
			// suite sends exampleext:custom_event.
			s.typed(sessA, "exampleext:custom_event", "normal", F{"summary_normal": "A custom event.",
				"@context":   []string{"https://aaep-protocol.org/context/v1", "https://example.com/aaep/ext/exampleext/v1"},
				"exampleext": F{"detail": "only its extension knows this"}})
		})
		sc := builtin("unknown-extension-type", 1, []string{"§9.3.2(5)", "§3.2.2"},
			"Nothing to decide: listen.",
			"An extension's event type outside the aaep: namespace (exampleext:custom_event) in the middle of a session: the subscriber announces it generically or skips it, and keeps consuming. A subscriber whose event_filters leave it out (the default include is aaep:agent.*) is not sent it: not applicable.",
			s, staysConnected(true), noReply(""))
		sc.needs = "exampleext:custom_event"
		return sc
	},
	func() *Scenario {
		s := newScript().started(sessA, "Moving the files to the archive.")
		s.state(sessA, "idle", "calling_tool")
		s.ev(sessA, "tool.invoked", "normal", F{"tool": "move_files", "tool_call_id": "call_1", "summary_normal": "Moving 40 files."})
		s.ev(sessA, "tool.completed", "normal", F{"tool": "move_files", "tool_call_id": "call_1", "status": "error", "error_message": "The disk is full.", "summary_normal": "The move failed."})
		s.ev(sessA, "session.errored", "critical", F{"error_category": "permanent", "error_code": "DISK_FULL", "summary_normal": "I stopped: the archive disk is full.", "recoverable": false})
		epilogue(s)
		return builtin("critical-urgency", 1, []string{"§9.3.2(7)", "§3.3.2"},
			"Nothing to decide: the critical event must be announced, never suppressed.",
			"A session that ends with an urgency critical event, and another session after it: the subscriber announces it with prominence (observable here: it stays attached past it and sends nothing in the user's name).",
			s, staysConnected(true), noReply(""))
	},
	func() *Scenario {
		s := newScript().started(sessA, "Writing the summary.")
		s.started(sessB, "Fetching the weather.")
		s.started(sessC, "Booking a room.")
		s.state(sessA, "idle", "thinking").state(sessB, "idle", "thinking").state(sessC, "idle", "thinking")
		s.completed(sessA, "Summary written.")
		s.ev(sessB, "session.errored", "critical", F{"error_category": "transient", "error_code": "UPSTREAM_TIMEOUT", "summary_normal": "The weather service did not answer.", "recoverable": true})
		s.ev(sessC, "session.cancelled", "normal", F{"cancelled_by": "user", "summary_normal": "Booking cancelled at your request."})
		epilogue(s)
		return builtin("terminal-events", 1, []string{"§9.3.2(4)", "§4.1.2", "§4.1.3", "§4.1.4"},
			"Nothing to decide: three sessions end, one completed, one errored, one cancelled.",
			"The three terminal events, which a subscriber announces distinctly.",
			s, staysConnected(true), noReply(""))
	},
	// Level 1, robustness: what a network and a busy producer do to a
	// stream. Their expectations are advisory unless the specification
	// makes them duties.
	func() *Scenario {
		s := simple(sessA, func(s *script) {
			s.ev(sessA, "progress.updated", "background", F{"progress": F{"description": "Waiting for the build", "percent": 40}, "summary_normal": "Waiting for the build."})
		})
		sc := builtin("silence", 1, []string{"§8", "B.1.3"},
			"Nothing to decide: the agent goes quiet for 40 seconds (keepalives only), then finishes.",
			"A 40 s pause in the middle of a session, with a keepalive every 15 s: a subscriber with a read timeout (the NVDA add-on's is 30 s) must not give up on a stream that is alive.",
			s, staysConnected(false))
		sc.Faults = []Fault{{Kind: FaultPause, After: 3, For: 40 * time.Second}}
		return sc
	},
	func() *Scenario {
		sc := builtin("reconnect", 1, []string{"B.1.5", "§8"},
			"Nothing to decide: the connection is cut after the third event; come back.",
			"The connection is cut after the third event: an SSE subscriber MAY resume with Last-Event-ID (B.1.5) and so miss nothing.",
			simple(sessA, func(s *script) { s.state(sessA, "thinking", "calling_tool").state(sessA, "calling_tool", "thinking") }),
			Expectation{Kind: ExpectResumes, Within: 10 * time.Second}, staysConnected(false))
		sc.Faults = []Fault{{Kind: FaultCut, After: 3}}
		return sc
	},
	func() *Scenario {
		s := newScript().started(sessA, "Publishing the page.")
		s.state(sessA, "idle", "thinking")
		s.confirm(sessA, "rpl_publish2", "Publish the page", "reject", 120, F{"risk_level": "medium", "irreversible": false})
		s.wait(time.Second)
		s.state(sessA, "awaiting_input", "thinking").state(sessA, "thinking", "idle")
		s.completed(sessA, "The page was not published.")
		// Level 3: answering needs Level 2, deduplicating is §9.5.2(6).
		sc := builtin("redelivery", 3, []string{"§9.5.2(6)", "§3.2.3", "§8"},
			"Reject the confirmation (rpl_publish2) once; the producer delivers it again after a reconnect.",
			"The connection is cut right after a confirmation, which is delivered again when the subscriber is back: it deduplicates by event_id and answers once.",
			s, Expectation{Kind: ExpectReply, Token: "rpl_publish2", Decision: "reject", Within: DefaultWithin, Once: true, Required: true}, staysConnected(false))
		sc.Faults = []Fault{{Kind: FaultRedeliver, After: 4}}
		return sc.deciding(Decision{Token: "rpl_publish2", Decision: "reject", Delay: 300 * time.Millisecond})
	},
	func() *Scenario {
		s := newScript().started(sessA, "Tidying the project's notes.")
		s.state(sessA, "idle", "thinking")
		s.raw(`{"@context":"https://aaep-protocol.org/context/v1","type":"aaep:agent.progress.updated","event_id":"evt_a1broken",`)
		s.state(sessA, "thinking", "idle")
		s.completed(sessA, "Notes tidied.")
		return builtin("malformed-event", 1, []string{"§9.3.2(2)", "§3.9"},
			"Nothing to decide: listen.",
			"A truncated event that is not JSON between two valid ones: the subscriber rejects it (it validates envelopes) and keeps consuming.",
			s, staysConnected(false), noReply(""))
	},
	func() *Scenario {
		s := simple(sessA, func(s *script) {
			for i := 1; i <= 3; i++ {
				s.ev(sessA, "progress.updated", "background", F{"progress": F{"description": "Copying", "percent": 25 * i}, "summary_normal": "Still copying."})
			}
		})
		sc := builtin("slow-stream", 1, []string{"§9.3.2(1)", "§8"},
			"Nothing to decide: listen; from the third event on the stream trickles at a quarter of its pace.",
			"A stream that slows to a quarter of its pace: the subscriber waits for it.",
			s, staysConnected(false))
		sc.Faults = []Fault{{Kind: FaultSlow, After: 3, Speed: 0.25}}
		return sc
	},
	// Level 2: the interactive contract.
	func() *Scenario {
		s := newScript().started(sessA, "Cleaning up old branches.")
		s.state(sessA, "idle", "thinking")
		s.confirm(sessA, "rpl_rejectme1", "Delete 12 merged branches", "accept", 120, F{"risk_level": "low", "irreversible": false})
		s.wait(time.Second)
		s.state(sessA, "awaiting_input", "thinking")
		s.state(sessA, "thinking", "idle")
		s.completed(sessA, "Left the branches alone.")
		return builtin("confirmation-reject", 2, []string{"§6.3", "§9.4.2(3)", "§9.4.2(4)"},
			"Reject the confirmation (reply_token rpl_rejectme1).",
			"A confirmation whose default is accept, which the user rejects: the subscriber sends confirmation.reply with decision reject, the token echoed exactly and its subscription_id.",
			s, reply("rpl_rejectme1", "reject")).deciding(Decision{Token: "rpl_rejectme1", Decision: "reject", Delay: 300 * time.Millisecond})
	},
	func() *Scenario {
		s := newScript().started(sessA, "Refunding order 1142.")
		s.state(sessA, "idle", "thinking")
		s.confirm(sessA, "rpl_refund1142", "Refund 86 euros to the card ending 4412", "reject", 60, nil)
		s.wait(time.Second)
		s.state(sessA, "awaiting_input", "thinking")
		s.state(sessA, "thinking", "idle")
		s.completed(sessA, "The refund was not made.")
		return builtin("confirmation-default-reject", 2, []string{"§6.3", "§6.4", "§9.4.2(3)", "§9.4.2(4)"},
			"Reject the confirmation (reply_token rpl_refund1142).",
			`A confirmation with default_decision "reject" for an irreversible action, which the user rejects: one confirmation.reply, decision reject, token echoed exactly.`,
			s, reply("rpl_refund1142", "reject")).deciding(Decision{Token: "rpl_refund1142", Decision: "reject", Delay: 300 * time.Millisecond})
	},
	func() *Scenario {
		s := newScript().started(sessA, "Publishing the release notes.")
		s.state(sessA, "idle", "thinking")
		s.confirm(sessA, "rpl_publish7", "Publish the release notes to the website", "reject", 2, nil)
		s.wait(2 * time.Second)
		s.state(sessA, "awaiting_input", "thinking")
		s.state(sessA, "thinking", "idle")
		s.completed(sessA, "Nothing was published: no answer came.")
		return builtin("confirmation-unanswered", 2, []string{"§6.4", "§9.4.2(6)"},
			"Do nothing: the user never answers.",
			"A confirmation the user never answers; the producer applies its default on timeout. Any reply is an auto-response in the user's name.",
			s, noReply(""))
	},
	func() *Scenario {
		s := newScript().started(sessA, "Finding a hotel in Oslo.")
		s.state(sessA, "idle", "thinking")
		s.state(sessA, "thinking", "awaiting_input")
		s.ev(sessA, "awaiting.clarification", "critical", F{"question": "Do you need a roll-in shower, or is a bath with grab rails enough?",
			"reply_token": "rpl_bathroom3", "timeout_seconds": 120, "accepted_response_kinds": []string{"multiple_choice"},
			"choices":        []F{{"label": "Roll-in shower", "value": "roll_in"}, {"label": "Bath with grab rails", "value": "grab_rails"}},
			"summary_normal": "Which bathroom do you need?"})
		s.wait(time.Second)
		s.state(sessA, "awaiting_input", "thinking")
		s.state(sessA, "thinking", "idle")
		s.completed(sessA, "Found two hotels with roll-in showers.")
		e := reply("rpl_bathroom3", "")
		e.Response = []byte(`"roll_in"`)
		return builtin("clarification", 2, []string{"§6.5", "§9.4.2(7)"},
			`Answer the clarification (reply_token rpl_bathroom3) with the choice "roll_in".`,
			"A multiple-choice clarification the user answers: clarification.reply with the chosen value, the token echoed exactly.",
			s, e).deciding(Decision{Token: "rpl_bathroom3", Response: e.Response, Delay: 300 * time.Millisecond})
	},
	func() *Scenario {
		s := newScript().started(sessA, "Renaming the project.")
		s.state(sessA, "idle", "thinking")
		s.confirm(sessA, "rpl_rename5", "Rename the repository to atlas", "reject", 120, F{"risk_level": "medium", "irreversible": false})
		s.state(sessA, "awaiting_input", "thinking")
		s.wait(time.Second)
		s.state(sessA, "thinking", "idle")
		s.completed(sessA, "Kept the old name.")
		return builtin("confirmation-withdrawn", 2, []string{"§6.8", "§9.4.2(9)"},
			"Accept the confirmation (rpl_rename5) one second after it was withdrawn, if it is still offered.",
			"A confirmation the producer withdraws by a state change back to thinking (§6.8): the subscriber removes the prompt, so the user's late accept never becomes a reply.",
			s, noReply("rpl_rename5")).deciding(Decision{Token: "rpl_rename5", Decision: "accept", Delay: 1250 * time.Millisecond})
	},
	func() *Scenario {
		s := newScript().started(sessA, "Sending the newsletter.")
		s.state(sessA, "idle", "thinking")
		s.confirm(sessA, "rpl_send9", "Send the newsletter to 4,000 people", "reject", 120, nil)
		s.ev(sessA, "session.cancelled", "normal", F{"cancelled_by": "system", "summary_normal": "The session was cancelled by the administrator."})
		s.wait(time.Second)
		epilogue(s)
		return builtin("cancelled-while-waiting", 2, []string{"§6.8", "§9.4.2(9)"},
			"Accept the confirmation (rpl_send9) one second after the session was cancelled, if it is still offered.",
			"A session cancelled while its confirmation waits: the subscriber drops the prompt, and sends no reply for a session that has ended.",
			s, noReply("rpl_send9")).deciding(Decision{Token: "rpl_send9", Decision: "accept", Delay: 1250 * time.Millisecond})
	},
	// Level 3: the negotiated contract.
	func() *Scenario {
		s := simple(sessA, func(*script) {})
		return builtin("handshake-sse", 3, []string{"§5.2", "§9.5.2(2)", "B.1.2"},
			"Nothing to decide: subscribe over SSE with POST /aaep/v1/subscriptions, then open the stream it names.",
			"The SSE handshake: a subscription.request with a capabilities object posted before the stream is opened.",
			s, Expectation{Kind: ExpectRequest, Type: "subscription.request", Transport: "sse", Fields: fields("capabilities", `{}`), Required: true}, noReply("")).
			over(TransportSSE)
	},
	func() *Scenario {
		s := simple(sessA, func(*script) {})
		return builtin("handshake-websocket", 3, []string{"§5.2", "§9.5.2(2)", "B.2.3"},
			"Nothing to decide: subscribe over WebSocket (subprotocol aaep.v1) with a subscription.request as the first message.",
			"The WebSocket handshake: a subscription.request with a capabilities object as the first message.",
			s, Expectation{Kind: ExpectRequest, Type: "subscription.request", Transport: "websocket", Fields: fields("capabilities", `{}`), Required: true}, noReply("")).
			over(TransportWebSocket)
	},
	func() *Scenario {
		// The producer honours 2 events a second where the subscriber
		// asked for more (or for no limit): a burst of 4 a second is held
		// to 2.
		s := simple(sessA, func(s *script) {
			for i := 1; i <= 8; i++ {
				s.ev(sessA, "progress.updated", "background", F{"progress": F{"description": "Indexing", "percent": 10 * i}, "summary_normal": "Still indexing."})
			}
		})
		sc := builtin("honored-capabilities", 3, []string{"§9.5.2(3)", "§5.4.4"},
			"Nothing to decide: subscribe; the producer honours max_events_per_second 2, lower than asked.",
			"The producer accepts a lower rate than requested (honored_capabilities max_events_per_second 2): the subscriber takes the lower rate and stays subscribed, neither closing nor leaving (what it does with the rate beyond that no wire shows).",
			s, Expectation{Kind: ExpectRequest, Type: "subscription.request", Fields: fields("capabilities", `{}`), Required: true}, staysConnected(true), noReply(""))
		sc.HonorMaxRate = 2
		return sc
	},
	func() *Scenario {
		// The withdrawal (sequence_number 4) is delivered before the
		// confirmation it withdraws (3).
		s := newScript().started(sessA, "Archiving last year's invoices.")
		s.state(sessA, "idle", "thinking")
		s.confirm(sessA, "rpl_archive4", "Archive 312 invoices", "reject", 120, F{"risk_level": "medium", "irreversible": false})
		s.state(sessA, "awaiting_input", "thinking").swapLast()
		s.wait(time.Second)
		s.state(sessA, "thinking", "idle")
		s.completed(sessA, "Archived nothing yet.")
		epilogue(s)
		return builtin("out-of-order", 3, []string{"§9.5.2(5)", "§3.4.1", "§6.8"},
			"Accept the confirmation (rpl_archive4) one second after it arrived, if it is still offered.",
			"The state change that withdraws a confirmation (sequence_number 4) arrives before the confirmation (3): a subscriber that orders by sequence_number knows the prompt was withdrawn and never offers it, so the user's accept never becomes a reply.",
			s, noReply("rpl_archive4"), staysConnected(true)).deciding(Decision{Token: "rpl_archive4", Decision: "accept", Delay: 1250 * time.Millisecond})
	},
	func() *Scenario {
		s := newScript().started(sessA, "Reviewing the pull request.")
		s.state(sessA, "idle", "thinking")
		s.ev(sessA, "progress.updated", "background", F{"progress": F{"description": "Reading the diff", "percent": 30}, "summary_normal": "Reading the diff."})
		quit := s.lastID()
		s.wait(time.Second)
		s.ev(sessA, "progress.updated", "background", F{"progress": F{"description": "Writing comments", "percent": 70}, "summary_normal": "Writing comments."})
		s.state(sessA, "thinking", "idle")
		s.completed(sessA, "Review posted.")
		return builtin("close-on-shutdown", 3, []string{"§9.5.2(7)", "§5.8"},
			"Quit the subscriber after the third event ("+quit+"): it closes its subscription cleanly.",
			"The user quits the subscriber mid-session: it sends subscription.close on its subscription before it goes.",
			s, Expectation{Kind: ExpectSends, Type: "subscription.close", Required: true}).
			deciding(Decision{Action: ActionShutdown, After: quit, Delay: 200 * time.Millisecond})
	},
	func() *Scenario {
		// Under backpressure (the producer honours 2 events a second), a
		// burst of progress with a critical confirmation and a critical
		// handoff among it.
		s := newScript().started(sessA, "Migrating the database.")
		s.state(sessA, "idle", "thinking")
		s.step = 100 * time.Millisecond
		for i := 1; i <= 2; i++ {
			s.ev(sessA, "progress.updated", "background", F{"progress": F{"description": "Copying tables", "percent": 20 * i}, "summary_normal": "Copying tables."})
		}
		s.confirm(sessA, "rpl_drop6", "Drop the old tables", "reject", 120, nil)
		s.started(sessB, "Answering the customer.")
		s.state(sessB, "idle", "thinking")
		s.ev(sessB, "handoff.requested", "critical", F{"reason": "The customer asks for a refund only a person may grant.", "target_kind": "human", "summary_normal": "Handing the customer to a person: a refund needs approval."})
		s.step = 250 * time.Millisecond
		s.wait(time.Second)
		s.ev(sessB, "session.cancelled", "normal", F{"cancelled_by": "system", "summary_normal": "Handed over to a person."})
		s.state(sessA, "awaiting_input", "thinking").state(sessA, "thinking", "idle")
		s.completed(sessA, "The old tables were kept.")
		sc := builtin("critical-under-backpressure", 3, []string{"§9.5.2(9)", "§5.5.4", "§3.3.2"},
			"Reject the confirmation (rpl_drop6), which comes amid a burst held back to 2 events a second.",
			"Backpressure (the producer honours max_events_per_second 2) over a burst with two critical events, a confirmation and a handoff: the subscriber still takes them in (critical events are never held back, §5.5.4), answers the confirmation and stays attached past the handoff.",
			s, reply("rpl_drop6", "reject"), staysConnected(true)).deciding(Decision{Token: "rpl_drop6", Decision: "reject", Delay: 300 * time.Millisecond})
		sc.HonorMaxRate = 2
		return sc
	},
	func() *Scenario {
		s := simple(sessA, func(*script) {})
		sc := builtin("subscription-rejected", 3, []string{"§5.5", "§9.5.2(2)"},
			"Nothing to decide: subscribe; the producer rejects the subscription (rate_limit).",
			"A subscription the producer rejects: the subscriber sent its request, takes the rejection, and sends nothing on a subscription that does not exist.",
			s, Expectation{Kind: ExpectRequest, Type: "subscription.request", Fields: fields("capabilities", `{}`), Required: true}, noReply(""))
		sc.Reject = "rate_limit"
		return sc
	},
	func() *Scenario {
		const first = "evt_a10000" // the session's first event
		s := simple(sessA, func(s *script) {
			s.wait(time.Second)
			s.ev(sessA, "progress.updated", "background", F{"progress": F{"description": "Half way", "percent": 50}, "summary_normal": "Half way."})
			s.wait(time.Second)
		})
		return builtin("renegotiation", 3, []string{"§5.7", "§9.5.2(4)"},
			`Switch the verbosity to terse after the first event (`+first+`): the subscriber sends subscription.renegotiate with preferred_verbosity "terse".`,
			"Renegotiation mid-stream: subscription.renegotiate with the new capabilities, on the subscription it has.",
			s, Expectation{Kind: ExpectSends, Type: "subscription.renegotiate", Fields: fields("capabilities", `{"preferred_verbosity":"terse"}`), Required: true}).
			deciding(Decision{Action: ActionRenegotiate, After: first, Capabilities: json.RawMessage(`{"preferred_verbosity":"terse"}`)})
	},
}

func fields(k, v string) map[string]json.RawMessage {
	return map[string]json.RawMessage{k: json.RawMessage(v)}
}

// errNoScenario is returned when a name matches no built-in scenario.
var errNoScenario = errors.New("no such scenario")
