package aaep

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aaep-tools/aaepkit/protocol"
)

// evtRules are the single-event payload rules of catalog §2.13 (15),
// applied to events of the 12 core types.
var evtRules = []singleRule{
	{protocol.Rule{ID: "EVT-SCHEMA", Level: protocol.Must, Summary: "The payload validates against its core schema: required fields, types, enums, patterns and ranges."}, scopeCore, (*checker).evtSchema},
	{protocol.Rule{ID: "EVT-TYPE-CONST", Level: protocol.Must, Summary: "type is exactly the compact core type (or its https://aaep-protocol.org/types/ URI form), not a variant spelling."}, scopeCore, (*checker).evtTypeConst},
	{protocol.Rule{ID: "EVT-URGENCY-CRITICAL", Level: protocol.Must, Summary: "session.errored, awaiting.confirmation, awaiting.clarification and handoff.requested carry urgency \"critical\" (absent means normal)."}, scopeCore, (*checker).evtUrgencyCritical},
	{protocol.Rule{ID: "EVT-URGENCY-RECOMMENDED", Level: protocol.Should, Summary: "The other core types use the urgency §3.3.2 recommends for them."}, scopeCore, (*checker).evtUrgencyRecommended},
	{protocol.Rule{ID: "EVT-SUMMARY-NORMAL", Level: protocol.Must, Summary: "Events likely to be announced carry summary_normal."}, scopeCore, (*checker).evtSummaryNormal},
	{protocol.Rule{ID: "EVT-CONF-DEFAULT-DECISION", Level: protocol.Must, Summary: "An irreversible confirmation with high or medium risk defaults to reject."}, scopeCore, (*checker).evtConfDefaultDecision},
	{protocol.Rule{ID: "EVT-CONF-DEFAULT-SHOULD", Level: protocol.Should, Summary: "An irreversible low-risk, or a reversible high-risk, confirmation should default to reject."}, scopeCore, (*checker).evtConfDefaultShould},
	{protocol.Rule{ID: "EVT-CONF-REVERSIBILITY-ONLY", Level: protocol.Info, Summary: "reversibility \"irreversible\" on a high/medium-risk confirmation comes with irreversible:true, or the schema's safety rule is bypassed."}, scopeCore, (*checker).evtConfReversibilityOnly},
	{protocol.Rule{ID: "EVT-CONF-ALLOWED-REPLIES", Level: protocol.Info, Summary: "allowed_replies holds only values a confirmation.reply can carry (accept, reject), including default_decision."}, scopeCore, (*checker).evtConfAllowedReplies},
	{protocol.Rule{ID: "EVT-CLAR-CHOICES", Level: protocol.Must, Summary: "A clarification accepting multiple_choice lists its choices."}, scopeCore, (*checker).evtClarChoices},
	{protocol.Rule{ID: "EVT-CLAR-DEFAULT-RESPONSE", Level: protocol.Info, Summary: "A multiple-choice-only clarification's default_response is one of its choices."}, scopeCore, (*checker).evtClarDefaultResponse},
	{protocol.Rule{ID: "EVT-PROGRESS-STEP-LE-TOTAL", Level: protocol.Should, Summary: "progress.step does not exceed progress.total_steps."}, scopeCore, (*checker).evtProgressStepLETotal},
	{protocol.Rule{ID: "EVT-TOOLC-ERROR-MESSAGE", Level: protocol.Should, Summary: "A tool completion with status error or timeout carries error_message."}, scopeCore, (*checker).evtToolcErrorMessage},
	{protocol.Rule{ID: "EVT-STREAM-HINT-COMPLETE", Level: protocol.Should, Summary: "coalesce_hint \"completion\" goes with complete:true, and complete:true with no hint or \"completion\"."}, scopeCore, (*checker).evtStreamHintComplete},
	{protocol.Rule{ID: "EVT-SECRETS", Level: protocol.Must, Summary: "Human-readable fields carry no secrets: passwords, API keys, tokens, private keys, card or social security numbers."}, scopeCore, (*checker).evtSecrets},
}

// ---- payload field specifications (catalog §2.1–§2.12, core schemas) ----

type fkind uint8

const (
	fString       fkind = iota + 1 // a string of min..max characters, optional pattern
	fEnum                          // a string from enum
	fInt                           // an integer in min..max
	fBool                          // a boolean
	fObject                        // an object
	fURI                           // a string in format:uri
	fStrings                       // an array of strings: items min..max (itemMin..itemMax chars, enum or pattern), unique
	fProgress                      // the progress object of progress.updated
	fChoices                       // the choices array of awaiting.clarification
	fNumber                        // a number in min..max
	fDateTime                      // a string in format:date-time (RFC 3339)
	fResponse                      // a clarification response: string 1..16384, boolean or number
	fExtObjects                    // an object whose values are objects (extensions)
	fProducer                      // the producer object (envelope $defs/Producer)
	fCapabilities                  // a capability object (§5.3)
	fIntEnumList                   // an array of integers from enumInts, min..max items, unique
	fEventFilters                  // the event_filters capability
)

// noMax marks an unbounded maximum.
const noMax = -1

// fieldSpec describes one payload field as its core schema defines it.
type fieldSpec struct {
	k        key
	req      bool
	kind     fkind
	min, max int64 // string length in characters, integer range, or item count
	// Arrays of strings: item length bounds, item enum, item pattern.
	itemMin, itemMax int64
	enum             []string
	enumInts         []int64
	pat              func([]byte) bool
	patText          string // the pattern, for messages
	unique           bool
	// hardMax applies the maximum string length in every profile (the
	// handshake schemas, which no prose contradicts).
	hardMax bool
	// name is the field name when k is kUnknown (capability fields).
	name string
}

// label is the field's name.
func (f *fieldSpec) label() string {
	if f.k == kUnknown {
		return f.name
	}
	return keyNames[f.k]
}

