package subtest

// The built-in scenarios' duties of what the user is told (§9.3.2(3)–(7)):
// announce expectations, judged where the subscriber's announcements are
// observed (--page, --announcements) and reported not observable where
// they are not. Kept beside the built-ins they add to.

// announceBuiltins are built-in scenarios that test announcements only.
var announceBuiltins = []func() *Scenario{
	func() *Scenario {
		s := newScript().started(sessA, "Renaming the photos from the trip.")
		s.state(sessA, "idle", "thinking").state(sessA, "thinking", "calling_tool")
		s.ev(sessA, "tool.invoked", "normal", F{"tool": "rename_files", "tool_call_id": "call_7", "summary_normal": "Renaming 212 photos by date."})
		s.ev(sessA, "tool.completed", "normal", F{"tool": "rename_files", "tool_call_id": "call_7", "status": "success", "summary_normal": "212 photos renamed."})
		s.state(sessA, "calling_tool", "thinking").state(sessA, "thinking", "idle")
		s.completed(sessA, "The photos have their dates in their names.")
		epilogue(s)
		return builtin("announce-lifecycle", 1, []string{"§9.3.2(3)"},
			"Nothing to decide: listen.",
			"A session that starts, calls a tool and completes: the subscriber announces the start, the tool call and the end (what it announces is observed with --page or --announcements).",
			s, announce("session.started", sessA).because(saysAnnounced), announce("tool.invoked", sessA).because(saysAnnounced),
			announce("session.completed", sessA).because(saysAnnounced),
			staysConnected(true), noReply(""))
	},
}

// Words that tell how a session ended (§9.3.2(4)), in English: a
// scenario file can name its own.
var (
	saysCompleted = []string{"complete", "done", "finished", "success"}
	saysErrored   = []string{"error", "fail", "problem"}
	saysCancelled = []string{"cancel", "abort"}
)

// The duties the built-ins' announce checks stand for.
const (
	saysAnnounced = "§9.3.2(3): the session's start, its end and tool calls are announced"
	saysGeneric   = "§9.3.2(5): an unknown type is announced generically"
	toldApart     = "§9.3.2(4): completed, errored and cancelled are told apart in what the user hears; our reading: in words, those of the scenario (English)"
)

// announceDuties are the announce expectations added to other built-ins.
var announceDuties = map[string][]Expectation{
	// §9.3.2(5): announce an unknown type generically rather than crash.
	"unknown-event-type":     {announce("memory.compacted", sessA).because(saysGeneric)},
	"unknown-extension-type": {announce("exampleext:custom_event", sessA).because(saysGeneric)},
	// §9.3.2(7): never suppress a critical event (a MUST); announce it
	// assertively (a SHOULD: our reading of "appropriate prominence").
	"critical-urgency": {announce("session.errored", sessA).as(Assertive).because("§9.3.2(7): critical events with appropriate prominence")},
	// §9.3.2(3) and (4): the three ends, each announced and told apart.
	"terminal-events": {
		announce("session.completed", sessA).saying(saysCompleted...).because(toldApart),
		announce("session.errored", sessB).saying(saysErrored...).as(Assertive).because(toldApart),
		announce("session.cancelled", sessC).saying(saysCancelled...).because(toldApart),
	},
}

func announce(typ, session string) Expectation {
	return Expectation{Kind: ExpectAnnounce, Type: typ, Session: session, Required: true}
}

func (e Expectation) saying(words ...string) Expectation {
	e.Contains = words
	return e
}

func (e Expectation) because(why string) Expectation {
	e.Why = why
	return e
}

func (e Expectation) as(politeness string) Expectation {
	e.Politeness = politeness
	return e
}

// withAnnounceDuties adds a built-in's announce expectations.
func withAnnounceDuties(sc *Scenario) *Scenario {
	sc.Expect = append(sc.Expect, announceDuties[sc.Name]...)
	return sc
}
