package recdiff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"

	"github.com/aaep-tools/aaepkit/payload"
)

// DefaultIgnore are the members every event carries that differ between two
// recordings of the same behaviour: identifiers, timestamps, reply tokens,
// sequence numbers, and what cuts an output into chunks (the joined text is
// compared on its own). Each is ignored at any depth ("**.NAME").
var DefaultIgnore = []string{
	"id", "event_id", "session_id", "tool_call_id", "output_id", "reply_token", "subscription_id",
	"request_id", "last_event_id", "timestamp", "ts", "run_id", "sessionId", "messageId", "inReplyTo",
	"sequence_number", "sequence", "seq", "chunk", "position", "complete", "coalesce_hint",
}

// paths says which members of an event are compared: a member is ignored
// when an --ignore pattern (or a default) matches its path and no --keep
// pattern does.
type paths struct {
	// ignoreNames and keepNames are the "**.NAME" patterns: NAME at any
	// depth, looked up by the member's own name.
	ignoreNames, keepNames map[string]bool
	// ignore and keep are the other patterns, split into names.
	ignore, keep [][]string
}

// newPaths compiles the default ignores and the user's patterns. A
// pattern is a dotted path of member names from the top of the event
// ("summary_normal", "producer.agent_id"); "*" matches any one name and a
// leading "**." any depth.
func newPaths(ignore, keep []string, defaults bool) (*paths, error) {
	p := &paths{ignoreNames: map[string]bool{}, keepNames: map[string]bool{}}
	if defaults {
		for _, n := range DefaultIgnore {
			p.ignoreNames[n] = true
		}
	}
	add := func(pat string, names map[string]bool, list *[][]string) error {
		if pat == "" || strings.HasPrefix(pat, ".") || strings.HasSuffix(pat, ".") || strings.Contains(pat, "..") {
			return fmt.Errorf("%q is not a path (names separated by dots, e.g. producer.agent_id)", pat)
		}
		if rest, ok := strings.CutPrefix(pat, "**."); ok && !strings.ContainsAny(rest, ".*") {
			names[rest] = true
			return nil
		}
		segs := strings.Split(pat, ".")
		for i, s := range segs {
			if s == "**" && i > 0 {
				return fmt.Errorf("%q: ** may only start a path", pat)
			}
		}
		*list = append(*list, segs)
		return nil
	}
	for _, pat := range ignore {
		if err := add(pat, p.ignoreNames, &p.ignore); err != nil {
			return nil, fmt.Errorf("--ignore: %w", err)
		}
	}
	for _, pat := range keep {
		if err := add(pat, p.keepNames, &p.keep); err != nil {
			return nil, fmt.Errorf("--keep: %w", err)
		}
	}
	return p, nil
}

// match reports whether pattern segs matches path.
func match(segs, path []string) bool {
	if len(segs) > 0 && segs[0] == "**" {
		for i := 0; i <= len(path); i++ {
			if match(segs[1:], path[i:]) {
				return true
			}
		}
		return false
	}
	if len(segs) != len(path) {
		return false
	}
	for i, s := range segs {
		if s != "*" && s != path[i] {
			return false
		}
	}
	return true
}

// ignored reports whether the member at path is left out.
func (p *paths) ignored(path []string) bool {
	name := path[len(path)-1]
	kept := p.keepNames[name]
	for _, k := range p.keep {
		if kept {
			break
		}
		kept = match(k, path)
	}
	if kept {
		return false
	}
	if p.ignoreNames[name] {
		return true
	}
	for _, ig := range p.ignore {
		if match(ig, path) {
			return true
		}
	}
	return false
}

// normalizer makes the fields of one side's events, and their hashes (it
// is not safe for concurrent use: each side has its own).
type normalizer struct {
	p *paths
	// names interns member names, so that walking an event allocates for
	// the lines it makes only; top says whether a top-level member of that
	// name is ignored (which depends on its name alone).
	names map[string]memberName
	path  []string
	lines []string
	buf   strings.Builder
	h     maphash.Hash
	cbuf  bytes.Buffer
}

type memberName struct {
	s   string
	top bool
}

// seed is the hashes' seed: one per process, so that the two sides' hashes
// compare.
var seed = maphash.MakeSeed()

func newNormalizer(p *paths) *normalizer {
	n := &normalizer{p: p, names: map[string]memberName{}}
	n.h.SetSeed(seed)
	return n
}

// intern returns the interned name and whether a top-level member of that
// name is ignored.
func (n *normalizer) intern(b []byte) memberName {
	nm, ok := n.names[string(b)]
	if !ok {
		if len(n.names) > 4096 {
			clear(n.names)
		}
		s := string(b)
		nm = memberName{s: s, top: n.p.ignored([]string{s})}
		n.names[s] = nm
	}
	return nm
}

