// Package sample generates realistic AAEP sessions for the demo, the
// benchmarks and tests: interleaved sessions of an assistant booking travel,
// researching with a clarification, failing on a tool, and (on request)
// breaking the protocol in ways the checker must catch.
//
// Output is deterministic for a given seed.
package sample

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"
)

// Msg is one generated message.
type Msg struct {
	// Offset is when the message is sent, relative to the stream's start.
	Offset time.Duration
	// FromSubscriber marks a reply or request sent by a subscriber (all other
	// messages are the producer's events).
	FromSubscriber bool
	// Session is the AAEP session_id.
	Session string
	// Type is the message type.
	Type string
	// JSON is the encoded message.
	JSON []byte
}

// Options shape a generated stream.
type Options struct {
	// Sessions is how many sessions to generate (default 4).
	Sessions int
	// Seed makes the stream reproducible.
	Seed uint64
	// Start is the wall-clock time of the first event (default 2026-11-02T09:00:00Z).
	Start time.Time
	// Gap is the mean time between two events of one session (default 400ms).
	Gap time.Duration
	// Stagger is the delay between the starts of consecutive sessions (default 1.5s).
	Stagger time.Duration
	// Violations makes every fourth session break the protocol: a tool
	// completion without an invocation, a broken state chain and a missing
	// critical urgency.
	Violations bool
	// Compact leaves out the optional aaep_version and localization_hints,
	// as many producers do; Events uses it to get about 430-byte events.
	Compact bool
}

// Start0 returns the wall-clock start the stream uses (Start or its default).
func (o Options) Start0() time.Time {
	o.defaults()
	return o.Start
}

func (o *Options) defaults() {
	if o.Sessions <= 0 {
		o.Sessions = 4
	}
	if o.Start.IsZero() {
		o.Start = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	}
	if o.Gap <= 0 {
		o.Gap = 400 * time.Millisecond
	}
	if o.Stagger <= 0 {
		o.Stagger = 1500 * time.Millisecond
	}
}

// Stream generates opts.Sessions interleaved sessions, ordered by offset.
func Stream(opts Options) []Msg {
	opts.defaults()
	rng := rand.New(rand.NewPCG(opts.Seed, 0x5eed))
	var all []Msg
	for i := 0; i < opts.Sessions; i++ {
		g := &gen{
			rng:     rng,
			session: fmt.Sprintf("sess_%s", hex(rng, 16)),
			start:   opts.Start,
			at:      time.Duration(i) * opts.Stagger,
			gap:     opts.Gap,
			compact: opts.Compact,
		}
		scenario := i % 4
		if opts.Violations && scenario == 3 {
			g.broken()
		} else {
			switch scenario {
			case 0, 3:
				g.booking()
			case 1:
				g.research()
			case 2:
				g.failing()
			}
		}
		all = append(all, g.out...)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Offset < all[j].Offset })
	return all
}

// Events returns n producer events (replies left out), cycling through
// sessions as needed: a bulk stream for benchmarks, about 430 bytes an event.
func Events(n int, seed uint64) [][]byte {
	out := make([][]byte, 0, n)
	for round := uint64(0); len(out) < n; round++ {
		for _, m := range Stream(Options{Sessions: 8, Seed: seed + round, Gap: time.Millisecond, Stagger: time.Millisecond, Compact: true}) {
			if m.FromSubscriber {
				continue
			}
			out = append(out, m.JSON)
			if len(out) == n {
				break
			}
		}
	}
	return out
}

type gen struct {
	rng     *rand.Rand
	session string
	start   time.Time
	at      time.Duration
	gap     time.Duration
	compact bool
	seq     int
	out     []Msg
}

func hex(rng *rand.Rand, n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[rng.IntN(16)]
	}
	return string(b)
}

// field is one key/value of an event, kept in order so the JSON reads like a
// producer's own.
type field struct {
	k string
	v any
}

func (g *gen) tick() {
	// Gaps vary between half and one and a half times the mean.
	g.at += g.gap/2 + time.Duration(g.rng.Int64N(int64(g.gap)))
}

func (g *gen) now() string {
	return g.start.Add(g.at).UTC().Format("2006-01-02T15:04:05.000Z")
}

func (g *gen) event(typ, urgency string, fields ...field) {
	g.tick()
	g.emit(typ, urgency, fields...)
}

// emit adds an event at the current time (without advancing the clock).
func (g *gen) emit(typ, urgency string, fields ...field) {
	head := []field{
		{"@context", "https://aaep-protocol.org/context/v1"},
		{"type", "aaep:agent." + typ},
		{"event_id", "evt_" + hex(g.rng, 32)},
		{"session_id", g.session},
		{"timestamp", g.now()},
		{"producer", map[string]string{"agent_id": "travel-assistant", "agent_version": "2.4.1"}},
	}
	if !g.compact {
		head = append(head, field{"aaep_version", "1.0.0"})
	}
	if urgency != "" {
		head = append(head, field{"urgency", urgency})
	}
	head = append(head, field{"sequence_number", g.seq})
	if !g.compact {
		head = append(head, field{"localization_hints", map[string]string{"primary_language": "en-US"}})
	}
	g.seq++
	g.out = append(g.out, Msg{Offset: g.at, Session: g.session, Type: "aaep:agent." + typ, JSON: encode(append(head, fields...))})
}

