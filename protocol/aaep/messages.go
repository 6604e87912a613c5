package aaep

import (
	"strconv"
	"strings"

	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol/aaep/vocab"
)

var (
	subIDSpec   = fieldSpec{k: kSubscriptionID, kind: fString, max: noMax, pat: idPat("sub_"), patText: reSubscription.String()}
	versionSpec = fieldSpec{k: kAAEPVersion, kind: fString, max: noMax, pat: vocab.ValidVersionBytes, patText: vocab.VersionPattern}
	corrSpec    = fieldSpec{k: kCorrelationID, kind: fString, max: noMax}
)

func hstr(k key, min, max int64) fieldSpec {
	return fieldSpec{k: k, kind: fString, min: min, max: max, hardMax: true}
}

// messageSpecs are the handshake and reply message fields (catalog §5.1–§5.8
// and schemas/handshake/*; renegotiate and close have no schema and take
// their shape from the §5.7.1 and §5.8.1 examples).
var (
	requestSpecs = []fieldSpec{reqd(versionSpec), reqd(hstr(kSubscriberID, 1, 256)), {k: kCapabilities, req: true, kind: fCapabilities},
		hstr(kSubscriberName, 0, 256), hstr(kSubscriberVersion, 0, 64), {k: kSubscriberManifestURI, kind: fURI}, corrSpec,
		{k: kExtensions, kind: fExtObjects}}
	acceptedSpecs = []fieldSpec{reqd(subIDSpec), reqd(versionSpec), {k: kProducer, req: true, kind: fProducer},
		{k: kHonoredCapabilities, req: true, kind: fCapabilities}, {k: kManifestURI, kind: fURI},
		{k: kSignedManifest, kind: fString, max: noMax, pat: reSignedJWS.Match, patText: "a JWS compact serialization " + reSignedJWS.String()},
		hstr(kNegotiationNotes, 0, 4096)}
	rejectedSpecs = []fieldSpec{reqd(fieldSpec{k: kReasonCode, kind: fEnum, enum: vocab.ReasonCodes()}),
		reqd(hstr(kReasonMessage, 1, 4096)), {k: kRetryAfterSeconds, kind: fInt, min: 0, max: 86400}, {k: kAlternativeManifestURI, kind: fURI}}
	renegotiateSpecs = []fieldSpec{reqd(subIDSpec), {k: kCapabilities, req: true, kind: fCapabilities}}
	closeSpecs       = []fieldSpec{reqd(fieldSpec{k: kSubscriptionID, kind: fString, max: noMax}), {k: kReasonCode, kind: fString, max: noMax},
		{k: kReasonMessage, kind: fString, max: noMax}}
	// The replies' subscription_id is required by §6.3.1, §6.5 and their
	// schemas, but whether its absence is MSG-CONF-REPLY-SCHEMA's (or
	// MSG-CLAR-REPLY-SCHEMA's) MUST depends on whether the subscriber was
	// ever issued one: the sequence checker judges it with the handshake
	// in view (negChecker.reply, NEG-REPLY-SUBID-UNISSUED). Here it is
	// checked when present.
	confReplySpecs = []fieldSpec{reqd(pattern(kReplyToken, idPat("rpl_"), reReplyToken.String())),
		reqd(fieldSpec{k: kDecision, kind: fEnum, enum: []string{"accept", "reject"}}), subIDSpec,
		{k: kTimestamp, req: true, kind: fDateTime}, hstr(kDecidedBy, 1, 256), hstr(kDecisionRationale, 1, 4096),
		{k: kModifiedAction, kind: fObject}, corrSpec}
	clarReplySpecs = []fieldSpec{reqd(pattern(kReplyToken, idPat("rpl_"), reReplyToken.String())),
		{k: kResponse, req: true, kind: fResponse}, subIDSpec, {k: kTimestamp, req: true, kind: fDateTime},
		hstr(kDecidedBy, 1, 256), {k: kConfidence, kind: fNumber, min: 0, max: 1}, corrSpec}
)

