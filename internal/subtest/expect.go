package subtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/serve"
)

// Outcome is the verdict on one expectation.
type Outcome struct {
	Expectation
	Name   string `json:"name"`
	Passed bool   `json:"passed"`
	// Message says what was seen (why it failed, or what satisfied it).
	Message string `json:"message"`
	// Records are the record numbers of the recording the verdict rests on.
	Records []int64 `json:"records,omitempty"`
	// Took is how long into the run the verdict was reached: the offset
	// of the last record it rests on, or the whole run (a check of
	// absence watches all of it).
	Took time.Duration `json:"took_ns"`
	// Unverified is set for a check that passed by absence (no reply,
	// stayed connected) with nothing to show the subscriber took in the
	// events; under --require-evidence it fails instead.
	Unverified bool `json:"unverified,omitempty"`
	// NotObservable is set for a check of what the user was told when
	// nothing of it is observed (no --page, no --announcements): neither
	// passed nor failed (under --require-evidence, failed).
	NotObservable bool `json:"not_observable,omitempty"`
}

// Unverified is what an unverified pass says.
const Unverified = "nothing shows the subscriber took in the events"

// byAbsence are the kinds of expectation that pass when nothing happens.
var byAbsence = map[ExpectKind]bool{ExpectNoReply: true, ExpectStaysConnected: true}

// evaluate judges every expectation of sc against the exchange; lastEvent
// is the event_id of the capture's last event. A check passed by absence
// is unverified (a failure when requireEvidence).
func evaluate(sc *Scenario, x *exchange, lastEvent string, requireEvidence bool) []Outcome {
	out := make([]Outcome, 0, len(sc.Expect))
	for _, e := range sc.Expect {
		o := Outcome{Expectation: e, Name: e.Name()}
		switch e.Kind {
		case ExpectReply:
			o.Passed, o.Message, o.Records = x.expectReply(&e, sc.Decisions)
		case ExpectNoReply:
			o.Passed, o.Message, o.Records = x.expectNoReply(&e, sc.Decisions)
		case ExpectRequest, ExpectSends:
			o.Passed, o.Message, o.Records = x.expectSends(&e)
		case ExpectStaysConnected:
			o.Passed, o.Message, o.Records = x.expectConnected(lastEvent)
		case ExpectResumes:
			o.Passed, o.Message, o.Records = x.expectResumes(&e)
		case ExpectAnnounce:
			x.expectAnnounce(&o, requireEvidence)
		}
		o.Took = x.end
		if len(o.Records) > 0 && !byAbsence[e.Kind] {
			o.Took = x.at(o.Records[len(o.Records)-1])
		}
		if o.Passed && byAbsence[e.Kind] && x.heard != nil {
			// The subscriber's announcements are observed: they are the
			// evidence, and required.
			o.Passed, o.Message = x.evidenced(o.Message)
		} else if o.Passed && byAbsence[e.Kind] {
			o.Unverified = true
			if requireEvidence {
				o.Passed = false
				o.Message = "unverified, and --require-evidence asks for evidence: " + Unverified + "; " + o.Message
			} else {
				o.Message = "passed, unverified: " + Unverified + "; " + o.Message
			}
		}
		out = append(out, o)
	}
	return out
}

func at(e *entry) string { return fmt.Sprintf("#%d %s", e.Index, protocol.FormatOffset(e.Offset)) }

// awaiting finds the event that carried token (the first time it was sent).
func (x *exchange) awaiting(token string) *entry {
	for i := range x.entries {
		e := &x.entries[i]
		if e.isEvent() && e.Token == token {
			return e
		}
	}
	return nil
}