func str(k key, min, max int64) fieldSpec { return fieldSpec{k: k, kind: fString, min: min, max: max} }
func reqd(f fieldSpec) fieldSpec          { f.req = true; return f }
func enum(k key, v ...string) fieldSpec   { return fieldSpec{k: k, kind: fEnum, enum: v} }
func integer(k key, min, max int64) fieldSpec {
	return fieldSpec{k: k, kind: fInt, min: min, max: max}
}
func pattern(k key, pat func([]byte) bool, text string) fieldSpec {
	return fieldSpec{k: k, kind: fString, min: 0, max: noMax, pat: pat, patText: text}
}
func ms(k key) fieldSpec { return integer(k, 0, 86400000) }

// The TERSE / NORMAL / DETAILED summaries.
var (
	terse    = str(kSummaryTerse, 1, 4096)
	normal   = str(kSummaryNormal, 1, 16384)
	detailed = str(kSummaryDetailed, 1, 16384)
)

func idPat(prefix string) func([]byte) bool { return func(s []byte) bool { return isID(s, prefix) } }

var (
	toolSpec      = pattern(kTool, isToolName, `^[A-Za-z_][A-Za-z0-9_.-]{0,255}$`)
	toolCallSpec  = pattern(kToolCallID, idPat("call_"), `^call_[A-Za-z0-9]{1,64}$`)
	replyTokSpec  = pattern(kReplyToken, idPat("rpl_"), `^rpl_[A-Za-z0-9]{1,64}$`)
	riskLevelSpec = enum(kRiskLevel, "low", "medium", "high")
	timeoutSpec   = integer(kTimeoutSeconds, 1, 86400)
)

// payloadSpecs lists each core type's payload fields, indexed like
// coreTypeList. Fields only the schema defines (summary_detailed on
// progress, clarification and handoff; irreversible on confirmations) are
// included: the prose does not forbid them.
var payloadSpecs = [len(coreTypeList)][]fieldSpec{
	// session.started §4.1.1
	{reqd(normal), terse, detailed, ms(kExpectedDurationMS), str(kRequestedBy, 1, 256), str(kRequestText, 0, 16384),
		{k: kToolsAvailable, kind: fStrings, min: 0, max: 256, itemMin: 1, itemMax: 256, unique: true}},
	// session.completed §4.1.2
	{reqd(normal), terse, detailed, ms(kDurationMS), integer(kToolInvocationsCount, 0, noMax), str(kOutputSummary, 0, 16384),
		{k: kResultURI, kind: fURI}},
	// session.errored §4.1.3
	{reqd(enum(kErrorCategory, "transient", "permanent", "requires_user", "unknown")), reqd(normal), terse, detailed,
		pattern(kErrorCode, reErrorCode.Match, reErrorCode.String()), {k: kErrorURI, kind: fURI}, {k: kRecoverable, kind: fBool},
		str(kRemediationHint, 1, 4096)},
	// session.cancelled §4.1.4
	{reqd(enum(kCancelledBy, "user", "producer", "timeout", "system")), reqd(normal), terse, detailed,
		pattern(kCancellationReason, reCancelReason.Match, reCancelReason.String()), str(kPartialResult, 0, 16384)},
	// state.changed §4.2.1
	{reqd(str(kFromState, 1, 64)), reqd(str(kToState, 1, 64)), terse, normal, detailed, ms(kExpectedDurationMS)},
	// progress.updated §4.2.2
	{{k: kProgress, req: true, kind: fProgress}, terse, normal, detailed, ms(kETAMS)},
	// tool.invoked §4.3.1
	{reqd(toolSpec), reqd(normal), terse, detailed, str(kDescription, 1, 4096), str(kArgsSummary, 0, 16384),
		ms(kExpectedDurationMS), riskLevelSpec, {k: kIrreversible, kind: fBool}, toolCallSpec},
	// tool.completed §4.3.2
	{reqd(toolSpec), reqd(enum(kStatus, "success", "error", "timeout")), toolCallSpec, ms(kDurationMS), terse, normal, detailed,
		str(kErrorMessage, 1, 4096)},
	// output.streaming §4.3.3
	{reqd(str(kChunk, 0, 16384)), reqd(integer(kPosition, 0, noMax)), {k: kComplete, req: true, kind: fBool},
		enum(kCoalesceHint, "none", "word", "sentence", "paragraph", "completion"),
		pattern(kOutputID, idPat("out_"), `^out_[A-Za-z0-9]{1,64}$`),
		pattern(kContentType, isContentType, reContentType.String()),
		pattern(kLanguage, isLanguageTag, reLanguageTag.String())},
	// awaiting.confirmation §4.4.1, Ch. 6
	{reqd(str(kAction, 1, 16384)), reqd(str(kConsequence, 1, 16384)), reqd(replyTokSpec), reqd(timeoutSpec),
		reqd(enum(kDefaultDecision, "accept", "reject")), terse, normal, detailed, riskLevelSpec,
		{k: kIrreversible, kind: fBool}, enum(kReversibility, "reversible", "reversible_with_effort", "irreversible"),
		{k: kAllowedReplies, kind: fStrings, min: 1, max: 32, itemMin: 0, itemMax: noMax, unique: true},
		{k: kExtraContext, kind: fObject}},
	// awaiting.clarification §4.4.2
	{reqd(str(kQuestion, 1, 16384)), reqd(replyTokSpec), reqd(timeoutSpec), terse, normal, detailed,
		{k: kAcceptedResponseKinds, kind: fStrings, min: 1, max: 4, itemMin: 0, itemMax: noMax, unique: true,
			enum: []string{"freetext", "yes_no", "multiple_choice", "numeric"}},
		{k: kChoices, kind: fChoices, min: 2, max: 32}, str(kContextText, 1, 4096), str(kDefaultResponse, 0, 4096)},
	// handoff.requested §4.4.3
	{reqd(str(kReason, 1, 16384)), reqd(enum(kTargetKind, "human", "specialist_agent", "escalation_queue")),
		{k: kTargetURI, kind: fURI}, {k: kPackagedContext, kind: fObject}, enum(kUrgencyForHandoff, "low", "medium", "high"),
		terse, normal, detailed},
}

// payloadKeys holds the keys of payloadSpecs per core type.
var payloadKeys = func() (out [len(coreTypeList)]keySet) {
	for i, specs := range payloadSpecs {
		for _, f := range specs {
			out[i].add(f.k)
		}
	}
	return out
}()

