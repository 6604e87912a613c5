package capedit

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aaep-tools/aaepkit/capfile"
)

// MetaVersion is the version of the --with-meta export format.
//
// A --with-meta export is JSON Lines. Its first line describes the capture:
//
//	{"aaep_export":1,"header":{"version":1,"start":"2026-11-02T09:00:00Z","tool":"aaep-capture/0.1.0","sources":[...]}}
//
// where "header" is the capture header (capfile.Header) as JSON. Every other
// line is one record, with its fields in this order and those in brackets
// left out when empty:
//
//		{"recv_ns":1500000,"kind":"received",["dir":"in",]"source":0,["session":"sess_1",]
//		 ["flags":["invalid_json"],]["attrs":[["event","message"]],]"message":{...}}
//
//	  - recv_ns: the receive time in nanoseconds since the header's start.
//	  - kind: capfile.Kind.String: "received", "sent", "conn", "marker",
//	    "kind:N".
//	  - dir: "in" for a message received from the producer, "out" for one the
//	    recorder sent; absent for connection events and markers.
//	  - source: the record's origin id (capfile.Record.Origin).
//	  - session: the session key the capture indexes the record under.
//	    (Session, attribute keys and values that are not valid UTF-8 are
//	    written as {"base64":"..."} instead of a string.)
//	  - flags: capfile.Flags.Names: "invalid_json", "invalid_utf8",
//	    "redacted", "no_recv_time", "bit:N".
//	  - attrs: transport attributes as [key, value] pairs, in order.
//	  - the payload, in exactly one of three fields:
//	    "message": the payload itself, byte for byte, when it is valid JSON and
//	    valid UTF-8 with no line break and no leading or trailing white space;
//	    "text": the payload as a JSON string, when it is valid UTF-8 but not such
//	    JSON; "base64": the payload in standard base64 otherwise.
//
// Import recognises the first line and rebuilds identical records and header.
const MetaVersion = 1

// metaHeaderKey is the key that marks the first line of a --with-meta export.
const metaHeaderKey = "aaep_export"

type metaHeader struct {
	Export int            `json:"aaep_export"`
	Header capfile.Header `json:"header"`
}

// metaRecord is the wrapper of one record, as read back by Import.
type metaRecord struct {
	RecvNS  *int64              `json:"recv_ns"`
	Kind    string              `json:"kind"`
	Dir     string              `json:"dir"`
	Source  *uint16             `json:"source"`
	Session json.RawMessage     `json:"session"`
	Flags   []string            `json:"flags"`
	Attrs   [][]json.RawMessage `json:"attrs"`
	Message json.RawMessage     `json:"message"`
	Text    *string             `json:"text"`
	Base64  *string             `json:"base64"`
}

// directions of records in a --with-meta export.
func dirOf(k capfile.Kind) string {
	switch k {
	case capfile.KindReceived:
		return "in"
	case capfile.KindSent:
		return "out"
	}
	return ""
}

