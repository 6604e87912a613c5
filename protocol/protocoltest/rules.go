package protocoltest

import (
	"testing"

	"github.com/aaep-tools/aaepkit/protocol"
)

// RuleCase is a stream that must break Rule and, optionally, a close
// variant of it that must not.
type RuleCase struct {
	Rule string
	Name string
	// Profile is "" (lenient), "lenient" or "strict".
	Profile string
	// Models makes the models of the case's runs; nil: the models
	// CheckRules is given.
	Models func() []protocol.Model
	// Fail makes the stream that must yield a finding of Rule.
	Fail func() []string
	// Pass, if not nil, makes a stream that must yield none.
	Pass func() []string
}

// CheckRules runs every case as the subtest "Rule/Name", each stream
// through fresh models: the Fail stream must yield a finding of the
// case's rule, the Pass stream none.
func CheckRules(t *testing.T, models func() []protocol.Model, cases []RuleCase) {
	t.Helper()
	for _, tc := range cases {
		mk := models
		if tc.Models != nil {
			mk = tc.Models
		}
		t.Run(tc.Rule+"/"+tc.Name, func(t *testing.T) {
			r := Run(t, mk(), "", tc.Profile, tc.Fail())
			if !r.Has(tc.Rule) {
				t.Errorf("failing stream: no %s finding; got %v\n%s", tc.Rule, r.Rules(), r.Dump())
			}
			if tc.Pass != nil {
				r := Run(t, mk(), "", tc.Profile, tc.Pass())
				if r.Has(tc.Rule) {
					t.Errorf("passing stream: unexpected %s finding\n%s", tc.Rule, r.Dump())
				}
			}
		})
	}
}

// CheckCoverage fails t when one of rules has no failing stream in cases,
// a case names a rule that rules does not list, or a rule lacks a summary
// or a level.
func CheckCoverage(t testing.TB, rules []protocol.Rule, cases []RuleCase) {
	t.Helper()
	covered := map[string]bool{}
	for _, tc := range cases {
		covered[tc.Rule] = true
	}
	known := map[string]bool{}
	for _, r := range rules {
		known[r.ID] = true
		if !covered[r.ID] {
			t.Errorf("rule %s has no failing stream in the rule cases", r.ID)
		}
		if r.Summary == "" || r.Level == 0 {
			t.Errorf("rule %s lacks a summary or level", r.ID)
		}
	}
	for _, tc := range cases {
		if !known[tc.Rule] {
			t.Errorf("case %s/%s names %s, which the model's rules do not list", tc.Rule, tc.Name, tc.Rule)
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
