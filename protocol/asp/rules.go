package asp

import "github.com/aaep-tools/aaepkit/protocol"

// Rule IDs. They follow the catalog of the research note
// (shared/notes/asp-kahn.md §1.5). Where a catalog rule mixes an error part
// and a warning part (or a part built on an unpublished, [INFERRED] fact),
// the warning part has its own ID with a "W" suffix, because a rule ID has
// one level.
const (
	// ruleE01: the required envelope fields are present.
	ruleE01 = "ASP-E01"
	// ruleE01W: a message without sessionId (QUERY or INFORM) is a
	// pre-session discovery message. The documentation's own discovery
	// example also lacks sequenceNumber and sender.dpopProof, so these gaps
	// are a warning there; the message is kept out of session traces.
	ruleE01W = "ASP-E01W"
	// ruleE02: version matches asp/{major}.{minor} and is supported.
	// Contradiction: the specification says the current version is asp/0.1,
	// the concept page and quickstart use asp/1.0; both are accepted by
	// default (Config.SupportedVersions changes the set), in both profiles.
	ruleE02 = "ASP-E02"
	// ruleE03: one version per session.
	ruleE03 = "ASP-E03"
	// ruleE04: messageId is a UUID and unique (within the last
	// recentMemory message IDs of the stream: memory stays bounded).
	ruleE04 = "ASP-E04"
	// ruleE04W: messageId is a UUID of another version than 7.
	ruleE04W = "ASP-E04W"
	// ruleE05: sessionId is a UUID. Contradiction: the schema says UUID, the
	// transport examples use "ase_abc123"; hence a warning only.
	ruleE05 = "ASP-E05"
	// ruleE06: sequenceNumber is an integer >= 0, strictly increasing per
	// (session, sender.agentId).
	ruleE06 = "ASP-E06"
	// ruleE07: timestamp is RFC 3339 with a Z suffix.
	ruleE07 = "ASP-E07"
	// ruleE07W: timestamps do not go backwards within a session, and agree
	// (within uuidClockSkew) with the time in a UUIDv7 messageId [INFERRED].
	ruleE07W = "ASP-E07W"
	// ruleE08: sender has agentId (agent://…), orgId, trustScore in
	// [0,100] and dpopProof.
	ruleE08 = "ASP-E08"
	// ruleE09: recipient is absent, an agent:// string, or an object with an
	// agent:// agentId. Contradiction: the schema says string, the concept
	// page shows {agentId, orgId}; both are accepted in both profiles.
	ruleE09 = "ASP-E09"
	// ruleE10: performative is one of the 13, in upper case.
	ruleE10 = "ASP-E10"
	// ruleE11: content has a string mimeType and an object body with the
	// minimum fields of its performative (PROPOSE, COMMIT, QUERY).
	ruleE11 = "ASP-E11"
	// ruleE11W: a REJECT code outside the published registry.
	ruleE11W = "ASP-E11W"
	// ruleE12: integrity hash/previousHash are sha256:<64 hex>, signature is
	// ed25519:<hex> (Config.DocsExamples relaxes this for the abbreviated
	// values of the documentation's examples).
	ruleE12 = "ASP-E12"

	// ruleH01: the first message of a session links to the genesis hash.
	ruleH01 = "ASP-H01"
	// ruleH02: each previousHash equals the hash of the message before it in
	// the session (both senders share one chain). A break is a row-18
	// failure: the session goes to FAILED in both profiles.
	ruleH02 = "ASP-H02"
	// ruleH03: no hash value occurs twice (within the last recentMemory
	// hashes of the stream).
	ruleH03 = "ASP-H03"

	// ruleS01: a session starts with PROPOSE type "session-invitation". A
	// session whose start was not recorded is adopted as CONVERSING (the
	// state that allows every performative) so the rest is still checked.
	ruleS01 = "ASP-S01"
	// ruleS02: the performative is allowed in the current state.
	// Contradiction: "implementations MUST reject" a performative not
	// allowed (answer: REJECT invalid_state_transition, the session goes
	// on) versus row 18, "protocol violation → FAILED". The lenient profile
	// takes the first reading: the message is refused, the state does not
	// change, and the peer's REJECT invalid_state_transition answer is
	// accepted. The strict profile takes row 18: the session fails
	// (a synthetic step to FAILED); the REJECT answer right after is still
	// accepted.
	ruleS02 = "ASP-S02"
	// ruleS02W: a transition only the lenient profile accepts, because the
	// published text contradicts itself (in the strict profile the same
	// message breaks ASP-S02):
	//   - WITHDRAW or CLOSE in INVITED, INTRODUCED, AGREEING (WITHDRAW),
	//     EXECUTING (WITHDRAW) or ESCALATED (WITHDRAW): rows 16–17 say
	//     "Any → CLOSED", the allowed-performatives table does not list them;
	//   - ESCALATE in INVITED, INTRODUCED or ESCALATED: the diagram says
	//     "Any state ── ESCALATE", the table does not;
	//   - COUNTER in INVITED: the sessions page lets the invitee counter an
	//     invitation, the state machine does not say what follows (the
	//     session stays INVITED).
	// The mutual close is the one lenient reading that is not reported: the
	// close rules say "for mutual close, both parties send CLOSE", so in the
	// lenient profile one CLOSE from the other participant right after the
	// first is part of a normal close; the strict profile applies "no
	// messages after CLOSED" (ASP-S07).
	ruleS02W = "ASP-S02W"
	// ruleS03: INTRODUCED is reached only after the invitee's ACCEPT and an
	// INFORM identity from every participant (inviter and acceptor), in that
	// order; the inviter cannot accept its own invitation.
	ruleS03 = "ASP-S03"
	// ruleS04: an ACCEPT in AGREEING names the pending commitment
	// (body.commitmentId, body.inReplyTo or top-level inReplyTo; the field is
	// [INFERRED]) and comes from the other party.
	ruleS04 = "ASP-S04"
	// ruleS05: an ACCEPT of a commitment that a REJECT or COUNTER cleared.
	ruleS05 = "ASP-S05"
	// ruleS06: ESCALATED is left only by INFORM resolution (back to the exact
	// state it left) or CLOSE.
	ruleS06 = "ASP-S06"
	// ruleS07: no message after CLOSED or FAILED (see ASP-S02W for the
	// mutual close).
	ruleS07 = "ASP-S07"
	// ruleS08: REJECT, CLOSE and WITHDRAW carry a reason; ESCALATE a reason
	// and an urgency (body field names [INFERRED]).
	ruleS08 = "ASP-S08"
	// ruleS09: CLOSE in EXECUTING before an INFORM result, or with reason
	// "unilateral": a possible breach.
	ruleS09 = "ASP-S09"
	// ruleS10: the INFORM informType fits the state: identity in INVITED,
	// progress/result/error in EXECUTING, resolution in ESCALATED.
	ruleS10 = "ASP-S10"
	// ruleS11: WebSocket session_state/auth_ok/heartbeat frames agree with
	// the computed state.
	ruleS11 = "ASP-S11"

	// ruleT01: the invitation is answered before its validUntil, or within
	// 30 s. Contradiction: the invitation timeout waits for "a response"
	// (ACCEPT or REJECT), but it is only cancelled on the move to
	// INTRODUCED. Lenient: an ACCEPT stops the clock. Strict: the whole
	// introduction (ACCEPT and identity exchange) must finish in time.
	ruleT01 = "ASP-T01"
	// ruleT02: a reply to a message with constraints.maxResponseTimeMs comes
	// in time (a reply is the next message from another sender [INFERRED]).
	ruleT02 = "ASP-T02"
	// ruleT03: the session timeout (PROPOSE terms.proposedDuration in
	// milliseconds, per the sessions page, or the state machine's
	// terms.proposed_duration in seconds, whose default is "3600s"; each
	// name in its own unit in both profiles; default 3600 s), counted from the move to CONVERSING, pauses excluded.
	// Contradiction: row 8 fails a session after "no response within the
	// configured timeout" (an idle gap), the timeout table calls it the
	// "total session lifetime". Lenient: an idle gap longer than the timeout
	// fails the session; exceeding the lifetime is only warned about.
	// Strict: exceeding the lifetime fails the session.
	ruleT03 = "ASP-T03"
	// ruleT04: ESCALATED is resolved within the ESCALATE body's timeout
	// (seconds, or timeoutMs in milliseconds [INFERRED units]; default
	// 3600 s), else the session fails.
	ruleT04 = "ASP-T04"
	// ruleT05: no ACCEPT of a proposal after its validUntil.
	ruleT05 = "ASP-T05"

	// ruleC01: a reply's performative is among the constraints.allowedPerformatives
	// of the message it answers [INFERRED semantics].
	ruleC01 = "ASP-C01"
	// ruleC02: the replying sender's trustScore reaches the
	// constraints.requiredTrustScore of the message it answers [INFERRED].
	ruleC02 = "ASP-C02"
	// ruleC03: an agent declared Minimal (Config.MinimalAgents) uses only
	// INFORM, QUERY and CLOSE.
	ruleC03 = "ASP-C03"

	// ruleX01: a message of the unrelated agentsessionprotocol.org "Agent
	// Session Protocol" (type "session.*" with id, created_at, data): not
	// npayload ASP, reported as unsupported rather than guessed.
	ruleX01 = "ASP-X01"
)

