// Envelope checks for extension types and extension members: declaration
// in @context, prefix declaration and reserved prefixes.

package aaep

import (
	"strconv"
	"strings"

	"github.com/aaep-tools/aaepkit/payload"
)

// extensionTypeOf returns the non-core vocabulary a type belongs to: the
// compact prefix, or for a full URI its scheme and host. ok is false for
// core types, aaep: types and malformed types.
func extensionTypeOf(t string) (vocab string, isURIType bool, ok bool) {
	colon := strings.IndexByte(t, ':')
	if colon <= 0 {
		return "", false, false
	}
	if strings.HasPrefix(t[colon:], "://") {
		if strings.HasPrefix(t, "https://aaep-protocol.org/") {
			return "", false, false
		}
		rest := t[colon+3:]
		if i := strings.IndexAny(rest, "/?#"); i >= 0 {
			rest = rest[:i]
		}
		return strings.ToLower(t[:colon] + "://" + rest), true, rest != ""
	}
	p := t[:colon]
	if p == "aaep" {
		return "", false, false
	}
	return p, false, true
}

// declaredInContext reports whether vocabulary vocab (a compact prefix, or
// a "scheme://host" for URI types) is declared by a non-core @context entry.
// The check is the catalog's heuristic: JSON-LD context documents are not
// fetched, so a prefix counts as declared when it appears in one of the
// extension context URIs (case-insensitively), and a URI type when an
// extension context URI has its scheme and host.
func (c *checker) declaredInContext(vocab string, uriType bool) bool {
	r := c.ev.vals[kContext]
	if len(r) == 0 || r[0] != '[' {
		return false
	}
	found := false
	lv := strings.ToLower(vocab)
	r.Elements(func(i int, v payload.Value) bool {
		if i >= maxChecked {
			return false
		}
		s, ok := v.Text()
		if !ok || string(s) == ContextV1 {
			return true
		}
		ls := strings.ToLower(string(s))
		if uriType {
			found = strings.HasPrefix(ls, lv) && (len(ls) == len(lv) || strings.IndexByte("/?#:", ls[len(lv)]) >= 0)
		} else {
			found = strings.Contains(ls, lv)
		}
		return !found
	})
	return found
}

// envTypeExtDeclared is the check of envTypeExtDeclared (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) envTypeExtDeclared() {
	ev := c.ev
	if ev.Core != "" || !ev.typeExact {
		return
	}
	vocab, uriType, ok := extensionTypeOf(ev.Type)
	if !ok || typeFormProblem(ev.Type) != "" || (!uriType && reservedPrefix(vocab)) {
		return // malformed: ENV-TYPE-FORM; reserved: ENV-EXT-RESERVED-PREFIX
	}
	if !c.declaredInContext(vocab, uriType) {
		what := "prefix " + strconv.Quote(vocab)
		if uriType {
			what = "vocabulary at " + vocab
		}
		c.report("extension type undeclared",
			"type %s is an extension type, but its %s is not declared in @context (only extension context URIs in an @context array declare vocabularies) (§3.9, §7.4)",
			clip(ev.Type), what)
	}
}

// envExtensionsShape is the check of envExtensionsShape (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) envExtensionsShape() {
	r := c.ev.vals[kExtensions]
	if r == nil {
		return
	}
	if r[0] != '{' {
		c.report("extensions not an object",
			"extensions is %s; it must be an object keyed by extension prefix (§3.4.3)", jsonKind(r))
		return
	}
	r.Members(func(k []byte, v payload.Value) bool {
		if v[0] != '{' {
			c.report("extension value not an object",
				"extensions.%s is %s; each extension's fields must be grouped in an object (§3.4.3)", clipb(k), jsonKind(v))
			return false
		}
		return true
	})
}

// envExtPrefixDeclared is the check of envExtPrefixDeclared (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) envExtPrefixDeclared() {
	r := c.ev.vals[kExtensions]
	if len(r) == 0 || r[0] != '{' {
		return
	}
	n := 0
	r.Members(func(k []byte, v payload.Value) bool {
		if n++; n > maxChecked {
			return false
		}
		p := string(k)
		if reservedPrefix(p) {
			return true // ENV-EXT-RESERVED-PREFIX
		}
		if !c.declaredInContext(p, false) {
			c.report("extension prefix undeclared",
				"extensions uses the prefix %q, but no @context entry declares it; add the extension's context URI to an @context array (§3.4.3)", p)
			return false
		}
		return true
	})
}

// reservedPrefix reports the prefixes extensions must not use (§7.3.2).
func reservedPrefix(p string) bool {
	switch p {
	case "aaep", "xsd", "rdf", "rdfs":
		return true
	}
	return strings.HasPrefix(p, "@")
}

// envExtReservedPrefix is the check of envExtReservedPrefix (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) envExtReservedPrefix() {
	if r := c.ev.vals[kExtensions]; len(r) > 0 && r[0] == '{' {
		r.Members(func(k []byte, v payload.Value) bool {
			if reservedPrefix(string(k)) {
				c.report("reserved extension prefix",
					"extensions uses the reserved prefix %s; aaep, xsd, rdf, rdfs and @-names cannot name an extension (§7.3.2)", clipb(k))
				return false
			}
			return true
		})
	}
	if i := strings.IndexByte(c.ev.Type, ':'); i > 0 && !strings.HasPrefix(c.ev.Type[i:], "://") {
		if p := c.ev.Type[:i]; p != "aaep" && reservedPrefix(p) {
			c.report("reserved type prefix",
				"type %s uses the reserved prefix %q; extension types need their own prefix (§7.3.2)", clip(c.ev.Type), p)
		}
	}
}
