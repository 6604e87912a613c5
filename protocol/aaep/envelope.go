package aaep

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol/aaep/vocab"
)

// Patterns of the rule catalog (§1.2), compiled once. Hot fields are checked
// by hand-written functions that accept exactly the same strings (the tests
// hold each function against its pattern); the rest use these directly.
var (
	reEventID        = regexp.MustCompile(`^evt_[A-Za-z0-9]{1,64}$`)
	reSessionID      = regexp.MustCompile(`^sess_[A-Za-z0-9]{1,64}$`)
	reReplyToken     = regexp.MustCompile(`^rpl_[A-Za-z0-9]{1,64}$`)
	reSubscription   = regexp.MustCompile(`^sub_[A-Za-z0-9]{1,64}$`)
	reToolCallID     = regexp.MustCompile(`^call_[A-Za-z0-9]{1,64}$`)
	reOutputID       = regexp.MustCompile(`^out_[A-Za-z0-9]{1,64}$`)
	reTool           = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]{0,255}$`)
	reLanguageTag    = regexp.MustCompile(`^[a-zA-Z]{1,8}(-[a-zA-Z0-9]{1,8})*$`)
	reScript         = regexp.MustCompile(`^[A-Z][a-z]{3}$`)
	reContentType    = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9.+_-]*/[a-zA-Z][a-zA-Z0-9.+_-]*$`)
	reErrorCode      = regexp.MustCompile(`^[A-Z][A-Z0-9_]{1,63}$`)
	reCancelReason   = regexp.MustCompile(`^[a-z][a-z0-9_]{1,63}$`)
	reSignedJWS      = regexp.MustCompile(`^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$`)
	reTimestampProse = regexp.MustCompile(`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]{3}|\.[0-9]{6})?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`)
)

// maxChecked bounds how many @context entries and extension prefixes the
// declaration heuristics compare, so that hostile messages cost linear time
// (the §3.7 limit of 32 envelope-level fields is far below it).
const maxChecked = 256

// Size limits of §3.7.
const (
	maxEventBytes   = 64 << 10
	maxEnvelopeKeys = 32
	maxPayloadDepth = 8
	maxStringBytes  = 16 << 10
)

// Timestamps before this are placeholders (the epoch, year 1, ...): AAEP
// did not exist then. Timestamps after placeholderLate are sentinels.
var (
	placeholderEarly = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	placeholderLate  = time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)
)

// envelopeKeys are the envelope fields of §3.2–§3.4.
var envelopeKeys = setOf(kContext, kType, kEventID, kSessionID, kTimestamp, kProducer, kAAEPVersion,
	kVerbosity, kUrgency, kLocHints, kSeqNo, kCorrelationID, kExtensions)

// anyPayloadKeys are the payload fields every event may carry, whatever its
// type: the three verbosity forms of its announcement, which §3.3.1 tells
// producers to put "in the event's payload" (a SHOULD that names no type),
// and §5.9 lets a producer select per subscription. The per-type tables of
// Chapter 4 list them for eleven of the twelve core types;
// output.streaming's table omits them, yet real producers (the TypeScript
// reference among them) send summary_normal with their chunks.
var anyPayloadKeys = setOf(kSummaryTerse, kSummaryNormal, kSummaryDetailed)

// requiredEnvelope are the six required envelope fields of §3.2, in order.
var requiredEnvelope = [...]key{kContext, kType, kEventID, kSessionID, kTimestamp, kProducer}

// ---- ENV rules ----

// envIntRange is the check of envIntRange (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) envIntRange() {
	if s := &c.ev.scan; s.bigInt != "" {
		c.report("integer beyond 2^53",
			"the integer %s (under %q) lies outside ±2^53 and loses precision in JSON number semantics; integers that large must be sent as strings (§3.8)",
			describe([]byte(s.bigInt)), s.bigIntKey)
	}
}

// envReqFields is the check of envReqFields (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) envReqFields() {
	var missing []string
	for _, k := range requiredEnvelope {
		if c.ev.vals[k] == nil {
			missing = append(missing, keyNames[k])
		}
	}
	if len(missing) > 0 {
		c.report("missing "+strings.Join(missing, ", "),
			"the event lacks the required envelope field(s) %s; every AAEP event must carry @context, type, event_id, session_id, timestamp and producer (§3.2)",
			strings.Join(missing, ", "))
	}
}

