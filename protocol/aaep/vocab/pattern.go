package vocab

import (
	"sort"
	"strings"
)

// Event-type patterns (§5.3.1.7 event_filters): a literal type, or a prefix
// ending in "*" ("aaep:agent.tool.*", "*"). A pattern in full-URI form means
// the same as its compact form. Patterns match case-sensitively, as types
// are compared.

// MatchPattern reports whether pattern matches typ, a type in compact form
// (see Compact).
func MatchPattern(pattern, typ string) bool {
	return matchCompact(Compact(pattern), typ)
}

// matchCompact is MatchPattern for a pattern already in compact form.
func matchCompact(pat, typ string) bool {
	if pre, ok := strings.CutSuffix(pat, "*"); ok {
		return strings.HasPrefix(typ, pre)
	}
	return pat == typ
}

// Specificity orders patterns: a literal type beats any wildcard, and a
// longer wildcard prefix beats a shorter one; "" (no pattern) is lowest.
func Specificity(p string) int {
	switch {
	case p == "":
		return -1
	case strings.HasSuffix(p, "*"):
		return len(p) - 1
	}
	return 1 << 20
}

// Subsumes reports whether every type matched by pattern p is matched by
// pattern q (both in compact form).
func Subsumes(q, p string) bool {
	if !strings.HasSuffix(q, "*") {
		return q == p
	}
	return strings.HasPrefix(strings.TrimSuffix(p, "*"), q[:len(q)-1])
}

// Overlap reports whether some type is matched by both patterns a and b
// (both in compact form).
func Overlap(a, b string) bool {
	wa, wb := strings.HasSuffix(a, "*"), strings.HasSuffix(b, "*")
	pa, pb := strings.TrimSuffix(a, "*"), strings.TrimSuffix(b, "*")
	switch {
	case !wa && !wb:
		return a == b
	case wa && !wb:
		return strings.HasPrefix(b, pa)
	case !wa && wb:
		return strings.HasPrefix(a, pb)
	}
	return strings.HasPrefix(pa, pb) || strings.HasPrefix(pb, pa)
}

// PatternSet is a compiled list of event-type patterns, full-URI forms
// normalized to compact ones. Small sets are searched linearly; large ones
// (hostile or unusual subscriptions) through maps, so no question costs
// time quadratic in the set.
type PatternSet struct {
	list    []string
	literal map[string]bool
	wild    map[string]bool // wildcard prefixes
	sorted  []string        // literal types and wildcard prefixes, sorted
}

// smallSet is the size up to which sets are searched linearly.
const smallSet = 16

// CompilePatterns compiles pats.
func CompilePatterns(pats []string) *PatternSet {
	ps := &PatternSet{list: make([]string, 0, len(pats))}
	for _, p := range pats {
		ps.list = append(ps.list, Compact(p))
	}
	if len(ps.list) > smallSet {
		ps.literal, ps.wild = map[string]bool{}, map[string]bool{}
		for _, p := range ps.list {
			if pre, ok := strings.CutSuffix(p, "*"); ok {
				ps.wild[pre] = true
				ps.sorted = append(ps.sorted, pre)
			} else {
				ps.literal[p] = true
				ps.sorted = append(ps.sorted, p)
			}
		}
		sort.Strings(ps.sorted)
	}
	return ps
}

// longestWild returns the longest wildcard prefix of the set that s starts
// with (s itself included), and whether there is one.
func (ps *PatternSet) longestWild(s string) (string, bool) {
	for i := len(s); i >= 0; i-- {
		if ps.wild[s[:i]] {
			return s[:i], true
		}
	}
	return "", false
}

// Match returns the most specific pattern of the set matching typ (compact
// form), or "" when none does.
func (ps *PatternSet) Match(typ string) string {
	if ps.literal == nil {
		best := ""
		for _, p := range ps.list {
			if matchCompact(p, typ) && Specificity(p) > Specificity(best) {
				best = p
			}
		}
		return best
	}
	if ps.literal[typ] {
		return typ
	}
	if w, ok := ps.longestWild(typ); ok {
		return w + "*"
	}
	return ""
}

// Covers reports whether every type matched by pattern p is matched by the set.
func (ps *PatternSet) Covers(p string) bool {
	p = Compact(p)
	if ps.literal == nil {
		for _, q := range ps.list {
			if Subsumes(q, p) {
				return true
			}
		}
		return false
	}
	pre, wild := strings.CutSuffix(p, "*")
	if !wild && ps.literal[p] {
		return true
	}
	_, ok := ps.longestWild(pre)
	return ok
}

// Overlaps reports whether some type is matched both by pattern p and by the set.
func (ps *PatternSet) Overlaps(p string) bool {
	p = Compact(p)
	if ps.literal == nil {
		for _, q := range ps.list {
			if Overlap(q, p) {
				return true
			}
		}
		return false
	}
	pre, wild := strings.CutSuffix(p, "*")
	if !wild {
		return ps.Match(p) != ""
	}
	if _, ok := ps.longestWild(pre); ok {
		return true
	}
	i := sort.SearchStrings(ps.sorted, pre)
	return i < len(ps.sorted) && strings.HasPrefix(ps.sorted[i], pre)
}