func (x *exchange) expectReply(want *Expectation, ds []Decision) (bool, string, []int64) {
	ev := x.awaiting(want.Token)
	if ev == nil {
		return false, fmt.Sprintf("the event with reply_token %s never reached the subscriber (did it filter awaiting events, or leave early?)", want.Token), nil
	}
	var near []*entry // replies that did not echo the token exactly
	for i := range x.entries {
		r := &x.entries[i]
		if !r.isReply() || r.Index < ev.Index {
			continue
		}
		if r.Token != want.Token {
			if strings.EqualFold(strings.TrimSpace(r.Token), want.Token) || r.Token == "" {
				near = append(near, r)
			}
			continue
		}
		recs := []int64{ev.Index, r.Index}
		kind := strings.TrimPrefix(ev.Type, "aaep:agent.awaiting.") + ".reply"
		if auto := x.autoResponse(r, ds, false); auto != "" {
			return false, auto, recs
		}
		switch {
		case r.Type != kind:
			return false, fmt.Sprintf("%s answered %s (%s) with a %s, want a %s", at(r), ev.Type, at(ev), r.Type, kind), recs
		case want.Decision != "" && r.Decision != want.Decision:
			return false, fmt.Sprintf("%s has decision %q, want %q: the scripted user chose %s", at(r), r.Decision, want.Decision, want.Decision), recs
		case len(want.Response) > 0 && !jsonEqualSubset(want.Response, r.Response):
			return false, fmt.Sprintf("%s has response %s, want %s", at(r), orNone(r.Response), want.Response), recs
		case r.Offset-ev.Offset > want.Within:
			return false, fmt.Sprintf("%s came %s after the event (%s), want within %s", at(r), fmtDur(r.Offset-ev.Offset), at(ev), want.Within), recs
		}
		if want.Once {
			if n := x.deliveries(ev.EventID); n < 2 {
				return false, fmt.Sprintf("%s %s, but the prompt %s reached the subscriber once: no redelivery happened (it did not come back where it left, B.1.5), so nothing shows it deduplicates (§9.5.2(6))", at(r), replyWhat(r), at(ev)), recs
			}
		}
		if again := x.replyAfter(r, want.Token); again != nil {
			why := "a token once consumed is invalid for any further use and only the first reply counts (§6.3.4(3), §6.3.5): the user decided once"
			if want.Once {
				why = "a redelivered prompt (same event_id) is answered once (§9.5.2(6))"
			}
			return false, fmt.Sprintf("%s answered %s again after %s: %s", at(again), want.Token, at(r), why), append(recs, again.Index)
		}
		return true, fmt.Sprintf("%s %s %s after the event (%s)", at(r), replyWhat(r), fmtDur(r.Offset-ev.Offset), at(ev)), recs
	}
	if len(near) > 0 {
		r := near[0]
		return false, fmt.Sprintf("%s has reply_token %q: the token %s (%s) must be echoed exactly (§9.4.2(4))", at(r), r.Token, want.Token, at(ev)), []int64{ev.Index, r.Index}
	}
	return false, fmt.Sprintf("no reply with reply_token %s after the event (%s); the scripted user: %s", want.Token, at(ev), describeDecision(want)), []int64{ev.Index}
}

// deliveries counts the times the event eventID reached the subscriber.
func (x *exchange) deliveries(eventID string) int {
	n := 0
	for i := range x.entries {
		if e := &x.entries[i]; e.isEvent() && e.EventID == eventID && eventID != "" {
			n++
		}
	}
	return n
}

// autoResponse says why reply r is an auto-response (§9.4.2(6)): it came
// before the scripted user acted on its prompt (or, when unanswered, the
// user has no decision for it); "" when it is not.
func (x *exchange) autoResponse(r *entry, ds []Decision, unanswered bool) string {
	ev := x.awaiting(r.Token)
	if ev == nil {
		return ""
	}
	took := r.Offset - ev.Offset
	for _, d := range ds {
		if d.Token != r.Token {
			continue
		}
		// The user acts Delay after the prompt reached the subscriber:
		// a reply well before that is not the user's.
		if took < d.Delay*3/4 {
			return fmt.Sprintf("%s %s came %s after the prompt (%s), before the scripted user acted (%s after it): an auto-response in the user's name (§9.4.2(6))", at(r), replyWhat(r), fmtDur(took), at(ev), fmtDur(d.Delay))
		}
		return ""
	}
	if !unanswered {
		return ""
	}
	return fmt.Sprintf("%s %s came %s after the prompt (%s), which the scripted user never answers: an auto-response in the user's name (§9.4.2(6))", at(r), replyWhat(r), fmtDur(took), at(ev))
}