// hash is a hash of the members fields gives, computed without making
// them: events whose hashes are equal have equal fields (bar a collision
// of 64-bit hashes), so fields are made only for events that differ.
func (n *normalizer) hash(doc *payload.Doc) uint64 {
	var sum uint64
	for _, mem := range doc.Members() {
		nm := n.intern(mem.Name)
		if nm.top {
			continue
		}
		n.path = append(n.path[:0], nm.s)
		sum += n.hashMember(mem.Value)
	}
	return sum
}

// hashMember hashes the member at n.path (not ignored) with value v: the
// sum of the hashes of its leaves, each of its path and compact value, so
// that the order of members does not count.
func (n *normalizer) hashMember(v payload.Value) uint64 {
	if v.Kind() == payload.Object {
		var sum uint64
		count := 0
		depth := len(n.path)
		v.Members(func(b []byte, val payload.Value) bool {
			count++
			n.path = append(n.path[:depth], n.intern(b).s)
			if !n.p.ignored(n.path) {
				sum += n.hashMember(val)
			}
			return true
		})
		n.path = n.path[:depth]
		if count > 0 {
			return sum
		}
	}
	n.h.Reset()
	for i, s := range n.path {
		if i > 0 {
			n.h.WriteByte('.')
		}
		n.h.WriteString(s)
	}
	n.h.WriteByte('=')
	if k := v.Kind(); (k == payload.Array || k == payload.Object) && bytes.ContainsAny(v, " \t\r\n") {
		n.cbuf.Reset()
		if json.Compact(&n.cbuf, v) == nil {
			n.h.Write(n.cbuf.Bytes())
			return n.h.Sum64()
		}
	}
	n.h.Write(v)
	return n.h.Sum64()
}

// fields is an event's normalised members: one "path=value" line per member
// compared (objects flattened into dotted paths, other values as compact
// JSON), sorted by path.
func (n *normalizer) fields(doc *payload.Doc) string {
	n.lines = n.lines[:0]
	for _, mem := range doc.Members() {
		n.walk(mem.Name, mem.Value)
	}
	slices.Sort(n.lines)
	n.buf.Reset()
	for i, l := range n.lines {
		if i > 0 {
			n.buf.WriteByte('\n')
		}
		n.buf.WriteString(l)
	}
	return n.buf.String()
}

func (n *normalizer) walk(b []byte, v payload.Value) {
	s := n.intern(b).s
	n.path = append(n.path, s)
	defer func() { n.path = n.path[:len(n.path)-1] }()
	if n.p.ignored(n.path) {
		return
	}
	if v.Kind() == payload.Object {
		count := 0
		v.Members(func(name []byte, val payload.Value) bool {
			count++
			n.walk(name, val)
			return true
		})
		if count > 0 {
			return
		}
	}
	key := s
	if len(n.path) > 1 {
		key = strings.Join(n.path, ".")
	}
	n.lines = append(n.lines, key+"="+compact(v))
}

// compact is v without white space between tokens.
func compact(v payload.Value) string {
	switch v.Kind() {
	case payload.Object, payload.Array:
		var b bytes.Buffer
		if json.Compact(&b, v) == nil {
			return b.String()
		}
	}
	return string(v)
}

// fieldDiff lists the members whose values differ between two fields
// strings: "path: a → b" ("(none)" for a member on one side only).
func fieldDiff(a, b string) []string {
	am, bm := splitFields(a), splitFields(b)
	var names []string
	for k := range am {
		names = append(names, k)
	}
	for k := range bm {
		if _, ok := am[k]; !ok {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	var out []string
	for _, k := range names {
		av, aok := am[k]
		bv, bok := bm[k]
		switch {
		case aok && bok && av == bv:
		case !aok:
			out = append(out, k+": (none) → "+clip(bv))
		case !bok:
			out = append(out, k+": "+clip(av)+" → (none)")
		default:
			ca, cb := clipPair(av, bv)
			out = append(out, k+": "+ca+" → "+cb)
		}
	}
	return out
}

func splitFields(s string) map[string]string {
	m := map[string]string{}
	if s == "" {
		return m
	}
	for line := range strings.SplitSeq(s, "\n") {
		k, v, _ := strings.Cut(line, "=")
		m[k] = v
	}
	return m
}

// clipPair clips two values that differ so that where they differ shows:
// when clipping would leave them alike, both start a little before their
// first difference.
func clipPair(a, b string) (string, string) {
	ca, cb := clip(a), clip(b)
	if ca != cb {
		return ca, cb
	}
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-20)
	for from > 0 && (from < len(a) && a[from]&0xC0 == 0x80) {
		from--
	}
	return "…" + clip(a[from:]), "…" + clip(b[from:])
}

// clip shortens a value for a diff line.
func clip(s string) string {
	const n = 80
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
