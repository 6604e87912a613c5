package protocoltest

import (
	"slices"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/protocol"
)

// RuleCase is one rule case of the shared harness: a stream and what it
// must yield about Rule. AAEP, ASP and KAHN tests state their cases in
// this one form; CheckRules runs them and CheckCoverage checks that every
// rule of a model has the cases it needs.
//
// A case gives its stream in one of two forms:
//   - JSON lines: Fail makes a stream that must yield a finding of Rule
//     (a failing case) and Pass, if not nil, a close variant that must
//     yield none (a passing case); line i is message i, i×100 ms after
//     the start (Run).
//   - Messages: Stream makes messages built by the caller (directions,
//     sources, times, transport attributes), and Want says exactly which
//     findings they yield. Such a case is a failing case of every rule in
//     Want and a passing case of Rule when Want lacks it.
type RuleCase struct {
	Rule string
	Name string
	// Profile is "" (lenient), "lenient" or "strict".
	Profile string
	// Force, if not empty, hands every message to the model of that name
	// without recognition (as protocol.NewEngine's force does).
	Force string
	// Models makes the models of the case's runs; nil: the models
	// CheckRules is given.
	Models func() []protocol.Model
	// Fail makes the lines that must yield a finding of Rule.
	Fail func() []string
	// Pass, if not nil, makes lines that must yield none.
	Pass func() []string
	// Stream makes the messages of a case stated by Want.
	Stream func() []*protocol.Message
	// Want lists the rule IDs, sorted, of the findings of Stream that
	// Keep keeps (all when Keep is nil): one per finding, or one per rule
	// when Distinct is set. Nil: none.
	Want []string
	// Keep selects the findings Want speaks of.
	Keep func(protocol.Finding) bool
	// Distinct compares the set of rules rather than one ID per finding.
	Distinct bool
	// Fragment marks a case whose streams are fragments (single messages
	// judged by single-message rules), not whole conversations: its
	// passing streams are not held to "a valid stream has no MUST".
	Fragment bool
}

// failing reports whether the case is a failing case of rule.
func (tc *RuleCase) failing(rule string) bool {
	if tc.Stream != nil {
		return slices.Contains(tc.Want, rule)
	}
	return tc.Fail != nil && rule == tc.Rule
}

// passing reports whether the case is a passing case of rule.
func (tc *RuleCase) passing(rule string) bool {
	if tc.Stream != nil {
		return rule == tc.Rule && !slices.Contains(tc.Want, rule)
	}
	return tc.Pass != nil && rule == tc.Rule
}

// CheckRules runs every case as the subtest "Rule/Name", each stream
// through fresh models: a Fail stream must yield a finding of the case's
// rule, a Pass stream none, a Stream exactly the findings of Want. Unless
// the case is a Fragment, a stream yields no MUST finding in the lenient
// profile beyond those Want names (checkMusts): a valid stream none. Every
// finding of every run must have a level, a short label and a message
// whose formatting went right.
func CheckRules(t *testing.T, models func() []protocol.Model, cases []RuleCase) {
	t.Helper()
	for _, tc := range cases {
		mk := models
		if tc.Models != nil {
			mk = tc.Models
		}
		t.Run(tc.Rule+"/"+tc.Name, func(t *testing.T) {
			if tc.Stream != nil {
				r := RunMessages(t, mk(), tc.Force, tc.Profile, tc.Stream())
				checkFindings(t, mk(), r)
				if got := r.kept(tc.Keep, tc.Distinct); !slices.Equal(got, tc.Want) {
					t.Errorf("findings %v, want %v\n%s", got, tc.Want, r.Dump())
				}
				if !tc.Fragment {
					checkMusts(t, tc.Profile, r, tc.Want)
				}
				return
			}
			if tc.Fail == nil {
				t.Fatalf("case has no stream")
			}
			r := Run(t, mk(), tc.Force, tc.Profile, tc.Fail())
			checkFindings(t, mk(), r)
			if !r.Has(tc.Rule) {
				t.Errorf("failing stream: no %s finding; got %v\n%s", tc.Rule, r.Rules(), r.Dump())
			}
			if tc.Pass != nil {
				r := Run(t, mk(), tc.Force, tc.Profile, tc.Pass())
				checkFindings(t, mk(), r)
				if r.Has(tc.Rule) {
					t.Errorf("passing stream: unexpected %s finding\n%s", tc.Rule, r.Dump())
				}
				if !tc.Fragment {
					checkMusts(t, tc.Profile, r, nil)
				}
			}
		})
	}
}

// checkMusts fails t when a stream gets, in the default (lenient)
// profile `aaep-replay check` runs, a MUST finding of a rule that want
// does not name, whatever rules the case's Keep looks at: a valid stream
// (a Pass stream, a Stream whose Want names no MUST rule) breaks no
// requirement of either party, and a failing one only those it is about.
func checkMusts(t testing.TB, profile string, r *Result, want []string) {
	t.Helper()
	if profile == "strict" {
		return
	}
	for _, f := range r.Findings {
		if f.Level >= protocol.Must && !slices.Contains(want, f.RuleID) {
			t.Errorf("MUST finding %s (%s) at #%d that the case does not name: %s\n%s", f.RuleID, f.Party, f.Index, f.Message, r.Dump())
		}
	}
}

