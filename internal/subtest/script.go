package subtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// script builds a built-in scenario's capture: AAEP events with complete
// envelopes (event ids, per-session sequence numbers, timestamps a fixed
// step apart), as JSON Lines.
type script struct {
	buf   bytes.Buffer
	t     time.Time
	step  time.Duration
	seq   map[string]int
	count int
	// lastEventID is the event_id of the last event appended.
	lastEventID string
}

// scriptStart is the timestamp of every built-in capture's first event.
var scriptStart = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

// producer is the producer every built-in capture names.
var producer = map[string]any{"agent_id": "aaep-test-producer", "agent_version": "1.0.0"}

func newScript() *script {
	return &script{t: scriptStart, step: 250 * time.Millisecond, seq: map[string]int{}}
}

// F is an event's own members.
type F map[string]any

// ev appends an event of type typ (without the aaep:agent. prefix) to the
// session sess, with its urgency and own members.
func (s *script) ev(sess, typ, urgency string, own F) *script {
	return s.typed(sess, "aaep:agent."+typ, urgency, own)
}

// typed appends an event whose type is given whole (an extension's).
func (s *script) typed(sess, typ, urgency string, own F) *script {
	m := map[string]any{
		"@context":        "https://aaep-protocol.org/context/v1",
		"type":            typ,
		"event_id":        fmt.Sprintf("evt_%s%04d", sess[len("sess_"):], s.count),
		"session_id":      sess,
		"timestamp":       s.t.Format("2006-01-02T15:04:05.000Z"),
		"producer":        producer,
		"aaep_version":    "1.0.0",
		"urgency":         urgency,
		"sequence_number": s.seq[sess],
	}
	for k, v := range own {
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err) // the built-ins' members are plain values
	}
	s.buf.Write(b)
	s.buf.WriteByte('\n')
	s.lastEventID = m["event_id"].(string)
	s.seq[sess]++
	s.count++
	s.t = s.t.Add(s.step)
	return s
}

// raw appends a line as it is (a malformed event).
func (s *script) raw(line string) *script {
	s.buf.WriteString(line + "\n")
	s.count++
	s.t = s.t.Add(s.step)
	return s
}

// wait moves the clock on by d before the next event.
func (s *script) wait(d time.Duration) *script {
	s.t = s.t.Add(d)
	return s
}

func (s *script) started(sess, summary string) *script {
	return s.ev(sess, "session.started", "normal", F{"summary_normal": summary, "requested_by": "user:test"})
}

func (s *script) state(sess, from, to string) *script {
	return s.ev(sess, "state.changed", "background", F{"from_state": from, "to_state": to, "summary_normal": "Now " + to + "."})
}

func (s *script) completed(sess, summary string) *script {
	return s.ev(sess, "session.completed", "normal", F{"summary_normal": summary})
}

// confirm appends an awaiting.confirmation preceded by its state change.
func (s *script) confirm(sess, token, action, deflt string, timeout int, own F) *script {
	s.state(sess, "thinking", "awaiting_input")
	m := F{"action": action, "consequence": "This cannot be undone.", "reply_token": token,
		"timeout_seconds": timeout, "default_decision": deflt, "risk_level": "high", "irreversible": true,
		"summary_normal": "Approve: " + action + "?"}
	for k, v := range own {
		m[k] = v
	}
	return s.ev(sess, "awaiting.confirmation", "critical", m)
}

// swapLast swaps the last two lines: the later event is delivered
// first (its sequence_number says which came first).
func (s *script) swapLast() *script {
	lines := bytes.SplitAfter(s.buf.Bytes(), []byte("\n"))
	lines = lines[:len(lines)-1] // after the last newline
	n := len(lines)
	lines[n-2], lines[n-1] = lines[n-1], lines[n-2]
	joined := bytes.Join(lines, nil)
	s.buf.Reset()
	s.buf.Write(joined)
	return s
}

// lastID is the event_id of the last event appended.
func (s *script) lastID() string { return s.lastEventID }

func (s *script) jsonl() []byte { return append([]byte(nil), s.buf.Bytes()...) }
