// Payload field specifications per event type (catalog §2.1–§2.12, core
// schemas) and the checks that validate payload fields against them.

package aaep

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aaep-tools/aaepkit/payload"
)

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

func str(k key, min, max int64) fieldSpec { return fieldSpec{k: k, kind: fString, min: min, max: max} }

func reqd(f fieldSpec) fieldSpec { f.req = true; return f }

func enum(k key, v ...string) fieldSpec { return fieldSpec{k: k, kind: fEnum, enum: v} }

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

// evtSchema is the check of evtSchema (rules_single.go), whose Doc says
// what it requires and why.
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
			c.report("bad "+keyNames[f.k], "%s (%s schema)", p, c.ev.Core)
		}
	}
	if len(missing) > 0 {
		c.report("missing "+strings.Join(missing, ", "),
			"%s requires the payload field(s) %s, which the event lacks (Ch. 4)", c.ev.Core, strings.Join(missing, ", "))
	}
}

// fieldProblem returns a sentence saying how raw value r of the field
// called name breaks spec f, or "".
func (c *checker) fieldProblem(name string, f *fieldSpec, r payload.Value) string {
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
		s, ok := r.Text()
		if !ok || !oneOf(s, f.enum...) {
			return name + " is " + describe(r) + "; it must be one of " + quoteList(f.enum)
		}
	case fInt:
		n, ok := r.Int()
		if !ok {
			return name + " is " + describe(r) + "; it must be an integer"
		}
		if n < f.min || (f.max != noMax && n > f.max) {
			return name + " is " + strconv.FormatInt(n, 10) + "; it must be " + rangeText(f.min, f.max)
		}
	case fBool:
		if _, ok := r.Bool(); !ok {
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
		v, ok := r.Number()
		if !ok || v < float64(f.min) || v > float64(f.max) {
			return name + " is " + describe(r) + "; it must be a number " + rangeText(f.min, f.max)
		}
	case fDateTime:
		s, ok := r.Text()
		if !ok || !isDateTime(s) {
			return name + " is " + describe(r) + "; it must be an RFC 3339 date-time such as \"2026-05-24T14:22:11.342Z\""
		}
	case fResponse:
		switch r[0] {
		case '"':
			s, _ := r.Text()
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
		r.Members(func(k []byte, v payload.Value) bool {
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
func (c *checker) strOf(k key, r payload.Value) ([]byte, bool) {
	if v := c.ev.vals[k]; k != kUnknown && len(r) > 0 && len(v) == len(r) && &v[0] == &r[0] {
		return c.ev.text(k)
	}
	return r.Text()
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
func (c *checker) stringsProblem(name string, f *fieldSpec, r payload.Value) string {
	if r[0] != '[' {
		return name + " is " + jsonKind(r) + "; it must be an array of strings"
	}
	problem, n := "", 0
	var seen uniqueSet
	r.Elements(func(i int, v payload.Value) bool {
		n++
		s, ok := v.Text()
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
func (c *checker) progressProblem(r payload.Value) string {
	if r[0] != '{' {
		return "progress is " + jsonKind(r) + "; it must be an object"
	}
	problem, n := "", 0
	r.Members(func(k []byte, v payload.Value) bool {
		n++
		name := "progress." + string(k)
		switch string(k) {
		case "percent":
			if f, ok := v.Number(); !ok || f < 0 || f > 100 {
				problem = name + " is " + describe(v) + "; it must be a number from 0 to 100"
			}
		case "step", "total_steps":
			if i, ok := v.Int(); !ok || i < 1 {
				problem = name + " is " + describe(v) + "; it must be an integer of at least 1"
			}
		case "description":
			if s, ok := v.Text(); !ok {
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
func (c *checker) choicesProblem(r payload.Value) string {
	if r[0] != '[' {
		return "choices is " + jsonKind(r) + "; it must be an array of {value, label} objects"
	}
	problem, n := "", 0
	var seen uniqueSet
	r.Elements(func(i int, v payload.Value) bool {
		n++
		item := "choices item " + strconv.Itoa(i)
		if v[0] != '{' {
			problem = item + " is " + jsonKind(v) + "; it must be a {value, label} object"
			return false
		}
		var value, label []byte
		var hasValue, hasLabel bool
		v.Members(func(k []byte, fv payload.Value) bool {
			switch string(k) {
			case "value":
				value, hasValue = fv.Text()
				if !hasValue {
					problem = item + " value is " + jsonKind(fv) + "; it must be a string"
				} else {
					problem = c.lengthProblem(item+" value", value, 1, 256, false)
				}
			case "label":
				label, hasLabel = fv.Text()
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
