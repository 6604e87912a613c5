package payload

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzSeeds are payloads of every shape, valid and not.
var fuzzSeeds = []string{
	`{"type":"aaep:agent.tool.invoked","event_id":"evt_1","session_id":"sess_1","n":3.0,"big":9007199254740993}`,
	`{"performative":"PROPOSE","sessionId":"s","envelope":{"a":[1,2,{"b":null}]}}`,
	`{"a":"\u00e9\ud83d\ude00\n","a":false,"b\u0022":-0.5e-3}`,
	`[1,"x",{"y":[]}]`, `"s"`, `12`, `true`, `null`, ` {} `,
	`{"a": @@@}`, `{"a":01}`, `{"a":1,}`, `{"a":"\x"}`, `{"a":"b`, "{\"a\":\"\t\"}", `{"a" 1}`, `{a:1}`, `[1}`,
	"\xEF\xBB\xBF{\"a\":1}", "{\"a\":\"caf\xe9\"}", `{"a":1}x`, ``, `nul`, `-`, `1.`, `1e`, `[[[[[[]]]]]]`,
}

// FuzzDecode holds the front end to encoding/json: the same verdict on
// validity (encoding/json refuses nesting past MaxDepth, which Decode
// reads and marks TooDeep), an error with an offset in the payload for
// every invalid one, and for an object the same members, read through the
// value readers as encoding/json decodes them. DecodeOnly, for every Need,
// is held to Decode.
func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var d Doc
		d.Decode(data)
		var part Doc
		for _, need := range needs {
			part.DecodeOnly(data, need)
			checkNeed(t, &part, &d, need)
		}
		body := data
		if d.BOM() {
			body = data[3:]
		}
		want := json.Valid(body)
		if d.JSONValid() != json.Valid(data) {
			t.Fatalf("Decode(%q): JSONValid %v, json.Valid %v", data, d.JSONValid(), json.Valid(data))
		}
		if got := d.Valid() && !d.Stats().TooDeep; got != want {
			t.Fatalf("Decode(%q): valid %v (%v), encoding/json %v", data, got, d.Err(), want)
		}
		if d.UTF8() != utf8.Valid(body) {
			t.Fatalf("Decode(%q): UTF8 %v", data, d.UTF8())
		}
		if !d.Valid() {
			if e := d.Err(); e == nil || e.Offset < 0 || e.Offset > len(data) || e.Msg == "" {
				t.Fatalf("Decode(%q): invalid with error %v", data, e)
			}
			return
		}
		if !want || !utf8.Valid(body) {
			return // encoding/json replaces bad UTF-8; nothing more to compare
		}
		top, err := decodeNumbers(body)
		if err != nil {
			t.Fatalf("Decode(%q): encoding/json cannot decode it: %v", data, err)
		}
		if k := kindOfAny(top); k != d.Kind() {
			t.Fatalf("Decode(%q): kind %v, encoding/json %v", data, d.Kind(), k)
		}
		if d.Kind() != Object {
			compareValue(t, Value(bytes.TrimSpace(body)), top, 0)
			return
		}
		var members map[string]json.RawMessage
		if err := json.Unmarshal(body, &members); err != nil {
			t.Fatalf("Decode(%q): encoding/json cannot split it: %v", data, err)
		}
		if (len(members) < len(d.Members())) != (d.Stats().Dup >= 0) {
			t.Fatalf("Decode(%q): %d distinct names of %d members, Dup %d", data, len(members), len(d.Members()), d.Stats().Dup)
		}
		for name, raw := range members {
			v := d.Get(name)
			if !bytes.Equal(v, raw) {
				t.Fatalf("Decode(%q): member %q = %s, encoding/json %s", data, name, v, raw)
			}
			x, err := decodeNumbers(raw)
			if err != nil {
				t.Fatalf("Decode(%q): encoding/json cannot decode member %q: %v", data, name, err)
			}
			compareValue(t, v, x, 0)
		}
		if s, ok := members["type"]; ok {
			var typ string
			if json.Unmarshal(s, &typ) == nil && typ != d.Routing.Type {
				t.Fatalf("Decode(%q): routing type %q, encoding/json %q", data, d.Routing.Type, typ)
			}
		}
	})
}

// decodeNumbers decodes b with encoding/json, numbers as json.Number.
func decodeNumbers(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var x any
	err := dec.Decode(&x)
	return x, err
}

func kindOfAny(x any) Kind {
	switch x.(type) {
	case nil:
		return Null
	case string:
		return String
	case json.Number:
		return Number
	case bool:
		return Bool
	case map[string]any:
		return Object
	case []any:
		return Array
	}
	return Invalid
}

// compareValue checks the readers of v against encoding/json's decoding x
// (of a valid UTF-8 document), down to a few levels of nesting (each level
// rescans the value, so deeper comparisons would cost the square).
func compareValue(t *testing.T, v Value, x any, depth int) {
	t.Helper()
	if depth > 8 {
		return
	}
	switch x := x.(type) {
	case string:
		if s, ok := v.Str(); !ok || s != x {
			t.Fatalf("%s: Str %q %v, encoding/json %q", v, s, ok, x)
		}
	case json.Number:
		want, err := strconv.ParseFloat(string(x), 64)
		if err != nil && !math.IsInf(want, 0) {
			t.Fatalf("%s: encoding/json took %q as a number", v, x)
		}
		f, ok := v.Number()
		if !ok || f != want {
			t.Fatalf("%s: Number %v %v, encoding/json %v", v, f, ok, want)
		}
		n, ok := v.Int()
		wantInt, exact := int64(want), want == math.Trunc(want) && want >= -(1<<63) && want < 1<<63
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			wantInt, exact = i, true
		}
		if ok != exact || (ok && n != wantInt) {
			t.Fatalf("%s: Int %v %v, want %v %v", v, n, ok, wantInt, exact)
		}
		if _, ok := v.IntToken(); ok != (!strings.ContainsAny(string(x), ".eE") && exact) {
			t.Fatalf("%s: IntToken %v", v, ok)
		}
	case bool:
		if b, ok := v.Bool(); !ok || b != x {
			t.Fatalf("%s: Bool %v %v, encoding/json %v", v, b, ok, x)
		}
	case nil:
		if !v.IsNull() {
			t.Fatalf("%s: not null", v)
		}
	case []any:
		n := 0
		v.Elements(func(i int, e Value) bool {
			if i < len(x) {
				compareValue(t, e, x[i], depth+1)
			}
			n++
			return true
		})
		if n != len(x) {
			t.Fatalf("%s: %d elements, encoding/json %d", v, n, len(x))
		}
	case map[string]any:
		for k, want := range x {
			compareValue(t, v.Get(k), want, depth+1)
		}
	}
}
