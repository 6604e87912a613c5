package aaep

import "github.com/aaep-tools/aaepkit/protocol/aaep/vocab"

// The type names are AAEP's vocabulary, kept in package vocab (which serve
// shares); these names keep the checker's API and code short.

// Core event types (compact form), §4 of the specification.
const (
	TypeSessionStarted        = vocab.TypeSessionStarted
	TypeSessionCompleted      = vocab.TypeSessionCompleted
	TypeSessionErrored        = vocab.TypeSessionErrored
	TypeSessionCancelled      = vocab.TypeSessionCancelled
	TypeStateChanged          = vocab.TypeStateChanged
	TypeProgressUpdated       = vocab.TypeProgressUpdated
	TypeToolInvoked           = vocab.TypeToolInvoked
	TypeToolCompleted         = vocab.TypeToolCompleted
	TypeOutputStreaming       = vocab.TypeOutputStreaming
	TypeAwaitingConfirmation  = vocab.TypeAwaitingConfirmation
	TypeAwaitingClarification = vocab.TypeAwaitingClarification
	TypeHandoffRequested      = vocab.TypeHandoffRequested
)

// Handshake and reply message types (Ch. 5, Ch. 6).
const (
	MsgSubscriptionRequest     = vocab.MsgSubscriptionRequest
	MsgSubscriptionAccepted    = vocab.MsgSubscriptionAccepted
	MsgSubscriptionRejected    = vocab.MsgSubscriptionRejected
	MsgSubscriptionRenegotiate = vocab.MsgSubscriptionRenegotiate
	MsgSubscriptionClose       = vocab.MsgSubscriptionClose
	MsgConfirmationReply       = vocab.MsgConfirmationReply
	MsgClarificationReply      = vocab.MsgClarificationReply
)

// TypeProducerManifest is the type of a producer manifest document (§5.10.1).
const TypeProducerManifest = vocab.TypeProducerManifest

const (
	// CorePrefix is the compact prefix of core types.
	CorePrefix = vocab.CorePrefix
	// TypeURIPrefix is the full-URI form of the core prefix (§3.2.2).
	TypeURIPrefix = vocab.TypeURIPrefix
	// ContextV1 is the core JSON-LD context (§3.2.1).
	ContextV1 = vocab.ContextV1
)

// coreTypeList lists the 12 core types in the order of Chapter 4; tables
// indexed by core type have its length.
var coreTypeList = vocab.CoreTypes

// IsCoreType reports whether t is one of the 12 core event types in compact form.
func IsCoreType(t string) bool { return vocab.IsCoreType(t) }

// IsMessageType reports whether t is one of the 7 handshake/reply message types.
func IsMessageType(t string) bool { return vocab.IsMessageType(t) }

// NormalizeType maps a full-URI core type to its compact form and returns
// other types unchanged.
func NormalizeType(t string) string { return vocab.Compact(t) }

// coreIndex returns the index of compact core type t in coreTypeList, or -1.
func coreIndex(t string) int { return vocab.CoreIndex(t) }

// nearCoreType returns the core type that t misspells, or "".
func nearCoreType(t string) string { return vocab.NearCoreType(t) }

// messageTypeList lists the 7 handshake and reply message types.
var messageTypeList = vocab.MessageTypes

// publishedVersions are the published AAEP versions (CHANGELOG: only 1.0.0).
var publishedVersions = vocab.PublishedVersions()