// kept returns the sorted rule IDs of the findings keep keeps (all when
// keep is nil), deduplicated when distinct.
func (r *Result) kept(keep func(protocol.Finding) bool, distinct bool) []string {
	var ids []string
	for _, f := range r.Findings {
		if keep == nil || keep(f) {
			ids = append(ids, f.RuleID)
		}
	}
	slices.Sort(ids)
	if distinct {
		ids = slices.Compact(ids)
	}
	return ids
}

// checkFindings fails t for a finding without a level, a short label or a
// message, with a message whose formatting went wrong ("%!"), or of a rule
// that models do not declare.
func checkFindings(t testing.TB, models []protocol.Model, r *Result) {
	t.Helper()
	declared := map[string]bool{}
	for _, d := range protocol.ListRules(models) {
		declared[d.ID] = true
	}
	for _, f := range r.Findings {
		if f.Level == 0 || f.Party == 0 || f.Short == "" || f.Message == "" || strings.Contains(f.Message, "%!") || !declared[f.RuleID] {
			t.Errorf("finding %s at #%d is broken: level %v, party %v, short %q, message %q", f.RuleID, f.Index, f.Level, f.Party, f.Short, f.Message)
		}
	}
}

// Coverage says which cases CheckCoverage wants of every rule.
type Coverage uint8

// What CheckCoverage wants of every rule.
const (
	// NeedFailing: a failing case (a stream that breaks the rule).
	NeedFailing Coverage = 1 << iota
	// NeedPassing: a passing case (a stream about the rule that does not
	// break it).
	NeedPassing
)

// CheckCoverage fails t when a rule of rules is listed twice, lacks a
// summary, a level or a party, or lacks a case need asks for; when a case names a
// rule (as its Rule or in Want) that rules do not list; or when a case
// breaks a rule in a profile that the rule's Profiles say does not check
// it.
func CheckCoverage(t testing.TB, rules []protocol.Rule, cases []RuleCase, need Coverage) {
	t.Helper()
	known := map[string]bool{}
	for _, r := range rules {
		if known[r.ID] {
			t.Errorf("rule %s is listed twice", r.ID)
		}
		known[r.ID] = true
		if r.Summary == "" || r.Level == 0 || r.Party == 0 {
			t.Errorf("rule %s lacks a summary, a level or a party", r.ID)
		}
		failing, passing := false, false
		for i := range cases {
			failing = failing || cases[i].failing(r.ID)
			passing = passing || cases[i].passing(r.ID)
		}
		if need&NeedFailing != 0 && !failing {
			t.Errorf("rule %s has no failing stream in the rule cases", r.ID)
		}
		if need&NeedPassing != 0 && !passing {
			t.Errorf("rule %s has no passing stream in the rule cases", r.ID)
		}
	}
	checkProfiles(t, rules, cases)
	for _, tc := range cases {
		if !known[tc.Rule] {
			t.Errorf("case %s/%s names %s, which the model's rules do not list", tc.Rule, tc.Name, tc.Rule)
		}
		for _, w := range tc.Want {
			if !known[w] {
				t.Errorf("case %s/%s expects %s, which the model's rules do not list", tc.Rule, tc.Name, w)
			}
		}
	}
}

// checkProfiles fails t for a failing case of a rule in a profile that
// the rule's declared Profiles say does not check it.
func checkProfiles(t testing.TB, rules []protocol.Rule, cases []RuleCase) {
	t.Helper()
	for _, r := range rules {
		only := r.Profiles.Only()
		if only == "" {
			continue
		}
		for i := range cases {
			tc := &cases[i]
			profile := tc.Profile
			if profile == "" {
				profile = "lenient"
			}
			if tc.failing(r.ID) && profile != only {
				t.Errorf("case %s/%s breaks %s in the %s profile, but the rule is checked in the %s profile only", tc.Rule, tc.Name, r.ID, profile, only)
			}
		}
	}
}

// CheckMachine fails t for a transition of m from or to a state that m
// does not list, or one without a label, and returns the kind of each of
// m's states by name.
func CheckMachine(t testing.TB, m protocol.Machine) map[string]protocol.StateKind {
	t.Helper()
	kinds := map[string]protocol.StateKind{}
	for _, s := range m.States {
		kinds[s.Name] = s.Kind
	}
	for _, tr := range m.Transitions {
		if _, ok := kinds[tr.From]; !ok {
			t.Errorf("transition from unknown state %q", tr.From)
		}
		if _, ok := kinds[tr.To]; !ok {
			t.Errorf("transition to unknown state %q", tr.To)
		}
		if tr.Label == "" {
			t.Errorf("transition %s→%s has no label", tr.From, tr.To)
		}
	}
	return kinds
}
