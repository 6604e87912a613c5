package asp

import "github.com/aaep-tools/aaepkit/protocol"

// Rule IDs. They follow the catalog of the research note
// (shared/notes/asp-kahn.md §1.5). Where a catalog rule mixes an error part
// and a warning part (or a part built on an unpublished, [INFERRED] fact),
// the warning part has its own ID with a "W" suffix, because a rule ID has
// one level.
var (
	ruleE01 = &protocol.Rule{
		ID: "ASP-E01", Level: protocol.Must, Party: protocol.Either,
		Summary: "An ASP message is a JSON object with version, messageId, sessionId, sequenceNumber, timestamp, sender, performative, content and integrity.",
		Doc:     "The required envelope fields are present.",
		Spec:    "asp-kahn.md §1.1, §1.5 (ASP-E01)",
	}
	ruleE01W = &protocol.Rule{
		ID: "ASP-E01W", Level: protocol.Should, Party: protocol.Either,
		Summary: "A message without sessionId is a pre-session discovery QUERY or INFORM; it is kept out of session traces and its missing session fields are only warned about.",
		Doc:     "A message without sessionId (QUERY or INFORM) is a pre-session discovery message. The documentation's own discovery example also lacks sequenceNumber and sender.dpopProof, so these gaps are a warning there; the message is kept out of session traces.",
		Spec:    "asp-kahn.md §1.1, §1.5 (ASP-E01: discovery messages)",
	}
	ruleE02 = &protocol.Rule{
		ID: "ASP-E02", Level: protocol.Must, Party: protocol.Either,
		Summary: "version matches asp/{major}.{minor} and is a supported version (asp/0.1 or asp/1.0 by default).",
		Doc:     "version matches asp/{major}.{minor} and is supported. Contradiction: the specification says the current version is asp/0.1, the concept page and quickstart use asp/1.0; both are accepted by default (Config.SupportedVersions changes the set), in both profiles.",
		Spec:    "asp-kahn.md §1.1, §1.5, §1.6 (asp/0.1 vs asp/1.0)",
	}
	ruleE03 = &protocol.Rule{
		ID: "ASP-E03", Level: protocol.Must, Party: protocol.Either,
		Summary: "Every message of a session uses the same version.",
		Doc:     "One version per session.",
		Spec:    "asp-kahn.md §1.5 (ASP-E03)",
	}
	ruleE04 = &protocol.Rule{
		ID: "ASP-E04", Level: protocol.Must, Party: protocol.Either,
		Summary: "messageId is a UUID and is not reused (a repeated messageId is a replay).",
		Doc:     "messageId is a UUID and unique (within the last recentMemory message IDs of the stream: memory stays bounded).",
		Spec:    "asp-kahn.md §1.1, §1.5 (ASP-E04; reject code duplicate)",
	}
	ruleE04W = &protocol.Rule{
		ID: "ASP-E04W", Level: protocol.Should, Party: protocol.Either,
		Summary: "messageId is a time-ordered UUID version 7.",
		Doc:     "messageId is a UUID of another version than 7.",
		Spec:    "asp-kahn.md §1.1, §1.5 (ASP-E04: v7 expected)",
	}
	ruleE05 = &protocol.Rule{
		ID: "ASP-E05", Level: protocol.Should, Party: protocol.Either,
		Summary: "sessionId is a UUID (transport examples use ids like ase_abc123, hence a warning).",
		Doc:     "sessionId is a UUID. Contradiction: the schema says UUID, the transport examples use \"ase_abc123\"; hence a warning only.",
		Spec:    "asp-kahn.md §1.5, §1.6 (UUID schema vs ase_ examples)",
	}
	ruleE06 = &protocol.Rule{
		ID: "ASP-E06", Level: protocol.Must, Party: protocol.Either,
		Summary: "sequenceNumber is an integer >= 0 that strictly increases per sender within a session.",
		Doc:     "sequenceNumber is an integer >= 0, strictly increasing per (session, sender.agentId).",
		Spec:    "asp-kahn.md §1.1, §1.5 (ASP-E06)",
	}
	ruleE07 = &protocol.Rule{
		ID: "ASP-E07", Level: protocol.Must, Party: protocol.Either,
		Summary: "timestamp is an RFC 3339 date-time in UTC with a Z suffix.",
		Doc:     "timestamp is RFC 3339 with a Z suffix.",
		Spec:    "asp-kahn.md §1.1, §1.5 (ASP-E07)",
	}
	ruleE07W = &protocol.Rule{
		ID: "ASP-E07W", Level: protocol.Should, Party: protocol.Either,
		Summary: "Timestamps do not go backwards within a session and agree with the time inside a UUIDv7 messageId [INFERRED].",
		Doc:     "Timestamps do not go backwards within a session, and agree (within uuidClockSkew) with the time in a UUIDv7 messageId [INFERRED].",
		Spec:    "asp-kahn.md §1.5 (ASP-E07, [INFERRED] half)",
	}
	ruleE08 = &protocol.Rule{
		ID: "ASP-E08", Level: protocol.Must, Party: protocol.Either,
		Summary: "sender has an agent:// agentId, an orgId, a trustScore between 0 and 100 and a dpopProof.",
		Doc:     "sender has agentId (agent://…), orgId, trustScore in [0,100] and dpopProof.",
		Spec:    "asp-kahn.md §1.1, §1.5 (ASP-E08)",
	}
	ruleE09 = &protocol.Rule{
		ID: "ASP-E09", Level: protocol.Must, Party: protocol.Either,
		Summary: "recipient is absent, an agent:// string, or an object whose agentId is an agent:// URI.",
		Doc:     "recipient is absent, an agent:// string, or an object with an agent:// agentId. Contradiction: the schema says string, the concept page shows {agentId, orgId}; both are accepted in both profiles.",
		Spec:    "asp-kahn.md §1.1, §1.5, §1.6 (string vs object recipient)",
	}
	ruleE10 = &protocol.Rule{
		ID: "ASP-E10", Level: protocol.Must, Party: protocol.Either,
		Summary: "performative is one of the 13 ASP performatives, in upper case.",
		Doc:     "performative is one of the 13, in upper case.",
		Spec:    "asp-kahn.md §1.1, §1.5 (ASP-E10)",
	}
	ruleE11 = &protocol.Rule{
		ID: "ASP-E11", Level: protocol.Must, Party: protocol.Either,
		Summary: "content has a string mimeType and an object body with the fields its performative needs (PROPOSE, COMMIT, QUERY).",
		Doc:     "content has a string mimeType and an object body with the minimum fields of its performative (PROPOSE, COMMIT, QUERY).",
		Spec:    "asp-kahn.md §1.1, §1.5 (ASP-E11)",
	}
	ruleE11W = &protocol.Rule{
		ID: "ASP-E11W", Level: protocol.Should, Party: protocol.Either,
		Summary: "A REJECT code comes from the published rejection-code registry (or is invalid_state_transition).",
		Doc:     "A REJECT code outside the published registry.",
		Spec:    "asp-kahn.md §1.1 (rejection-code registry), §1.5",
	}
	ruleE12 = &protocol.Rule{
		ID: "ASP-E12", Level: protocol.Must, Party: protocol.Either,
		Summary: "integrity.hash and previousHash are sha256:<64 hex digits> and signature is ed25519:<hex>.",
		Doc:     "integrity hash/previousHash are sha256:<64 hex>, signature is ed25519:<hex> (Config.DocsExamples relaxes this for the abbreviated values of the documentation's examples).",
		Spec:    "asp-kahn.md §1.1, §1.5 (ASP-E12)",
	}
	ruleH01 = &protocol.Rule{
		ID: "ASP-H01", Level: protocol.Must, Party: protocol.Either,
		Summary: "The first message of a session has the genesis previousHash (sha256: and 64 zeros).",
		Doc:     "The first message of a session links to the genesis hash.",
		Spec:    "asp-kahn.md §1.5 (hash chain, ASP-H01)",
	}
	ruleH02 = &protocol.Rule{
		ID: "ASP-H02", Level: protocol.Must, Party: protocol.Either,
		Summary: "Each message's previousHash equals the hash of the message before it in the session; a break fails the session.",
		Doc:     "Each previousHash equals the hash of the message before it in the session (both senders share one chain). A break is a row-18 failure: the session goes to FAILED in both profiles.",
		Spec:    "ASP Session State Machine: Transition Table row 18; asp-kahn.md §1.5 (ASP-H02)",
	}
	ruleH03 = &protocol.Rule{
		ID: "ASP-H03", Level: protocol.Must, Party: protocol.Either,
		Summary: "No integrity hash occurs twice.",
		Doc:     "No hash value occurs twice (within the last recentMemory hashes of the stream).",
		Spec:    "asp-kahn.md §1.5 (ASP-H03)",
	}
	ruleS01 = &protocol.Rule{
		ID: "ASP-S01", Level: protocol.Must, Party: protocol.Either,
		Summary: "A session starts with a PROPOSE whose body type is session-invitation.",
		Doc:     "A session starts with PROPOSE type \"session-invitation\". A session whose start was not recorded is adopted as CONVERSING (the state that allows every performative) so the rest is still checked.",
		Spec:    "ASP Session State Machine: States, Transition Table; asp-kahn.md §1.3, §1.5 (ASP-S01)",
	}
	ruleS02 = &protocol.Rule{
		ID: "ASP-S02", Level: protocol.Must, Party: protocol.Either,
		Summary:  "Each performative is allowed in the session's current state; anything else must be rejected (REJECT invalid_state_transition).",
		Doc:      "The performative is allowed in the current state. Contradiction: \"implementations MUST reject\" a performative not allowed (answer: REJECT invalid_state_transition, the session goes on) versus row 18, \"protocol violation → FAILED\". The lenient profile takes the first reading: the message is refused, the state does not change, and the peer's REJECT invalid_state_transition answer is accepted. The strict profile takes row 18: the session fails (a synthetic step to FAILED); the REJECT answer right after is still accepted.",
		Spec:     "ASP Session State Machine: Allowed Performatives Per State, Transition Table row 18; asp-kahn.md §1.3, §1.4, §1.5",
		Profiles: protocol.Profiles{Lenient: "the message is refused (REJECT invalid_state_transition); the session stays in its state and the REJECT answer is accepted", Strict: "row 18: the session fails (a synthetic step to FAILED); the REJECT answer right after is still accepted, and the transitions only ASP-S02W forgives break this rule"},
	}
	ruleS02W = &protocol.Rule{
		ID: "ASP-S02W", Level: protocol.Should, Party: protocol.Either,
		Summary:  "The message takes a transition that only the lenient reading of the self-contradicting specification allows.",
		Doc:      "A transition only the lenient profile accepts, because the published text contradicts itself (in the strict profile the same message breaks ASP-S02): - WITHDRAW or CLOSE in INVITED, INTRODUCED, AGREEING (WITHDRAW), EXECUTING (WITHDRAW) or ESCALATED (WITHDRAW): rows 16–17 say \"Any → CLOSED\", the allowed-performatives table does not list them; - ESCALATE in INVITED, INTRODUCED or ESCALATED: the diagram says \"Any state ── ESCALATE\", the table does not; - COUNTER in INVITED: the sessions page lets the invitee counter an invitation, the state machine does not say what follows (the session stays INVITED). The mutual close is the one lenient reading that is not reported: the close rules say \"for mutual close, both parties send CLOSE\", so in the lenient profile one CLOSE from the other participant right after the first is part of a normal close; the strict profile applies \"no messages after CLOSED\" (ASP-S07).",
		Spec:     "ASP Session State Machine: Transition Table rows 16–17, State Diagram, Allowed Performatives Per State; asp-kahn.md §1.4, §1.6",
		Profiles: protocol.Profiles{Lenient: "reported for WITHDRAW/CLOSE, ESCALATE and COUNTER where only rows 16–17, the diagram or the sessions page allow them; a mutual close is not reported", Strict: "not checked: those messages break ASP-S02, and a second CLOSE breaks ASP-S07"},
	}
	ruleS03 = &protocol.Rule{
		ID: "ASP-S03", Level: protocol.Must, Party: protocol.Either,
		Summary: "INTRODUCED is reached only after the invitee's ACCEPT and then an INFORM identity from every participant.",
		Doc:     "INTRODUCED is reached only after the invitee's ACCEPT and an INFORM identity from every participant (inviter and acceptor), in that order; the inviter cannot accept its own invitation.",
		Spec:    "ASP Session State Machine: Transition Details (INVITED → INTRODUCED); asp-kahn.md §1.5 (ASP-S03)",
	}
	ruleS04 = &protocol.Rule{
		ID: "ASP-S04", Level: protocol.Should, Party: protocol.Either,
		Summary: "An ACCEPT in AGREEING names the pending COMMIT and comes from the party that did not commit.",
		Doc:     "An ACCEPT in AGREEING names the pending commitment (body.commitmentId, body.inReplyTo or top-level inReplyTo; the field is [INFERRED]) and comes from the other party.",
		Spec:    "asp-kahn.md §1.5 (ASP-S04, [INFERRED] field)",
	}
	ruleS05 = &protocol.Rule{
		ID: "ASP-S05", Level: protocol.Must, Party: protocol.Either,
		Summary: "A commitment cleared by REJECT or COUNTER cannot be accepted later.",
		Doc:     "An ACCEPT of a commitment that a REJECT or COUNTER cleared.",
		Spec:    "ASP Session State Machine: Transition Details (AGREEING); asp-kahn.md §1.5 (ASP-S05)",
	}
	ruleS06 = &protocol.Rule{
		ID: "ASP-S06", Level: protocol.Must, Party: protocol.Either,
		Summary: "ESCALATED is left only by INFORM resolution (back to the state it left) or by CLOSE.",
		Doc:     "ESCALATED is left only by INFORM resolution (back to the exact state it left) or CLOSE.",
		Spec:    "ASP Session State Machine: Transition Details (ESCALATED); asp-kahn.md §1.5 (ASP-S06)",
	}
	ruleS07 = &protocol.Rule{
		ID: "ASP-S07", Level: protocol.Must, Party: protocol.Either,
		Summary:  "No message follows CLOSED or FAILED.",
		Doc:      "No message after CLOSED or FAILED (see ASP-S02W for the mutual close).",
		Spec:     "ASP Session State Machine: Terminal States; asp-kahn.md §1.5 (ASP-S07)",
		Profiles: protocol.Profiles{Lenient: "one CLOSE from the other participant right after the first is part of a mutual close, not reported", Strict: "no message at all follows CLOSED, a mutual close's second CLOSE included"},
	}
	ruleS08 = &protocol.Rule{
		ID: "ASP-S08", Level: protocol.Should, Party: protocol.Either,
		Summary: "REJECT, CLOSE and WITHDRAW give a reason; ESCALATE gives a reason and an urgency.",
		Doc:     "REJECT, CLOSE and WITHDRAW carry a reason; ESCALATE a reason and an urgency (body field names [INFERRED]).",
		Spec:    "asp-kahn.md §1.5 (ASP-S08, [INFERRED] body fields)",
	}
	ruleS09 = &protocol.Rule{
		ID: "ASP-S09", Level: protocol.Should, Party: protocol.Either,
		Summary: "A CLOSE during EXECUTING before an INFORM result (or with reason unilateral) may be a breach.",
		Doc:     "CLOSE in EXECUTING before an INFORM result, or with reason \"unilateral\": a possible breach.",
		Spec:    "asp-kahn.md §1.5 (ASP-S09)",
	}
	ruleS10 = &protocol.Rule{
		ID: "ASP-S10", Level: protocol.Must, Party: protocol.Either,
		Summary: "INFORM's informType fits the state: identity in INVITED, progress/result/error in EXECUTING, resolution in ESCALATED.",
		Doc:     "The INFORM informType fits the state: identity in INVITED, progress/result/error in EXECUTING, resolution in ESCALATED.",
		Spec:    "ASP Session State Machine: Transition Details; asp-kahn.md §1.5 (ASP-S10)",
	}
	ruleS11 = &protocol.Rule{
		ID: "ASP-S11", Level: protocol.Should, Party: protocol.Either,
		Summary: "The server's session_state (and auth_ok, heartbeat) frames agree with the state computed from the messages.",
		Doc:     "WebSocket session_state/auth_ok/heartbeat frames agree with the computed state.",
		Spec:    "asp-kahn.md §1.5 (ASP-S11), §3 (R3b transport frames)",
	}
	ruleT01 = &protocol.Rule{
		ID: "ASP-T01", Level: protocol.Must, Party: protocol.Either,
		Summary:  "The invitation is answered before its validUntil, or within 30 s without one; otherwise the session fails.",
		Doc:      "The invitation is answered before its validUntil, or within 30 s. Contradiction: the invitation timeout waits for \"a response\" (ACCEPT or REJECT), but it is only cancelled on the move to INTRODUCED. Lenient: an ACCEPT stops the clock. Strict: the whole introduction (ACCEPT and identity exchange) must finish in time.",
		Spec:     "ASP Session State Machine: Timeout Configuration, Timeout Behavior; asp-kahn.md §1.5 (ASP-T01)",
		Profiles: protocol.Profiles{Lenient: "the invitee's ACCEPT (or REJECT) stops the invitation clock", Strict: "the whole introduction (ACCEPT and the identity exchange) must finish before the invitation times out"},
	}
	ruleT02 = &protocol.Rule{
		ID: "ASP-T02", Level: protocol.Should, Party: protocol.Either,
		Summary: "A reply to a message with constraints.maxResponseTimeMs arrives within that time.",
		Doc:     "A reply to a message with constraints.maxResponseTimeMs comes in time (a reply is the next message from another sender [INFERRED]).",
		Spec:    "asp-kahn.md §1.5 (ASP-T02)",
	}
	ruleT03 = &protocol.Rule{
		ID: "ASP-T03", Level: protocol.Should, Party: protocol.Either,
		Summary:  "The session stays within its timeout (terms.proposedDuration in ms or terms.proposed_duration in s, default 3600 s); otherwise it fails.",
		Doc:      "The session timeout (PROPOSE terms.proposedDuration in milliseconds, per the sessions page, or the state machine's terms.proposed_duration in seconds, whose default is \"3600s\"; each name in its own unit in both profiles; default 3600 s), counted from the move to CONVERSING, pauses excluded. Contradiction: row 8 fails a session after \"no response within the configured timeout\" (an idle gap), the timeout table calls it the \"total session lifetime\". Lenient: an idle gap longer than the timeout fails the session; exceeding the lifetime is only warned about. Strict: exceeding the lifetime fails the session.",
		Spec:     "ASP Session State Machine: Transition Table row 8, Timeout Configuration; asp-kahn.md §1.5 (ASP-T03)",
		Profiles: protocol.Profiles{Lenient: "an idle gap longer than the timeout fails the session; a lifetime beyond it is only warned about", Strict: "the timeout is the total lifetime: exceeding it fails the session"},
	}
	ruleT04 = &protocol.Rule{
		ID: "ASP-T04", Level: protocol.Should, Party: protocol.Either,
		Summary: "An escalation is resolved within its timeout (default 3600 s); otherwise the session fails.",
		Doc:     "ESCALATED is resolved within the ESCALATE body's timeout (seconds, or timeoutMs in milliseconds [INFERRED units]; default 3600 s), else the session fails.",
		Spec:    "ASP Session State Machine: Timeout Configuration (escalation); asp-kahn.md §1.5 (ASP-T04)",
	}
	ruleT05 = &protocol.Rule{
		ID: "ASP-T05", Level: protocol.Must, Party: protocol.Either,
		Summary: "A proposal is not accepted after its validUntil (the proposal is void).",
		Doc:     "No ACCEPT of a proposal after its validUntil.",
		Spec:    "asp-kahn.md §1.5 (ASP-T05: the proposal is void)",
	}
	ruleC01 = &protocol.Rule{
		ID: "ASP-C01", Level: protocol.Should, Party: protocol.Either,
		Summary: "A reply uses one of the performatives the message it answers allows (constraints.allowedPerformatives) [INFERRED].",
		Doc:     "A reply's performative is among the constraints.allowedPerformatives of the message it answers [INFERRED semantics].",
		Spec:    "asp-kahn.md §1.5 (ASP-C01, [INFERRED] semantics)",
	}
	ruleC02 = &protocol.Rule{
		ID: "ASP-C02", Level: protocol.Should, Party: protocol.Either,
		Summary: "A replying agent's trustScore reaches the constraints.requiredTrustScore of the message it answers [INFERRED].",
		Doc:     "The replying sender's trustScore reaches the constraints.requiredTrustScore of the message it answers [INFERRED].",
		Spec:    "asp-kahn.md §1.5 (ASP-C02, [INFERRED])",
	}
	ruleC03 = &protocol.Rule{
		ID: "ASP-C03", Level: protocol.Must, Party: protocol.Either,
		Summary: "An agent declared at the Minimal conformance level uses only INFORM, QUERY and CLOSE.",
		Doc:     "An agent declared Minimal (Config.MinimalAgents) uses only INFORM, QUERY and CLOSE.",
		Spec:    "asp-kahn.md §1.5 (ASP-C03; the level comes from Config.MinimalAgents)",
	}
	ruleX01 = &protocol.Rule{
		ID: "ASP-X01", Level: protocol.Should, Party: protocol.Either,
		Summary: "The message belongs to agentsessionprotocol.org's Agent Session Protocol, which is not npayload ASP and is not checked.",
		Doc:     "A message of the unrelated agentsessionprotocol.org \"Agent Session Protocol\" (type \"session.*\" with id, created_at, data): not npayload ASP, reported as unsupported rather than guessed.",
		Spec:    "asp-kahn.md §3 (R6: not npayload ASP)",
	}
)

var rules = []*protocol.Rule{ruleE01, ruleE01W, ruleE02, ruleE03, ruleE04, ruleE04W, ruleE05, ruleE06, ruleE07, ruleE07W, ruleE08, ruleE09, ruleE10, ruleE11, ruleE11W, ruleE12, ruleH01, ruleH02, ruleH03, ruleS01, ruleS02, ruleS02W, ruleS03, ruleS04, ruleS05, ruleS06, ruleS07, ruleS08, ruleS09, ruleS10, ruleS11, ruleT01, ruleT02, ruleT03, ruleT04, ruleT05, ruleC01, ruleC02, ruleC03, ruleX01}
