package aaep

import (
	"slices"
	"strings"

	"github.com/aaep-tools/aaepkit/payload"
)

// ---- EVT rules ----

// evtTypeConst is the check of evtTypeConst (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) evtTypeConst() {
	if !c.ev.typeExact {
		c.report("type spelled differently",
			"type %s is not the exact type constant %q (or %q); type names are case-sensitive and must be written exactly (§3.2.2, Ch. 4 schemas)",
			clip(c.ev.Type), c.ev.Core, TypeURIPrefix+strings.TrimPrefix(c.ev.Core, CorePrefix))
	}
}

// criticalTypes marks the types Chapter 4 says MUST be emitted with
// urgency "critical".
var criticalTypes = [len(coreTypeList)]bool{2: true, 9: true, 10: true, 11: true}

// evtUrgencyCritical is the check of evtUrgencyCritical (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) evtUrgencyCritical() {
	ci := coreIndex(c.ev.Core)
	if !criticalTypes[ci] {
		return
	}
	r := c.ev.vals[kUrgency]
	if s, ok := r.Text(); ok && string(s) == "critical" {
		return
	}
	seen := "has no urgency, which means \"normal\""
	if r != nil {
		seen = "has urgency " + describe(r)
	}
	c.report("urgency not critical",
		"%s %s; this type must be emitted with urgency \"critical\" so subscribers never filter or delay it (Ch. 4, §5.5.4)", c.ev.Core, seen)
}

// recommendedUrgency lists the §3.3.2 urgencies of the non-critical types.
var recommendedUrgency = [len(coreTypeList)][]string{
	0: {"normal"}, 1: {"normal"}, 3: {"normal"}, 4: {"background", "normal"}, 5: {"background"},
	6: {"normal"}, 7: {"normal"}, 8: {"normal"},
}

// evtUrgencyRecommended is the check of evtUrgencyRecommended (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) evtUrgencyRecommended() {
	ci := coreIndex(c.ev.Core)
	rec := recommendedUrgency[ci]
	if rec == nil {
		return
	}
	u := "normal"
	if r := c.ev.vals[kUrgency]; r != nil {
		s, _ := r.Text()
		switch string(s) {
		case "background":
			u = "background"
		case "normal":
		case "critical":
			u = "critical"
		default:
			return // not a string, or not an urgency: ENV-URGENCY-ENUM's
		}
	}
	if !slices.Contains(rec, u) {
		c.report("urgency "+string(u)+", not "+strings.Join(rec, "/"),
			"%s has urgency %q; §3.3.2 recommends %s for this type, and a deviation should be deliberate and documented",
			c.ev.Core, u, strings.Join(rec, " or "))
	}
}

// evtSummaryNormal is the check of evtSummaryNormal (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) evtSummaryNormal() {
	ev := c.ev
	ci := coreIndex(ev.Core)
	if ev.vals[kSummaryNormal] != nil || ev.Core == TypeOutputStreaming {
		return
	}
	if !summaryRequired[ci] {
		if !c.strict || ev.Urgency == "background" {
			return
		}
	}
	c.report("no summary_normal",
		"%s has no summary_normal; events a subscriber announces must carry the normal-verbosity sentence to speak (§9.3.1(9))", ev.Core)
}

// confFacts are the safety-relevant fields of a confirmation.
type confFacts struct {
	irreversible, irrevSet bool
	risk                   string // "" when absent or invalid
	accept                 bool   // default_decision == "accept"
	reversibility          string
}

// irrev reports whether the action is irreversible by either field that
// says so: irreversible:true (§6.4.1's table, §6.10, the schema) or
// reversibility "irreversible" (§4.4.1's own field for it). Both describe
// one property, so either marks the action irreversible, in both profiles.
func (f confFacts) irrev() bool { return f.irreversible || f.reversibility == "irreversible" }

func (c *checker) confFacts() (f confFacts, ok bool) {
	if c.ev.Core != TypeAwaitingConfirmation {
		return f, false
	}
	f.irreversible, f.irrevSet = c.ev.vals[kIrreversible].Bool()
	if s, ok := c.ev.text(kRiskLevel); ok && oneOf(s, "low", "medium", "high") {
		f.risk = string(s)
	}
	d, _ := c.ev.text(kDefaultDecision)
	f.accept = string(d) == "accept"
	if s, ok := c.ev.text(kReversibility); ok {
		f.reversibility = string(s)
	}
	return f, true
}

// evtConfDefaultDecision is the check of evtConfDefaultDecision (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) evtConfDefaultDecision() {
	f, ok := c.confFacts()
	if !ok || !f.irrev() || !f.accept || (f.risk != "high" && f.risk != "medium") {
		return
	}
	c.report("irreversible "+f.risk+"-risk defaults to accept",
		"the confirmation of an irreversible %s-risk action has default_decision \"accept\", so silence would carry it out; it must default to \"reject\" (§6.4.1)", f.risk)
}

// evtConfDefaultShould is the check of evtConfDefaultShould (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) evtConfDefaultShould() {
	f, ok := c.confFacts()
	if !ok || !f.accept {
		return
	}
	switch {
	case f.irrev() && (f.risk == "low" || f.risk == ""):
		c.report("irreversible low-risk defaults to accept",
			"the confirmation of an irreversible low-risk action defaults to \"accept\"; §6.4.1 says it should default to \"reject\"")
	case !f.irrev() && f.risk == "high":
		c.report("high-risk defaults to accept",
			"the confirmation of a high-risk action defaults to \"accept\"; §6.4.1 says high-risk actions should default to \"reject\" even when reversible")
	}
}

