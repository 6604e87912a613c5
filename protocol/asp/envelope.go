package asp

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol"
)

// genesisHash is the previousHash of the first message of a chain.
const genesisHash = "sha256:0000000000000000000000000000000000000000000000000000000000000000"

var (
	versionRe = regexp.MustCompile(`^asp/\d+\.\d+$`)
	// The documentation abbreviates: "sha256:a1b2c3d4...", "ed25519:x1y2z3...".
	docsHashRe      = regexp.MustCompile(`^sha256:[0-9a-zA-Z.…]+$`)
	docsSignatureRe = regexp.MustCompile(`^ed25519:[0-9a-zA-Z.…]+$`)
)

// Published values of content.body.type for PROPOSE.
var proposeTypes = map[string]bool{"service-agreement": true, "data-exchange": true, "session-invitation": true, "resource-allocation": true}

// Rejection codes of the error-code registry, plus invalid_state_transition.
var rejectCodes = map[string]bool{
	"insufficient_trust_score": true, "unauthorized": true, "schema_unsupported": true, "budget_exceeded": true,
	"capacity_unavailable": true, "policy_violation": true, "timeout": true, "duplicate": true,
	"escalation_required": true, "unspecified": true, "invalid_state_transition": true,
}

const invalidStateTransition = "invalid_state_transition"

// rawEnvelope holds the top-level members of an ASP message.
type rawEnvelope struct {
	Version, MessageID, SessionID, SequenceNumber, Timestamp payload.Value
	Sender, Recipient, Performative, Content, Integrity      payload.Value
	Constraints, InReplyTo, InformType                       payload.Value
}

// readEnvelope reads the top-level members of an envelope through get,
// which returns a member by its exact name (the last of repeated names).
func readEnvelope(get func(name string) payload.Value) rawEnvelope {
	return rawEnvelope{
		Version: get("version"), MessageID: get("messageId"), SessionID: get("sessionId"), SequenceNumber: get("sequenceNumber"),
		Timestamp: get("timestamp"), Sender: get("sender"), Recipient: get("recipient"), Performative: get("performative"),
		Content: get("content"), Integrity: get("integrity"), Constraints: get("constraints"), InReplyTo: get("inReplyTo"),
		InformType: get("informType"),
	}
}

// envelope is a decoded ASP message: the fields the checker needs, read
// leniently (a field that is absent or of the wrong type stays zero and the
// problem is listed in issues).
type envelope struct {
	version   string
	messageID string
	sessionID string
	seq       int64
	hasSeq    bool
	ts        time.Time
	hasTS     bool
	sender    string // sender.agentId
	recipient string // recipient (agentId)
	trust     float64
	hasTrust  bool
	perf      string // upper case; "" when unusable
	rawPerf   string
	body      map[string]payload.Value
	info      string // INFORM informType
	inReplyTo string
	hash      string
	prevHash  string

	maxResponse  time.Duration // constraints.maxResponseTimeMs; 0 = none
	allowedPerfs []string
	reqTrust     float64
	hasReqTrust  bool

	discovery bool
	issues    []issue
}

type issue struct {
	rule        *protocol.Rule
	short, text string
}

func (e *envelope) add(rule *protocol.Rule, short, format string, args ...any) {
	e.issues = append(e.issues, issue{rule, short, fmt.Sprintf(format, args...)})
}

// str returns a body member as a string ("" when absent or not a string).
func (e *envelope) str(key string) string {
	s, _ := e.body[key].Str()
	return s
}