// embeddable reports whether payload can stand verbatim as a JSON value in a
// line of JSON Lines and be read back byte for byte.
func embeddable(p []byte) bool {
	if len(p) == 0 || bytes.ContainsAny(p, "\r\n") || !utf8.Valid(p) {
		return false
	}
	if isSpace(p[0]) || isSpace(p[len(p)-1]) {
		return false
	}
	return json.Valid(p)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// appendMetaHeader appends the first line of a --with-meta export.
func appendMetaHeader(dst []byte, h capfile.Header) ([]byte, error) {
	js, err := json.Marshal(metaHeader{Export: MetaVersion, Header: h})
	if err != nil {
		return dst, fmt.Errorf("encode header: %w", err)
	}
	return append(append(dst, js...), '\n'), nil
}

// appendMetaRecord appends the wrapper line of rec.
func appendMetaRecord(dst []byte, rec *capfile.Record) []byte {
	dst = append(dst, `{"recv_ns":`...)
	dst = strconv.AppendInt(dst, rec.Time, 10)
	dst = append(dst, `,"kind":`...)
	dst = appendJSONString(dst, rec.Kind.String())
	if d := dirOf(rec.Kind); d != "" {
		dst = append(dst, `,"dir":`...)
		dst = appendJSONString(dst, d)
	}
	dst = append(dst, `,"source":`...)
	dst = strconv.AppendUint(dst, uint64(rec.Origin), 10)
	if rec.Session != "" {
		dst = append(dst, `,"session":`...)
		dst = appendMetaString(dst, rec.Session)
	}
	if rec.Flags != 0 {
		dst = append(dst, `,"flags":[`...)
		for i, n := range rec.Flags.Names() {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, n)
		}
		dst = append(dst, ']')
	}
	if len(rec.Attrs) > 0 {
		dst = append(dst, `,"attrs":[`...)
		for i, a := range rec.Attrs {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '[')
			dst = appendMetaString(dst, a.Key)
			dst = append(dst, ',')
			dst = appendMetaString(dst, a.Value)
			dst = append(dst, ']')
		}
		dst = append(dst, ']')
	}
	switch {
	case embeddable(rec.Payload):
		dst = append(dst, `,"message":`...)
		dst = append(dst, rec.Payload...)
	case utf8.Valid(rec.Payload):
		dst = append(dst, `,"text":`...)
		dst = appendJSONString(dst, string(rec.Payload))
	default:
		dst = append(dst, `,"base64":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, rec.Payload)
		dst = append(dst, '"')
	}
	return append(dst, '}', '\n')
}

// appendJSONString appends s as a JSON string. s may hold any bytes; invalid
// UTF-8 becomes U+FFFD (callers only pass valid UTF-8 where it matters).
func appendJSONString(dst []byte, s string) []byte {
	js, _ := json.Marshal(s) // a string always encodes
	return append(dst, js...)
}

// appendMetaString appends s as a JSON string, or, when s is not valid UTF-8
// (which a JSON string cannot carry), as {"base64":"..."}.
func appendMetaString(dst []byte, s string) []byte {
	if utf8.ValidString(s) {
		return appendJSONString(dst, s)
	}
	dst = append(dst, `{"base64":"`...)
	dst = base64.StdEncoding.AppendEncode(dst, []byte(s))
	return append(dst, '"', '}')
}

// parseMetaString reads what appendMetaString wrote.
func parseMetaString(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var b struct {
		Base64 *string `json:"base64"`
	}
	if err := json.Unmarshal(raw, &b); err != nil || b.Base64 == nil {
		return "", fmt.Errorf("%s is neither a string nor {\"base64\": ...}", raw)
	}
	v, err := base64.StdEncoding.DecodeString(*b.Base64)
	if err != nil {
		return "", fmt.Errorf("base64 string: %w", err)
	}
	return string(v), nil
}

// parseMetaRecord decodes one wrapper line into rec, whose Payload and Attrs
// are freshly allocated.
func parseMetaRecord(line []byte, rec *capfile.Record) error {
	var m metaRecord
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return fmt.Errorf("not a --with-meta record: %w", jsonWords(err))
	}
	if dec.More() {
		return errors.New("not a --with-meta record: data after the object")
	}
	if m.RecvNS == nil || *m.RecvNS < 0 {
		return errors.New("missing or negative recv_ns")
	}
	if m.Source == nil {
		return errors.New("missing source")
	}
	kind, err := capfile.ParseKind(m.Kind)
	if err != nil {
		return err
	}
	if m.Dir != "" && m.Dir != dirOf(kind) {
		return fmt.Errorf("dir %q does not fit kind %q", m.Dir, m.Kind)
	}
	flags, err := capfile.ParseFlags(m.Flags)
	if err != nil {
		return err
	}
	*rec = capfile.Record{Kind: kind, Flags: flags, Origin: *m.Source, Time: *m.RecvNS}
	if m.Session != nil {
		if rec.Session, err = parseMetaString(m.Session); err != nil {
			return fmt.Errorf("session: %w", err)
		}
	}
	for i, a := range m.Attrs {
		if len(a) != 2 {
			return fmt.Errorf("attribute %d is not a [key, value] pair", i)
		}
		k, err := parseMetaString(a[0])
		if err != nil {
			return fmt.Errorf("attribute %d: %w", i, err)
		}
		v, err := parseMetaString(a[1])
		if err != nil {
			return fmt.Errorf("attribute %d: %w", i, err)
		}
		rec.Attrs = append(rec.Attrs, capfile.Attr{Key: k, Value: v})
	}
	n := 0
	if m.Message != nil {
		n++
		rec.Payload = []byte(m.Message)
	}
	if m.Text != nil {
		n++
		rec.Payload = []byte(*m.Text)
	}
	if m.Base64 != nil {
		n++
		rec.Payload, err = base64.StdEncoding.DecodeString(*m.Base64)
		if err != nil {
			return fmt.Errorf("base64 payload: %w", err)
		}
	}
	if n != 1 {
		return fmt.Errorf("want exactly one of message, text and base64, found %d", n)
	}
	if rec.Payload == nil {
		rec.Payload = []byte{}
	}
	return nil
}

// isMetaHeader reports whether line is the first line of a --with-meta
// export, and decodes it.
func isMetaHeader(line []byte) (capfile.Header, bool, error) {
	t := bytes.TrimSpace(line)
	if !bytes.HasPrefix(t, []byte(`{"`+metaHeaderKey+`"`)) {
		return capfile.Header{}, false, nil
	}
	var h metaHeader
	if err := json.Unmarshal(t, &h); err != nil {
		return capfile.Header{}, true, fmt.Errorf("bad --with-meta header line: %w", jsonWords(err))
	}
	if h.Export < 1 || h.Export > MetaVersion {
		return capfile.Header{}, true, fmt.Errorf("--with-meta export version %d, this tool reads 1 to %d", h.Export, MetaVersion)
	}
	return h.Header, true, nil
}

// jsonWords says what a JSON decoding error found in the words of the
// file, not of Go: a field of the wrong JSON type ("field \"kind\" is a
// number, want a string"), a time that is not an RFC 3339 string, an
// unknown field; encoding/json names Go types and struct fields
// ("cannot unmarshal number into Go struct field metaRecord.kind of type
// string").
func jsonWords(err error) error {
	var te *json.UnmarshalTypeError
	var pe *time.ParseError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "the line"
		} else {
			field = fmt.Sprintf("field %q", field)
		}
		return fmt.Errorf("%s is a JSON %s, want %s", field, te.Value, jsonKind(te.Type))
	case errors.As(err, &pe), strings.Contains(err.Error(), "Time.UnmarshalJSON"):
		return errors.New("a time is not an RFC 3339 time string (such as \"2026-11-02T09:00:00Z\")")
	}
	return errors.New(strings.TrimPrefix(err.Error(), "json: "))
}

// jsonKind names the JSON value a Go type is read from.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "another value"
}
