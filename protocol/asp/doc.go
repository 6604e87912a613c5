// Package asp is the protocol model of npayload's Agent Session Protocol
// (ASP) for the protocol engine: recognition of ASP envelopes and WebSocket
// frames, the nine-state session machine with its 18 published transitions,
// and the validator rules ASP-E* (envelope), ASP-H* (hash chain), ASP-S*
// (state machine), ASP-T* (timeouts) and ASP-C* (constraints) of the
// research note shared/notes/asp-kahn.md.
//
// # Sessions
//
// Messages are grouped by sessionId. A session starts in IDLE with a
// PROPOSE of type session-invitation and moves through INVITED,
// INTRODUCED, CONVERSING, AGREEING, EXECUTING and ESCALATED to CLOSED or
// FAILED. An escalation remembers the state it left (a stack, so nested
// escalations return in order). Messages without a sessionId are
// pre-session discovery messages: their envelope is checked, they have no
// trace. The checker keeps state per open session only; stream-wide
// memories (message IDs, hashes, ended sessions) are bounded windows.
//
// Each message of a session yields one protocol.Step (Label: the
// performative; Detail: the sender's short name and the message's salient
// argument, e.g. "beta: identity"). A refused message is a step that does
// not change the state. Discovery messages and WebSocket control frames
// (ack, session_state, heartbeat, …) yield no step; findings about messages
// that belong to no session carry an empty session. Transitions no message
// causes — timeouts, a broken hash chain, and in the strict profile a
// protocol violation — are synthetic steps to FAILED.
//
// The machine is one table (machine.go): the states with their kinds and
// the edges of the normalised transition function, each with the
// performatives that take it, a named guard and action where it needs one,
// the clock of a timed edge and the reason when only the lenient profile
// takes it. The checker's transitions, the allowed performatives its
// ASP-S02 message lists and Machine() all come from it.
//
// # WebSocket frames
//
// Envelopes wrapped in {"type":"message"|"send","envelope":{…}} frames are
// unwrapped; when a recording holds both the client's send frame and the
// server's message frame of one envelope (same messageId and hash), the
// second is an echo and is skipped. session_state, auth_ok and heartbeat
// frames are compared with the computed state (ASP-S11); a session_state
// that announces a transition before the message causing it is checked
// after that message. A frame without sessionId refers to the last session
// seen on the same capture source. An auth_ok or session_state frame naming
// a session not seen yet anchors it in the announced state, so a recording
// that starts mid-session is checked without ASP-S01.
//
// # Time
//
// Timeouts are inferred from the messages' own timestamps: the invitation
// (validUntil, or 30 s), the session (terms.proposedDuration in ms, or the
// state machine's terms.proposed_duration in seconds, or 3600 s) and an escalation (the ESCALATE body's timeout, or 3600 s). A
// clock that ran out shows up at the session's next message, or at the end
// of the stream if the stream's latest timestamp is past it.
//
// # Profiles
//
// The published text contradicts itself in places; protocol.Options
// selects the reading. The lenient profile is the default. The rules'
// declared values (rules.go: Doc, Profiles) describe each contradiction:
//   - ASP-S02: a refused message leaves the session as it was (lenient)
//     or fails it, row 18 (strict);
//   - ASP-S02W: the transitions only rows 16–17, the diagram's "any state"
//     or the sessions page allow (lenient: a warning; strict: ASP-S02),
//     and the mutual close (lenient: part of a normal close; strict:
//     ASP-S07);
//   - ASP-T01: whether ACCEPT alone (lenient) or the whole introduction
//     (strict) must beat the invitation timeout;
//   - ASP-T03: whether the session timeout limits idle gaps (lenient) or
//     the total lifetime (strict).
//
// Both profiles accept asp/0.1 and asp/1.0 and both recipient shapes.
//
// # Not checked
//
// ASP-H04 (recomputing integrity.hash) needs the canonical hash input,
// which is not published; ASP-H05 (Ed25519 signatures, DPoP proofs) needs
// keys from Agent Cards outside the stream. Neither is implemented.
// ASP-C03 needs Config.MinimalAgents, since conformance levels live in
// Agent Cards.
package asp