// replyAfter finds a later reply with the same token than r.
func (x *exchange) replyAfter(r *entry, token string) *entry {
	for i := int(r.Index) + 1; i < len(x.entries); i++ {
		if e := &x.entries[i]; e.isReply() && e.Token == token {
			return e
		}
	}
	return nil
}

func describeDecision(e *Expectation) string {
	switch {
	case e.Decision != "":
		return e.Decision
	case len(e.Response) > 0:
		return "answer " + string(e.Response)
	}
	return "answer"
}

func replyWhat(r *entry) string {
	if r.Decision != "" {
		return "decision " + r.Decision
	}
	return "response " + orNone(r.Response)
}

func orNone(b json.RawMessage) string {
	if len(bytes.TrimSpace(b)) == 0 {
		return "(none)"
	}
	return string(b)
}

func (x *exchange) expectNoReply(want *Expectation, ds []Decision) (bool, string, []int64) {
	var bad []*entry
	for i := range x.entries {
		r := &x.entries[i]
		if r.isReply() && (want.Token == "" || r.Token == want.Token) {
			bad = append(bad, r)
		}
	}
	if len(bad) == 0 {
		if want.Token != "" {
			return true, fmt.Sprintf("no reply with reply_token %s", want.Token), nil
		}
		return true, "no reply", nil
	}
	recs := make([]int64, len(bad))
	var parts []string
	for i, r := range bad {
		recs[i] = r.Index
		parts = append(parts, fmt.Sprintf("%s %s %s %s", at(r), r.Type, r.Token, replyWhat(r)))
	}
	why := "the scripted user did nothing, so any reply is an auto-response (§9.4.2(6))"
	if want.Token != "" {
		if ev := x.awaiting(want.Token); ev != nil {
			recs = append([]int64{ev.Index}, recs...)
		}
		if auto := x.autoResponse(bad[0], ds, true); auto != "" {
			return false, auto, recs
		}
		why = "the prompt was withdrawn before the scripted user acted (§6.8, §9.4.2(9))"
	}
	return false, fmt.Sprintf("%s: %s", strings.Join(parts, "; "), why), recs
}

func (x *exchange) expectSends(want *Expectation) (bool, string, []int64) {
	var seen []*entry
	for i := range x.entries {
		m := &x.entries[i]
		if m.Kind != capfile.KindSent || m.Type != want.Type {
			continue
		}
		seen = append(seen, m)
		if want.Transport != "" && x.transport(m) != want.Transport {
			continue
		}
		ok := true
		for k, v := range want.Fields {
			got, has := m.Members[k]
			if !has || !jsonEqualSubset(v, got) {
				ok = false
			}
		}
		if ok {
			return true, fmt.Sprintf("%s %s over %s", at(m), m.Type, x.transport(m)), []int64{m.Index}
		}
	}
	if len(seen) == 0 {
		return false, fmt.Sprintf("the subscriber sent no %s", want.Type), nil
	}
	m := seen[0]
	var diffs []string
	if want.Transport != "" && x.transport(m) != want.Transport {
		diffs = append(diffs, fmt.Sprintf("it came over %s, want %s", x.transport(m), want.Transport))
	}
	for _, k := range sortedKeys(want.Fields) {
		got, has := m.Members[k]
		switch {
		case !has:
			diffs = append(diffs, fmt.Sprintf("it has no %s", k))
		case !jsonEqualSubset(want.Fields[k], got):
			diffs = append(diffs, fmt.Sprintf("its %s is %s, want %s", k, got, want.Fields[k]))
		}
	}
	return false, fmt.Sprintf("%s %s: %s", at(m), m.Type, strings.Join(diffs, "; ")), []int64{m.Index}
}