// summaryRequired marks the core types whose schema requires summary_normal.
var summaryRequired = [len(coreTypeList)]bool{0: true, 1: true, 2: true, 3: true, 6: true}

// ---- EVT rules ----

// evtSchema implements EVT-SCHEMA (MUST, §4.7, §9.3.1(8)): the payload
// validates against its core schema — required fields, JSON types, enums,
// patterns (tool, tool_call_id, output_id, error_code, cancellation_reason,
// content_type, language: schema only, catalog §2.14 item 11, applied
// because the prose is silent), integer ranges (the *_ms maxima and the
// timeout_seconds maximum are schema only, applied likewise), the progress
// object (closed, one of percent/step/total_steps/description, step >= 1)
// and the choices items.
//
// Prose over schema:
//   - string length maxima (maxLength 4096/16384 characters) are reported
//     in the strict profile only: the prose makes 16 KiB a soft SHOULD limit
//     that implementations MAY exceed (§3.7; catalog §2.14 item 8, and see
//     ENV-SIZE); minimum lengths always apply;
//   - a missing summary_normal is EVT-SUMMARY-NORMAL's;
//   - the urgency const is EVT-URGENCY-CRITICAL's and the confirmation
//     if/then is EVT-CONF-DEFAULT-DECISION's, so each defect is reported
//     once.
func (c *checker) evtSchema() {
	ci := coreIndex(c.ev.Core)
	var missing []string
	for i := range payloadSpecs[ci] {
		f := &payloadSpecs[ci][i]
		r := c.ev.vals[f.k]
		if r == nil {
			if f.req && f.k != kSummaryNormal {
				missing = append(missing, keyNames[f.k])
			}
			continue
		}
		if p := c.fieldProblem(keyNames[f.k], f, r); p != "" {
			c.report("EVT-SCHEMA", "bad "+keyNames[f.k], "%s (%s schema)", p, c.ev.Core)
		}
	}
	if len(missing) > 0 {
		c.report("EVT-SCHEMA", "missing "+strings.Join(missing, ", "),
			"%s requires the payload field(s) %s, which the event lacks (Ch. 4)", c.ev.Core, strings.Join(missing, ", "))
	}
}

// fieldProblem returns a sentence saying how raw value r of the field
// called name breaks spec f, or "".
func (c *checker) fieldProblem(name string, f *fieldSpec, r json.RawMessage) string {
	switch f.kind {
	case fString, fURI:
		s, ok := c.strOf(f.k, r)
		if !ok {
			return name + " is " + jsonKind(r) + "; it must be a string"
		}
		if f.kind == fURI {
			if !isURI(s) {
				return name + " " + clipb(s) + " is not an absolute URI"
			}
			return ""
		}
		if p := c.lengthProblem(name, s, f.min, f.max, f.hardMax); p != "" {
			return p
		}
		if f.pat != nil && !f.pat(s) {
			return name + " " + clipb(s) + " does not match " + f.patText
		}
	case fEnum:
		s, ok := rawText(r)
		if !ok || !oneOf(s, f.enum...) {
			return name + " is " + describe(r) + "; it must be one of " + quoteList(f.enum)
		}
	case fInt:
		n, ok := rawInt(r)
		if !ok {
			return name + " is " + describe(r) + "; it must be an integer"
		}
		if n < f.min || (f.max != noMax && n > f.max) {
			return name + " is " + strconv.FormatInt(n, 10) + "; it must be " + rangeText(f.min, f.max)
		}
	case fBool:
		if _, ok := rawBool(r); !ok {
			return name + " is " + describe(r) + "; it must be true or false"
		}
	case fObject:
		if r[0] != '{' {
			return name + " is " + jsonKind(r) + "; it must be an object"
		}
	case fStrings:
		return c.stringsProblem(name, f, r)
	case fProgress:
		return c.progressProblem(r)
	case fChoices:
		return c.choicesProblem(r)
	case fNumber:
		v, ok := rawNumber(r)
		if !ok || v < float64(f.min) || v > float64(f.max) {
			return name + " is " + describe(r) + "; it must be a number " + rangeText(f.min, f.max)
		}
	case fDateTime:
		s, ok := rawText(r)
		if !ok || !isDateTime(s) {
			return name + " is " + describe(r) + "; it must be an RFC 3339 date-time such as \"2026-05-24T14:22:11.342Z\""
		}
	case fResponse:
		switch r[0] {
		case '"':
			s, _ := rawText(r)
			return c.lengthProblem(name, s, 1, 16384, true)
		case 't', 'f':
		case '{', '[', 'n':
			return name + " is " + jsonKind(r) + "; it must be a string, a boolean or a number"
		}
	case fExtObjects:
		if r[0] != '{' {
			return name + " is " + jsonKind(r) + "; it must be an object keyed by extension prefix"
		}
		problem := ""
		eachMember(r, func(k []byte, v json.RawMessage) bool {
			if v[0] != '{' {
				problem = name + "." + string(k) + " is " + jsonKind(v) + "; each extension's fields must be an object"
			}
			return problem == ""
		})
		return problem
	case fProducer:
		return producerProblem(r)
	case fCapabilities:
		return c.capabilitiesProblem(name, r)
	case fIntEnumList:
		return intEnumListProblem(name, f, r)
	case fEventFilters:
		return c.eventFiltersProblem(name, r)
	}
	return ""
}

// strOf returns the string content of r, which may be the top-level value
// of key k: then the scan's knowledge of escapes saves a pass over it.
func (c *checker) strOf(k key, r json.RawMessage) ([]byte, bool) {
	if v := c.ev.vals[k]; k != kUnknown && len(r) > 0 && len(v) == len(r) && &v[0] == &r[0] {
		return c.ev.text(k)
	}
	return rawText(r)
}

