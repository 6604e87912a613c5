package jsonval_test

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"testing"
	"unicode/utf8"

	"github.com/aaep-tools/aaepkit/protocol/jsonval"
)

func TestKindOf(t *testing.T) {
	cases := []struct {
		in   string
		nil_ bool
		want jsonval.Kind
		name string
	}{
		{nil_: true, want: jsonval.Absent, name: "absent"},
		{in: "", want: jsonval.Absent, name: "absent"},
		{in: " \t\r\n", want: jsonval.Absent, name: "absent"},
		{in: "null", want: jsonval.Null, name: "null"},
		{in: ` "x"`, want: jsonval.String, name: "string"},
		{in: "-1", want: jsonval.Number, name: "number"},
		{in: "0.5e3", want: jsonval.Number, name: "number"},
		{in: "true", want: jsonval.Bool, name: "boolean"},
		{in: "false", want: jsonval.Bool, name: "boolean"},
		{in: "{}", want: jsonval.Object, name: "object"},
		{in: "\n[1]", want: jsonval.Array, name: "array"},
		{in: "+1", want: jsonval.Invalid, name: "invalid"},
		{in: "}", want: jsonval.Invalid, name: "invalid"},
		{in: "\xff", want: jsonval.Invalid, name: "invalid"},
	}
	for _, tc := range cases {
		var r json.RawMessage
		if !tc.nil_ {
			r = json.RawMessage(tc.in)
		}
		got := jsonval.KindOf(r)
		if got != tc.want || got.String() != tc.name {
			t.Errorf("KindOf(%q) = %v (%d), want %s (%d)", tc.in, got, got, tc.name, tc.want)
		}
	}
	if s := jsonval.Kind(200).String(); s != "Kind(200)" {
		t.Errorf("Kind(200).String() = %q", s)
	}
}

