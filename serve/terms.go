package serve

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/aaep-tools/aaepkit/protocol/aaep/vocab"
)

// offeredLevels are the conformance levels a replay can honour: it accepts
// replies (level 2) but has no signed manifest (level 3).
var offeredLevels = []int{1, 2}

// subscriptionTerms are what one subscription was granted. The zero value (no
// handshake) let every event through.
type subscriptionTerms struct {
	// Negotiated is false when the subscriber never sent a request.
	Negotiated bool
	// Include and Exclude are event type patterns (a literal type, or a
	// prefix ending in '*'), in compact form ("aaep:agent.*").
	Include, Exclude []string
	// MaxRate is the honoured max_events_per_second (0: unlimited).
	MaxRate int
	// Confirmations and Clarifications say whether awaiting.confirmation and
	// awaiting.clarification events may be sent.
	Confirmations, Clarifications bool
}

// Allows reports whether ev may be sent under t.
func (t *subscriptionTerms) Allows(ev *event) bool {
	if t == nil || !t.Negotiated || ev.Control {
		return true
	}
	typ := vocab.Compact(ev.Type)
	if ev.Blocking != nil || typ == vocab.TypeAwaitingConfirmation || typ == vocab.TypeAwaitingClarification {
		// §5.3.1.4-5: never send what the subscriber cannot answer. This
		// rule is specific, so it wins over §5.5.4's critical exemption.
		if typ == vocab.TypeAwaitingConfirmation {
			return t.Confirmations
		}
		return t.Clarifications
	}
	if ev.critical() {
		return true
	}
	for _, p := range t.Exclude {
		if vocab.MatchPattern(p, typ) {
			return false
		}
	}
	for _, p := range t.Include {
		if vocab.MatchPattern(p, typ) {
			return true
		}
	}
	return false
}

// needsFields reports whether Allows and the rate limit need an event's
// type and urgency. Blocking events are recognised without them (see
// fillEvent), so terms that include everything need nothing more.
func (t *subscriptionTerms) needsFields() bool {
	if t == nil || !t.Negotiated {
		return false
	}
	return t.MaxRate > 0 || len(t.Exclude) > 0 || !slices.Contains(t.Include, "*")
}

// rateLimited reports whether ev counts against MaxRate.
func (t *subscriptionTerms) rateLimited(ev *event) bool {
	return t != nil && t.MaxRate > 0 && !ev.Control && !ev.critical()
}

// request is a subscription.request (or renegotiate) as decoded.
type request struct {
	Type           string                     `json:"type"`
	AAEPVersion    string                     `json:"aaep_version"`
	SubscriberID   string                     `json:"subscriber_id"`
	SubscriptionID string                     `json:"subscription_id"`
	Capabilities   map[string]json.RawMessage `json:"capabilities"`
}

type eventFilters struct {
	Include []string `json:"include"`
	Exclude []string `json:"exclude"`
}

// honored is the honored_capabilities object, in the order of §5.3.1.
type honored struct {
	MaxEventsPerSecond         *int         `json:"max_events_per_second,omitempty"`
	PreferredVerbosity         string       `json:"preferred_verbosity"`
	Languages                  []string     `json:"languages"`
	SupportsConfirmationReply  bool         `json:"supports_confirmation_reply"`
	SupportsClarificationReply bool         `json:"supports_clarification_reply"`
	CoalesceBoundaries         []string     `json:"coalesce_boundaries"`
	EventFilters               eventFilters `json:"event_filters"`
	SupportedConformanceLevels []int        `json:"supported_conformance_levels"`
	SupportedExtensions        []string     `json:"supported_extensions,omitempty"`
	CognitiveLoad              string       `json:"cognitive_load,omitempty"`
	PaceWPM                    *int         `json:"pace_wpm,omitempty"`
	AcceptSignedManifestsOnly  *bool        `json:"accept_signed_manifests_only,omitempty"`
}

type accepted struct {
	Type                string          `json:"type"`
	SubscriptionID      string          `json:"subscription_id"`
	AAEPVersion         string          `json:"aaep_version"`
	Producer            json.RawMessage `json:"producer"`
	HonoredCapabilities honored         `json:"honored_capabilities"`
	NegotiationNotes    string          `json:"negotiation_notes,omitempty"`
}

type rejected struct {
	Type           string `json:"type"`
	SubscriptionID string `json:"subscription_id,omitempty"`
	ReasonCode     string `json:"reason_code"`
	ReasonMessage  string `json:"reason_message"`
}

// rejection is a negotiation that ended in subscription.rejected.
type rejection struct {
	Code, Message string
}

func (r *rejection) Error() string { return r.Code + ": " + r.Message }