// lengthProblem checks a string's length in characters: the minimum
// always, the maximum when hard or in the strict profile (see evtSchema).
func (c *checker) lengthProblem(name string, s []byte, min, max int64, hard bool) string {
	if int64(len(s)) < min { // bytes >= characters, so this is exact for min <= 1
		if len(s) == 0 {
			return name + " is empty; it must hold at least " + strconv.FormatInt(min, 10) + " character(s)"
		}
		if n := int64(utf8.RuneCount(s)); n < min {
			return name + " has " + strconv.FormatInt(n, 10) + " characters; it must hold at least " + strconv.FormatInt(min, 10)
		}
	}
	if (hard || c.strict) && max != noMax && int64(len(s)) > max {
		if n := int64(utf8.RuneCount(s)); n > max {
			why := ""
			if !hard {
				why = " (strict profile)"
			}
			return name + " has " + strconv.FormatInt(n, 10) + " characters; the schema allows at most " + strconv.FormatInt(max, 10) + why
		}
	}
	return ""
}

func rangeText(min, max int64) string {
	if max == noMax {
		return "at least " + strconv.FormatInt(min, 10)
	}
	return "between " + strconv.FormatInt(min, 10) + " and " + strconv.FormatInt(max, 10)
}

// stringsProblem checks an array of strings.
func (c *checker) stringsProblem(name string, f *fieldSpec, r json.RawMessage) string {
	if r[0] != '[' {
		return name + " is " + jsonKind(r) + "; it must be an array of strings"
	}
	problem, n := "", 0
	var seen uniqueSet
	eachElement(r, func(i int, v json.RawMessage) bool {
		n++
		s, ok := rawText(v)
		item := func() string { return name + " item " + strconv.Itoa(i) }
		switch {
		case !ok:
			problem = item() + " is " + jsonKind(v) + "; it must be a string"
		case f.enum != nil && !oneOf(s, f.enum...):
			problem = item() + " is " + clipb(s) + "; it must be one of " + quoteList(f.enum)
		case f.pat != nil && !f.pat(s):
			problem = item() + " " + clipb(s) + " is not " + f.patText
		case int64(len(s)) < f.itemMin || (f.itemMax != noMax && int64(len(s)) > f.itemMax):
			problem = c.lengthProblem(item(), s, f.itemMin, f.itemMax, f.hardMax)
		}
		if problem == "" && f.unique && !seen.add(s) {
			problem = name + " lists " + clipb(s) + " twice; its items must be unique"
		}
		return problem == ""
	})
	switch {
	case problem != "":
	case int64(n) < f.min:
		problem = name + " has " + strconv.Itoa(n) + " items; at least " + strconv.FormatInt(f.min, 10) + " are required"
	case f.max != noMax && int64(n) > f.max:
		problem = name + " has " + strconv.Itoa(n) + " items; at most " + strconv.FormatInt(f.max, 10) + " are allowed"
	}
	return problem
}

// progressProblem checks the progress object of progress.updated: an
// object with at least one of percent (number 0..100), step (integer >= 1,
// schema only), total_steps (integer >= 1) and description (string 1..4096),
// and no other key (additionalProperties:false, schema only).
func (c *checker) progressProblem(r json.RawMessage) string {
	if r[0] != '{' {
		return "progress is " + jsonKind(r) + "; it must be an object"
	}
	problem, n := "", 0
	eachMember(r, func(k []byte, v json.RawMessage) bool {
		n++
		name := "progress." + string(k)
		switch string(k) {
		case "percent":
			if f, ok := rawNumber(v); !ok || f < 0 || f > 100 {
				problem = name + " is " + describe(v) + "; it must be a number from 0 to 100"
			}
		case "step", "total_steps":
			if i, ok := rawInt(v); !ok || i < 1 {
				problem = name + " is " + describe(v) + "; it must be an integer of at least 1"
			}
		case "description":
			if s, ok := rawText(v); !ok {
				problem = name + " is " + jsonKind(v) + "; it must be a string"
			} else {
				problem = c.lengthProblem(name, s, 1, 4096, false)
			}
		default:
			problem = "progress has the unknown key " + clipb(k) + "; only percent, step, total_steps and description are defined"
		}
		return problem == ""
	})
	if problem == "" && n == 0 {
		problem = "progress is empty; it must hold at least one of percent, step, total_steps or description"
	}
	return problem
}

// choicesProblem checks the choices of awaiting.clarification: 2..32
// unique objects, each exactly {value: string 1..256, label: string 1..1024}.
func (c *checker) choicesProblem(r json.RawMessage) string {
	if r[0] != '[' {
		return "choices is " + jsonKind(r) + "; it must be an array of {value, label} objects"
	}
	problem, n := "", 0
	var seen uniqueSet
	eachElement(r, func(i int, v json.RawMessage) bool {
		n++
		item := "choices item " + strconv.Itoa(i)
		if v[0] != '{' {
			problem = item + " is " + jsonKind(v) + "; it must be a {value, label} object"
			return false
		}
		var value, label []byte
		var hasValue, hasLabel bool
		eachMember(v, func(k []byte, fv json.RawMessage) bool {
			switch string(k) {
			case "value":
				value, hasValue = rawText(fv)
				if !hasValue {
					problem = item + " value is " + jsonKind(fv) + "; it must be a string"
				} else {
					problem = c.lengthProblem(item+" value", value, 1, 256, false)
				}
			case "label":
				label, hasLabel = rawText(fv)
				if !hasLabel {
					problem = item + " label is " + jsonKind(fv) + "; it must be a string"
				} else {
					problem = c.lengthProblem(item+" label", label, 1, 1024, false)
				}
			default:
				problem = item + " has the unknown key " + clipb(k) + "; a choice holds only value and label"
			}
			return problem == ""
		})
		if problem == "" && (!hasValue || !hasLabel) {
			problem = item + " lacks value or label; each choice needs both"
		}
		if problem == "" && !seen.add(append(append(value[:len(value):len(value)], 0), label...)) {
			problem = item + " repeats an earlier choice; choices must be unique"
		}
		return problem == ""
	})
	switch {
	case problem != "":
	case n < 2:
		problem = "choices has " + strconv.Itoa(n) + " item(s); a multiple choice needs at least 2"
	case n > 32:
		problem = "choices has " + strconv.Itoa(n) + " items; at most 32 are allowed"
	}
	return problem
}

