// Small helpers of the sequence checker: event field access, state and
// type names, step kinds, list membership.

package aaep

import (
	"fmt"
	"strings"

	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol"
)

func prevName(ss *session) string {
	switch {
	case ss.prevAccept:
		return "an accepting confirmation.reply"
	case ss.prevCore == "":
		return "nothing"
	case ss.prevCore == TypeStateChanged:
		return fmt.Sprintf("a state change to %q", ss.prevTo)
	}
	return strings.TrimPrefix(ss.prevCore, "aaep:agent.")
}

// field returns known top-level string field k as a string to keep,
// interning the standard state names so that following the state chain does
// not allocate.
func field(ev *Event, k key) (string, bool) {
	b, ok := ev.text(k)
	if !ok {
		return "", false
	}
	switch string(b) {
	case stateIdle:
		return stateIdle, true
	case stateThinking:
		return stateThinking, true
	case stateCallingTool:
		return stateCallingTool, true
	case stateWritingOutput:
		return stateWritingOutput, true
	case stateAwaitingInput:
		return stateAwaitingInput, true
	case stateDeciding:
		return stateDeciding, true
	case stateHandingOff:
		return stateHandingOff, true
	case "":
		return "", true
	}
	return string(b), true
}

// shortType is the type without the "aaep:agent." prefix.
func shortType(ev *Event) string {
	if ev.Core != "" {
		return strings.TrimPrefix(ev.Core, "aaep:agent.")
	}
	if ev.Type == "" {
		return "(untyped event)"
	}
	return ev.Type
}

func stepKind(core string) protocol.StepKind {
	switch core {
	case TypeSessionStarted, TypeSessionCompleted, TypeSessionErrored, TypeSessionCancelled:
		return protocol.StepLifecycle
	case TypeStateChanged:
		return protocol.StepState
	case TypeProgressUpdated:
		return protocol.StepProgress
	case TypeToolInvoked, TypeToolCompleted:
		return protocol.StepTool
	case TypeOutputStreaming:
		return protocol.StepOutput
	case TypeAwaitingConfirmation:
		return protocol.StepConfirmation
	case TypeAwaitingClarification:
		return protocol.StepClarification
	case TypeHandoffRequested:
		return protocol.StepHandoff
	}
	return protocol.StepOther
}

// stringList returns the string elements of JSON array raw (others are
// skipped: the schema rules report them); nil when raw is not an array.
func stringList(raw payload.Value) []string {
	list := []string{}
	if !raw.Elements(func(_ int, v payload.Value) bool {
		if s, ok := v.Str(); ok {
			list = append(list, s)
		}
		return true
	}) {
		return nil
	}
	return list
}

func containsInt(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func containsString(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