// capabilitySpecs are the capability fields of §5.3 (request capabilities
// and accepted honored_capabilities share them).
var capabilitySpecs = []fieldSpec{
	{name: "max_events_per_second", kind: fInt, min: 1, max: 100000},
	{name: "preferred_verbosity", kind: fEnum, enum: vocab.Verbosities()},
	{name: "languages", kind: fStrings, min: 1, max: 32, itemMax: noMax, unique: true, pat: isLanguageTag, patText: "a language tag such as \"en-US\""},
	{name: "supports_confirmation_reply", kind: fBool},
	{name: "supports_clarification_reply", kind: fBool},
	{name: "coalesce_boundaries", kind: fStrings, min: 1, max: 5, itemMax: noMax, unique: true, enum: []string{"none", "word", "sentence", "paragraph", "completion"}},
	{name: "event_filters", kind: fEventFilters},
	{name: "supported_conformance_levels", kind: fIntEnumList, min: 1, max: 3, enumInts: []int64{1, 2, 3}},
	{name: "supported_extensions", kind: fStrings, min: 0, max: 64, itemMax: noMax, unique: true, pat: isURI, patText: "an absolute URI"},
	{name: "cognitive_load", kind: fEnum, enum: []string{"low", "medium", "high"}},
	{name: "pace_wpm", kind: fInt, min: 50, max: 1000},
	{name: "accept_signed_manifests_only", kind: fBool},
}

func capabilitySpec(name string) *fieldSpec {
	for i := range capabilitySpecs {
		if capabilitySpecs[i].name == name {
			return &capabilitySpecs[i]
		}
	}
	return nil
}

// capabilitiesProblem checks a capability object. Unknown keys are left to
// MSG-CAP-UNKNOWN.
func (c *checker) capabilitiesProblem(name string, r payload.Value) string {
	if r[0] != '{' {
		return name + " is " + jsonKind(r) + "; it must be an object ({} is allowed)"
	}
	problem := ""
	r.Members(func(k []byte, v payload.Value) bool {
		if f := capabilitySpec(string(k)); f != nil {
			problem = c.fieldProblem(name+"."+string(k), f, v)
		}
		return problem == ""
	})
	return problem
}

// eventFiltersProblem checks the event_filters capability: an object with
// only include and exclude, each an array of unique strings of 1..256
// characters.
func (c *checker) eventFiltersProblem(name string, r payload.Value) string {
	if r[0] != '{' {
		return name + " is " + jsonKind(r) + "; it must be an object with include and exclude lists"
	}
	list := fieldSpec{kind: fStrings, min: 0, max: noMax, itemMin: 1, itemMax: 256, hardMax: true, unique: true}
	problem := ""
	r.Members(func(k []byte, v payload.Value) bool {
		switch string(k) {
		case "include", "exclude":
			problem = c.stringsProblem(name+"."+string(k), &list, v)
		default:
			problem = name + " has the unknown key " + clipb(k) + "; only include and exclude are defined"
		}
		return problem == ""
	})
	return problem
}

// intEnumListProblem checks an array of unique integers from f.enumInts.
func intEnumListProblem(name string, f *fieldSpec, r payload.Value) string {
	if r[0] != '[' {
		return name + " is " + jsonKind(r) + "; it must be an array of integers"
	}
	problem, n := "", 0
	var seen []int64
	r.Elements(func(i int, v payload.Value) bool {
		n++
		x, ok := v.Int()
		valid := false
		for _, e := range f.enumInts {
			valid = valid || (ok && x == e)
		}
		if !valid {
			problem = name + " item " + strconv.Itoa(i) + " is " + describe(v) + "; it must be 1, 2 or 3"
			return false
		}
		for _, p := range seen {
			if p == x {
				problem = name + " lists " + strconv.FormatInt(x, 10) + " twice; its items must be unique"
				return false
			}
		}
		seen = append(seen, x)
		return true
	})
	switch {
	case problem != "":
	case int64(n) < f.min:
		problem = name + " is empty; it must list at least one level"
	case int64(n) > f.max:
		problem = name + " has " + strconv.Itoa(n) + " items; at most " + strconv.FormatInt(f.max, 10) + " are allowed"
	}
	return problem
}

// isDateTime reports an RFC 3339 date-time (JSON Schema format:date-time):
// the prose grammar, but letter case of T and Z and the number of fraction
// digits are free.
func isDateTime(s []byte) bool {
	if len(s) < 20 || len(s) > 64 {
		return false
	}
	var buf [64]byte
	b := buf[:len(s)]
	copy(b, s)
	if b[10] == 't' {
		b[10] = 'T'
	}
	if b[len(b)-1] == 'z' {
		b[len(b)-1] = 'Z'
	}
	return parseStrict(string(b)).ok
}