// evtTypeConst implements EVT-TYPE-CONST (MUST; core schemas' type const
// vs §3.2.2): type is exactly the compact core constant, or the full-URI
// form https://aaep-protocol.org/types/<local>, which the prose declares
// equivalent — prose over schema: the schemas' const rejects the URI form
// (catalog §2.14 item 2), this rule accepts it. Reported: spellings that
// only match a core type after changing letter case, trimming spaces,
// switching http to https, or replacing the JSON-LD vocab expansion
// https://aaep-protocol.org/vocab/v1# (which context/aaep-v1.jsonld uses,
// contradicting §2.2.7) with the prose's types/ URI.
func (c *checker) evtTypeConst() {
	if !c.ev.typeExact {
		c.report("EVT-TYPE-CONST", "type spelled differently",
			"type %s is not the exact type constant %q (or %q); type names are case-sensitive and must be written exactly (§3.2.2, Ch. 4 schemas)",
			clip(c.ev.Type), c.ev.Core, TypeURIPrefix+strings.TrimPrefix(c.ev.Core, CorePrefix))
	}
}

// criticalTypes marks the types Chapter 4 says MUST be emitted with
// urgency "critical".
var criticalTypes = [len(coreTypeList)]bool{2: true, 9: true, 10: true, 11: true}

// evtUrgencyCritical implements EVT-URGENCY-CRITICAL (MUST, §4.1.3,
// §4.4.1–§4.4.3, §5.5.4): session.errored, awaiting.confirmation,
// awaiting.clarification and handoff.requested carry urgency "critical".
// A missing urgency means "normal" (§3.3.2) and is a violation, although
// the schemas' const accepts the omission (catalog §2.14 item 3: prose over
// schema). §3.3.2 calls critical only RECOMMENDED for these types; the
// per-type MUST of Chapter 4 is the specific rule and wins in both profiles.
func (c *checker) evtUrgencyCritical() {
	ci := coreIndex(c.ev.Core)
	if !criticalTypes[ci] {
		return
	}
	r := c.ev.vals[kUrgency]
	if s, ok := rawText(r); ok && string(s) == "critical" {
		return
	}
	seen := "has no urgency, which means \"normal\""
	if r != nil {
		seen = "has urgency " + describe(r)
	}
	c.report("EVT-URGENCY-CRITICAL", "urgency not critical",
		"%s %s; this type must be emitted with urgency \"critical\" so subscribers never filter or delay it (Ch. 4, §5.5.4)", c.ev.Core, seen)
}

// recommendedUrgency lists the §3.3.2 urgencies of the non-critical types.
var recommendedUrgency = [len(coreTypeList)][]string{
	0: {"normal"}, 1: {"normal"}, 3: {"normal"}, 4: {"background", "normal"}, 5: {"background"},
	6: {"normal"}, 7: {"normal"}, 8: {"normal"},
}

// evtUrgencyRecommended implements EVT-URGENCY-RECOMMENDED (SHOULD,
// §3.3.2): the eight types without a critical MUST use their recommended
// urgency (a missing urgency counts as "normal"); deviations "SHOULD be
// documented". Invalid urgency values are ENV-URGENCY-ENUM's.
func (c *checker) evtUrgencyRecommended() {
	ci := coreIndex(c.ev.Core)
	rec := recommendedUrgency[ci]
	if rec == nil {
		return
	}
	u := "normal"
	if r := c.ev.vals[kUrgency]; r != nil {
		s, _ := rawText(r)
		switch string(s) {
		case "background":
			u = "background"
		case "normal":
		case "critical":
			u = "critical"
		default:
			return // not a string, or not an urgency: ENV-URGENCY-ENUM's
		}
	}
	if !slices.Contains(rec, u) {
		c.report("EVT-URGENCY-RECOMMENDED", "urgency "+string(u)+", not "+strings.Join(rec, "/"),
			"%s has urgency %q; §3.3.2 recommends %s for this type, and a deviation should be deliberate and documented",
			c.ev.Core, u, strings.Join(rec, " or "))
	}
}

// evtSummaryNormal implements EVT-SUMMARY-NORMAL (MUST for Level 1
// producers, §9.3.1(9)): events likely to be announced carry
// summary_normal. The five types whose schema requires it (session.started,
// .completed, .errored, .cancelled, tool.invoked) are always checked.
// Whether the other types are "likely to be announced" is a judgement the
// specification leaves open (the catalog says to warn); state.changed,
// progress.updated, tool.completed, awaiting.confirmation,
// awaiting.clarification and handoff.requested are therefore checked in the
// strict profile only, and never when urgency is "background".
// output.streaming is exempt: its chunk is the announced text.
func (c *checker) evtSummaryNormal() {
	ev := &c.ev
	ci := coreIndex(ev.Core)
	if ev.vals[kSummaryNormal] != nil || ev.Core == TypeOutputStreaming {
		return
	}
	if !summaryRequired[ci] {
		if !c.strict || ev.Urgency == "background" {
			return
		}
	}
	c.report("EVT-SUMMARY-NORMAL", "no summary_normal",
		"%s has no summary_normal; events a subscriber announces must carry the normal-verbosity sentence to speak (§9.3.1(9))", ev.Core)
}

// confFacts are the safety-relevant fields of a confirmation.
type confFacts struct {
	irreversible, irrevSet bool
	risk                   string // "" when absent or invalid
	accept                 bool   // default_decision == "accept"
	reversibility          string
}

// irrev reports whether the action is irreversible by either field that
// says so: irreversible:true (§6.4.1's table, §6.10, the schema) or
// reversibility "irreversible" (§4.4.1's own field for it). Both describe
// one property, so either marks the action irreversible, in both profiles.
func (f confFacts) irrev() bool { return f.irreversible || f.reversibility == "irreversible" }

func (c *checker) confFacts() (f confFacts, ok bool) {
	if c.ev.Core != TypeAwaitingConfirmation {
		return f, false
	}
	f.irreversible, f.irrevSet = rawBool(c.ev.vals[kIrreversible])
	if s, ok := c.ev.text(kRiskLevel); ok && oneOf(s, "low", "medium", "high") {
		f.risk = string(s)
	}
	d, _ := c.ev.text(kDefaultDecision)
	f.accept = string(d) == "accept"
	if s, ok := c.ev.text(kReversibility); ok {
		f.reversibility = string(s)
	}
	return f, true
}

