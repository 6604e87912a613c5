// Package transporttest provides AAEP producers for tests and benchmarks: an
// SSE server, a WebSocket server, a Unix socket server and a stdio JSON-RPC
// child process, all on the local machine, each with hooks for the faults a
// recorder must survive (a connection dropped mid-message, invalid JSON or
// UTF-8, oversized messages, close codes, reconnection).
//
// The producers send Frames; Events builds realistic AAEP events of exactly
// EventSize bytes.
package transporttest

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/payload"
)

// EventSize is the size in bytes of every event Event returns.
const EventSize = 430

var eventTypes = []string{
	"aaep:agent.state.changed",
	"aaep:agent.tool.invoked",
	"aaep:agent.tool.completed",
	"aaep:agent.output.streaming",
}

var eventEpoch = time.Date(2026, 5, 24, 14, 22, 11, 0, time.UTC)

// Event returns event number i of a synthetic session "sess_test01": an
// agent.session.started for i == 0, then state changes, tool calls and
// streamed output in turn. Every event is exactly EventSize bytes of compact
// JSON with a unique event_id "evt_<16 digits>" and increasing timestamps.
// The events have a realistic shape; they are not a protocol-valid session.
func Event(i int) []byte {
	typ := "aaep:agent.session.started"
	if i > 0 {
		typ = eventTypes[(i-1)%len(eventTypes)]
	}
	urgency := "normal"
	if i%97 == 13 {
		urgency = "critical"
	}
	ts := eventEpoch.Add(time.Duration(i) * 7 * time.Millisecond).Format("2006-01-02T15:04:05.000Z")
	head := fmt.Sprintf(`{"@context":"https://aaep-protocol.org/context/v1","type":%q,"event_id":"evt_%016d","session_id":"sess_test01","timestamp":%q,"producer":{"agent_id":"retirement-planner","agent_version":"1.4.2"},"urgency":%q,"sequence_number":%d,"summary_normal":"Step %d of the retirement plan.","summary_detailed":"`,
		typ, i, ts, urgency, i, i)
	tail := `"}`
	pad := EventSize - len(head) - len(tail)
	if pad < 0 {
		panic("sourcetest: event head too long")
	}
	filler := strings.Repeat("Checking balances and projected income. ", pad/40+1)[:pad]
	return []byte(head + filler + tail)
}

// Events returns events 0..n-1.
func Events(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = Event(i)
	}
	return out
}

// Frame is one message a producer sends.
type Frame struct {
	// Data is the message. For SSE, each line of Data becomes a data: line.
	Data []byte
	// ID is the SSE id field; empty means the event_id found in Data (none
	// for data without one). NoID suppresses it.
	ID   string
	NoID bool
	// Event is the SSE event field; empty means "aaep.event".
	Event string
	// Binary sends a WebSocket binary frame instead of a text frame.
	Binary bool
}

// Frames wraps messages as frames with default attributes.
func Frames(msgs [][]byte) []Frame {
	out := make([]Frame, len(msgs))
	for i, m := range msgs {
		out[i] = Frame{Data: m}
	}
	return out
}

func (f *Frame) sseID() string {
	if f.NoID {
		return ""
	}
	if f.ID != "" {
		return f.ID
	}
	return payload.Decode(f.Data).Routing.EventID
}

// appendSSE appends the frame as one SSE event.
func (f *Frame) appendSSE(dst []byte) []byte {
	ev := f.Event
	if ev == "" {
		ev = "aaep.event"
	}
	dst = append(dst, "event: "...)
	dst = append(dst, ev...)
	dst = append(dst, '\n')
	if id := f.sseID(); id != "" {
		dst = append(dst, "id: "...)
		dst = append(dst, id...)
		dst = append(dst, '\n')
	}
	for _, line := range bytes.Split(f.Data, []byte("\n")) {
		dst = append(dst, "data: "...)
		dst = append(dst, line...)
		dst = append(dst, '\n')
	}
	return append(dst, '\n')
}
