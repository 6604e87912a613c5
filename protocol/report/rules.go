package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/aaep-tools/aaepkit/protocol"
)

// WriteRules writes the rule table of models, as `aaep-replay check
// --rules` prints it. The text form has one line per rule (level, party,
// ID, summary, where the rule is stated, the strict profile's level where
// it differs and, where the profiles read the rule differently, how each
// reads it), then a blank line and the counts (RuleCountLine). The JSON
// form is an array of the rules with every field of their declared values
// (party and doc included) and their protocol.
func WriteRules(w io.Writer, models []protocol.Model, asJSON bool) error {
	rules := protocol.ListRules(models)
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rules); err != nil {
			return fmt.Errorf("writing the rule list: %w", err)
		}
		return nil
	}
	var b strings.Builder
	for _, r := range rules {
		fmt.Fprintf(&b, "%-6s %-10s %-34s %s [%s: %s]", r.Level, r.Party, r.ID, r.Summary, r.Protocol, r.Spec)
		if r.StrictLevel != 0 {
			fmt.Fprintf(&b, " strict level: %s", r.StrictLevel)
		}
		if p := r.Profiles; p.Differ() {
			fmt.Fprintf(&b, " lenient: %s | strict: %s", p.Lenient, p.Strict)
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "\n%s\n", RuleCountLine(protocol.RuleCounts(models)))
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("writing the rule list: %w", err)
	}
	return nil
}

// RuleCountLine sums rule counts up in one line: "218 rules: 142 aaep, ...
// (160 MUST, 38 SHOULD, 20 INFO; 150 producer, 20 subscriber, 48 either)";
// the levels are the lenient profile's.
func RuleCountLine(counts []protocol.RuleCount) string {
	var total, must, should, info, producer, subscriber, either int
	var parts []string
	for _, c := range counts {
		total += c.Rules
		must, should, info = must+c.Must, should+c.Should, info+c.Info
		producer, subscriber, either = producer+c.Producer, subscriber+c.Subscriber, either+c.Either
		parts = append(parts, fmt.Sprintf("%d %s", c.Rules, c.Protocol))
	}
	return fmt.Sprintf("%d rules: %s (%d MUST, %d SHOULD, %d INFO; %d producer, %d subscriber, %d either)",
		total, strings.Join(parts, ", "), must, should, info, producer, subscriber, either)
}
