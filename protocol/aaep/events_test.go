package aaep_test

import (
	"strings"

	"github.com/aaep-tools/aaepkit/protocol/aaep"
)

const (
	errored      = aaep.TypeSessionErrored
	cancelled    = aaep.TypeSessionCancelled
	stateChanged = aaep.TypeStateChanged
	progress     = aaep.TypeProgressUpdated
	invoked      = aaep.TypeToolInvoked
	toolDone     = aaep.TypeToolCompleted
	confirm      = aaep.TypeAwaitingConfirmation
	clarify      = aaep.TypeAwaitingClarification
	handoff      = aaep.TypeHandoffRequested
)

// evtCases are the cases of the payload rules (catalog §2.13).
func evtCases() []ruleCase {
	return []ruleCase{
		// EVT-SCHEMA
		pass("EVT-SCHEMA", "every optional field of tool.invoked", event(invoked, set("description", "Retrieve the balance"),
			set("expected_duration_ms", 2000), set("summary_terse", "Checking."), set("summary_detailed", "Retrieving the balance of checking-7821."))),
		pass("EVT-SCHEMA", "lenient: summary_terse over 4096 characters", event(started, set("summary_terse", strings.Repeat("a", 4097)))),
		pass("EVT-SCHEMA", "progress with description only", event(progress, set("progress", map[string]any{"description": "Reading reviews"}))),
		pass("EVT-SCHEMA", "completion-only empty chunk", event(streaming, set("chunk", ""), set("complete", true), set("coalesce_hint", "completion"))),
		fail("EVT-SCHEMA", "errored without error_category", event(errored, del("error_category"))),
		fail("EVT-SCHEMA", "error_category not in enum", event(errored, set("error_category", "fatal"))),
		fail("EVT-SCHEMA", "error_code one character", event(errored, set("error_code", "A"))),
		fail("EVT-SCHEMA", "error_uri not a URI", event(errored, set("error_uri", "see docs"))),
		fail("EVT-SCHEMA", "cancelled_by unknown", event(cancelled, set("cancelled_by", "admin"))),
		fail("EVT-SCHEMA", "cancellation_reason upper case", event(cancelled, set("cancellation_reason", "UserEscape"))),
		fail("EVT-SCHEMA", "empty from_state", event(stateChanged, set("from_state", ""))),
		fail("EVT-SCHEMA", "tool name starting with a digit", event(invoked, set("tool", "1fetch"))),
		fail("EVT-SCHEMA", "tool_call_id pattern", event(invoked, set("tool_call_id", "call-7a2b"))),
		fail("EVT-SCHEMA", "risk_level unknown", event(invoked, set("risk_level", "extreme"))),
		fail("EVT-SCHEMA", "irreversible a string", event(invoked, set("irreversible", "no"))),
		fail("EVT-SCHEMA", "expected_duration_ms over a day", event(invoked, set("expected_duration_ms", 86400001))),
		fail("EVT-SCHEMA", "status unknown", event(toolDone, set("status", "done"))),
		fail("EVT-SCHEMA", "position negative", event(streaming, set("position", -1))),
		fail("EVT-SCHEMA", "position a string", event(streaming, set("position", "348"))),
		fail("EVT-SCHEMA", "complete missing", event(streaming, del("complete"))),
		fail("EVT-SCHEMA", "content_type without subtype", event(streaming, set("content_type", "text"))),
		fail("EVT-SCHEMA", "language with underscore", event(streaming, set("language", "en_US"))),
		fail("EVT-SCHEMA", "output_id pattern", event(streaming, set("output_id", "output_1"))),
		fail("EVT-SCHEMA", "progress empty", event(progress, set("progress", map[string]any{}))),
		fail("EVT-SCHEMA", "progress percent over 100", event(progress, set("progress.percent", 101))),
		fail("EVT-SCHEMA", "progress step zero", event(progress, set("progress.step", 0))),
		fail("EVT-SCHEMA", "progress unknown key", event(progress, set("progress.eta", 5))),
		fail("EVT-SCHEMA", "timeout_seconds zero", event(confirm, set("timeout_seconds", 0))),
		fail("EVT-SCHEMA", "timeout_seconds over a day", event(clarify, set("timeout_seconds", 86401))),
		fail("EVT-SCHEMA", "reply_token pattern", event(confirm, set("reply_token", "rpl-xyz"))),
		fail("EVT-SCHEMA", "allowed_replies empty", event(confirm, set("allowed_replies", []string{}))),
		fail("EVT-SCHEMA", "one choice", event(clarify, set("choices", []map[string]string{{"value": "65", "label": "Age 65"}}))),
		fail("EVT-SCHEMA", "choice with extra key", event(clarify, set("choices", []map[string]string{{"value": "60", "label": "Age 60"}, {"value": "65", "label": "Age 65", "hint": "x"}}))),
		fail("EVT-SCHEMA", "duplicate choices", event(clarify, set("choices", []map[string]string{{"value": "65", "label": "Age 65"}, {"value": "65", "label": "Age 65"}}))),
		fail("EVT-SCHEMA", "unknown response kind", event(clarify, set("accepted_response_kinds", []string{"maybe"}))),
		fail("EVT-SCHEMA", "target_kind unknown", event(handoff, set("target_kind", "robot"))),
		fail("EVT-SCHEMA", "duplicate tools_available", event(started, set("tools_available", []string{"a", "a"}))),
		fail("EVT-SCHEMA", "result_uri not a URI", event(completed, set("result_uri", "the result page"))),
		fail("EVT-SCHEMA", "handoff missing reason and target_kind", event(handoff, del("reason"), del("target_kind"))),
		strict(fail("EVT-SCHEMA", "strict: summary_terse over 4096 characters", event(started, set("summary_terse", strings.Repeat("é", 4097))))),

		// EVT-TYPE-CONST
		pass("EVT-TYPE-CONST", "full URI form (prose over schema)", event(started, set("type", "https://aaep-protocol.org/types/agent.session.started"))),
		fail("EVT-TYPE-CONST", "upper-case prefix", event(started, set("type", "AAEP:agent.session.started"))),
		fail("EVT-TYPE-CONST", "JSON-LD vocab expansion", event(started, set("type", "https://aaep-protocol.org/vocab/v1#agent.session.started"))),
		fail("EVT-TYPE-CONST", "http scheme", event(started, set("type", "http://aaep-protocol.org/types/agent.session.started"))),

		// EVT-URGENCY-CRITICAL
		pass("EVT-URGENCY-CRITICAL", "handoff critical", event(handoff)),
		fail("EVT-URGENCY-CRITICAL", "confirmation without urgency", event(confirm, del("urgency"))),
		fail("EVT-URGENCY-CRITICAL", "errored normal", event(errored, set("urgency", "normal"))),
		fail("EVT-URGENCY-CRITICAL", "clarification background", event(clarify, set("urgency", "background"))),

		// EVT-URGENCY-RECOMMENDED
		pass("EVT-URGENCY-RECOMMENDED", "state.changed normal", event(stateChanged, set("urgency", "normal"))),
		pass("EVT-URGENCY-RECOMMENDED", "started without urgency", event(started, del("urgency"))),
		fail("EVT-URGENCY-RECOMMENDED", "progress normal", event(progress, set("urgency", "normal"))),
		fail("EVT-URGENCY-RECOMMENDED", "progress without urgency", event(progress, del("urgency"))),
		fail("EVT-URGENCY-RECOMMENDED", "started critical", event(started, set("urgency", "critical"))),

		// EVT-SUMMARY-NORMAL
		pass("EVT-SUMMARY-NORMAL", "lenient: tool.completed without", event(toolDone, del("summary_normal"))),
		pass("EVT-SUMMARY-NORMAL", "streaming never needs it", event(streaming)),
		strict(pass("EVT-SUMMARY-NORMAL", "strict: background state change without", event(stateChanged, del("summary_normal")))),
		fail("EVT-SUMMARY-NORMAL", "started without", event(started, del("summary_normal"))),
		fail("EVT-SUMMARY-NORMAL", "tool.invoked without", event(invoked, del("summary_normal"))),
		strict(fail("EVT-SUMMARY-NORMAL", "strict: tool.completed without", event(toolDone, del("summary_normal")))),
		strict(fail("EVT-SUMMARY-NORMAL", "strict: confirmation without", event(confirm, del("summary_normal")))),

		// EVT-CONF-DEFAULT-DECISION
		pass("EVT-CONF-DEFAULT-DECISION", "irreversible high risk rejects", event(confirm)),
		pass("EVT-CONF-DEFAULT-DECISION", "reversible medium risk accepts", event(confirm, set("irreversible", false), set("risk_level", "medium"), set("default_decision", "accept"))),
		fail("EVT-CONF-DEFAULT-DECISION", "irreversible high risk accepts", event(confirm, set("default_decision", "accept"))),
		fail("EVT-CONF-DEFAULT-DECISION", "irreversible medium risk accepts (§6.4.1)", event(confirm, set("risk_level", "medium"), set("default_decision", "accept"))),
		// §4.4.1 names the property reversibility; §6.4.1's MUST is about
		// the action, whichever field says it is irreversible.
		fail("EVT-CONF-DEFAULT-DECISION", "reversibility irreversible, high risk, accepts (§4.4.1, §6.4.1)", event(confirm, del("irreversible"), set("reversibility", "irreversible"), set("default_decision", "accept")), "EVT-CONF-REVERSIBILITY-ONLY"),
		strict(fail("EVT-CONF-DEFAULT-DECISION", "strict: reversibility irreversible, high risk, accepts (§4.4.1, §6.4.1)", event(confirm, del("irreversible"), set("reversibility", "irreversible"), set("default_decision", "accept")), "EVT-CONF-REVERSIBILITY-ONLY")),
		pass("EVT-CONF-DEFAULT-DECISION", "reversibility reversible_with_effort, medium risk, accepts", event(confirm, del("irreversible"), set("risk_level", "medium"), set("reversibility", "reversible_with_effort"), set("default_decision", "accept"))),

		// EVT-CONF-DEFAULT-SHOULD
		pass("EVT-CONF-DEFAULT-SHOULD", "reversible low risk accepts", event(confirm, set("irreversible", false), set("risk_level", "low"), set("default_decision", "accept"))),
		pass("EVT-CONF-DEFAULT-SHOULD", "irreversible low risk rejects", event(confirm, set("risk_level", "low"))),
		fail("EVT-CONF-DEFAULT-SHOULD", "irreversible low risk accepts", event(confirm, set("risk_level", "low"), set("default_decision", "accept"))),
		fail("EVT-CONF-DEFAULT-SHOULD", "irreversible without risk accepts", event(confirm, del("risk_level"), set("default_decision", "accept"))),
		fail("EVT-CONF-DEFAULT-SHOULD", "reversible high risk accepts", event(confirm, set("irreversible", false), set("default_decision", "accept"))),

		// EVT-CONF-REVERSIBILITY-ONLY
		pass("EVT-CONF-REVERSIBILITY-ONLY", "both fields say irreversible", event(confirm, set("reversibility", "irreversible"))),
		pass("EVT-CONF-REVERSIBILITY-ONLY", "low risk", event(confirm, del("irreversible"), set("risk_level", "low"), set("reversibility", "irreversible"))),
		fail("EVT-CONF-REVERSIBILITY-ONLY", "only reversibility, rejects", event(confirm, del("irreversible"), set("reversibility", "irreversible"))),
		fail("EVT-CONF-REVERSIBILITY-ONLY", "only reversibility, accepts", event(confirm, set("irreversible", false), set("risk_level", "medium"),
			set("reversibility", "irreversible"), set("default_decision", "accept")), "EVT-CONF-DEFAULT-DECISION"),

		// EVT-CONF-ALLOWED-REPLIES
		pass("EVT-CONF-ALLOWED-REPLIES", "accept and reject", event(confirm, set("allowed_replies", []string{"accept", "reject"}))),
		fail("EVT-CONF-ALLOWED-REPLIES", "custom reply", event(confirm, set("allowed_replies", []string{"accept", "reject", "modify"}))),
		fail("EVT-CONF-ALLOWED-REPLIES", "default not allowed", event(confirm, set("allowed_replies", []string{"accept"}))),

		// EVT-CLAR-CHOICES
		pass("EVT-CLAR-CHOICES", "freetext without choices", event(clarify, set("accepted_response_kinds", []string{"freetext"}), del("choices"))),
		fail("EVT-CLAR-CHOICES", "multiple_choice without choices", event(clarify, del("choices"))),

		// EVT-CLAR-DEFAULT-RESPONSE
		pass("EVT-CLAR-DEFAULT-RESPONSE", "default is a choice", event(clarify, set("accepted_response_kinds", []string{"multiple_choice"}))),
		pass("EVT-CLAR-DEFAULT-RESPONSE", "numeric also accepted", event(clarify, set("default_response", "66"))),
		fail("EVT-CLAR-DEFAULT-RESPONSE", "default not a choice", event(clarify, set("accepted_response_kinds", []string{"multiple_choice"}), set("default_response", "66"))),

		// EVT-PROGRESS-STEP-LE-TOTAL
		pass("EVT-PROGRESS-STEP-LE-TOTAL", "last step", event(progress, set("progress.step", 5))),
		fail("EVT-PROGRESS-STEP-LE-TOTAL", "step beyond total", event(progress, set("progress.step", 6))),

		// EVT-TOOLC-ERROR-MESSAGE
		pass("EVT-TOOLC-ERROR-MESSAGE", "timeout with message", event(toolDone, set("status", "timeout"), set("error_message", "No answer in 30 seconds."))),
		fail("EVT-TOOLC-ERROR-MESSAGE", "error without message", event(toolDone, set("status", "error"))),
		fail("EVT-TOOLC-ERROR-MESSAGE", "timeout without message", event(toolDone, set("status", "timeout"))),

		// EVT-STREAM-HINT-COMPLETE
		pass("EVT-STREAM-HINT-COMPLETE", "final chunk with completion", event(streaming, set("complete", true), set("coalesce_hint", "completion"))),
		pass("EVT-STREAM-HINT-COMPLETE", "final chunk without hint", event(streaming, set("complete", true), del("coalesce_hint"))),
		fail("EVT-STREAM-HINT-COMPLETE", "completion hint on a middle chunk", event(streaming, set("coalesce_hint", "completion"))),
		fail("EVT-STREAM-HINT-COMPLETE", "final chunk with sentence hint", event(streaming, set("complete", true))),

		// EVT-SECRETS
		pass("EVT-SECRETS", "ordinary prose about passwords and risk", event(invoked, set("args_summary", "reset the password for user folake; risk-free; sk-1 pass"),
			set("summary_normal", "Bearer of good news: your order 1234 5678 9012 3456 7 ships today. Call 555-123-4567."))),
		pass("EVT-SECRETS", "masked value", event(invoked, set("args_summary", "password: ********, api_key=<redacted>"))),
		fail("EVT-SECRETS", "password assigned", event(invoked, set("args_summary", "user=folake password: hunter22"))),
		fail("EVT-SECRETS", "api key in JSON form", event(invoked, set("args_summary", `{"api_key": "AbCdEf0123456789"}`))),
		fail("EVT-SECRETS", "bearer token", event(invoked, set("summary_detailed", "Calling with Authorization Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0"))),
		fail("EVT-SECRETS", "sk- key", event(started, set("request_text", "use sk-proj-AbCdEfGhIjKlMnOpQrStUv to call it"))),
		fail("EVT-SECRETS", "GitHub token", event(toolDone, set("summary_normal", "Pushed with ghp_0123456789abcdefghijABCDEFGHIJ"))),
		fail("EVT-SECRETS", "private key", event(toolDone, set("summary_detailed", "-----BEGIN RSA PRIVATE KEY----- MIIEow"))),
		fail("EVT-SECRETS", "card number", event(confirm, set("action", "Charge card 4111 1111 1111 1111 for 286 euros"))),
		fail("EVT-SECRETS", "social security number", event(clarify, set("question", "Is your SSN 123-45-6789?"))),
		pass("EVT-SECRETS", "URL with a bare user and URLs with masked passwords", event(invoked, set("args_summary", "connect to postgres://folake@db.internal/orders, then https://ops:****@example.com/ and mysql://app:<redacted>@db/x"))),
		fail("EVT-SECRETS", "password in a URL's userinfo", event(invoked, set("args_summary", "connect to postgres://folake:hunter22@db.internal/orders"))),
		fail("EVT-SECRETS", "password in a URL in the output", event(toolDone, set("summary_normal", "Fetched https://deploy:s3cr3tPass@git.example.com/repo.git"))),
		fail("EVT-SECRETS", "AWS access key", event(invoked, set("args_summary", "key AKIAIOSFODNN7EXAMPLE region eu-west-1"))),
	}
}