// decode reads an ASP envelope, a JSON object whose members get returns,
// and checks the per-message rules (ASP-E01 … ASP-E12).
func decode(get func(name string) payload.Value, md *model) *envelope {
	e := &envelope{}
	r := readEnvelope(get)

	// Performative first: it decides what is required.
	if p, ok := r.Performative.Str(); ok {
		e.rawPerf = p
		switch up := strings.ToUpper(p); {
		case performatives[p]:
			e.perf = p
		case performatives[up]:
			e.perf = up
			e.add(ruleE10, "lower-case performative", "performative %q must be written in upper case (%s)", p, up)
		default:
			e.add(ruleE10, "unknown performative", "performative %q is not one of the 13 ASP performatives (PROPOSE, ACCEPT, REJECT, COUNTER, INFORM, QUERY, CLARIFY, COMMIT, DELEGATE, ESCALATE, WITHDRAW, OBSERVE, CLOSE)", protocol.Clip(p, 40))
		}
	} else if r.Performative != nil {
		e.add(ruleE10, "performative not a string", "performative must be a string naming one of the 13 performatives, not a JSON %s", r.Performative.Kind())
	}

	e.sessionID, _ = r.SessionID.Str()
	e.discovery = r.SessionID == nil && (e.perf == pQuery || e.perf == pInform)

	var missing, discoveryMissing []string
	need := func(name string, v payload.Value) {
		if v == nil || v.Kind() == payload.Null {
			if e.discovery && (name == "sessionId" || name == "sequenceNumber") {
				discoveryMissing = append(discoveryMissing, name)
				return
			}
			missing = append(missing, name)
		}
	}
	need("version", r.Version)
	need("messageId", r.MessageID)
	need("sessionId", r.SessionID)
	need("sequenceNumber", r.SequenceNumber)
	need("timestamp", r.Timestamp)
	need("sender", r.Sender)
	need("performative", r.Performative)
	need("content", r.Content)
	need("integrity", r.Integrity)
	if len(missing) > 0 {
		e.add(ruleE01, "missing "+strings.Join(missing, ", "), "the envelope lacks %s; every ASP message carries version, messageId, sessionId, sequenceNumber, timestamp, sender, performative, content and integrity", strings.Join(missing, ", "))
	}
	if e.discovery {
		e.add(ruleE01W, "discovery message", "this %s has no sessionId, so it is read as a pre-session discovery message and kept out of session traces (missing: %s)", e.perf, strings.Join(discoveryMissing, ", "))
	}

	// ASP-E02.
	if r.Version != nil {
		v, ok := r.Version.Str()
		switch {
		case !ok:
			e.add(ruleE02, "version not a string", "version must be a string like \"asp/0.1\", not a JSON %s", r.Version.Kind())
		case !versionRe.MatchString(v):
			e.add(ruleE02, "bad version", "version %q does not have the form asp/{major}.{minor}", protocol.Clip(v, 40))
		case !md.versions[v]:
			e.add(ruleE02, "unsupported version", "version %q is not a supported ASP version; implementations must reject unsupported versions", v)
		}
		e.version = v
	}

	// ASP-E04, E04W.
	if r.MessageID != nil {
		id, ok := r.MessageID.Str()
		switch {
		case !ok:
			e.add(ruleE04, "messageId not a string", "messageId must be a UUID string, not a JSON %s", r.MessageID.Kind())
		case !isUUID(id):
			e.add(ruleE04, "messageId not a UUID", "messageId %q is not a UUID", protocol.Clip(id, 60))
		case id[14] != '7':
			e.add(ruleE04W, "messageId not UUIDv7", "messageId %s is a version-%c UUID; ASP expects time-ordered UUID v7", id, id[14])
		}
		e.messageID = id
	}

	// ASP-E05 (sessionId) is reported once per session by the checker.
	if r.SessionID != nil && r.SessionID.Kind() != payload.String {
		e.add(ruleE01, "sessionId not a string", "sessionId must be a string (a UUID), not a JSON %s", r.SessionID.Kind())
	}

	// ASP-E06 (form; the order is the checker's). The integer is read by
	// its token, not payload.Value's common reading: 3.0 is not a
	// sequenceNumber (the schema's type is integer as written).
	if r.SequenceNumber != nil {
		n, ok := r.SequenceNumber.IntToken()
		switch {
		case !ok:
			e.add(ruleE06, "sequenceNumber not an integer", "sequenceNumber must be an integer, got %s", protocol.Clip(string(r.SequenceNumber), 40))
		case n < 0:
			e.add(ruleE06, "negative sequenceNumber", "sequenceNumber %d is negative; it must be 0 or more", n)
		default:
			e.seq, e.hasSeq = n, true
		}
	}

	// ASP-E07.
	if r.Timestamp != nil {
		s, ok := r.Timestamp.Str()
		t, zulu, tok := parseTime(s)
		switch {
		case !ok:
			e.add(ruleE07, "timestamp not a string", "timestamp must be an ISO 8601 string, not a JSON %s", r.Timestamp.Kind())
		case !tok:
			e.add(ruleE07, "bad timestamp", "timestamp %q is not an RFC 3339 date-time", protocol.Clip(s, 40))
		default:
			if !zulu {
				e.add(ruleE07, "timestamp not UTC", "timestamp %q must be in UTC with a Z suffix", s)
			}
			e.ts, e.hasTS = t, true
		}
	}

	e.checkSender(r.Sender)
	e.checkRecipient(r.Recipient)
	e.checkContent(r.Content, r.InformType)
	e.checkIntegrity(r.Integrity, md.cfg.DocsExamples)
	e.readConstraints(r.Constraints)
	e.inReplyTo, _ = r.InReplyTo.Str()
	return e
}