// negotiation is the result of one handshake step.
type negotiation struct {
	// Response is the subscription.accepted or subscription.rejected message.
	Response []byte
	// Terms are set when accepted.
	Terms *subscriptionTerms
	// Rejected is set when rejected.
	Rejected *rejection
	// Caps are the effective requested capabilities (after overlaying a
	// renegotiation), kept for the next renegotiation.
	Caps map[string]json.RawMessage
	// SubscriberID is the request's subscriber_id.
	SubscriberID string
}

// newSubscriptionID returns "sub_" and 16 random hex digits.
func newSubscriptionID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "sub_" + hex.EncodeToString(b[:])
}

// negotiate answers a subscription.request, or refuses it when the server
// was told to (Options.RejectRequests).
func (s *Server) negotiate(raw []byte, subID string) *negotiation {
	if code := s.opts.RejectRequests; code != "" {
		return reject(subID, &rejection{code, "this producer refuses every subscription (a subscriber test)"}, nil)
	}
	return s.capRate(negotiate(raw, subID, s.producer, nil))
}

// capRate lowers an accepted negotiation's rate to Options.HonorMaxRate
// (when set): its terms and the honored_capabilities it answers with.
func (s *Server) capRate(n *negotiation) *negotiation {
	limit := s.opts.HonorMaxRate
	if limit <= 0 || n.Rejected != nil || n.Terms == nil || (n.Terms.MaxRate > 0 && n.Terms.MaxRate <= limit) {
		return n
	}
	var a accepted
	if json.Unmarshal(n.Response, &a) != nil {
		return n
	}
	asked := "no limit"
	if n.Terms.MaxRate > 0 {
		asked = fmt.Sprint(n.Terms.MaxRate)
	}
	a.HonoredCapabilities.MaxEventsPerSecond = &limit
	a.NegotiationNotes = strings.TrimPrefix(a.NegotiationNotes+fmt.Sprintf("; max_events_per_second %d honoured where %s was asked", limit, asked), "; ")
	msg, err := json.Marshal(a)
	if err != nil {
		return n
	}
	t := *n.Terms
	t.MaxRate = limit
	n.Response, n.Terms = msg, &t
	return n
}

// negotiate answers a subscription.request (prev nil) or a
// subscription.renegotiate (prev: the capabilities requested so far).
func negotiate(raw []byte, subID string, producer json.RawMessage, prev map[string]json.RawMessage) *negotiation {
	var req request
	if err := json.Unmarshal(raw, &req); err != nil {
		return reject(subID, &rejection{vocab.ReasonUnknown, "the request is not a JSON object: " + err.Error()}, prev)
	}
	caps := req.Capabilities
	if prev != nil {
		merged := make(map[string]json.RawMessage, len(prev)+len(caps))
		for k, v := range prev {
			merged[k] = v
		}
		for k, v := range caps {
			merged[k] = v
		}
		caps = merged
	} else if req.Capabilities == nil {
		return reject(subID, &rejection{vocab.ReasonCapabilitiesIncompatible, "the request has no capabilities object"}, nil)
	}
	var notes []string
	if prev == nil {
		switch v := req.AAEPVersion; {
		case v == "":
			notes = append(notes, "no aaep_version requested; using "+vocab.Version)
		case !vocab.ValidVersion(v):
			return reject(subID, &rejection{vocab.ReasonVersionUnsupported, fmt.Sprintf("aaep_version %q is not a semantic version such as %q", v, vocab.Version)}, nil)
		case !vocab.Serves(vocab.Version, v):
			return reject(subID, &rejection{vocab.ReasonVersionUnsupported, fmt.Sprintf("aaep_version %q is not supported; this producer speaks %s", v, vocab.Version)}, nil)
		}
	}
	h, terms, rej := honour(caps)
	if rej != nil {
		return reject(subID, rej, prev)
	}
	notes = append(notes, "replayed from a capture: payloads, verbosity, languages and coalescing are as recorded; max_events_per_second holds events back rather than merging them")
	if !terms.Confirmations || !terms.Clarifications {
		notes = append(notes, "awaiting events the subscriber cannot answer are withheld (§5.3.1.4)")
	}
	if len(producer) == 0 {
		producer = json.RawMessage(`{"agent_id":"aaep-replay"}`)
	}
	msg, err := json.Marshal(accepted{
		Type:                "subscription.accepted",
		SubscriptionID:      subID,
		AAEPVersion:         vocab.Version,
		Producer:            producer,
		HonoredCapabilities: h,
		NegotiationNotes:    strings.Join(notes, "; "),
	})
	if err != nil {
		// Only a malformed producer object can fail here; fall back.
		return negotiate(raw, subID, json.RawMessage(`{"agent_id":"aaep-replay"}`), prev)
	}
	return &negotiation{Response: msg, Terms: terms, Caps: caps, SubscriberID: req.SubscriberID}
}

