package serve

import (
	"bytes"
	"encoding/json"
	"slices"
	"sync"
)

// registry tracks the reply tokens a timeline has sent: per subscriber on
// its own timeline, one for all on a shared timeline. A token is outstanding
// from the moment its event is written until the first valid reply uses it.
type registry struct {
	mu     sync.Mutex
	tokens map[string]*tokenState
}

type tokenState struct {
	b       *blocking
	eventID string
	session string
	used    bool
}

func newRegistry() *registry { return &registry{tokens: make(map[string]*tokenState)} }

// issue marks b's token as outstanding (again, when a loop repeats it).
// On a shared timeline every subscriber's writer issues the same event
// (the same *blocking): only its first issue counts, so that a reply from
// one subscriber is not undone when the event reaches a slower one.
func (r *registry) issue(b *blocking, eventID, session string, shared bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t, ok := r.tokens[b.Token]; ok && shared && t.b == b {
		return
	}
	r.tokens[b.Token] = &tokenState{b: b, eventID: eventID, session: session}
}

// outstanding reports whether token awaits a reply.
func (r *registry) outstanding(token string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.tokens[token]
	return ok && !t.used
}

// reply is a confirmation.reply or clarification.reply as decoded.
type reply struct {
	Type           string          `json:"type"`
	ReplyToken     string          `json:"reply_token"`
	Decision       string          `json:"decision"`
	Response       json.RawMessage `json:"response"`
	SubscriptionID string          `json:"subscription_id"`
}

// Verdicts of a reply.
const (
	VerdictAccepted = "accepted"
	VerdictIgnored  = "ignored"
)

// settle validates a reply against the registry and, when valid, uses its
// token (first reply wins, §6.3.5). It returns the verdict, the reason for
// an ignored reply (for the operator only, never sent back: §6.3.4) and the
// session of the originating event.
func (r *registry) settle(rp *reply) (verdict, reason, session string) {
	kind := "confirmation"
	if rp.Type == "clarification.reply" {
		kind = "clarification"
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.tokens[rp.ReplyToken]
	switch {
	case rp.ReplyToken == "":
		return VerdictIgnored, "no reply_token", ""
	case !ok:
		return VerdictIgnored, "unknown reply_token", ""
	case t.b.Kind != kind:
		return VerdictIgnored, "reply_token belongs to an awaiting." + t.b.Kind, t.session
	case t.used:
		return VerdictIgnored, "reply_token already used", t.session
	}
	if why := checkAnswer(t.b, rp); why != "" {
		return VerdictIgnored, why, t.session
	}
	t.used = true
	return VerdictAccepted, "", t.session
}

// checkAnswer checks the decision or response against what the event allows.
func checkAnswer(b *blocking, rp *reply) string {
	if b.Kind == "confirmation" {
		allowed := b.AllowedReplies
		if len(allowed) == 0 {
			allowed = []string{"accept", "reject"}
		}
		if !slices.Contains(allowed, rp.Decision) {
			return "decision " + quote(rp.Decision) + " not in allowed_replies"
		}
		return ""
	}
	resp := bytes.TrimSpace(rp.Response)
	if len(resp) == 0 {
		return "no response"
	}
	if len(b.ResponseKinds) == 0 {
		return ""
	}
	for _, k := range b.ResponseKinds {
		if responseFits(k, resp, b.Choices) {
			return ""
		}
	}
	return "response does not fit accepted_response_kinds"
}

func responseFits(kind string, resp []byte, choices []string) bool {
	switch kind {
	case "freetext":
		return resp[0] == '"'
	case "yes_no":
		return string(resp) == "true" || string(resp) == "false"
	case "numeric":
		var f float64
		return json.Unmarshal(resp, &f) == nil
	case "multiple_choice":
		var s string
		if json.Unmarshal(resp, &s) != nil {
			return false
		}
		return len(choices) == 0 || slices.Contains(choices, s)
	}
	return false
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