// validateMessage reports, under rule id, each field of the current
// message that breaks specs, the missing required fields, and (closed) the
// keys the schema does not define.
func (c *checker) validateMessage(specs []fieldSpec, closed bool, source string) {
	ev := c.ev
	var missing, extra []string
	var allowed keySet
	allowed.add(kType)
	for i := range specs {
		f := &specs[i]
		allowed.add(f.k)
		r := ev.vals[f.k]
		if r == nil {
			if f.req {
				missing = append(missing, keyNames[f.k])
			}
			continue
		}
		if p := c.fieldProblem(keyNames[f.k], f, r); p != "" {
			c.report("bad "+keyNames[f.k], "%s: %s (%s)", ev.Type, p, source)
		}
	}
	if len(missing) > 0 {
		c.report("missing "+strings.Join(missing, ", "),
			"%s lacks the required field(s) %s (%s)", ev.Type, strings.Join(missing, ", "), source)
	}
	if !closed {
		return
	}
	ev.present.minus(allowed).each(func(k key) { extra = append(extra, keyNames[k]) })
	extra = append(extra, ev.unknown...)
	if len(extra) > 0 {
		c.report("unexpected "+clip(extra[0]),
			"%s has field(s) %s that its schema does not allow (additionalProperties:false); handshake and reply messages carry no envelope or custom fields (%s)",
			ev.Type, quoteList(extra), source)
	}
}

// msgTypeKnown is the check of msgTypeKnown (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) msgTypeKnown() {
	ev := c.ev
	if IsMessageType(ev.Type) {
		return
	}
	r := ev.vals[kType]
	switch {
	case r == nil:
		c.report("no type",
			"the message has neither an event envelope nor a type; AAEP messages are events or one of the handshake/reply messages (%s)", strings.Join(messageTypeList[:], ", "))
	case r[0] != '"':
		c.report("type not a string", "the message's type is %s; it must be a string naming the message", jsonKind(r))
	default:
		c.report("unknown message type",
			"the message type %s is not an event type and not one of the handshake/reply messages %s (Ch. 5, Ch. 6)", clip(ev.Type), strings.Join(messageTypeList[:], ", "))
	}
}

// msgReqSchema is the check of msgReqSchema (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) msgReqSchema() {
	if c.ev.Type == MsgSubscriptionRequest {
		c.validateMessage(requestSpecs, true, "§5.2")
	}
}

// msgAccSchema is the check of msgAccSchema (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) msgAccSchema() {
	if c.ev.Type == MsgSubscriptionAccepted {
		c.validateMessage(acceptedSpecs, true, "§5.4")
	}
}

// msgRejSchema is the check of msgRejSchema (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) msgRejSchema() {
	if c.ev.Type == MsgSubscriptionRejected {
		c.validateMessage(rejectedSpecs, true, "§5.5")
	}
}

// msgRenegShape is the check of msgRenegShape (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) msgRenegShape() {
	if c.ev.Type == MsgSubscriptionRenegotiate {
		c.validateMessage(renegotiateSpecs, false, "§5.7.1")
	}
}

// msgCloseShape is the check of msgCloseShape (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) msgCloseShape() {
	if c.ev.Type == MsgSubscriptionClose {
		c.validateMessage(closeSpecs, false, "§5.8.1")
	}
}

// msgConfReplySchema is the check of msgConfReplySchema (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) msgConfReplySchema() {
	if c.ev.Type == MsgConfirmationReply {
		c.validateMessage(confReplySpecs, true, "§6.3")
	}
}

// msgClarReplySchema is the check of msgClarReplySchema (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) msgClarReplySchema() {
	if c.ev.Type == MsgClarificationReply {
		c.validateMessage(clarReplySpecs, true, "§6.5")
	}
}

// msgCapUnknown is the check of msgCapUnknown (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) msgCapUnknown() {
	var r payload.Value
	switch c.ev.Type {
	case MsgSubscriptionRequest, MsgSubscriptionRenegotiate:
		r = c.ev.vals[kCapabilities]
	case MsgSubscriptionAccepted:
		r = c.ev.vals[kHonoredCapabilities]
	}
	if len(r) == 0 || r[0] != '{' {
		return
	}
	r.Members(func(k []byte, v payload.Value) bool {
		if capabilitySpec(string(k)) == nil && v[0] != '{' {
			c.report("unknown capability "+clipb(k),
				"%s declares the unknown capability %s as %s; extension capabilities are objects under their prefix, and unknown ones are ignored (§5.3.2)",
				c.ev.Type, clipb(k), jsonKind(v))
			return false
		}
		return true
	})
}