func (e *envelope) checkSender(raw payload.Value) {
	if raw == nil || raw.Kind() == payload.Null {
		return // ASP-E01
	}
	obj, ok := raw.Object()
	if !ok {
		e.add(ruleE08, "sender not an object", "sender must be an object {agentId, orgId, trustScore, dpopProof}, not a JSON %s", raw.Kind())
		return
	}
	var bad []string
	if id, ok := obj["agentId"].Str(); !ok || !strings.HasPrefix(id, "agent://") {
		bad = append(bad, "agentId is not an agent:// URI")
	} else {
		e.sender = id
	}
	if _, ok := obj["orgId"].Str(); !ok {
		bad = append(bad, "orgId is missing or not a string")
	}
	if ts, ok := obj["trustScore"].Number(); !ok {
		bad = append(bad, "trustScore is missing or not a number")
	} else if ts < 0 || ts > 100 {
		bad = append(bad, fmt.Sprintf("trustScore %g is outside 0–100", ts))
	} else {
		e.trust, e.hasTrust = ts, true
	}
	if _, ok := obj["dpopProof"].Str(); !ok && !e.discovery {
		bad = append(bad, "dpopProof is missing or not a string")
	}
	if len(bad) > 0 {
		e.add(ruleE08, "bad sender", "sender: %s", strings.Join(bad, "; "))
	}
}

func (e *envelope) checkRecipient(raw payload.Value) {
	switch raw.Kind() {
	case payload.Absent:
		return
	case payload.String:
		s, _ := raw.Str()
		if !strings.HasPrefix(s, "agent://") {
			e.add(ruleE09, "recipient not agent://", "recipient %q is not an agent:// URI", protocol.Clip(s, 60))
		}
		e.recipient = s
	case payload.Object:
		obj, _ := raw.Object()
		id, ok := obj["agentId"].Str()
		if !ok || !strings.HasPrefix(id, "agent://") {
			e.add(ruleE09, "recipient.agentId not agent://", "recipient.agentId must be an agent:// URI")
		}
		e.recipient = id
		if v, present := obj["orgId"]; present && v.Kind() != payload.String {
			e.add(ruleE09, "recipient.orgId not a string", "recipient.orgId must be a string")
		}
	default:
		e.add(ruleE09, "bad recipient", "recipient must be an agent:// string or an {agentId, orgId} object, not a JSON %s", raw.Kind())
	}
}

func (e *envelope) checkContent(raw, topInform payload.Value) {
	if raw == nil || raw.Kind() == payload.Null {
		return // ASP-E01
	}
	obj, ok := raw.Object()
	if !ok {
		e.add(ruleE11, "content not an object", "content must be an object {mimeType, body, context}, not a JSON %s", raw.Kind())
		return
	}
	if _, ok := obj["mimeType"].Str(); !ok {
		e.add(ruleE11, "no mimeType", "content.mimeType must be a string such as application/json")
	}
	body, ok := obj["body"].Object()
	if !ok {
		e.add(ruleE11, "body not an object", "content.body must be an object, not %s", obj["body"].Kind())
	}
	e.body = body
	// informType: content.body.informType [INFERRED], also content.informType or top level.
	for _, r := range []payload.Value{body["informType"], obj["informType"], topInform} {
		if s, ok := r.Str(); ok {
			e.info = s
			break
		}
	}
	if body == nil {
		return
	}
	var missing []string
	req := func(keys ...string) {
		for _, k := range keys {
			if v, ok := body[k]; !ok || v.Kind() == payload.Null {
				missing = append(missing, k)
			}
		}
	}
	switch e.perf {
	case pPropose:
		req("proposalId", "type", "subject", "terms")
		if t, ok := body["type"].Str(); ok && !proposeTypes[t] {
			e.add(ruleE11, "unknown proposal type", "PROPOSE body.type %q is not one of service-agreement, data-exchange, session-invitation, resource-allocation", protocol.Clip(t, 40))
		}
	case pCommit:
		req("commitmentId", "terms")
	case pQuery:
		req("queryId")
	case pReject:
		if c, ok := body["code"].Str(); ok && !rejectCodes[c] {
			e.add(ruleE11W, "unknown reject code", "REJECT code %q is not in the rejection-code registry (insufficient_trust_score, unauthorized, schema_unsupported, budget_exceeded, capacity_unavailable, policy_violation, timeout, duplicate, escalation_required, unspecified, invalid_state_transition)", protocol.Clip(c, 40))
		}
	}
	if len(missing) > 0 {
		e.add(ruleE11, "body lacks "+strings.Join(missing, ", "), "the %s body lacks %s", e.perf, strings.Join(missing, ", "))
	}
}

