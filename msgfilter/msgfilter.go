// Package msgfilter selects messages by type, session and urgency: the
// --type, --session and --urgency filters that aaep-capture, aaep-replay
// (serve, filter, show) and the viewer share. It judges the routing fields
// the JSON front end (package payload) reads from a message.
package msgfilter

import (
	"slices"
	"strings"

	"github.com/aaep-tools/aaepkit/payload"
)

// Filter selects messages by type, session and urgency. An empty list
// matches everything; within a list any entry may match.
type Filter struct {
	// Types match a message type exactly or as a suffix: "tool.invoked"
	// matches "aaep:agent.tool.invoked".
	Types []string
	// Sessions match the session key exactly.
	Sessions []string
	// Urgencies match the urgency; an absent urgency counts as "normal", as
	// the AAEP envelope defines (the reference Python tool matched only an
	// explicit "normal").
	Urgencies []string
}

// UrgencyValues are the urgencies AAEP defines (§3.3.2), lowest first: the
// values an urgency filter can match.
var UrgencyValues = []string{"background", "normal", "critical"}

// Empty reports whether the filter lets everything through.
func (f *Filter) Empty() bool {
	return len(f.Types) == 0 && len(f.Sessions) == 0 && len(f.Urgencies) == 0
}

// Match reports whether a message with routing fields r passes the filter.
func (f *Filter) Match(r *payload.Routing) bool {
	if len(f.Types) > 0 {
		typ, ok := r.TypeName(), false
		for _, t := range f.Types {
			if TypeMatches(typ, t) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	if len(f.Sessions) > 0 {
		key := r.SessionKey()
		if !slices.Contains(f.Sessions, key) {
			return false
		}
	}
	if len(f.Urgencies) > 0 {
		u := r.Urgency
		if u == "" {
			u = "normal"
		}
		if !slices.Contains(f.Urgencies, u) {
			return false
		}
	}
	return true
}

// TypeMatches reports whether typ matches the filter pattern: equal, or
// ending with pattern, as the reference Python aaep-capture matches
// ("tool.invoked" and "invoked" both match "aaep:agent.tool.invoked"). An
// empty pattern matches nothing.
func TypeMatches(typ, pattern string) bool {
	return pattern != "" && strings.HasSuffix(typ, pattern)
}