var rules = []protocol.Rule{
	{ID: ruleE01, Level: protocol.Must, Summary: "An ASP message is a JSON object with version, messageId, sessionId, sequenceNumber, timestamp, sender, performative, content and integrity."},
	{ID: ruleE01W, Level: protocol.Should, Summary: "A message without sessionId is a pre-session discovery QUERY or INFORM; it is kept out of session traces and its missing session fields are only warned about."},
	{ID: ruleE02, Level: protocol.Must, Summary: "version matches asp/{major}.{minor} and is a supported version (asp/0.1 or asp/1.0 by default)."},
	{ID: ruleE03, Level: protocol.Must, Summary: "Every message of a session uses the same version."},
	{ID: ruleE04, Level: protocol.Must, Summary: "messageId is a UUID and is not reused (a repeated messageId is a replay)."},
	{ID: ruleE04W, Level: protocol.Should, Summary: "messageId is a time-ordered UUID version 7."},
	{ID: ruleE05, Level: protocol.Should, Summary: "sessionId is a UUID (transport examples use ids like ase_abc123, hence a warning)."},
	{ID: ruleE06, Level: protocol.Must, Summary: "sequenceNumber is an integer >= 0 that strictly increases per sender within a session."},
	{ID: ruleE07, Level: protocol.Must, Summary: "timestamp is an RFC 3339 date-time in UTC with a Z suffix."},
	{ID: ruleE07W, Level: protocol.Should, Summary: "Timestamps do not go backwards within a session and agree with the time inside a UUIDv7 messageId [INFERRED]."},
	{ID: ruleE08, Level: protocol.Must, Summary: "sender has an agent:// agentId, an orgId, a trustScore between 0 and 100 and a dpopProof."},
	{ID: ruleE09, Level: protocol.Must, Summary: "recipient is absent, an agent:// string, or an object whose agentId is an agent:// URI."},
	{ID: ruleE10, Level: protocol.Must, Summary: "performative is one of the 13 ASP performatives, in upper case."},
	{ID: ruleE11, Level: protocol.Must, Summary: "content has a string mimeType and an object body with the fields its performative needs (PROPOSE, COMMIT, QUERY)."},
	{ID: ruleE11W, Level: protocol.Should, Summary: "A REJECT code comes from the published rejection-code registry (or is invalid_state_transition)."},
	{ID: ruleE12, Level: protocol.Must, Summary: "integrity.hash and previousHash are sha256:<64 hex digits> and signature is ed25519:<hex>."},
	{ID: ruleH01, Level: protocol.Must, Summary: "The first message of a session has the genesis previousHash (sha256: and 64 zeros)."},
	{ID: ruleH02, Level: protocol.Must, Summary: "Each message's previousHash equals the hash of the message before it in the session; a break fails the session."},
	{ID: ruleH03, Level: protocol.Must, Summary: "No integrity hash occurs twice."},
	{ID: ruleS01, Level: protocol.Must, Summary: "A session starts with a PROPOSE whose body type is session-invitation."},
	{ID: ruleS02, Level: protocol.Must, Summary: "Each performative is allowed in the session's current state; anything else must be rejected (REJECT invalid_state_transition)."},
	{ID: ruleS02W, Level: protocol.Should, Summary: "The message takes a transition that only the lenient reading of the self-contradicting specification allows."},
	{ID: ruleS03, Level: protocol.Must, Summary: "INTRODUCED is reached only after the invitee's ACCEPT and then an INFORM identity from every participant."},
	{ID: ruleS04, Level: protocol.Should, Summary: "An ACCEPT in AGREEING names the pending COMMIT and comes from the party that did not commit."},
	{ID: ruleS05, Level: protocol.Must, Summary: "A commitment cleared by REJECT or COUNTER cannot be accepted later."},
	{ID: ruleS06, Level: protocol.Must, Summary: "ESCALATED is left only by INFORM resolution (back to the state it left) or by CLOSE."},
	{ID: ruleS07, Level: protocol.Must, Summary: "No message follows CLOSED or FAILED."},
	{ID: ruleS08, Level: protocol.Should, Summary: "REJECT, CLOSE and WITHDRAW give a reason; ESCALATE gives a reason and an urgency."},
	{ID: ruleS09, Level: protocol.Should, Summary: "A CLOSE during EXECUTING before an INFORM result (or with reason unilateral) may be a breach."},
	{ID: ruleS10, Level: protocol.Must, Summary: "INFORM's informType fits the state: identity in INVITED, progress/result/error in EXECUTING, resolution in ESCALATED."},
	{ID: ruleS11, Level: protocol.Should, Summary: "The server's session_state (and auth_ok, heartbeat) frames agree with the state computed from the messages."},
	{ID: ruleT01, Level: protocol.Must, Summary: "The invitation is answered before its validUntil, or within 30 s without one; otherwise the session fails."},
	{ID: ruleT02, Level: protocol.Should, Summary: "A reply to a message with constraints.maxResponseTimeMs arrives within that time."},
	{ID: ruleT03, Level: protocol.Should, Summary: "The session stays within its timeout (terms.proposedDuration in ms or terms.proposed_duration in s, default 3600 s); otherwise it fails."},
	{ID: ruleT04, Level: protocol.Should, Summary: "An escalation is resolved within its timeout (default 3600 s); otherwise the session fails."},
	{ID: ruleT05, Level: protocol.Must, Summary: "A proposal is not accepted after its validUntil (the proposal is void)."},
	{ID: ruleC01, Level: protocol.Should, Summary: "A reply uses one of the performatives the message it answers allows (constraints.allowedPerformatives) [INFERRED]."},
	{ID: ruleC02, Level: protocol.Should, Summary: "A replying agent's trustScore reaches the constraints.requiredTrustScore of the message it answers [INFERRED]."},
	{ID: ruleC03, Level: protocol.Must, Summary: "An agent declared at the Minimal conformance level uses only INFORM, QUERY and CLOSE."},
	{ID: ruleX01, Level: protocol.Should, Summary: "The message belongs to agentsessionprotocol.org's Agent Session Protocol, which is not npayload ASP and is not checked."},
}
