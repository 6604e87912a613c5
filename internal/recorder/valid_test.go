package recorder

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/msgfilter"
	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/transport/transporttest"
)

var validCases = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `1.5e+10`, `-12.25E-3`, `true`, `false`, `null`,
	` {"a" : [1, 2, {"b": null}], "c": "\u00e9\n\"\\\/"} `,
	`[[[[]]]]`, `{"a":{"b":{"c":[]}}}`, "\"caf\xe9\"", `"\ud83d\ude00"`,
	// invalid
	``, ` `, `{`, `}`, `[1,]`, `{"a":1,}`, `{"a"}`, `{"a":}`, `{a:1}`, `[1 2]`, `01`, `1.`, `.5`, `-`, `1e`, `1e+`,
	`+1`, `tru`, `nul`, `truex`, `"abc`, "\"a\x01b\"", `"\x"`, `"\u12"`, `"\u12g4"`, `{"a":1}{}`, `[1]]`, `{"a":1]`,
	`[1,{"a":2]}`, "\xff", `{"a":"b"} x`, `NaN`, `Infinity`, `'a'`, "\xef\xbb\xbf{}",
}

// validJSON is the recorder's verdict on b (FlagInvalidJSON).
func validJSON(b []byte) bool { return payload.Decode(b).JSONValid() }

func TestValidJSONMatchesEncodingJSON(t *testing.T) {
	cases := append([]string(nil), validCases...)
	for i := 0; i < 10; i++ {
		cases = append(cases, string(transporttest.Event(i)))
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
	f.Add(transporttest.Event(3))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid says %v", b, got, want)
		}
	})
}

// BenchmarkValidJSON times the recorder's validity check of one event: the
// front end's decoding, against encoding/json.Valid.
func BenchmarkValidJSON(b *testing.B) {
	ev := transporttest.Event(12)
	b.Run("payload.Decode", func(b *testing.B) {
		var d payload.Doc
		b.SetBytes(int64(len(ev)))
		for i := 0; i < b.N; i++ {
			if d.Decode(ev); !d.JSONValid() {
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

// TestRecordedSession: the session key the writer records with each
// message (the AAEP session_id, ASP sessionId or KAHN run_id at the top
// level, the last member of a name winning) and its validity flag.
func TestRecordedSession(t *testing.T) {
	tests := []struct {
		in, session string
		invalid     bool
	}{
		{`{"type":"t","session_id":"s1","x":{"session_id":"nested"}}`, "s1", false},
		{`{"x":{"session_id":"nested"},"l":["session_id"]}`, "", false},
		{`{"session_id":["a"],"run_id":"r1"}`, "r1", false},
		{`{"sessionId":"asp1"}`, "asp1", false},
		{`{"session\u005fid":"e\"1"}`, `e"1`, false},
		{`{"session_id":"a","session_id":"b"}`, "b", false},
		// The last member named session_id is not a string: no session
		// (the front end's reading, as the checker's; the recorder's own
		// scanner kept the last string, "a").
		{`{"session_id":"a","session_id":1}`, "", false},
		{string(transporttest.Event(3)), "sess_test01", false},
		// Damaged messages keep the session their intact start names.
		{`{"session_id":"s2","x":`, "s2", true},
		{"\xef\xbb\xbf{\"session_id\":\"s3\"}", "s3", true},
	}
	r, path := newTest(t, Config{})
	emit := r.Emit(0)
	for i, tt := range tests {
		if err := emit(msg(capfile.KindReceived, int64(i), tt.in)); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	_, recs := readAll(t, path)
	if len(recs) != len(tests) {
		t.Fatalf("%d records, want %d", len(recs), len(tests))
	}
	for i, tt := range tests {
		if recs[i].Session != tt.session || recs[i].Flags&capfile.FlagInvalidJSON != 0 != tt.invalid {
			t.Errorf("%s: session %q invalid %v, want %q %v", tt.in, recs[i].Session, recs[i].Flags&capfile.FlagInvalidJSON != 0, tt.session, tt.invalid)
		}
	}
}

// TestFlagsOnEveryPath: the invalid-JSON and invalid-UTF-8 flags and their
// counts are the same whether the writer decodes a message (no filter, no
// redaction) or the emitting goroutine does (filters, limits, redaction).
func TestFlagsOnEveryPath(t *testing.T) {
	in := []struct {
		payload string
		flags   capfile.Flags
	}{
		{`{"session_id":"s","a":1}`, 0},
		{"{\"session_id\":\"s\",\"a\":\"caf\xe9\"}", capfile.FlagInvalidUTF8},
		{`{"session_id":"s","a":`, capfile.FlagInvalidJSON},
		{"{\"session_id\":\"s\xe9", capfile.FlagInvalidJSON | capfile.FlagInvalidUTF8},
		{"\xef\xbb\xbf{\"session_id\":\"s\"}", capfile.FlagInvalidJSON},
	}
	for name, cfg := range map[string]Config{
		"writer":     {},
		"filter":     {Filter: msgfilter.Filter{Sessions: []string{"s"}}},
		"max-events": {MaxEvents: 100},
		"redaction":  {Redact: []string{"zzz"}},
	} {
		t.Run(name, func(t *testing.T) {
			r, path := newTest(t, cfg)
			emit := r.Emit(0)
			for i, m := range in {
				if err := emit(msg(capfile.KindReceived, int64(i), m.payload)); err != nil {
					t.Fatal(err)
				}
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			_, recs := readAll(t, path)
			if len(recs) != len(in) {
				t.Fatalf("%d records, want %d", len(recs), len(in))
			}
			for i, m := range in {
				if recs[i].Flags != m.flags {
					t.Errorf("%q: flags %v, want %v", m.payload, recs[i].Flags, m.flags)
				}
			}
			if st := r.Stats(); st.InvalidJSON != 3 || st.InvalidUTF8 != 2 {
				t.Errorf("stats: %d invalid JSON, %d invalid UTF-8; want 3 and 2", st.InvalidJSON, st.InvalidUTF8)
			}
		})
	}
}