func TestStringVal(t *testing.T) {
	cases := []struct {
		in   string
		want string
		ok   bool
	}{
		{`"abc"`, "abc", true},
		{` "abc" `, "abc", true},
		{`""`, "", true},
		{`"a\"b"`, `a"b`, true},
		{`"caf\u00e9 \n"`, "café \n", true},
		{`"\ud83d\ude00"`, "😀", true},
		{"\"\xff\"", "\xff", true}, // no escape: the bytes as they are
		{`"unterminated`, "", false},
		{`"bad \q escape"`, "", false},
		{`7`, "", false},
		{`null`, "", false},
		{``, "", false},
	}
	for _, tc := range cases {
		got, ok := jsonval.StringVal(json.RawMessage(tc.in))
		if got != tc.want || ok != tc.ok {
			t.Errorf("StringVal(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestIntVal(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		ok   bool
	}{
		{`0`, 0, true},
		{`-0`, 0, true},
		{` 42 `, 42, true},
		{`-9223372036854775808`, math.MinInt64, true},
		{`9223372036854775808`, 0, false}, // overflows int64
		{`1.0`, 0, false},
		{`1e3`, 0, false},
		{`"1"`, 0, false},
		{`true`, 0, false},
		{``, 0, false},
	}
	for _, tc := range cases {
		got, ok := jsonval.IntVal(json.RawMessage(tc.in))
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("IntVal(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestNumberVal(t *testing.T) {
	cases := []struct {
		in   string
		want float64
		ok   bool
	}{
		{`0`, 0, true},
		{`1.5`, 1.5, true},
		{`-2e-3`, -0.002, true},
		{` 7 `, 7, true},
		{`1e400`, 0, false}, // out of range
		{`"1"`, 0, false},
		{`null`, 0, false},
		{`-`, 0, false},
	}
	for _, tc := range cases {
		got, ok := jsonval.NumberVal(json.RawMessage(tc.in))
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("NumberVal(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestObjectVal(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want map[string]string
		ok   bool
	}{
		{"empty", `{}`, map[string]string{}, true},
		{"blank inside", " { \n } ", map[string]string{}, true},
		{"scalars", `{"a":1,"b":"x","c":null,"d":true}`, map[string]string{"a": "1", "b": `"x"`, "c": "null", "d": "true"}, true},
		{"white space", "{ \"a\" :\t-1.5e2 ,\n\"b\" : [ 1 , 2 ] }", map[string]string{"a": "-1.5e2", "b": "[ 1 , 2 ]"}, true},
		{"nested", `{"o":{"p":{"q":[{"r":"}]"}]}},"z":0}`, map[string]string{"o": `{"p":{"q":[{"r":"}]"}]}}`, "z": "0"}, true},
		{"quotes and brackets in strings", `{"a\"}":"x\\\"]{","b":"\\"}`, map[string]string{`a"}`: `"x\\\"]{"`, "b": `"\\"`}, true},
		{"escaped key", `{"caf\u00e9":1}`, map[string]string{"café": "1"}, true},
		{"repeated key keeps the last", `{"a":1,"a":2}`, map[string]string{"a": "2"}, true},
		{"not an object", `[1]`, nil, false},
		{"absent", ``, nil, false},
		{"key not a string", `{1:2}`, nil, false},
		{"no colon", `{"a" 1}`, nil, false},
		{"no value", `{"a":}`, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := jsonval.ObjectVal(json.RawMessage(tc.in))
			if ok != tc.ok {
				t.Fatalf("ObjectVal(%s): ok = %v, want %v", tc.in, ok, tc.ok)
			}
			if !ok {
				if got != nil {
					t.Errorf("ObjectVal(%s) = %v with false, want nil", tc.in, got)
				}
				return
			}
			gs := map[string]string{}
			for k, v := range got {
				gs[k] = string(v)
			}
			if !maps.Equal(gs, tc.want) {
				t.Errorf("ObjectVal(%s) = %q, want %q", tc.in, gs, tc.want)
			}
		})
	}
}

// FuzzReaders checks the readers against encoding/json on every valid
// UTF-8 JSON document, and that no input makes them panic.
func FuzzReaders(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"b":[1,{"c":"}"}],"a":"x\"y"}`, `"caf\u00e9"`, `-12`, `1.5e3`, `1e400`,
		`9223372036854775808`, `null`, `true`, `[1,"a"]`, `{"a" 1}`, `{"a":`, `"\ud800"`, ` {"k" : { } } `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := json.RawMessage(data)
		k := jsonval.KindOf(r)
		s, sok := jsonval.StringVal(r)
		n, nok := jsonval.NumberVal(r)
		i, iok := jsonval.IntVal(r)
		obj, ook := jsonval.ObjectVal(r)
		if sok && k != jsonval.String || nok && k != jsonval.Number || iok && k != jsonval.Number || ook && k != jsonval.Object {
			t.Fatalf("a reader accepted a %v", k)
		}
		if !json.Valid(data) || !utf8.Valid(data) {
			return // the readers' contract covers valid documents only
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("valid document does not decode: %v", err)
		}
		switch v := v.(type) {
		case nil:
			if k != jsonval.Null {
				t.Fatalf("KindOf = %v, want null", k)
			}
		case string:
			if k != jsonval.String || !sok || s != v {
				t.Fatalf("KindOf = %v, StringVal = %q, %v; want %q", k, s, sok, v)
			}
		case json.Number:
			var f float64
			ferr := json.Unmarshal(data, &f)
			wi, ierr := v.Int64()
			switch {
			case k != jsonval.Number:
				t.Fatalf("KindOf = %v, want number", k)
			case nok != (ferr == nil) || nok && n != f:
				t.Fatalf("NumberVal = %v, %v; encoding/json: %v, %v", n, nok, f, ferr)
			case iok != (ierr == nil) || iok && i != wi:
				t.Fatalf("IntVal = %d, %v; json.Number.Int64: %d, %v", i, iok, wi, ierr)
			}
		case bool:
			if k != jsonval.Bool {
				t.Fatalf("KindOf = %v, want boolean", k)
			}
		case []any:
			if k != jsonval.Array {
				t.Fatalf("KindOf = %v, want array", k)
			}
		case map[string]any:
			var m map[string]json.RawMessage
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatal(err)
			}
			if k != jsonval.Object || !ook || !maps.EqualFunc(obj, m, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }) {
				t.Fatalf("KindOf = %v, ObjectVal = %q, %v; want %q", k, obj, ook, m)
			}
		}
	})
}
