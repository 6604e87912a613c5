package transport

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// capsView is the part of a capabilities object that decides which events
// a producer sends.
type capsView struct {
	Confirm *bool `json:"supports_confirmation_reply"`
	Clarify *bool `json:"supports_clarification_reply"`
	MaxRate *int  `json:"max_events_per_second"`
	Filters *struct {
		Include []string `json:"include"`
		Exclude []string `json:"exclude"`
	} `json:"event_filters"`
}

// Exclusions reads a producer's subscription.accepted and lists, one phrase
// each, what its honored_capabilities withhold from the recording that the
// request did not ask to be withheld: awaiting.confirmation or
// awaiting.clarification (reply support refused), event types excluded or
// not included by its event_filters, a rate limit. request is the
// subscription.request that was sent (nil: no request caps known). It
// returns nil for anything but a subscription.accepted.
func Exclusions(request, accepted []byte) []string {
	var acc struct {
		Type    string   `json:"type"`
		Honored capsView `json:"honored_capabilities"`
	}
	if json.Unmarshal(accepted, &acc) != nil || acc.Type != "subscription.accepted" {
		return nil
	}
	var req struct {
		Caps capsView `json:"capabilities"`
	}
	_ = json.Unmarshal(request, &req)
	h, q := acc.Honored, req.Caps
	var out []string
	if h.Confirm != nil && !*h.Confirm && (q.Confirm == nil || *q.Confirm) {
		out = append(out, "agent.awaiting.confirmation (supports_confirmation_reply: false)")
	}
	if h.Clarify != nil && !*h.Clarify && (q.Clarify == nil || *q.Clarify) {
		out = append(out, "agent.awaiting.clarification (supports_clarification_reply: false)")
	}
	if f := h.Filters; f != nil {
		var asked []string
		if q.Filters != nil {
			asked = q.Filters.Exclude
		}
		for _, p := range f.Exclude {
			if !slices.Contains(asked, p) {
				out = append(out, p+" (event_filters exclude)")
			}
		}
		if len(f.Include) > 0 && !coversAll(f.Include) && (q.Filters == nil || coversAll(q.Filters.Include)) {
			out = append(out, "all but "+strings.Join(f.Include, ", ")+" (event_filters include)")
		}
	}
	if h.MaxRate != nil && *h.MaxRate > 0 && (q.MaxRate == nil || *q.MaxRate > *h.MaxRate) {
		out = append(out, fmt.Sprintf("events beyond %d per second (max_events_per_second; non-critical events may be merged or dropped)", *h.MaxRate))
	}
	return out
}

// coversAll reports whether include patterns admit every core event.
func coversAll(include []string) bool {
	if len(include) == 0 {
		return true
	}
	for _, p := range include {
		switch p {
		case "*", "aaep:*", "aaep:agent.*", "agent.*":
			return true
		}
	}
	return false
}
