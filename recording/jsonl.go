package recording

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/progress"
	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol"
)

// jsonlReader reads one message per line. Messages have no receive times, so
// their offsets come from their own timestamps ("timestamp" or KAHN's "ts"),
// relative to the first one that has a readable timestamp; a line without one
// keeps the previous offset.
type jsonlReader struct {
	r     *bufio.Reader
	long  []byte // buffer for lines longer than r's
	done  bool
	meter *progress.Meter
	// oversized lists the lines (1-based) longer than MaxLine, skipped;
	// lastOversized is set while the current item is one.
	oversized     []int64
	lastOversized bool
	line          int64
	first         time.Time
	lastOff       time.Duration
	lastAt        int64
	msg           protocol.Message
	doc           payload.Doc // decodes each line's timestamp and type
}

func newJSONLReader(r *bufio.Reader, meter *progress.Meter) *jsonlReader {
	return &jsonlReader{r: r, meter: meter}
}

// next returns the next line's message (nil for a blank line or one over
// MaxLine, which is skipped and listed in oversized) and its time on the
// shared clock (its timestamp, or the last one seen).
func (j *jsonlReader) next() (*protocol.Message, int64, bool, error) {
	j.lastOversized = false
	if j.done {
		return nil, 0, false, nil
	}
	raw, tooLong, err := readLine(j.r, &j.long)
	if err != nil {
		if err != io.EOF {
			return nil, 0, false, fmt.Errorf("line %d: %w", j.line+1, err)
		}
		j.done = true
		if len(raw) == 0 && !tooLong {
			return nil, 0, false, nil
		}
	}
	j.line++
	j.meter.Bytes(int64(len(raw)))
	if tooLong {
		j.oversized = append(j.oversized, j.line)
		j.lastOversized = true
		j.meter.Record(j.lastOff)
		return nil, j.lastAt, true, nil
	}
	b := bytes.TrimRight(raw, "\r\n")
	if len(bytes.TrimSpace(b)) == 0 {
		j.meter.Record(j.lastOff)
		return nil, j.lastAt, true, nil
	}
	var method string
	if bytes.Contains(b, []byte(`"jsonrpc"`)) {
		inner, m, isRPC := unwrapJSONRPC(b)
		if isRPC && inner == nil {
			// Transport (aaep.ping, its answer, an error response): no
			// AAEP message.
			j.meter.Record(j.lastOff)
			return nil, j.lastAt, true, nil
		}
		if isRPC {
			b, method = inner, m
		}
	}
	j.msg = protocol.Message{Index: j.line - 1, Raw: b}
	if method != "" {
		j.msg.Attrs = map[string]string{"method": method}
	}
	j.doc.Decode(b)
	f := &j.doc.Routing
	ts := f.Timestamp
	if ts == "" {
		ts = f.TS
	}
	// A timestamp no capture can hold, or too far from the first for an
	// offset (about 292 years), times nothing: the message keeps the
	// previous offset, as one without a timestamp does, rather than one
	// clamped to the largest duration (+9223372036.855s). The rules still
	// judge the timestamp itself.
	if t, err := time.Parse(time.RFC3339Nano, ts); err == nil && capfile.InRange(t) {
		if j.first.IsZero() {
			j.first = t
		}
		if off := t.Sub(j.first); j.first.Add(off).Equal(t) {
			if off > j.lastOff {
				j.lastOff = off
			}
			j.msg.Received = t
			j.lastAt = max(j.lastAt, t.UnixNano())
		}
	}
	j.msg.Offset = j.lastOff
	if isSubscriberMessage(f.Type) {
		j.msg.Dir = protocol.ToProducer
	}
	j.meter.Record(j.lastOff)
	return &j.msg, j.lastAt, true, nil
}

// readLine reads one line (with its newline, if any) of at most MaxLine
// bytes. A longer line is read to its end and dropped: tooLong is set and
// line is nil. The line is valid until the next call; long is the buffer
// for lines longer than r's buffer.
func readLine(r *bufio.Reader, long *[]byte) (line []byte, tooLong bool, err error) {
	chunk, err := r.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return chunk, false, err
	}
	buf := append((*long)[:0], chunk...)
	for err == bufio.ErrBufferFull {
		chunk, err = r.ReadSlice('\n')
		if !tooLong && len(buf)+len(chunk) > MaxLine+2 { // the line ending is not counted
			tooLong, buf = true, buf[:0]
		}
		if !tooLong {
			buf = append(buf, chunk...)
		}
	}
	if tooLong {
		*long = buf[:0]
		return nil, true, err
	}
	*long = buf
	return buf, false, err
}

// rpcMethods are the JSON-RPC methods of the stdio binding (Appendix
// B.6.3) whose params are an AAEP message.
var rpcMethods = map[string]bool{"aaep.event": true, "aaep.reply": true, "aaep.subscribe": true,
	"aaep.renegotiate": true, "aaep.close": true}

// unwrapJSONRPC reads a JSON Lines line written with the stdio binding's
// JSON-RPC 2.0 framing (§8.2.2, B.6). isRPC is false for a line that is no
// JSON-RPC 2.0 object (then it is read as it is). For a method of B.6.3,
// inner is its params and method the method; for a response whose result
// is a subscription.accepted or rejected, inner is the result (a response
// has no method); for anything else (aaep.ping and its answer, error
// responses, unknown methods) inner is nil: transport, no AAEP message.
func unwrapJSONRPC(line []byte) (inner []byte, method string, isRPC bool) {
	var env struct {
		JSONRPC string          `json:"jsonrpc"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
		Result  json.RawMessage `json:"result"`
	}
	if json.Unmarshal(line, &env) != nil || env.JSONRPC != "2.0" {
		return nil, "", false
	}
	switch {
	case env.Method != "":
		if rpcMethods[env.Method] && len(env.Params) > 0 && env.Params[0] == '{' {
			return env.Params, env.Method, true
		}
		if env.Method == "aaep.ping" {
			return nil, "", true
		}
		return nil, "", false // an unknown method: read as it is, so the checker names it
	case len(env.Result) > 0 && env.Result[0] == '{':
		switch payload.Decode(env.Result).Routing.Type {
		case "subscription.accepted", "subscription.rejected":
			return env.Result, "", true
		}
	}
	return nil, "", true
}

// isSubscriberMessage reports whether an AAEP message type is one that only
// subscribers send, so a JSONL file without directions still places replies
// and requests on the right side.
func isSubscriberMessage(typ string) bool {
	switch typ {
	case "subscription.request", "subscription.renegotiate", "confirmation.reply", "clarification.reply":
		return true
	}
	return false
}