// envContext is the check of envContext (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) envContext() {
	r := c.ev.vals[kContext]
	if r == nil {
		return
	}
	switch r[0] {
	case '"':
		if s, _ := r.Text(); string(s) != ContextV1 {
			c.report("wrong @context",
				"@context is %s but must be %q, or an array that starts with it (§3.2.1)", clipb(s), ContextV1)
		}
	case '[':
		n := 0
		r.Elements(func(i int, v payload.Value) bool {
			n++
			s, ok := v.Text()
			switch {
			case !ok:
				c.report("@context item not a string",
					"@context item %d is %s; every @context entry must be a URI string (§3.2.1)", i, jsonKind(v))
				return false
			case i == 0 && string(s) != ContextV1:
				c.report("core context not first",
					"the first @context entry is %s; when @context is an array its first element must be %q (§3.2.1)", clipb(s), ContextV1)
				return false
			case !isURI(s):
				c.report("@context item not a URI",
					"@context item %d, %s, is not an absolute URI; context entries are vocabulary URIs (§3.2.1, schema format:uri)", i, clipb(s))
				return false
			}
			return true
		})
		if n == 0 {
			c.report("empty @context",
				"@context is an empty array; it must hold at least the core context %q (§3.2.1)", ContextV1)
		}
	default:
		c.report("@context not string/array",
			"@context is %s; it must be the core context URL or an array of URIs starting with it (§3.2.1)", jsonKind(r))
	}
}

// envTypeForm is the check of envTypeForm (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) envTypeForm() {
	r := c.ev.vals[kType]
	if r == nil || r[0] != '"' {
		return
	}
	t := c.ev.Type
	if t == "" {
		c.report("empty type", "type is an empty string; it must name the event's type, e.g. \"aaep:agent.session.started\" (§3.2.2)")
		return
	}
	if !c.ev.typeExact {
		return // a near-miss of a core type: EVT-TYPE-CONST reports it
	}
	if problem := typeFormProblem(t); problem != "" {
		c.report("malformed type",
			"type %s is not a compact prefix:local name or a full URI (%s) (§3.2.2)", clip(t), problem)
	}
}

// envTypeCoreKnown is the check of envTypeCoreKnown (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) envTypeCoreKnown() {
	ev := c.ev
	if ev.Core != "" {
		return
	}
	n := NormalizeType(ev.Type)
	if strings.HasPrefix(n, CorePrefix) {
		c.report("unknown core type",
			"type %s is in the aaep: namespace but is not one of the 12 core event types of Chapter 4; producers must not invent aaep: types (§3.2.2)", clip(ev.Type))
	}
}

// envEventIDFormat is the check of envEventIDFormat (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) envEventIDFormat() {
	if s, ok := c.ev.text(kEventID); ok && !isID(s, "evt_") {
		c.report("bad event_id",
			"event_id %s does not match evt_ followed by 1 to 64 letters or digits (§3.2.3)", clipb(s))
	}
}

// envSessionIDFormat is the check of envSessionIDFormat (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) envSessionIDFormat() {
	if s, ok := c.ev.text(kSessionID); ok && !isID(s, "sess_") {
		c.report("bad session_id",
			"session_id %s does not match sess_ followed by 1 to 64 letters or digits (§3.2.4)", clipb(s))
	}
}

// envTimestampFormat is the check of envTimestampFormat (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) envTimestampFormat() {
	if _, ok := c.ev.text(kTimestamp); !ok {
		return
	}
	if p := &c.ev.ts; !p.ok {
		c.report("malformed timestamp",
			"timestamp %s is not of the form YYYY-MM-DDTHH:MM:SS[.sss] followed by Z or ±HH:MM (%s) (§3.2.5)", clip(c.ev.Timestamp), p.problem)
	}
}