func reject(subID string, r *rejection, prev map[string]json.RawMessage) *negotiation {
	msg, _ := json.Marshal(rejected{Type: "subscription.rejected", SubscriptionID: subID, ReasonCode: r.Code, ReasonMessage: r.Message})
	return &negotiation{Response: msg, Rejected: r, Caps: prev}
}

// honour works out the honoured capabilities and the terms to enforce.
func honour(caps map[string]json.RawMessage) (honored, *subscriptionTerms, *rejection) {
	h := honored{
		PreferredVerbosity: vocab.DefaultVerbosity,
		Languages:          vocab.DefaultLanguages(),
		CoalesceBoundaries: vocab.DefaultCoalesce(),
		EventFilters:       eventFilters{Include: vocab.DefaultInclude(), Exclude: []string{}},
	}
	levels := vocab.DefaultLevels()
	bad := func(field, want string) *rejection {
		return &rejection{vocab.ReasonCapabilitiesIncompatible, fmt.Sprintf("capabilities.%s: want %s", field, want)}
	}
	get := func(key string, dst any) bool {
		v, ok := caps[key]
		if !ok || string(v) == "null" {
			return true
		}
		return json.Unmarshal(v, dst) == nil
	}
	var rate *int
	if !get("max_events_per_second", &rate) || rate != nil && *rate < 1 {
		return h, nil, bad("max_events_per_second", "an integer of at least 1")
	}
	h.MaxEventsPerSecond = rate
	if !get("preferred_verbosity", &h.PreferredVerbosity) || !vocab.IsVerbosity(h.PreferredVerbosity) {
		return h, nil, bad("preferred_verbosity", `"terse", "normal" or "detailed"`)
	}
	if !get("languages", &h.Languages) {
		return h, nil, bad("languages", "an array of language tags")
	}
	if !get("supports_confirmation_reply", &h.SupportsConfirmationReply) {
		return h, nil, bad("supports_confirmation_reply", "a boolean")
	}
	if !get("supports_clarification_reply", &h.SupportsClarificationReply) {
		return h, nil, bad("supports_clarification_reply", "a boolean")
	}
	if !get("coalesce_boundaries", &h.CoalesceBoundaries) {
		return h, nil, bad("coalesce_boundaries", "an array of strings")
	}
	var f *eventFilters
	if !get("event_filters", &f) {
		return h, nil, bad("event_filters", "an object with include and exclude arrays")
	}
	if f != nil {
		if _, ok := rawObjectHas(caps["event_filters"], "include"); ok {
			h.EventFilters.Include = nonNil(f.Include)
		}
		h.EventFilters.Exclude = nonNil(f.Exclude)
	}
	if !get("supported_conformance_levels", &levels) {
		return h, nil, bad("supported_conformance_levels", "an array of integers")
	}
	for _, l := range levels {
		if slices.Contains(offeredLevels, l) && !slices.Contains(h.SupportedConformanceLevels, l) {
			h.SupportedConformanceLevels = append(h.SupportedConformanceLevels, l)
		}
	}
	if len(h.SupportedConformanceLevels) == 0 {
		return h, nil, &rejection{vocab.ReasonCapabilitiesIncompatible, fmt.Sprintf("conformance levels %v requested; a replay offers %v", levels, offeredLevels)}
	}
	if !get("supported_extensions", &h.SupportedExtensions) {
		return h, nil, bad("supported_extensions", "an array of URIs")
	}
	if !get("cognitive_load", &h.CognitiveLoad) {
		return h, nil, bad("cognitive_load", "a string")
	}
	if !get("pace_wpm", &h.PaceWPM) {
		return h, nil, bad("pace_wpm", "an integer")
	}
	var signed bool
	if !get("accept_signed_manifests_only", &signed) {
		return h, nil, bad("accept_signed_manifests_only", "a boolean")
	}
	if signed {
		return h, nil, &rejection{vocab.ReasonManifestSignatureRequired, "a replay has no signed manifest"}
	}
	t := &subscriptionTerms{
		Negotiated:     true,
		Include:        h.EventFilters.Include,
		Exclude:        h.EventFilters.Exclude,
		Confirmations:  h.SupportsConfirmationReply,
		Clarifications: h.SupportsClarificationReply,
	}
	if rate != nil {
		t.MaxRate = *rate
	}
	return h, t, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// rawObjectHas reports whether the JSON object raw has key.
func rawObjectHas(raw json.RawMessage, key string) (json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil, false
	}
	v, ok := m[key]
	return v, ok
}
