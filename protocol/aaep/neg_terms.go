package aaep

// The capabilities of a handshake as sent (capsJSON) and the effective terms
// they resolve to (see neg.go for how requests, honored capabilities and
// renegotiations combine).

import (
	"encoding/json"

	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol/aaep/vocab"
)

// capsJSON is a capability object as sent; nil fields were absent.
type capsJSON struct {
	MaxEPS             *int64       `json:"max_events_per_second"`
	PreferredVerbosity *string      `json:"preferred_verbosity"`
	Languages          *[]string    `json:"languages"`
	ConfReply          *bool        `json:"supports_confirmation_reply"`
	ClarReply          *bool        `json:"supports_clarification_reply"`
	Coalesce           *[]string    `json:"coalesce_boundaries"`
	Filters            *filtersJSON `json:"event_filters"`
	Levels             *[]int       `json:"supported_conformance_levels"`
	Extensions         *[]string    `json:"supported_extensions"`
	SignedOnly         *bool        `json:"accept_signed_manifests_only"`
}

type filtersJSON struct {
	Include *[]string `json:"include"`
	Exclude *[]string `json:"exclude"`
}

// overlay returns c with the fields present in o replaced (§5.7.1).
func (c capsJSON) overlay(o capsJSON) capsJSON {
	if o.MaxEPS != nil {
		c.MaxEPS = o.MaxEPS
	}
	if o.PreferredVerbosity != nil {
		c.PreferredVerbosity = o.PreferredVerbosity
	}
	if o.Languages != nil {
		c.Languages = o.Languages
	}
	if o.ConfReply != nil {
		c.ConfReply = o.ConfReply
	}
	if o.ClarReply != nil {
		c.ClarReply = o.ClarReply
	}
	if o.Coalesce != nil {
		c.Coalesce = o.Coalesce
	}
	if o.Filters != nil {
		f := filtersJSON{}
		if c.Filters != nil {
			f = *c.Filters
		}
		if o.Filters.Include != nil {
			f.Include = o.Filters.Include
		}
		if o.Filters.Exclude != nil {
			f.Exclude = o.Filters.Exclude
		}
		c.Filters = &f
	}
	if o.Levels != nil {
		c.Levels = o.Levels
	}
	if o.Extensions != nil {
		c.Extensions = o.Extensions
	}
	if o.SignedOnly != nil {
		c.SignedOnly = o.SignedOnly
	}
	return c
}

// terms are effective capabilities with every default filled in.
type terms struct {
	rate       int64 // 0: unlimited
	verbosity  string
	languages  []string
	confReply  bool
	clarReply  bool
	coalesce   []string
	include    []string
	exclude    []string
	incSet     *vocab.PatternSet // compiled include, built on first use
	excSet     *vocab.PatternSet
	levels     []int
	extensions []string
	signedOnly bool
}

// resolve fills in c's absent fields from base.
func (c capsJSON) resolve(base terms) terms {
	t := base
	if c.MaxEPS != nil {
		t.rate = *c.MaxEPS
	}
	if c.PreferredVerbosity != nil {
		t.verbosity = *c.PreferredVerbosity
	}
	if c.Languages != nil {
		t.languages = *c.Languages
	}
	if c.ConfReply != nil {
		t.confReply = *c.ConfReply
	}
	if c.ClarReply != nil {
		t.clarReply = *c.ClarReply
	}
	if c.Coalesce != nil {
		t.coalesce = *c.Coalesce
	}
	if c.Filters != nil {
		if c.Filters.Include != nil {
			t.include, t.incSet = *c.Filters.Include, nil
		}
		if c.Filters.Exclude != nil {
			t.exclude, t.excSet = *c.Filters.Exclude, nil
		}
	}
	if c.Levels != nil {
		t.levels = *c.Levels
	}
	if c.Extensions != nil {
		t.extensions = *c.Extensions
	}
	if c.SignedOnly != nil {
		t.signedOnly = *c.SignedOnly
	}
	return t
}

func (t *terms) inc() *vocab.PatternSet {
	if t.incSet == nil {
		t.incSet = vocab.CompilePatterns(t.include)
	}
	return t.incSet
}

func (t *terms) exc() *vocab.PatternSet {
	if t.excSet == nil {
		t.excSet = vocab.CompilePatterns(t.exclude)
	}
	return t.excSet
}

// defaultTerms are the §5.3 defaults for an absent capability.
func defaultTerms() terms {
	return terms{
		verbosity: vocab.DefaultVerbosity,
		languages: vocab.DefaultLanguages(),
		coalesce:  vocab.DefaultCoalesce(),
		include:   vocab.DefaultInclude(),
		levels:    vocab.DefaultLevels(),
	}
}

// decodeCaps reads a capability object; fields of the wrong shape stay absent.
func decodeCaps(raw payload.Value) capsJSON {
	var c capsJSON
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &c) // shape errors are MSG-* findings; keep what decoded
	}
	return c
}