// envTimestampPrecision is the check of envTimestampPrecision (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) envTimestampPrecision() {
	if _, ok := c.ev.text(kTimestamp); !ok {
		return
	}
	if p := &c.ev.ts; p.ok && p.hasFrac && p.fracLen != 3 && p.fracLen != 6 {
		c.report(strconv.Itoa(p.fracLen)+" fraction digit(s)",
			"timestamp %s has %d fraction digit(s); only milliseconds (3 digits) or microseconds (6 digits) are allowed (§3.2.5)", clip(c.ev.Timestamp), p.fracLen)
	}
}

// envTimestampReal is the check of envTimestampReal (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) envTimestampReal() {
	ev := c.ev
	if !ev.TimeOK {
		return
	}
	if t := ev.Time; t.Before(placeholderEarly) || !t.Before(placeholderLate) {
		c.report("placeholder timestamp",
			"timestamp %s is a placeholder, not the moment the event was created; producers must stamp real emission times (§3.2.5)", clip(ev.Timestamp))
	}
}

// envProducer is the check of envProducer (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) envProducer() {
	r := c.ev.vals[kProducer]
	if r == nil {
		return
	}
	if problem := producerProblem(r); problem != "" {
		c.report("bad producer", "%s (§3.2.6)", problem)
	}
}

// envAAEPVersion is the check of envAAEPVersion (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) envAAEPVersion() {
	s, ok := c.ev.text(kAAEPVersion)
	if !ok {
		return
	}
	for _, v := range publishedVersions {
		if string(s) == v {
			return // the common case, without the regular expression
		}
	}
	if !vocab.ValidVersionBytes(s) {
		c.report("malformed aaep_version",
			"aaep_version %s is not a semantic version such as \"1.0.0\" (§3.4.4)", clipb(s))
		return
	}
	c.report("unpublished aaep_version",
		"aaep_version %s is not a published AAEP version (published: %s); it must name the version the producer conforms to (§3.4.4)",
		clipb(s), strings.Join(publishedVersions, ", "))
}

// envVerbosityEnum is the check of envVerbosityEnum (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) envVerbosityEnum() {
	if s, ok := c.ev.text(kVerbosity); ok && !vocab.IsVerbosity(string(s)) {
		c.report("bad verbosity",
			"verbosity is %s; it must be \"terse\", \"normal\" or \"detailed\" (§3.3.1)", clipb(s))
	}
}

// envUrgencyEnum is the check of envUrgencyEnum (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) envUrgencyEnum() {
	if s, ok := c.ev.text(kUrgency); ok && !oneOf(s, "background", "normal", "critical") {
		c.report("bad urgency",
			"urgency is %s; it must be \"background\", \"normal\" or \"critical\" (§3.3.2)", clipb(s))
	}
}

// envSeqNoType is the check of envSeqnoType (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) envSeqNoType() {
	r := c.ev.vals[kSeqNo]
	if r == nil {
		return
	}
	if n, ok := r.Int(); !ok || n < 0 {
		c.report("bad sequence_number",
			"sequence_number is %s; it must be a non-negative integer (§3.4.1)", describe(r))
	}
}

// envCorrelationType is the check of envCorrelationType (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) envCorrelationType() {
	if r := c.ev.vals[kCorrelationID]; r != nil && r[0] != '"' {
		c.report("correlation_id not a string",
			"correlation_id is %s; it must be a string such as a W3C traceparent (§3.4.2)", jsonKind(r))
	}
}

// envLocHintsShape is the check of envLochintsShape (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) envLocHintsShape() {
	r := c.ev.vals[kLocHints]
	if len(r) == 0 || r[0] != '{' {
		return
	}
	if p := locHintsProblem(r); p != "" {
		c.report("bad localization_hints", "%s (§3.3.3, Ch. 11)", p)
	}
}

// humanTextKeys are the payload fields holding text meant for people.
var humanTextKeys = [...]key{kSummaryTerse, kSummaryNormal, kSummaryDetailed, kDescription, kQuestion, kChunk,
	kErrorMessage, kAction, kConsequence, kReason, kRemediationHint, kRequestText, kPartialResult,
	kOutputSummary, kContextText, kArgsSummary}

