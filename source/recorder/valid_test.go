package recorder

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/peek"
	"github.com/aaep-tools/aaepkit/source/sourcetest"
)

var validCases = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `1.5e+10`, `-12.25E-3`, `true`, `false`, `null`,
	` {"a" : [1, 2, {"b": null}], "c": "\u00e9\n\"\\\/"} `,
	`[[[[]]]]`, `{"a":{"b":{"c":[]}}}`, "\"caf\xe9\"", `"\ud83d\ude00"`,
	// invalid
	``, ` `, `{`, `}`, `[1,]`, `{"a":1,}`, `{"a"}`, `{"a":}`, `{a:1}`, `[1 2]`, `01`, `1.`, `.5`, `-`, `1e`, `1e+`,
	`+1`, `tru`, `nul`, `truex`, `"abc`, "\"a\x01b\"", `"\x"`, `"\u12"`, `"\u12g4"`, `{"a":1}{}`, `[1]]`, `{"a":1]`,
	`[1,{"a":2]}`, "\xff", `{"a":"b"} x`, `NaN`, `Infinity`, `'a'`,
}

func TestValidJSONMatchesEncodingJSON(t *testing.T) {
	cases := append([]string(nil), validCases...)
	for i := 0; i < 10; i++ {
		cases = append(cases, string(sourcetest.Event(i)))
	}
	cases = append(cases, strings.Repeat("[", 10001)+strings.Repeat("]", 10001), strings.Repeat("[", 10000)+strings.Repeat("]", 10000))
	for _, c := range cases {
		if got, want := validJSON([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("validJSON(%.60q) = %v, json.Valid says %v", c, got, want)
		}
	}
}

func FuzzValidJSON(f *testing.F) {
	for _, c := range validCases {
		f.Add([]byte(c))
	}
	f.Add(sourcetest.Event(3))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid says %v", b, got, want)
		}
	})
}

func BenchmarkValidJSON(b *testing.B) {
	ev := sourcetest.Event(12)
	b.Run("validJSON", func(b *testing.B) {
		b.SetBytes(int64(len(ev)))
		for i := 0; i < b.N; i++ {
			if !validJSON(ev) {
				b.Fatal("invalid")
			}
		}
	})
	b.Run("encoding/json.Valid", func(b *testing.B) {
		b.SetBytes(int64(len(ev)))
		for i := 0; i < b.N; i++ {
			if !json.Valid(ev) {
				b.Fatal("invalid")
			}
		}
	})
}

func TestSpecial8(t *testing.T) {
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 8; pos++ {
			w := []byte("abcdefgh")
			w[pos] = byte(c)
			var x uint64
			for i := 7; i >= 0; i-- {
				x = x<<8 | uint64(w[i])
			}
			want := c < 0x20 || c == '"' || c == '\\'
			if got := special8(x); got != want {
				t.Fatalf("special8 with byte %#x at %d = %v, want %v", c, pos, got, want)
			}
		}
	}
}

// The session key scanJSON finds is the one peek finds, on every valid
// JSON document.
func FuzzScanSessionMatchesPeek(f *testing.F) {
	f.Add([]byte(`{"type":"t","session_id":"s1","x":{"session_id":"nested"},"run_id":"r"}`))
	f.Add([]byte(`{"sessionId":"asp","session_id":5,"a":["session_id","x"]}`))
	f.Add([]byte(`{"session\u005fid":"esc\"aped","session_id":"last wins"}`))
	f.Add([]byte("{\"run_id\":\"\xff\"}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var fields peek.Fields
		valid := scanJSON(b, &fields)
		if valid != json.Valid(b) {
			t.Fatalf("scanJSON(%q) valid = %v", b, valid)
		}
		if !valid {
			return
		}
		pf := peek.Peek(b)
		if got, want := fields.SessionKey(), pf.SessionKey(); got != want {
			t.Fatalf("scanJSON(%q) session %q, peek says %q", b, got, want)
		}
	})
}

func TestScanSession(t *testing.T) {
	for in, want := range map[string]string{
		`{"type":"t","session_id":"s1","x":{"session_id":"nested"}}`: "s1",
		`{"x":{"session_id":"nested"},"l":["session_id"]}`:           "",
		`{"session_id":["a"],"run_id":"r1"}`:                         "r1",
		`{"sessionId":"asp1"}`:                                       "asp1",
		`{"session\u005fid":"e\"1"}`:                                 `e"1`,
		`{"session_id":"a","session_id":"b"}`:                        "b",
		`{"session_id":"a","session_id":1}`:                          "a",
		string(sourcetest.Event(3)):                                  "sess_test01",
	} {
		var f peek.Fields
		if !scanJSON([]byte(in), &f) || f.SessionKey() != want {
			t.Errorf("scanJSON(%s): session %q, want %q", in, f.SessionKey(), want)
		}
	}
}