// evtConfDefaultDecision implements EVT-CONF-DEFAULT-DECISION (MUST,
// §6.4.1 and the confirmation schema's if/then): irreversible:true with
// risk_level high or medium requires default_decision "reject". §4.4.1's
// prose names only the high-risk case and has no irreversible field; the
// normative table of §6.4.1 and the schema add medium and use irreversible
// (catalog §2.14 item 6) — the more specific table is followed. The action
// is irreversible when either irreversible:true or reversibility
// "irreversible" says so (confFacts.irrev): the schema's if/then keys on
// irreversible only, but §6.4.1 states a property of the action, and
// §4.4.1 names that property reversibility.
func (c *checker) evtConfDefaultDecision() {
	f, ok := c.confFacts()
	if !ok || !f.irrev() || !f.accept || (f.risk != "high" && f.risk != "medium") {
		return
	}
	c.report("EVT-CONF-DEFAULT-DECISION", "irreversible "+f.risk+"-risk defaults to accept",
		"the confirmation of an irreversible %s-risk action has default_decision \"accept\", so silence would carry it out; it must default to \"reject\" (§6.4.1)", f.risk)
}

// evtConfDefaultShould implements EVT-CONF-DEFAULT-SHOULD (SHOULD, §6.4.1):
// default_decision should be "reject" for irreversible low-risk actions (a
// missing risk_level counts as low, as the conformance suite reads it) and
// for reversible high-risk actions (a missing irreversible counts as false,
// its tool.invoked default).
func (c *checker) evtConfDefaultShould() {
	f, ok := c.confFacts()
	if !ok || !f.accept {
		return
	}
	switch {
	case f.irrev() && (f.risk == "low" || f.risk == ""):
		c.report("EVT-CONF-DEFAULT-SHOULD", "irreversible low-risk defaults to accept",
			"the confirmation of an irreversible low-risk action defaults to \"accept\"; §6.4.1 says it should default to \"reject\"")
	case !f.irrev() && f.risk == "high":
		c.report("EVT-CONF-DEFAULT-SHOULD", "high-risk defaults to accept",
			"the confirmation of a high-risk action defaults to \"accept\"; §6.4.1 says high-risk actions should default to \"reject\" even when reversible")
	}
}

// evtConfReversibilityOnly implements EVT-CONF-REVERSIBILITY-ONLY (INFO,
// schema gap, catalog §2.14 item 6): a high- or medium-risk confirmation
// with reversibility "irreversible" but without irreversible:true escapes
// the schema's default-decision rule, which keys on irreversible only. The
// §4.4.1 prose table has reversibility and no irreversible field; the
// checker treats such an action as irreversible (a default of "accept" is
// EVT-CONF-DEFAULT-DECISION's, a MUST) and notes the missing field.
func (c *checker) evtConfReversibilityOnly() {
	f, ok := c.confFacts()
	if !ok || f.reversibility != "irreversible" || f.irreversible || (f.risk != "high" && f.risk != "medium") {
		return
	}
	consequence := "set irreversible:true so that schema validators apply the safety rule of §6.4.1 too"
	c.report("EVT-CONF-REVERSIBILITY-ONLY", "irreversible only via reversibility",
		"the confirmation says reversibility \"irreversible\" at %s risk but does not set irreversible:true, which the schema's safety rule checks; %s", f.risk, consequence)
}

// evtConfAllowedReplies implements EVT-CONF-ALLOWED-REPLIES (INFO, §6.3.2
// schema vs §4.4.1): allowed_replies values other than accept and reject
// cannot be sent, because confirmation.reply restricts decision to those
// two; and default_decision should be among allowed_replies.
func (c *checker) evtConfAllowedReplies() {
	if c.ev.Core != TypeAwaitingConfirmation {
		return
	}
	r := c.ev.vals[kAllowedReplies]
	if len(r) == 0 || r[0] != '[' {
		return
	}
	var custom []string
	hasDefault, n := false, 0
	def, defOK := c.ev.text(kDefaultDecision)
	eachElement(r, func(i int, v json.RawMessage) bool {
		s, ok := rawText(v)
		if !ok {
			return true
		}
		n++
		if !oneOf(s, "accept", "reject") {
			custom = append(custom, string(s))
		}
		if defOK && string(s) == string(def) {
			hasDefault = true
		}
		return true
	})
	switch {
	case n == 0:
		// An empty or malformed list is EVT-SCHEMA's.
	case len(custom) > 0:
		c.report("EVT-CONF-ALLOWED-REPLIES", "custom allowed_replies",
			"allowed_replies offers %s, but a confirmation.reply decision can only be \"accept\" or \"reject\", so the user cannot choose it (§6.3.1)", quoteList(custom))
	case defOK && !hasDefault:
		c.report("EVT-CONF-ALLOWED-REPLIES", "default not an allowed reply",
			"default_decision %q is not among allowed_replies; the timeout outcome should be a decision the user could also choose (§4.4.1)", def)
	}
}

// clarKinds returns the string items of accepted_response_kinds.
func (c *checker) clarKinds() (kinds []string, ok bool) {
	r := c.ev.vals[kAcceptedResponseKinds]
	if len(r) == 0 || r[0] != '[' {
		return nil, false
	}
	eachElement(r, func(i int, v json.RawMessage) bool {
		if s, ok := rawText(v); ok {
			kinds = append(kinds, string(s))
		}
		return true
	})
	return kinds, true
}

// evtClarChoices implements EVT-CLAR-CHOICES (MUST per the clarification
// schema's description; §2.14 item 12: the schema does not enforce it): a
// clarification whose accepted_response_kinds contains multiple_choice
// carries choices. Too few choices is EVT-SCHEMA's (minItems 2).
func (c *checker) evtClarChoices() {
	if c.ev.Core != TypeAwaitingClarification || c.ev.vals[kChoices] != nil {
		return
	}
	kinds, _ := c.clarKinds()
	for _, k := range kinds {
		if k == "multiple_choice" {
			c.report("EVT-CLAR-CHOICES", "multiple_choice without choices",
				"the clarification accepts multiple_choice answers but lists no choices; the user cannot pick an option that is not offered (clarification schema)")
			return
		}
	}
}

