// Package vocab is AAEP's vocabulary: the event and message type names, the
// two spellings of a core type, event_filters patterns as subscriptions use
// them, version comparison, language-tag matching and the capability
// defaults of the subscription handshake.
//
// The checker (protocol/aaep) and the replay server (serve) both read AAEP
// through this package, so the two cannot disagree on what a term means. It
// imports nothing of this module.
package vocab

import "strings"

// Core event types in compact form (Chapter 4).
const (
	TypeSessionStarted        = "aaep:agent.session.started"
	TypeSessionCompleted      = "aaep:agent.session.completed"
	TypeSessionErrored        = "aaep:agent.session.errored"
	TypeSessionCancelled      = "aaep:agent.session.cancelled"
	TypeStateChanged          = "aaep:agent.state.changed"
	TypeProgressUpdated       = "aaep:agent.progress.updated"
	TypeToolInvoked           = "aaep:agent.tool.invoked"
	TypeToolCompleted         = "aaep:agent.tool.completed"
	TypeOutputStreaming       = "aaep:agent.output.streaming"
	TypeAwaitingConfirmation  = "aaep:agent.awaiting.confirmation"
	TypeAwaitingClarification = "aaep:agent.awaiting.clarification"
	TypeHandoffRequested      = "aaep:agent.handoff.requested"
)

// Handshake and reply message types (Ch. 5, Ch. 6). They are bare strings
// without the "aaep:" prefix and carry no envelope.
const (
	MsgSubscriptionRequest     = "subscription.request"
	MsgSubscriptionAccepted    = "subscription.accepted"
	MsgSubscriptionRejected    = "subscription.rejected"
	MsgSubscriptionRenegotiate = "subscription.renegotiate"
	MsgSubscriptionClose       = "subscription.close"
	MsgConfirmationReply       = "confirmation.reply"
	MsgClarificationReply      = "clarification.reply"
)

// TypeProducerManifest is the type of a producer manifest document
// (§5.10.1). It uses the "aaep:" prefix but is not an event.
const TypeProducerManifest = "aaep:producer.manifest"

const (
	// CorePrefix is the compact prefix of core types.
	CorePrefix = "aaep:"
	// TypeURIPrefix is the full-URI form of the core prefix (§3.2.2, §2.2.7).
	TypeURIPrefix = "https://aaep-protocol.org/types/"
	// ContextV1 is the core JSON-LD context (§3.2.1).
	ContextV1 = "https://aaep-protocol.org/context/v1"
	// vocabURIPrefix is what context/aaep-v1.jsonld maps "aaep:" to; the
	// prose (§2.2.7) says TypeURIPrefix (catalog §2.14 item 2).
	vocabURIPrefix = "https://aaep-protocol.org/vocab/v1#"
)

// CoreTypes lists the 12 core types in the order of Chapter 4; CoreIndex
// gives a type's position in it.
var CoreTypes = [...]string{
	TypeSessionStarted, TypeSessionCompleted, TypeSessionErrored, TypeSessionCancelled,
	TypeStateChanged, TypeProgressUpdated, TypeToolInvoked, TypeToolCompleted,
	TypeOutputStreaming, TypeAwaitingConfirmation, TypeAwaitingClarification, TypeHandoffRequested,
}

// MessageTypes lists the 7 handshake and reply message types.
var MessageTypes = [...]string{
	MsgSubscriptionRequest, MsgSubscriptionAccepted, MsgSubscriptionRejected,
	MsgSubscriptionRenegotiate, MsgSubscriptionClose, MsgConfirmationReply, MsgClarificationReply,
}

// IsCoreType reports whether t is one of the 12 core event types in compact form.
func IsCoreType(t string) bool { return CoreIndex(t) >= 0 }

// IsMessageType reports whether t is one of the 7 handshake/reply message types.
func IsMessageType(t string) bool {
	switch t {
	case MsgSubscriptionRequest, MsgSubscriptionAccepted, MsgSubscriptionRejected,
		MsgSubscriptionRenegotiate, MsgSubscriptionClose, MsgConfirmationReply, MsgClarificationReply:
		return true
	}
	return false
}

// CoreIndex returns the index of compact core type t in CoreTypes, or -1.
func CoreIndex(t string) int {
	switch t {
	case TypeSessionStarted:
		return 0
	case TypeSessionCompleted:
		return 1
	case TypeSessionErrored:
		return 2
	case TypeSessionCancelled:
		return 3
	case TypeStateChanged:
		return 4
	case TypeProgressUpdated:
		return 5
	case TypeToolInvoked:
		return 6
	case TypeToolCompleted:
		return 7
	case TypeOutputStreaming:
		return 8
	case TypeAwaitingConfirmation:
		return 9
	case TypeAwaitingClarification:
		return 10
	case TypeHandoffRequested:
		return 11
	}
	return -1
}

// Compact maps a full-URI core type to its compact form (§3.2.2: the two
// forms are equivalent) and returns other types unchanged. Only these two
// spellings name a core type: "medai:agent.awaiting.confirmation" is an
// extension type of another namespace.
func Compact(t string) string {
	if strings.HasPrefix(t, TypeURIPrefix) {
		return CorePrefix + t[len(TypeURIPrefix):]
	}
	return t
}

// NearCoreType returns the core type that t spells with a different letter
// case, surrounding spaces, an http scheme or the JSON-LD vocab expansion,
// or "" when t is not such a near-miss. A near-miss is not a core type; the
// checker follows it as one to report the misspelling once.
func NearCoreType(t string) string {
	s := strings.ToLower(strings.TrimSpace(t))
	s = strings.Replace(s, "http://", "https://", 1)
	switch {
	case strings.HasPrefix(s, TypeURIPrefix):
		s = CorePrefix + s[len(TypeURIPrefix):]
	case strings.HasPrefix(s, vocabURIPrefix):
		s = CorePrefix + s[len(vocabURIPrefix):]
	}
	if CoreIndex(s) >= 0 {
		return s
	}
	return ""
}