// leftEarly are the close causes that mean the subscriber went away (or
// stopped reading) on its own.
var leftEarly = map[string]bool{
	serve.CauseSubscriber: true, serve.CauseDisconnected: true, serve.CauseUnresponsive: true,
	serve.CauseStalled: true, serve.CauseTooSlow: true, serve.CauseLagging: true,
}

// expectConnected: the subscriber stays until the last event has reached
// it (leaving after that is its business); a cut the run made is not
// leaving, if it comes back.
func (x *exchange) expectConnected(lastEvent string) (bool, string, []int64) {
	for i := range x.entries {
		e := &x.entries[i]
		if e.isEvent() && e.EventID == lastEvent && lastEvent != "" {
			return true, fmt.Sprintf("attached until the last event %s reached it", at(e)), []int64{e.Index}
		}
		if e.Conn != nil && e.connString("event") == capfile.ConnClosed && leftEarly[e.connString("cause")] {
			return false, fmt.Sprintf("%s the subscription closed before the replay ended (cause %s: %s)", at(e), e.connString("cause"), e.connString("reason")), []int64{e.Index}
		}
	}
	return false, fmt.Sprintf("the last event (%s) never reached the subscriber", lastEvent), nil
}

func (x *exchange) expectResumes(want *Expectation) (bool, string, []int64) {
	var cuts int
	for i := range x.entries {
		c := &x.entries[i]
		if c.Conn == nil || c.connString("event") != capfile.ConnClosed || c.connString("cause") != serve.CauseCut {
			continue
		}
		cuts++
		lastID := x.lastEventBefore(c)
		found := false
		for j := i + 1; j < len(x.entries); j++ {
			r := &x.entries[j]
			if r.Conn == nil || r.connString("event") != capfile.ConnConnected {
				continue
			}
			got := r.connString("last_event_id")
			recs := []int64{c.Index, r.Index}
			switch {
			case r.Offset-c.Offset > want.Within:
				return false, fmt.Sprintf("%s reconnected %s after the cut (%s), want within %s", at(r), fmtDur(r.Offset-c.Offset), at(c), want.Within), recs
			case got == "":
				return false, fmt.Sprintf("%s reconnected after the cut (%s) without Last-Event-ID (B.1.5); the last event it got was %s", at(r), at(c), lastID), recs
			case got != lastID:
				return false, fmt.Sprintf("%s reconnected with Last-Event-ID %s, but the last event before the cut (%s) was %s", at(r), got, at(c), lastID), recs
			}
			found = true
			break
		}
		if !found {
			return false, fmt.Sprintf("the subscriber never came back after the cut (%s)", at(c)), []int64{c.Index}
		}
	}
	if cuts == 0 {
		return false, "the run cut no connection (the scenario needs a cut fault)", nil
	}
	return true, fmt.Sprintf("resumed with Last-Event-ID after %d cut(s)", cuts), nil
}

// lastEventBefore is the id of the last event the cut subscription got.
func (x *exchange) lastEventBefore(c *entry) string {
	for i := int(c.Index) - 1; i >= 0; i-- {
		e := &x.entries[i]
		if e.Sub == c.Sub && e.isEvent() && e.EventID != "" {
			return e.EventID
		}
	}
	return ""
}

func fmtDur(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(10 * time.Millisecond).String()
}

// jsonEqualSubset reports whether got holds want: equal scalars and
// arrays, and for an object every member of want equal (recursively) in got.
func jsonEqualSubset(want, got json.RawMessage) bool {
	var w, g any
	if json.Unmarshal(want, &w) != nil || json.Unmarshal(got, &g) != nil {
		return bytes.Equal(bytes.TrimSpace(want), bytes.TrimSpace(got))
	}
	return subset(w, g)
}

func subset(w, g any) bool {
	wm, ok := w.(map[string]any)
	if !ok {
		wb, _ := json.Marshal(w)
		gb, _ := json.Marshal(g)
		return bytes.Equal(wb, gb)
	}
	gm, ok := g.(map[string]any)
	if !ok {
		return false
	}
	for k, wv := range wm {
		gv, ok := gm[k]
		if !ok || !subset(wv, gv) {
			return false
		}
	}
	return true
}