// evtClarDefaultResponse implements EVT-CLAR-DEFAULT-RESPONSE (INFO,
// derived from §6.5.2): when multiple_choice is the only accepted kind,
// default_response is one of choices[].value.
func (c *checker) evtClarDefaultResponse() {
	if c.ev.Core != TypeAwaitingClarification {
		return
	}
	def, ok := c.ev.text(kDefaultResponse)
	if !ok {
		return
	}
	kinds, _ := c.clarKinds()
	if len(kinds) == 0 {
		return
	}
	for _, k := range kinds {
		if k != "multiple_choice" {
			return
		}
	}
	r := c.ev.vals[kChoices]
	if len(r) == 0 || r[0] != '[' {
		return
	}
	var values []string
	found := false
	eachElement(r, func(i int, v json.RawMessage) bool {
		eachMember(v, func(k []byte, fv json.RawMessage) bool {
			if string(k) == "value" {
				if s, ok := rawText(fv); ok {
					values = append(values, string(s))
					found = found || string(s) == string(def)
				}
			}
			return true
		})
		return !found
	})
	if !found {
		c.report("EVT-CLAR-DEFAULT-RESPONSE", "default_response not a choice",
			"default_response %s is not one of the offered choice values (%s) of this multiple-choice clarification", clipb(def), quoteList(values))
	}
}

// evtProgressStepLETotal implements EVT-PROGRESS-STEP-LE-TOTAL (SHOULD,
// progress schema description): progress.step <= progress.total_steps when
// both are present.
func (c *checker) evtProgressStepLETotal() {
	if c.ev.Core != TypeProgressUpdated {
		return
	}
	r := c.ev.vals[kProgress]
	if len(r) == 0 || r[0] != '{' {
		return
	}
	var step, total int64
	var hasStep, hasTotal bool
	eachMember(r, func(k []byte, v json.RawMessage) bool {
		switch string(k) {
		case "step":
			step, hasStep = rawInt(v)
		case "total_steps":
			total, hasTotal = rawInt(v)
		}
		return true
	})
	if hasStep && hasTotal && step > total {
		c.report("EVT-PROGRESS-STEP-LE-TOTAL", "step > total_steps",
			"progress reports step %d of %d total steps; the current step should not exceed the total (progress schema)", step, total)
	}
}

// evtToolcErrorMessage implements EVT-TOOLC-ERROR-MESSAGE (SHOULD,
// tool.completed schema description, §4.3.2: "required in practice"): a
// completion with status error or timeout carries error_message.
func (c *checker) evtToolcErrorMessage() {
	if c.ev.Core != TypeToolCompleted || c.ev.vals[kErrorMessage] != nil {
		return
	}
	if s, ok := c.ev.text(kStatus); ok && oneOf(s, "error", "timeout") {
		c.report("EVT-TOOLC-ERROR-MESSAGE", "no error_message",
			"the tool completed with status %q but without error_message; the user should hear what went wrong (§4.3.2)", s)
	}
}

// evtStreamHintComplete implements EVT-STREAM-HINT-COMPLETE (SHOULD,
// streaming schema description, §5.6.3): coalesce_hint "completion" marks
// the final chunk, so it goes with complete:true, and a final chunk has no
// hint or "completion".
func (c *checker) evtStreamHintComplete() {
	if c.ev.Core != TypeOutputStreaming {
		return
	}
	hint, hasHint := c.ev.text(kCoalesceHint)
	complete, hasComplete := rawBool(c.ev.vals[kComplete])
	switch {
	case hasHint && string(hint) == "completion" && hasComplete && !complete:
		c.report("EVT-STREAM-HINT-COMPLETE", "completion hint on non-final chunk",
			"the chunk has coalesce_hint \"completion\" but complete:false; \"completion\" marks the final chunk of an output (§5.6.3)")
	case hasHint && complete && string(hint) != "completion":
		c.report("EVT-STREAM-HINT-COMPLETE", "final chunk hint "+string(hint),
			"the final chunk (complete:true) has coalesce_hint %q; a final chunk should have no hint or \"completion\" (§5.6.3)", hint)
	}
}

// secretTextKeys are the human-readable fields scanned for secrets.
var secretTextKeys = [...]key{kArgsSummary, kSummaryTerse, kSummaryNormal, kSummaryDetailed, kRequestText,
	kAction, kConsequence, kQuestion, kDescription, kReason, kErrorMessage, kRemediationHint,
	kPartialResult, kOutputSummary, kContextText, kDefaultResponse, kChunk}

// evtSecrets implements EVT-SECRETS (MUST, §4.3.1, §10.2 T5, §10.5):
// human-readable fields carry no secrets. A heuristic (see findSecret): the
// conformance suite's keyword list, tightened so that ordinary prose ("reset
// your password", "risk-free") does not match — a keyword counts only when
// a value is assigned to it, and token prefixes only with a token-like
// value after them — plus Luhn-valid card numbers and US social security
// numbers (§10.2 T5).
func (c *checker) evtSecrets() {
	for _, k := range secretTextKeys {
		s, ok := c.ev.text(k)
		if !ok || len(s) < 4 {
			continue
		}
		if what := findSecret(s); what != "" {
			c.report("EVT-SECRETS", "secret in "+keyNames[k],
				"%s appears to contain %s; events are announced and logged, so they must never carry secrets or sensitive personal data (§4.3.1, §10.5)", keyNames[k], what)
			return
		}
	}
}

// assignedSecretWords are keywords that reveal a secret when a value is
// assigned to them ("password: hunter2", "api_key=...").
var assignedSecretWords = [...]string{"password", "passwd", "api_key", "apikey", "api-key", "secret_key",
	"private_key", "aws_secret", "github_token", "x-api-key", "authorization", "client_secret", "access_token"}

// privateKeyMarkers start PEM private key blocks.
var privateKeyMarkers = [...]string{"begin private key", "begin rsa private key", "begin openssh private key",
	"begin ec private key", "begin dsa private key", "begin encrypted private key"}

// secretStart marks the (lower-cased) first letters of the secret
// markers findSecret looks for.
var secretStart = func() (t [256]bool) {
	for _, c := range "pagxcbs" {
		t[c], t[c-'a'+'A'] = true, true
	}
	return t
}()

