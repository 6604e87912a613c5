package aaep

// Transport-frame rules (TRN-*), checked when the capture kept the frame's
// attributes with the record: the SSE "id" and "event" fields, and the
// JSON-RPC "method" of the stdio binding (the capture side unwraps the
// JSON-RPC envelope, records its params as the message and keeps the method
// as an attribute). Records without attributes are not judged.

import (
	"strings"

	"github.com/aaep-tools/aaepkit/protocol"
)

// Attribute keys the capture side uses for transport metadata.
const (
	attrSSEID     = "id"
	attrSSEEvent  = "event"
	attrRPCMethod = "method"
)

// rpcMethod is the JSON-RPC method Appendix B.6.3 assigns to each message
// type ("" when the message travels as a response, without a method).
func rpcMethod(ev *Event) string {
	if ev.IsEvent {
		return "aaep.event"
	}
	switch ev.Type {
	case MsgSubscriptionRequest:
		return "aaep.subscribe"
	case MsgSubscriptionRenegotiate:
		return "aaep.renegotiate"
	case MsgConfirmationReply, MsgClarificationReply:
		return "aaep.reply"
	case MsgSubscriptionClose:
		return "aaep.close"
	}
	return ""
}

func (s *seqChecker) trnSession(m *protocol.Message, ev *Event) string {
	if ev.SessionID != "" {
		return ev.SessionID
	}
	return s.neg.key(m.Source)
}

// checkTransport applies TRN-SSE-ID, TRN-JSONRPC-METHOD and
// TRN-NO-FAILURE-REASON.
func (s *seqChecker) checkTransport(m *protocol.Message, ev *Event) {
	if len(m.Attrs) > 0 {
		if id, ok := m.Attrs[attrSSEID]; ok && ev.IsEvent && ev.EventID != "" && id != ev.EventID {
			s.report(trnSSEID, s.trnSession(m, ev), m, "SSE id ≠ event_id",
				"the SSE frame's id is %q but the event inside has event_id %q; the SSE id field carries the event's event_id (B.1.3), so Last-Event-ID resumption works", id, ev.EventID)
		}
		if name, ok := m.Attrs[attrSSEEvent]; ok && ev.Core != "" && name != "aaep.event" {
			s.report(trnSSEID, s.trnSession(m, ev), m, "SSE event name",
				"the SSE frame's event field is %q but core AAEP events are sent as \"aaep.event\" (B.1.3)", name)
		}
		if method, ok := m.Attrs[attrRPCMethod]; ok {
			if want := rpcMethod(ev); want != "" && method != want {
				what := ev.Type
				if ev.IsEvent {
					what = "an event (" + shortType(ev) + ")"
				}
				s.report(trnJSONRPCMethod, s.trnSession(m, ev), m, "wrong JSON-RPC method",
					"%s travels in a JSON-RPC message with method %q; the stdio binding (B.6.3) uses %q for it", what, method, want)
			}
		}
	}
	if m.Dir == protocol.FromProducer && !ev.IsEvent && !IsMessageType(ev.Type) {
		if why := revealedReason(ev); why != "" {
			s.report(trnNoFailureReason, s.trnSession(m, ev), m, "reply failure reason revealed",
				"the producer's answer to a reply reveals why it failed (%s); a producer must ignore an invalid reply without telling the sender the specific reason (§6.3.4), which would help attackers probe tokens", why)
		}
	}
}

// failureWords reveal the reason a reply failed validation (§6.3.4).
var failureWords = []string{"token", "expired", "expir", "allowed_replies", "not allowed", "already used", "already resolved", "outstanding", "decision"}

// revealedReason returns the telling text of a producer's error answer
// (a typed confirmation.* or clarification.* message, or an untyped error
// body the checker claimed right after a reply): its "error", "reason" or
// "message" text, e.g. B.1.4's {"error":"invalid_token",...}; "" when it
// tells nothing.
func revealedReason(ev *Event) string {
	if !ev.Has("error") && !ev.Has("reason") && !ev.Has("reason_code") &&
		!strings.HasPrefix(ev.Type, "confirmation.") && !strings.HasPrefix(ev.Type, "clarification.") {
		return ""
	}
	var parts []string
	for _, k := range []string{"error", "message", "reason", "reason_code", "reason_message", "detail"} {
		raw := ev.raw(k)
		ok := raw != nil
		if !ok {
			continue
		}
		if str, ok := raw.Str(); ok {
			parts = append(parts, str)
		} else if obj, ok := raw.Object(); ok {
			for _, sub := range []string{"message", "code", "reason"} {
				if str, ok := obj[sub].Str(); ok {
					parts = append(parts, str)
				}
			}
		}
	}
	text := strings.ToLower(strings.Join(parts, " "))
	for _, w := range failureWords {
		if strings.Contains(text, w) {
			return strings.Join(parts, "; ")
		}
	}
	return ""
}
