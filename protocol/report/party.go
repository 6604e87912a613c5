package report

import (
	"fmt"
	"strings"

	"github.com/aaep-tools/aaepkit/protocol"
)

// PartyCounts holds finding counts per party and level: the report's
// summary counts them so that a producer's findings and a subscriber's are
// told apart ("counts_by_party" in a JSON report).
type PartyCounts map[partyLevel]int64

// add adds c's counts.
func (c PartyCounts) add(o PartyCounts) {
	for k, n := range o {
		c[k] += n
	}
}

// Count returns the findings of level l against party p.
func (c PartyCounts) Count(p protocol.Party, l protocol.Level) int64 { return c[partyLevel{p, l}] }

// MarshalJSON writes every party with its MUST, SHOULD and INFO counts:
// {"producer": {"MUST": 1, "SHOULD": 0, "INFO": 2}, "subscriber": ..., "either": ...}.
func (c PartyCounts) MarshalJSON() ([]byte, error) {
	var b []byte
	b = append(b, '{')
	for i, p := range protocol.Parties {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `"%s":{"MUST":%d,"SHOULD":%d,"INFO":%d}`, p, c.Count(p, protocol.Must), c.Count(p, protocol.Should), c.Count(p, protocol.Info))
	}
	return append(b, '}'), nil
}

// Line sums the counts up per party, for the text summary: "by party:
// producer 2 MUST, 1 SHOULD, 0 INFO; subscriber 0 MUST, 1 SHOULD, 0 INFO",
// the parties with findings only; "" when there are none.
func (c PartyCounts) Line() string {
	var parts []string
	for _, p := range protocol.Parties {
		must, should, info := c.Count(p, protocol.Must), c.Count(p, protocol.Should), c.Count(p, protocol.Info)
		if must+should+info == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %d MUST, %d SHOULD, %d INFO", p, must, should, info))
	}
	if len(parts) == 0 {
		return ""
	}
	return "by party: " + strings.Join(parts, "; ")
}

// PartyCounts returns the report's finding counts per party and level
// (dropped findings included).
func (r *Report) PartyCounts() PartyCounts {
	c := PartyCounts{}
	c.add(r.byParty)
	return c
}
