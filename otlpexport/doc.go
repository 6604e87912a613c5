// Package otlpexport turns a recording into OpenTelemetry traces: each
// session of the recording becomes one trace, in the OTLP protobuf types
// (go.opentelemetry.io/proto/otlp), following the GenAI semantic
// conventions where they apply. The recording is read once through the
// analysis driver (package protocol/check), so every finding of the check
// lands on the span it concerns as an "aaep.finding" event.
//
// The mapping:
//
//   - one trace per session (per subscription's copy of it in a recording of
//     a replay), with trace and span ids derived from the recording's header
//     and the session's key, so that two exports of one recording agree;
//   - a root span "invoke_agent {agent}" from the session's first message
//     to its terminal event, its status from how it ended;
//   - a child span "execute_tool {tool}" from tool.invoked to tool.completed;
//   - a child span "await_confirmation" or "await_clarification" covering
//     each wait for the user, with the decision or the default applied;
//   - state changes, progress and streaming output (one event per output,
//     its chunks and bytes counted) as events of the root span;
//   - every finding as an "aaep.finding" event (rule, level, party,
//     message) on the span of the message it concerns, a producer's MUST
//     setting that span's status (and the root's) to Error.
//
// Text the user or the agent wrote (summaries, questions, answers, output
// chunks, tool arguments) is left out unless Options.IncludeText; reply
// tokens never leave the recording, and are masked in findings' messages.
//
// Export reads recordings and hands batches of traces to a function: Client
// posts them to an OTLP/HTTP receiver, JSONWriter writes them as the OTLP
// JSON encoding, one request per line, as the OpenTelemetry Collector's
// file exporter writes it.
package otlpexport