// findSecret returns what kind of secret text s seems to hold, or "".
// Markers are only looked for at the start of a word.
func findSecret(s []byte) string {
	digits := 0
	prevAlnum := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if prevAlnum || !secretStart[c] {
			if c >= '0' && c <= '9' {
				digits++
			}
			prevAlnum = alnum[c]
			continue
		}
		prevAlnum = true
		switch b := c | 0x20; b {
		case 'p', 'a', 'g', 'x', 'c':
			for _, w := range assignedSecretWords {
				if w[0] == b && hasPrefixFold(s[i:], w) && assignsValue(s[i+len(w):]) {
					return "a value assigned to " + strconv.Quote(w)
				}
			}
			if b == 'g' && (hasPrefixFold(s[i:], "ghp_") && tokenRun(s[i+4:], 20) || hasPrefixFold(s[i:], "github_pat_") && tokenRun(s[i+11:], 20)) {
				return "a GitHub access token"
			}
			if b == 'a' && i+20 <= len(s) && string(s[i:i+4]) == "AKIA" && upperAlnumRun(s[i+4:]) >= 16 {
				return "an AWS access key id"
			}
		case 'b':
			if hasPrefixFold(s[i:], "bearer ") && tokenRun(s[i+7:], 16) {
				return "a bearer token"
			}
			for _, m := range privateKeyMarkers {
				if hasPrefixFold(s[i:], m) {
					return "a private key"
				}
			}
		case 's':
			if hasPrefixFold(s[i:], "ssh-rsa aaaa") || hasPrefixFold(s[i:], "ssh-ed25519 aaaa") {
				return "an SSH key"
			}
			if hasPrefixFold(s[i:], "sk-") && tokenRun(s[i+3:], 20) {
				return "an API secret key (sk-...)"
			}
		}
	}
	if digits >= 9 {
		if cardNumber(s) {
			return "a payment card number"
		}
		if ssn(s) {
			return "a social security number"
		}
	}
	return ""
}

func hasPrefixFold(s []byte, lower string) bool {
	if len(s) < len(lower) {
		return false
	}
	for i := 0; i < len(lower); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// assignsValue reports whether s starts with an assignment (":" or "=",
// spaces and quotes allowed around it, after any further name characters)
// of a value of at least 4 characters that is not a redaction mask.
func assignsValue(s []byte) bool {
	i := 0
	for i < len(s) && (isAlnum(s[i]) || s[i] == '_' || s[i] == '-') {
		i++
	}
	for i < len(s) && (s[i] == ' ' || s[i] == '"' || s[i] == '\'') {
		i++
	}
	if i >= len(s) || (s[i] != ':' && s[i] != '=') {
		return false
	}
	i++
	for i < len(s) && (s[i] == ' ' || s[i] == '"' || s[i] == '\'') {
		i++
	}
	j := i
	masked := true
	for j < len(s) && s[j] > ' ' && s[j] != '"' && s[j] != '\'' && s[j] != ',' && s[j] != ';' {
		if s[j] != '*' && s[j] != 'x' && s[j] != 'X' && s[j] != '.' && s[j] != '<' && s[j] != '>' && s[j] != '[' && s[j] != ']' {
			masked = false
		}
		j++
	}
	if j-i < 4 || masked {
		return false
	}
	v := strings.ToLower(string(s[i:j]))
	return !strings.Contains(v, "redacted") && !strings.Contains(v, "hidden")
}

// tokenRun reports whether s starts with at least n token characters.
func tokenRun(s []byte, n int) bool {
	i := 0
	for i < len(s) && (isAlnum(s[i]) || strings.IndexByte("-._~+/=", s[i]) >= 0) {
		i++
	}
	return i >= n
}

func upperAlnumRun(s []byte) int {
	i := 0
	for i < len(s) && ((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9')) {
		i++
	}
	return i
}

// cardNumber finds a run of 13 to 19 digits, optionally grouped by single
// spaces or dashes, that starts with 3, 4, 5 or 6 (the major card networks)
// and passes the Luhn check.
func cardNumber(s []byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '3' || s[i] > '6' || (i > 0 && (isAlnum(s[i-1]) || s[i-1] == '.')) {
			continue
		}
		var d [20]byte
		n, j := 0, i
	run:
		for j < len(s) {
			c := s[j]
			switch {
			case c >= '0' && c <= '9':
				if n == len(d) {
					break run
				}
				d[n] = c - '0'
				n++
				j++
			case (c == ' ' || c == '-') && j+1 < len(s) && s[j+1] >= '0' && s[j+1] <= '9':
				j++
			default:
				break run
			}
		}
		if n >= 13 && n <= 19 && (j == len(s) || !isAlnum(s[j])) && luhn(d[:n]) {
			return true
		}
		i = j
	}
	return false
}

func luhn(d []byte) bool {
	sum := 0
	for i := len(d) - 1; i >= 0; i-- {
		v := int(d[i])
		if (len(d)-1-i)%2 == 1 {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
	}
	return sum%10 == 0
}

// ssn finds a US social security number: ddd-dd-dddd, not inside a longer
// number, with the area, group and serial the SSA never issues excluded
// (000, 666, 9xx; 00; 0000).
func ssn(s []byte) bool {
	dig := func(c byte) bool { return c >= '0' && c <= '9' }
	for i := 0; i+11 <= len(s); i++ {
		w := s[i : i+11]
		if !(dig(w[0]) && dig(w[1]) && dig(w[2]) && w[3] == '-' && dig(w[4]) && dig(w[5]) && w[6] == '-' &&
			dig(w[7]) && dig(w[8]) && dig(w[9]) && dig(w[10])) {
			continue
		}
		if i > 0 && (dig(s[i-1]) || s[i-1] == '-') || i+11 < len(s) && (dig(s[i+11]) || s[i+11] == '-') {
			continue
		}
		area := string(w[0:3])
		if area == "000" || area == "666" || w[0] == '9' || string(w[4:6]) == "00" || string(w[7:11]) == "0000" {
			continue
		}
		return true
	}
	return false
}