// evtConfReversibilityOnly is the check of evtConfReversibilityOnly (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) evtConfReversibilityOnly() {
	f, ok := c.confFacts()
	if !ok || f.reversibility != "irreversible" || f.irreversible || (f.risk != "high" && f.risk != "medium") {
		return
	}
	consequence := "set irreversible:true so that schema validators apply the safety rule of §6.4.1 too"
	c.report("irreversible only via reversibility",
		"the confirmation says reversibility \"irreversible\" at %s risk but does not set irreversible:true, which the schema's safety rule checks; %s", f.risk, consequence)
}

// evtConfAllowedReplies is the check of evtConfAllowedReplies (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) evtConfAllowedReplies() {
	if c.ev.Core != TypeAwaitingConfirmation {
		return
	}
	r := c.ev.vals[kAllowedReplies]
	if len(r) == 0 || r[0] != '[' {
		return
	}
	var custom []string
	hasDefault, n := false, 0
	def, defOK := c.ev.text(kDefaultDecision)
	r.Elements(func(i int, v payload.Value) bool {
		s, ok := v.Text()
		if !ok {
			return true
		}
		n++
		if !oneOf(s, "accept", "reject") {
			custom = append(custom, string(s))
		}
		if defOK && string(s) == string(def) {
			hasDefault = true
		}
		return true
	})
	switch {
	case n == 0:
		// An empty or malformed list is EVT-SCHEMA's.
	case len(custom) > 0:
		c.report("custom allowed_replies",
			"allowed_replies offers %s, but a confirmation.reply decision can only be \"accept\" or \"reject\", so the user cannot choose it (§6.3.1)", quoteList(custom))
	case defOK && !hasDefault:
		c.report("default not an allowed reply",
			"default_decision %q is not among allowed_replies; the timeout outcome should be a decision the user could also choose (§4.4.1)", def)
	}
}

// clarKinds returns the string items of accepted_response_kinds.
func (c *checker) clarKinds() (kinds []string, ok bool) {
	r := c.ev.vals[kAcceptedResponseKinds]
	if len(r) == 0 || r[0] != '[' {
		return nil, false
	}
	r.Elements(func(i int, v payload.Value) bool {
		if s, ok := v.Text(); ok {
			kinds = append(kinds, string(s))
		}
		return true
	})
	return kinds, true
}

// evtClarChoices is the check of evtClarChoices (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) evtClarChoices() {
	if c.ev.Core != TypeAwaitingClarification || c.ev.vals[kChoices] != nil {
		return
	}
	kinds, _ := c.clarKinds()
	for _, k := range kinds {
		if k == "multiple_choice" {
			c.report("multiple_choice without choices",
				"the clarification accepts multiple_choice answers but lists no choices; the user cannot pick an option that is not offered (clarification schema)")
			return
		}
	}
}

// evtClarDefaultResponse is the check of evtClarDefaultResponse (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) evtClarDefaultResponse() {
	if c.ev.Core != TypeAwaitingClarification {
		return
	}
	def, ok := c.ev.text(kDefaultResponse)
	if !ok {
		return
	}
	kinds, _ := c.clarKinds()
	if len(kinds) == 0 {
		return
	}
	for _, k := range kinds {
		if k != "multiple_choice" {
			return
		}
	}
	r := c.ev.vals[kChoices]
	if len(r) == 0 || r[0] != '[' {
		return
	}
	var values []string
	found := false
	r.Elements(func(i int, v payload.Value) bool {
		v.Members(func(k []byte, fv payload.Value) bool {
			if string(k) == "value" {
				if s, ok := fv.Text(); ok {
					values = append(values, string(s))
					found = found || string(s) == string(def)
				}
			}
			return true
		})
		return !found
	})
	if !found {
		c.report("default_response not a choice",
			"default_response %s is not one of the offered choice values (%s) of this multiple-choice clarification", clipb(def), quoteList(values))
	}
}

// evtProgressStepLETotal is the check of evtProgressStepLeTotal (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) evtProgressStepLETotal() {
	if c.ev.Core != TypeProgressUpdated {
		return
	}
	r := c.ev.vals[kProgress]
	if len(r) == 0 || r[0] != '{' {
		return
	}
	var step, total int64
	var hasStep, hasTotal bool
	r.Members(func(k []byte, v payload.Value) bool {
		switch string(k) {
		case "step":
			step, hasStep = v.Int()
		case "total_steps":
			total, hasTotal = v.Int()
		}
		return true
	})
	if hasStep && hasTotal && step > total {
		c.report("step > total_steps",
			"progress reports step %d of %d total steps; the current step should not exceed the total (progress schema)", step, total)
	}
}

// evtToolcErrorMessage is the check of evtToolcErrorMessage (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) evtToolcErrorMessage() {
	if c.ev.Core != TypeToolCompleted || c.ev.vals[kErrorMessage] != nil {
		return
	}
	if s, ok := c.ev.text(kStatus); ok && oneOf(s, "error", "timeout") {
		c.report("no error_message",
			"the tool completed with status %q but without error_message; the user should hear what went wrong (§4.3.2)", s)
	}
}

// evtStreamHintComplete is the check of evtStreamHintComplete (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) evtStreamHintComplete() {
	if c.ev.Core != TypeOutputStreaming {
		return
	}
	hint, hasHint := c.ev.text(kCoalesceHint)
	complete, hasComplete := c.ev.vals[kComplete].Bool()
	switch {
	case hasHint && string(hint) == "completion" && hasComplete && !complete:
		c.report("completion hint on non-final chunk",
			"the chunk has coalesce_hint \"completion\" but complete:false; \"completion\" marks the final chunk of an output (§5.6.3)")
	case hasHint && complete && string(hint) != "completion":
		c.report("final chunk hint "+string(hint),
			"the final chunk (complete:true) has coalesce_hint %q; a final chunk should have no hint or \"completion\" (§5.6.3)", hint)
	}
}
