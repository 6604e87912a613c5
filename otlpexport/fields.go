package otlpexport

import (
	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/aaep"
)

// fields reads the top-level members of the message being placed. The
// reading goroutine has most often decoded it for the AAEP checker
// already (aaep.Prepared), whose table gives each member in one step and
// from memory the checker has just read; else doc, the payload's
// decoding, is searched. Both give the last of repeated members.
type fields struct {
	ev  *aaep.Event
	doc *payload.Doc
}

// fieldsOf reads m's members through doc: the prepared Event only when
// doc is m's own decoding, which the Event was made from.
func fieldsOf(m *protocol.Message, doc *payload.Doc) fields {
	if doc != m.Doc {
		return fields{doc: doc}
	}
	return fields{ev: aaep.Prepared(m), doc: doc}
}

// get returns the raw value of member f, nil when absent.
func (fl *fields) get(f aaep.Field) payload.Value {
	if fl.ev != nil {
		return fl.ev.Field(f)
	}
	return fl.doc.Get(f.Name())
}

// fieldString returns the string member f, "" when absent.
func fieldString(fl *fields, f aaep.Field) string {
	s, _ := fl.get(f).Str()
	return s
}

// The members the mapping reads.
var (
	fAction             = aaep.FieldOf("action")
	fArgsSummary        = aaep.FieldOf("args_summary")
	fChunk              = aaep.FieldOf("chunk")
	fComplete           = aaep.FieldOf("complete")
	fConsequence        = aaep.FieldOf("consequence")
	fContentType        = aaep.FieldOf("content_type")
	fDecision           = aaep.FieldOf("decision")
	fDefaultDecision    = aaep.FieldOf("default_decision")
	fDurationMS         = aaep.FieldOf("duration_ms")
	fErrorCategory      = aaep.FieldOf("error_category")
	fErrorCode          = aaep.FieldOf("error_code")
	fErrorMessage       = aaep.FieldOf("error_message")
	fExpectedDurationMS = aaep.FieldOf("expected_duration_ms")
	fFromState          = aaep.FieldOf("from_state")
	fIrreversible       = aaep.FieldOf("irreversible")
	fOutputID           = aaep.FieldOf("output_id")
	fProducer           = aaep.FieldOf("producer")
	fProgress           = aaep.FieldOf("progress")
	fQuestion           = aaep.FieldOf("question")
	fRecoverable        = aaep.FieldOf("recoverable")
	fReplyToken         = aaep.FieldOf("reply_token")
	fResponse           = aaep.FieldOf("response")
	fReversibility      = aaep.FieldOf("reversibility")
	fRiskLevel          = aaep.FieldOf("risk_level")
	fStatus             = aaep.FieldOf("status")
	fSummaryNormal      = aaep.FieldOf("summary_normal")
	fTargetKind         = aaep.FieldOf("target_kind")
	fTimeoutSeconds     = aaep.FieldOf("timeout_seconds")
	fToState            = aaep.FieldOf("to_state")
	fTool               = aaep.FieldOf("tool")
	fToolCallID         = aaep.FieldOf("tool_call_id")
	fToolsAvailable     = aaep.FieldOf("tools_available")
)