func (g *gen) reply(typ string, fields ...field) {
	g.tick()
	all := append([]field{{"type", typ}}, fields...)
	all = append(all, field{"subscription_id", "sub_demo0001"}, field{"timestamp", g.now()})
	g.out = append(g.out, Msg{Offset: g.at, FromSubscriber: true, Session: g.session, Type: typ, JSON: encode(all)})
}

func encode(fields []field) []byte {
	b := []byte{'{'}
	for i, f := range fields {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(f.k)
		v, err := json.Marshal(f.v)
		if err != nil {
			panic(err) // generator values are always encodable
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}')
}

func (g *gen) state(from, to, summary string) {
	g.event("state.changed", "background", field{"from_state", from}, field{"to_state", to}, field{"summary_normal", summary})
}

func (g *gen) tool(name, args, result string, irreversible bool) {
	id := "call_" + hex(g.rng, 12)
	inv := []field{{"tool", name}, {"tool_call_id", id}, {"summary_normal", "Calling " + name + ": " + args}, {"args_summary", args}, {"risk_level", "low"}}
	if irreversible {
		inv = append(inv, field{"irreversible", true})
		inv[4] = field{"risk_level", "high"}
	}
	g.event("tool.invoked", "normal", inv...)
	invoked := g.at
	g.tick()
	g.emit("tool.completed", "normal", field{"tool", name}, field{"tool_call_id", id}, field{"status", "success"},
		field{"duration_ms", g.elapsedMS(invoked)}, field{"summary_normal", result})
}

// elapsedMS is the time since since, in whole milliseconds, less a little
// for the producer's own work.
func (g *gen) elapsedMS(since time.Duration) int64 {
	return max(0, (g.at-since).Milliseconds()-3)
}

func (g *gen) stream(text ...string) {
	id := "out_" + hex(g.rng, 10)
	pos := 0
	for i, chunk := range text {
		last := i == len(text)-1
		f := []field{{"output_id", id}, {"chunk", chunk}, {"position", pos}, {"complete", last}, {"content_type", "text/plain"}}
		if last {
			f = append(f, field{"coalesce_hint", "completion"})
		} else {
			f = append(f, field{"coalesce_hint", "sentence"})
		}
		g.event("output.streaming", "normal", f...)
		pos += len([]rune(chunk))
	}
}

func (g *gen) booking() {
	g.event("session.started", "normal", field{"summary_normal", "Booking a return flight from Lisbon to Oslo for 12 to 19 December."},
		field{"requested_by", "user:ines"}, field{"tools_available", []string{"search_flights", "hold_seat", "charge_card"}}, field{"expected_duration_ms", 45000})
	g.state("idle", "thinking", "Reading the request and planning the search.")
	g.state("thinking", "calling_tool", "Searching flights.")
	g.tool("search_flights", "LIS to OSL, 12 Dec out, 19 Dec back, 1 adult, economy", "Found 14 itineraries; the cheapest direct one costs 286 euros.", false)
	g.state("calling_tool", "deciding", "Comparing prices, times and baggage rules.")
	g.event("progress.updated", "background", field{"progress", map[string]any{"percent": 60, "description": "Itinerary chosen, ready to pay"}}, field{"summary_normal", "Chosen the 08:40 direct flight. Ready to pay."})
	g.state("deciding", "awaiting_input", "Waiting for your approval to pay.")
	token := "rpl_" + hex(g.rng, 20)
	g.event("awaiting.confirmation", "critical", field{"action", "Pay 286 euros with the Visa card ending 4412"},
		field{"consequence", "The ticket is issued at once and cannot be refunded."}, field{"reply_token", token},
		field{"timeout_seconds", 300}, field{"default_decision", "reject"}, field{"risk_level", "high"}, field{"irreversible", true},
		field{"summary_normal", "Approve paying 286 euros for the Lisbon to Oslo flight?"})
	g.reply("confirmation.reply", field{"reply_token", token}, field{"decision", "accept"}, field{"decided_by", "user:ines"})
	g.state("awaiting_input", "calling_tool", "Payment approved; charging the card.")
	g.tool("charge_card", "286.00 EUR, card ending 4412", "Payment accepted; ticket LX7Q2M issued.", true)
	g.state("calling_tool", "writing_output", "Writing your booking summary.")
	g.stream("Your flight is booked. ", "You leave Lisbon at 08:40 on 12 December and arrive in Oslo at 13:05. ", "The ticket number is LX7Q2M.")
	g.state("writing_output", "idle", "Done.")
	g.event("session.completed", "normal", field{"summary_normal", "Flight booked: ticket LX7Q2M, 286 euros."}, field{"tool_invocations_count", 2})
}

func (g *gen) research() {
	g.event("session.started", "normal", field{"summary_normal", "Finding accessible hotels near Oslo Central Station."},
		field{"requested_by", "user:ines"}, field{"tools_available", []string{"search_hotels", "read_reviews"}})
	g.state("idle", "thinking", "Working out what accessible means for you.")
	g.state("thinking", "awaiting_input", "One question before searching.")
	token := "rpl_" + hex(g.rng, 20)
	g.event("awaiting.clarification", "critical", field{"question", "Do you need a roll-in shower, or is a bath with grab rails enough?"},
		field{"reply_token", token}, field{"timeout_seconds", 180}, field{"accepted_response_kinds", []string{"multiple_choice"}},
		field{"choices", []map[string]string{{"value": "roll_in", "label": "Roll-in shower"}, {"value": "grab_rails", "label": "Bath with grab rails"}}},
		field{"summary_normal", "Which bathroom do you need?"})
	g.reply("clarification.reply", field{"reply_token", token}, field{"response", "roll_in"}, field{"decided_by", "user:ines"})
	g.state("awaiting_input", "calling_tool", "Searching hotels with roll-in showers.")
	g.tool("search_hotels", "Oslo S within 800 m, roll-in shower, 12-19 Dec", "Found 5 hotels with roll-in showers.", false)
	for step := 1; step <= 3; step++ {
		g.event("progress.updated", "background", field{"progress", map[string]any{"step": step, "total_steps": 3, "description": fmt.Sprintf("Reading reviews of hotel %d of 3", step)}})
	}
	g.tool("read_reviews", "top 3 hotels, accessibility mentions", "Two hotels have consistent praise for step-free access.", false)
	g.state("calling_tool", "writing_output", "Writing the shortlist.")
	g.stream("Two hotels fit: ", "Hotel Fjordgata, 300 m from the station, step-free throughout; ", "and Nordlys Suites, 650 m, with a ramp at the side entrance.")
	g.state("writing_output", "idle", "Done.")
	g.event("session.completed", "normal", field{"summary_normal", "Shortlisted two accessible hotels."}, field{"tool_invocations_count", 2})
}

func (g *gen) failing() {
	g.event("session.started", "normal", field{"summary_normal", "Checking the train connection from Oslo airport."}, field{"requested_by", "user:ines"})
	g.state("idle", "thinking", "Planning the route.")
	g.state("thinking", "calling_tool", "Asking the rail operator.")
	id := "call_" + hex(g.rng, 12)
	g.event("tool.invoked", "normal", field{"tool", "rail_timetable"}, field{"tool_call_id", id}, field{"summary_normal", "Looking up trains from OSL to Oslo S."}, field{"args_summary", "OSL to Oslo S, 12 Dec after 13:05"})
	invoked := g.at
	g.tick()
	g.emit("tool.completed", "normal", field{"tool", "rail_timetable"}, field{"tool_call_id", id}, field{"status", "timeout"}, field{"duration_ms", g.elapsedMS(invoked)},
		field{"error_message", "The rail operator did not answer in time."}, field{"summary_normal", "The timetable service timed out."})
	g.state("calling_tool", "idle", "Giving up on the timetable.")
	g.event("session.errored", "critical", field{"error_category", "transient"}, field{"error_code", "UPSTREAM_TIMEOUT"},
		field{"summary_normal", "I could not reach the rail timetable. Please try again in a few minutes."}, field{"recoverable", true})
}

// broken is a session with real protocol violations.
func (g *gen) broken() {
	g.event("session.started", "normal", field{"summary_normal", "Cancelling a hotel booking."}, field{"requested_by", "user:ines"})
	g.state("idle", "thinking", "Finding the booking.")
	// The state chain breaks: the session is in thinking, not deciding.
	g.state("deciding", "calling_tool", "Looking up the booking.")
	// A completion with no invocation before it.
	g.event("tool.completed", "normal", field{"tool", "find_booking"}, field{"tool_call_id", "call_" + hex(g.rng, 12)}, field{"status", "success"}, field{"summary_normal", "Found booking HB-2291."})
	g.state("calling_tool", "awaiting_input", "Asking before cancelling.")
	// A confirmation without the critical urgency the protocol requires.
	token := "rpl_" + hex(g.rng, 20)
	g.event("awaiting.confirmation", "normal", field{"action", "Cancel booking HB-2291"}, field{"consequence", "A cancellation fee of 40 euros applies."},
		field{"reply_token", token}, field{"timeout_seconds", 90}, field{"default_decision", "reject"}, field{"summary_normal", "Cancel booking HB-2291 for a 40 euro fee?"})
	g.reply("confirmation.reply", field{"reply_token", token}, field{"decision", "reject"}, field{"decided_by", "user:ines"})
	g.state("awaiting_input", "idle", "Keeping the booking.")
	g.event("session.completed", "normal", field{"summary_normal", "Kept booking HB-2291."})
}
