package otlpexport

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

// The OTLP JSON encoding is protobuf's JSON mapping (protojson) with two
// differences the OTLP specification makes: enums are written as their
// numbers, and trace and span ids as hexadecimal strings where protojson
// writes bytes as base64. AppendJSON (jsonenc.go) writes it directly;
// UnmarshalJSON converts the ids and hands the rest to protojson.

// idKeys are the members whose values are ids.
var idKeys = [][]byte{[]byte(`"traceId":"`), []byte(`"spanId":"`), []byte(`"parentSpanId":"`)}

// MarshalJSON writes req in the OTLP JSON encoding, compact, on one line
// (AppendJSON to a new slice). Its error is always nil: it is kept for
// the callers of the time when protojson wrote it.
func MarshalJSON(req *coltracepb.ExportTraceServiceRequest) ([]byte, error) {
	return AppendJSON(nil, req), nil
}

// UnmarshalJSON reads one request of the OTLP JSON encoding (hexadecimal
// ids), as MarshalJSON and the OpenTelemetry Collector write it.
func UnmarshalJSON(b []byte, req *coltracepb.ExportTraceServiceRequest) error {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return err
	}
	raw, err := recodeIDs(buf.Bytes(), func(s []byte) ([]byte, error) {
		id, err := hex.AppendDecode(nil, s)
		return base64.StdEncoding.AppendEncode(nil, id), err
	})
	if err != nil {
		return err
	}
	return protojson.Unmarshal(raw, req)
}

// recodeIDs rewrites the value of every id member of compact JSON b with
// conv. In compact JSON a member name is preceded by { or , and its colon
// follows at once; a string value holding the same characters has its
// quotes escaped, so it never matches.
func recodeIDs(b []byte, conv func([]byte) ([]byte, error)) ([]byte, error) {
	out := make([]byte, 0, len(b)+len(b)/16)
	for {
		at, key := -1, []byte(nil)
		for _, k := range idKeys {
			if i := bytes.Index(b, k); i >= 0 && (at < 0 || i < at) {
				at, key = i, k
			}
		}
		if at < 0 {
			return append(out, b...), nil
		}
		start := at + len(key)
		end := bytes.IndexByte(b[start:], '"')
		if end < 0 {
			return nil, fmt.Errorf("unterminated id after %s", key)
		}
		id, err := conv(b[start : start+end])
		if err != nil {
			return nil, fmt.Errorf("id %q: %w", b[start:start+end], err)
		}
		out = append(out, b[:start]...)
		out = append(out, id...)
		b = b[start+end:]
	}
}

// JSONWriter writes requests in the OTLP JSON encoding, one per line, as
// the OpenTelemetry Collector's file exporter writes them.
type JSONWriter struct {
	w   *bufio.Writer
	buf []byte // the line being encoded, reused
}

// NewJSONWriter writes to w; Flush writes out what is buffered.
func NewJSONWriter(w io.Writer) *JSONWriter { return &JSONWriter{w: bufio.NewWriterSize(w, 64<<10)} }

// Write writes req as one line.
func (j *JSONWriter) Write(req *coltracepb.ExportTraceServiceRequest) error {
	j.buf = append(AppendJSON(j.buf[:0], req), '\n')
	_, err := j.w.Write(j.buf)
	return err
}

// Flush writes out what is buffered.
func (j *JSONWriter) Flush() error { return j.w.Flush() }

// ReadJSON reads a file of OTLP JSON requests, one per line, calling fn
// for each.
func ReadJSON(r io.Reader, fn func(*coltracepb.ExportTraceServiceRequest) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<30)
	line := 0
	for sc.Scan() {
		line++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		req := &coltracepb.ExportTraceServiceRequest{}
		if err := UnmarshalJSON(sc.Bytes(), req); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		if err := fn(req); err != nil {
			return err
		}
	}
	return sc.Err()
}