func (e *envelope) checkIntegrity(raw payload.Value, docs bool) {
	if raw == nil || raw.Kind() == payload.Null {
		return // ASP-E01
	}
	obj, ok := raw.Object()
	if !ok {
		e.add(ruleE12, "integrity not an object", "integrity must be an object {hash, previousHash, signature}, not a JSON %s", raw.Kind())
		return
	}
	hre, sre := isHash, isSignature
	if docs {
		hre, sre = docsHashRe.MatchString, docsSignatureRe.MatchString
	}
	var bad []string
	e.hash, _ = obj["hash"].Str()
	e.prevHash, _ = obj["previousHash"].Str()
	sig, _ := obj["signature"].Str()
	if !hre(e.hash) {
		bad = append(bad, "hash is not sha256:<64 lower-case hex digits>")
	}
	if !hre(e.prevHash) {
		bad = append(bad, "previousHash is not sha256:<64 lower-case hex digits>")
	}
	if !sre(sig) {
		bad = append(bad, "signature is not ed25519:<hex>")
	}
	if len(bad) > 0 {
		e.add(ruleE12, "bad integrity", "integrity: %s", strings.Join(bad, "; "))
	}
}

func (e *envelope) readConstraints(raw payload.Value) {
	obj, ok := raw.Object()
	if !ok {
		return
	}
	if ms, ok := obj["maxResponseTimeMs"].Number(); ok && ms > 0 {
		e.maxResponse = time.Duration(ms * float64(time.Millisecond))
	}
	if l, ok := rawStrings(obj["allowedPerformatives"]); ok {
		e.allowedPerfs = l
	}
	if t, ok := obj["requiredTrustScore"].Number(); ok {
		e.reqTrust, e.hasReqTrust = t, true
	}
}

// uuidTime returns the time inside a UUIDv7 (its first 48 bits, Unix ms).
func uuidTime(id string) (time.Time, bool) {
	if !isUUID(id) || id[14] != '7' {
		return time.Time{}, false
	}
	hex := id[0:8] + id[9:13]
	var ms int64
	for i := 0; i < len(hex); i++ {
		c := hex[i]
		var v byte
		switch {
		case c >= '0' && c <= '9':
			v = c - '0'
		case c >= 'a' && c <= 'f':
			v = c - 'a' + 10
		default:
			v = c - 'A' + 10
		}
		ms = ms<<4 | int64(v)
	}
	return time.UnixMilli(ms).UTC(), true
}

// bodyDuration reads a duration from a body member given in milliseconds.
func bodyMillis(v payload.Value) (time.Duration, bool) {
	ms, ok := v.Number()
	if !ok || ms <= 0 || ms > 1e15 {
		return 0, false
	}
	return time.Duration(ms * float64(time.Millisecond)), true
}

// bodySeconds reads a duration from a body member given in seconds.
func bodySeconds(v payload.Value) (time.Duration, bool) {
	s, ok := v.Number()
	if !ok || s <= 0 || s > 1e9 {
		return 0, false
	}
	return time.Duration(s * float64(time.Second)), true
}

// isUUID reports whether s is a UUID in 8-4-4-4-12 hex form.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
			continue
		}
		if !isHex(c, true) {
			return false
		}
	}
	return true
}

func isHex(c byte, upper bool) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || upper && c >= 'A' && c <= 'F'
}

// isHash reports whether s is sha256:<64 lower-case hex digits>.
func isHash(s string) bool {
	const p = "sha256:"
	if len(s) != len(p)+64 || !strings.HasPrefix(s, p) {
		return false
	}
	for i := len(p); i < len(s); i++ {
		if !isHex(s[i], false) {
			return false
		}
	}
	return true
}

// isSignature reports whether s is ed25519:<hex>.
func isSignature(s string) bool {
	const p = "ed25519:"
	if len(s) <= len(p) || !strings.HasPrefix(s, p) {
		return false
	}
	for i := len(p); i < len(s); i++ {
		if !isHex(s[i], true) {
			return false
		}
	}
	return true
}
