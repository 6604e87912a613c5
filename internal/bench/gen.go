package bench

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/sample"
	"github.com/aaep-tools/aaepkit/payload"
)

// captureStart is the wall-clock start written into generated captures.
var captureStart = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

func benchHeader() capfile.Header {
	return capfile.Header{
		Start:   captureStart,
		Tool:    "benche2e",
		Origins: []capfile.Origin{{ID: 0, Transport: "websocket", Endpoint: "ws://127.0.0.1:8765/aaep/v1/ws", Subprotocol: "aaep.v1"}},
	}
}

// kv is one field of a generated event, kept in order.
type kv struct {
	k string
	v any
}

func encodeFields(fields []kv) []byte {
	b := []byte{'{'}
	for i, f := range fields {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(f.k)
		v, err := json.Marshal(f.v)
		if err != nil {
			panic(fmt.Sprintf("bench: field %s: %v", f.k, err)) // generator values are always encodable
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}')
}

// MinLongSession is the smallest event count LongSession accepts.
const MinLongSession = 6

// LongSession returns one protocol-valid AAEP session of exactly n events
// (n >= MinLongSession), 40 ms apart: the session starts, then the agent
// calls tools in a loop (state change, tool.invoked, tool.completed, state
// change back), streams its answer in one to four chunks and completes. It
// is the input of the trace rendering measurements: long, with the same
// transitions repeated many times.
func LongSession(n int, seed uint64) ([]sample.Msg, error) {
	if n < MinLongSession {
		return nil, fmt.Errorf("long session of %d events: want at least %d", n, MinLongSession)
	}
	rng := rand.New(rand.NewPCG(seed, 0x10a9))
	hex := func(k int) string {
		const digits = "0123456789abcdef"
		b := make([]byte, k)
		for i := range b {
			b[i] = digits[rng.IntN(16)]
		}
		return string(b)
	}
	session := "sess_" + hex(16)
	var (
		out []sample.Msg
		seq int
		at  time.Duration
	)
	emit := func(typ, urgency string, fields ...kv) {
		head := []kv{
			{"@context", "https://aaep-protocol.org/context/v1"},
			{"type", "aaep:agent." + typ},
			{"event_id", "evt_" + hex(32)},
			{"session_id", session},
			{"timestamp", captureStart.Add(at).UTC().Format("2006-01-02T15:04:05.000Z")},
			{"producer", map[string]string{"agent_id": "bench-agent", "agent_version": "1.0.0"}},
			{"urgency", urgency},
			{"sequence_number", seq},
		}
		out = append(out, sample.Msg{Offset: at, Session: session, Type: "aaep:agent." + typ, JSON: encodeFields(append(head, fields...))})
		seq++
		at += 40 * time.Millisecond
	}
	state := func(from, to, summary string) {
		emit("state.changed", "background", kv{"from_state", from}, kv{"to_state", to}, kv{"summary_normal", summary})
	}
	cycles := (n - MinLongSession) / 4
	chunks := n - 5 - 4*cycles
	emit("session.started", "normal", kv{"summary_normal", "Reconciling a year of bank statements."},
		kv{"requested_by", "user:bench"}, kv{"tools_available", []string{"read_statement"}})
	state("idle", "thinking", "Planning the reconciliation.")
	for i := 0; i < cycles; i++ {
		id := "call_" + hex(12)
		state("thinking", "calling_tool", fmt.Sprintf("Reading statement %d.", i+1))
		emit("tool.invoked", "normal", kv{"tool", "read_statement"}, kv{"tool_call_id", id},
			kv{"summary_normal", fmt.Sprintf("Reading statement %d.", i+1)}, kv{"args_summary", fmt.Sprintf("statement %d", i+1)}, kv{"risk_level", "low"})
		emit("tool.completed", "normal", kv{"tool", "read_statement"}, kv{"tool_call_id", id}, kv{"status", "success"},
			kv{"duration_ms", 35}, kv{"summary_normal", fmt.Sprintf("Statement %d read: 42 entries.", i+1)})
		state("calling_tool", "thinking", "Matching entries.")
	}
	state("thinking", "writing_output", "Writing the summary.")
	id := "out_" + hex(10)
	pos := 0
	for i := 0; i < chunks; i++ {
		chunk := fmt.Sprintf("Part %d of the summary. ", i+1)
		last := i == chunks-1
		hint := "sentence"
		if last {
			hint = "completion"
		}
		emit("output.streaming", "normal", kv{"output_id", id}, kv{"chunk", chunk}, kv{"position", pos}, kv{"complete", last},
			kv{"content_type", "text/plain"}, kv{"coalesce_hint", hint})
		pos += len(chunk)
	}
	state("writing_output", "idle", "Done.")
	emit("session.completed", "normal", kv{"summary_normal", "Reconciled every statement."}, kv{"tool_invocations_count", cycles})
	if len(out) != n {
		panic(fmt.Sprintf("bench: long session has %d events, want %d", len(out), n))
	}
	return out, nil
}

// WriteBulkCapture writes a capture of exactly n messages of realistic
// interleaved sessions (sample.Stream, with replies and with the protocol
// violations of every fourth session), generated chunk by chunk so that
// memory stays small. It is the input of the check measurement.
func WriteBulkCapture(path string, n int, seed uint64) error {
	w, err := capfile.Create(path, benchHeader(), &capfile.WriterOptions{FlushInterval: -1})
	if err != nil {
		return err
	}
	var (
		written int
		base    time.Duration
	)
	for round := uint64(0); written < n; round++ {
		// Each round's events are stamped where the round sits in the
		// capture, so their timestamps agree with their receive times.
		msgs := sample.Stream(sample.Options{Sessions: 200, Seed: seed + round, Violations: true, Start: captureStart.Add(base)})
		for _, m := range msgs {
			kind := capfile.KindReceived
			if m.FromSubscriber {
				kind = capfile.KindSent
			}
			rec := capfile.Record{Kind: kind, Time: int64(base + m.Offset), Session: m.Session, Payload: m.JSON}
			if err := w.Append(&rec); err != nil {
				w.Close()
				return fmt.Errorf("writing message %d: %w", written, err)
			}
			if written++; written == n {
				break
			}
		}
		base += msgs[len(msgs)-1].Offset + time.Second
	}
	return w.Close()
}

// Offsets returns capture offsets spanning about span, with gaps drawn
// around mean in a bursty mix: one gap in ten is zero (a burst), one in ten
// five times the mean, the rest uniform below twice the mean.
func Offsets(span, mean time.Duration, seed uint64) []time.Duration {
	rng := rand.New(rand.NewPCG(seed, 0x0ff5))
	var offs []time.Duration
	for t := time.Duration(0); t <= span; {
		offs = append(offs, t)
		switch rng.IntN(10) {
		case 0:
		case 1:
			t += 5 * mean
		default:
			t += time.Duration(rng.Int64N(int64(2 * mean)))
		}
	}
	return offs
}

// WriteTimedCapture writes one received record per offset, with payloads
// from pool (cycled), and returns how many it wrote.
func WriteTimedCapture(path string, offs []time.Duration, pool [][]byte) error {
	w, err := capfile.Create(path, benchHeader(), &capfile.WriterOptions{FlushInterval: -1})
	if err != nil {
		return err
	}
	for i, off := range offs {
		p := pool[i%len(pool)]
		rec := capfile.Record{Kind: capfile.KindReceived, Time: int64(off), Session: payload.Decode(p).Routing.SessionID, Payload: p}
		if err := w.Append(&rec); err != nil {
			w.Close()
			return fmt.Errorf("writing record %d: %w", i, err)
		}
	}
	return w.Close()
}

// SizedCapture describes a capture written by WriteSizedCapture.
type SizedCapture struct {
	Records  int64
	LastTime time.Duration
	Bytes    int64
}

// WriteSizedCapture writes received records from pool (cycled), one every
// gap, until the file holds at least size bytes.
func WriteSizedCapture(path string, size int64, gap time.Duration, pool [][]byte) (SizedCapture, error) {
	w, err := capfile.Create(path, benchHeader(), &capfile.WriterOptions{FlushInterval: -1})
	if err != nil {
		return SizedCapture{}, err
	}
	sessions := make([]string, len(pool))
	for i, p := range pool {
		sessions[i] = payload.Decode(p).Routing.SessionID
	}
	var i int64
	for ; ; i++ {
		k := int(i % int64(len(pool)))
		rec := capfile.Record{Kind: capfile.KindReceived, Time: i * int64(gap), Session: sessions[k], Payload: pool[k]}
		if err := w.Append(&rec); err != nil {
			w.Close()
			return SizedCapture{}, fmt.Errorf("writing record %d: %w", i, err)
		}
		if i%4096 == 0 && w.Stats().FileBytes >= size {
			break
		}
	}
	if err := w.Close(); err != nil {
		return SizedCapture{}, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return SizedCapture{}, err
	}
	return SizedCapture{Records: i + 1, LastTime: time.Duration(i * int64(gap)), Bytes: fi.Size()}, nil
}