// envLocHintsPresent is the check of envLochintsPresent (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) envLocHintsPresent() {
	if !c.strict {
		return
	}
	ev := c.ev
	text := ""
	for _, k := range humanTextKeys {
		if s, ok := ev.text(k); ok && len(s) > 0 {
			text = keyNames[k]
			break
		}
	}
	if text == "" {
		return
	}
	if lh := ev.vals[kLocHints]; len(lh) > 0 && lh[0] == '{' {
		has := false
		lh.Members(func(k []byte, v payload.Value) bool {
			has = string(k) == "primary_language"
			return !has
		})
		if has {
			return
		}
	}
	c.report("no primary_language",
		"the event carries human-readable text (%s) but no localization_hints.primary_language; events with text for people must say its language (Ch. 11; §3.3.3 only recommends it)", text)
}

// envForbiddenFields is the check of envForbiddenFields (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) envForbiddenFields() {
	ev := c.ev
	var bad []string
	if ci := coreIndex(ev.Core); ci >= 0 {
		ev.present.minus(envelopeKeys).minus(anyPayloadKeys).minus(payloadKeys[ci]).each(func(k key) {
			bad = append(bad, keyNames[k])
		})
		bad = append(bad, ev.unknown...)
	} else {
		for _, u := range ev.unknown {
			if strings.HasPrefix(u, "aaep_") || reservedJSONLD(u) {
				bad = append(bad, u)
			}
		}
	}
	if len(bad) > 0 {
		what := "the event's type"
		if ev.Core != "" {
			what = ev.Core
		}
		c.report("forbidden field "+clip(bad[0]),
			"the event has top-level field(s) %s that neither the envelope nor %s defines; custom data must go inside extensions under a declared prefix (§3.5)",
			quoteList(bad), what)
	}
}

func reservedJSONLD(k string) bool {
	switch k {
	case "@id", "@graph", "@base", "@vocab":
		return true
	}
	return false
}

// envSize is the check of envSize (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) envSize() {
	ev := c.ev
	if n := len(ev.Raw); n > maxEventBytes {
		c.report("event over 64 KiB",
			"the event is %d bytes, over the 64 KiB limit; large content should be referenced by URI or split (§3.7)", n)
	}
	keys := ev.scan.keys
	if r := ev.vals[kExtensions]; len(r) > 0 && r[0] == '{' {
		r.Members(func([]byte, payload.Value) bool { keys++; return true })
	}
	if keys > maxEnvelopeKeys {
		c.report("over 32 fields",
			"the event has %d envelope-level fields (top-level keys plus extension prefixes), over the limit of 32 (§3.7)", keys)
	}
	if ev.scan.tooDeep {
		c.report("nested too deeply",
			"the event's payload is nested too deeply: more than %d levels, where §3.7 sets a limit of 8; the levels past %d were checked for syntax only", payload.MaxDepth, payload.MaxDepth)
	} else if d := ev.scan.depth - 1; d > maxPayloadDepth {
		c.report("nested too deeply",
			"the event's payload is nested too deeply: %d levels, over the limit of 8 (§3.7)", d)
	}
	if ev.scan.longStr > maxStringBytes {
		if s, ok := ev.scan.longStrTok.Text(); ok && len(s) > maxStringBytes {
			c.report("string over 16 KiB",
				"a string under %q is %d bytes long, over the 16 KiB limit; long content should be split across events or referenced by URI (§3.7)",
				ev.scan.longStrKey, len(s))
		}
	}
}

// envSchema is the check of envSchema (rules_single.go), whose Doc says
// what it requires and why.
func (c *checker) envSchema() {
	ev := c.ev
	for _, k := range [...]key{kType, kEventID, kSessionID, kTimestamp, kAAEPVersion, kVerbosity, kUrgency} {
		if r := ev.vals[k]; r != nil && r[0] != '"' {
			c.report(keyNames[k]+" not a string",
				"%s is %s; the envelope schema requires a string (§3.9)", keyNames[k], jsonKind(r))
		}
	}
	if r := ev.vals[kLocHints]; r != nil && r[0] != '{' {
		c.report("localization_hints not an object",
			"localization_hints is %s; the envelope schema requires an object (§3.3.3, §3.9)", jsonKind(r))
	}
}
