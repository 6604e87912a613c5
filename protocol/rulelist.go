package protocol

import "sort"

// ListedRule is one rule of a rule listing: the declared value and the
// protocol that reports it.
type ListedRule struct {
	Rule
	// Protocol is the model's name, or StreamProtocol for the engine's own rules.
	Protocol string `json:"protocol"`
}

// ListRules returns every rule of models and the stream rules with their
// protocols, sorted by ID.
func ListRules(models []Model) []ListedRule {
	var out []ListedRule
	for _, r := range StreamRules() {
		out = append(out, ListedRule{Rule: r, Protocol: StreamProtocol})
	}
	for _, m := range models {
		for _, r := range m.Rules() {
			out = append(out, ListedRule{Rule: r, Protocol: m.Name()})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// RuleCount counts one protocol's rules by level (the lenient profile's)
// and by party.
type RuleCount struct {
	Protocol                     string
	Rules                        int
	Must, Should, Info           int
	Producer, Subscriber, Either int
}

// RuleCounts counts the rules of each model, then the stream rules (as
// protocol StreamProtocol), in the order given.
func RuleCounts(models []Model) []RuleCount {
	var out []RuleCount
	add := func(name string, rules []Rule) {
		c := RuleCount{Protocol: name, Rules: len(rules)}
		for _, r := range rules {
			switch r.Level {
			case Must:
				c.Must++
			case Should:
				c.Should++
			case Info:
				c.Info++
			}
			switch r.Party {
			case Producer:
				c.Producer++
			case Subscriber:
				c.Subscriber++
			case Either:
				c.Either++
			}
		}
		out = append(out, c)
	}
	for _, m := range models {
		add(m.Name(), m.Rules())
	}
	add(StreamProtocol, StreamRules())
	return out
}
