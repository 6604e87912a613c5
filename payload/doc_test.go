package payload

import (
	"fmt"
	"strings"
	"testing"
)

// TestDecodeValidity: the verdict, the kind, the first error's offset and
// message, the byte-order mark and UTF-8 status of payloads of every shape.
func TestDecodeValidity(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     string
		valid  bool
		kind   Kind
		object bool
		errAt  int
		errMsg string
		bom    bool
		utf8   bool
	}{
		{"object", `{"a":1}`, true, Object, true, 0, "", false, true},
		{"empty object with space", " \t{ }\r\n", true, Object, true, 0, "", false, true},
		{"array", `[1,2]`, true, Array, false, 0, "", false, true},
		{"string", `"x"`, true, String, false, 0, "", false, true},
		{"number", `-0.5e3`, true, Number, false, 0, "", false, true},
		{"literal", `null`, true, Null, false, 0, "", false, true},
		{"bom object", "\xEF\xBB\xBF{\"a\":1}", true, Object, true, 0, "", true, true},
		{"empty", ``, false, Absent, false, 0, "empty message", false, true},
		{"blank", `   `, false, Absent, false, 3, "empty message", false, true},
		{"garbage value", `{"a": @@@}`, false, Object, false, 6, "unexpected character '@'", false, true},
		{"bad literal", `{"a":tru}`, false, Object, false, 5, "invalid literal (JSON allows only true, false and null)", false, true},
		{"leading zero", `{"a":01}`, false, Object, false, 6, "expected ',' or '}' after a member", false, true},
		{"no fraction digits", `{"a":1.}`, false, Object, false, 7, "invalid number: no digits after the decimal point", false, true},
		{"no exponent digits", `[1e]`, false, Array, false, 3, "invalid number: no digits in the exponent", false, true},
		{"unterminated string", `{"a":"bc`, false, Object, false, 8, "unterminated string", false, true},
		{"control character", "{\"a\":\"b\tc\"}", false, Object, false, 7, "control character in a string (must be escaped)", false, true},
		{"bad escape", `{"a":"\x"}`, false, Object, false, 7, "invalid escape in a string", false, true},
		{"bad unicode escape", `{"a":"\u12g4"}`, false, Object, false, 7, `invalid \u escape in a string`, false, true},
		{"unquoted name", `{a:1}`, false, Object, false, 1, "expected a quoted member name", false, true},
		{"missing colon", `{"a" 1}`, false, Object, false, 5, "expected ':' after a member name", false, true},
		{"trailing comma", `{"a":1,}`, false, Object, false, 7, "expected a quoted member name", false, true},
		{"data after object", `{"a":1} x`, false, Object, false, 8, "data after the end of the object", false, true},
		{"two values", `1 2`, false, Number, false, 2, "data after the end of the value", false, true},
		{"nested bad", `{"a":{"b":[1,}]}}`, false, Object, false, 13, "unexpected character '}'", false, true},
		{"truncated", `{"type":"aaep:x"`, false, Object, false, 16, "expected ',' or '}' after a member", false, true},
		{"bom then garbage", "\xEF\xBB\xBFx", false, Invalid, false, 3, "unexpected character 'x'", true, true},
		{"latin-1 in string", "{\"a\":\"caf\xe9\"}", true, Object, true, 0, "", false, false},
		{"utf-8 in string", "{\"a\":\"café\"}", true, Object, true, 0, "", false, true},
		{"latin-1 outside JSON", "caf\xe9", false, Invalid, false, 0, "unexpected character 'c'", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decode([]byte(tc.in))
			if d.Valid() != tc.valid || d.Kind() != tc.kind || d.IsObject() != tc.object || d.BOM() != tc.bom || d.UTF8() != tc.utf8 {
				t.Errorf("valid %v kind %v object %v bom %v utf8 %v, want %v %v %v %v %v",
					d.Valid(), d.Kind(), d.IsObject(), d.BOM(), d.UTF8(), tc.valid, tc.kind, tc.object, tc.bom, tc.utf8)
			}
			err := d.Err()
			switch {
			case tc.valid && err != nil:
				t.Errorf("valid payload with error %v", err)
			case !tc.valid && err == nil:
				t.Errorf("invalid payload without an error")
			case !tc.valid && (err.Offset != tc.errAt || err.Msg != tc.errMsg):
				t.Errorf("error %q at %d, want %q at %d", err.Msg, err.Offset, tc.errMsg, tc.errAt)
			}
		})
	}
}

// TestDecodeMembers: members in order, the last of repeated names wins,
// the first repetition is noted, and names with escapes are unescaped;
// the index that large objects use answers as the search does.
func TestDecodeMembers(t *testing.T) {
	d := Decode([]byte(`{"a":1,"b\u0021":"x","a":[true],"c":{"d":null}}`))
	if n := len(d.Members()); n != 4 {
		t.Fatalf("%d members, want 4", n)
	}
	if got := string(d.Members()[1].Name); got != "b!" {
		t.Errorf("escaped name read as %q", got)
	}
	if got := string(d.Get("a")); got != "[true]" {
		t.Errorf("a = %s, want the last value", got)
	}
	if got := string(d.Get("b!")); got != `"x"` {
		t.Errorf("b! = %s", got)
	}
	if d.Get("zz") != nil || d.Lookup("zz") != -1 {
		t.Errorf("absent member found")
	}
	if d.Stats().Dup != 2 {
		t.Errorf("Dup = %d, want 2", d.Stats().Dup)
	}
	for _, n := range []int{3, indexMin - 1, indexMin, 40} {
		var b strings.Builder
		b.WriteString(`{"type":"t"`)
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, `,"x%d":%d`, i, i)
		}
		b.WriteString(`,"x1":"again"}`)
		var d Doc
		for round := 0; round < 2; round++ { // the second round reuses the Doc
			d.Decode([]byte(b.String()))
			if got := d.Stats().Dup; got != n+1 {
				t.Errorf("%d members, round %d: Dup = %d, want %d", n, round, got, n+1)
			}
			if v, _ := d.Get("x1").Str(); v != "again" {
				t.Errorf("%d members, round %d: x1 = %q, want the last value", n, round, v)
			}
			if k, ok := d.Get(fmt.Sprintf("x%d", n-1)).Int(); !ok || k != int64(n-1) {
				t.Errorf("%d members, round %d: last member = %d %v", n, round, k, ok)
			}
		}
		d.Decode([]byte(`{"type":"t","x1":2}`))
		if d.Stats().Dup != -1 || len(d.Members()) != 2 || string(d.Get("x1")) != "2" || d.Get("x5") != nil {
			t.Errorf("after %d members, a small object reads as %v", n, d.Members())
		}
	}
}

// TestDecodeRouting: the routing fields of each protocol, unescaped, the
// last string member winning, and what a broken payload gave before its
// error.
func TestDecodeRouting(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Routing
		key  string
	}{
		{`{"type":"aaep:agent.tool.invoked","event_id":"evt_1","session_id":"sess_1","urgency":"critical","timestamp":"2026-01-01T00:00:00Z"}`,
			Routing{Type: "aaep:agent.tool.invoked", EventID: "evt_1", SessionID: "sess_1", Urgency: "critical", Timestamp: "2026-01-01T00:00:00Z"}, "sess_1"},
		{`{"performative":"PROPOSE","sessionId":"s-1","messageId":"m\u002d1"}`,
			Routing{Performative: "PROPOSE", ASPSessionID: "s-1", ASPMessageID: "m-1"}, "s-1"},
		{`{"type":"message","envelope":{"performative":"ACCEPT"}}`, Routing{Type: "message", ASPEnvelope: true}, ""},
		{`{"event":"agent_transition","run_id":"r1","ts":"x","type":5}`, Routing{Event: "agent_transition", RunID: "r1", TS: "x"}, "r1"},
		{`{"type":"a","type":"b"}`, Routing{Type: "b"}, ""},
		{`{"type":"a","type":7}`, Routing{}, ""},
		{`{"session_id":"sess_9","type":"aaep:x", "a": @@@}`, Routing{SessionID: "sess_9", Type: "aaep:x"}, "sess_9"},
		{`{"nested":{"type":"no"}}`, Routing{}, ""},
	} {
		d := Decode([]byte(tc.in))
		if d.Routing != tc.want || d.Routing.SessionKey() != tc.key {
			t.Errorf("%s: routing %+v (key %q), want %+v (%q)", tc.in, d.Routing, d.Routing.SessionKey(), tc.want, tc.key)
		}
	}
}

// TestDecodeStats: depth, the longest string and where it is, the first
// big integer and its member, non-ASCII, and nesting past MaxDepth.
func TestDecodeStats(t *testing.T) {
	d := Decode([]byte(`{"a":[1,{"b":"xyz"}],"big":[9007199254740992,-9007199254740993,1e300],"s":"héllo wörld"}`))
	st := d.Stats()
	if st.Depth != 3 || st.LongString != 13 || st.LongStringMember != 2 || st.LongStringAt != 74 {
		t.Errorf("depth %d, long string %d at %d in member %d", st.Depth, st.LongString, st.LongStringAt, st.LongStringMember)
	}
	if string(st.BigInt) != "-9007199254740993" || st.BigIntMember != 1 || !st.NonASCII || st.TooDeep {
		t.Errorf("big int %s in member %d, non-ASCII %v, too deep %v", st.BigInt, st.BigIntMember, st.NonASCII, st.TooDeep)
	}
	deep := func(open, mid, close string) []byte {
		return []byte(`{"a":1,"x":` + strings.Repeat(open, MaxDepth+5) + mid + strings.Repeat(close, MaxDepth+5) + `,"z":"end"}`)
	}
	for name, tc := range map[string]struct {
		in    []byte
		valid bool
	}{
		"deep arrays":        {deep(`[`, `{"k":[true,null,"s"]}`, `]`), true},
		"deep objects":       {deep(`{"k":`, `[]`, `}`), true},
		"mismatched bracket": {deep(`[`, `1`, `}`), false},
		"bad literal":        {deep(`[`, `nul`, `]`), false},
		"missing colon":      {deep(`{"k"`, ``, `}`), false},
		"unterminated":       {[]byte(`{"x":` + strings.Repeat(`[`, 3*MaxDepth)), false},
	} {
		d := Decode(tc.in)
		if d.Valid() != tc.valid {
			t.Errorf("%s: valid %v (%v)", name, d.Valid(), d.Err())
		}
		if tc.valid && (!d.Stats().TooDeep || d.Stats().Depth != MaxDepth || string(d.Get("z")) != `"end"`) {
			t.Errorf("%s: too deep %v, depth %d, z %s", name, d.Stats().TooDeep, d.Stats().Depth, d.Get("z"))
		}
	}
}

// TestDecodeReuseAllocs: decoding into a reused Doc allocates nothing for
// a message whose routing strings were seen before, except identifiers.
func TestDecodeReuseAllocs(t *testing.T) {
	raw := []byte(`{"type":"aaep:agent.tool.invoked","urgency":"normal","tool":"x","n":[1,2,{"a":"b"}]}`)
	var d Doc
	d.Decode(raw)
	if n := testing.AllocsPerRun(100, func() { d.Decode(raw) }); n != 0 {
		t.Errorf("%v allocations per Decode, want 0", n)
	}
	var b strings.Builder
	b.WriteString(`{"type":"t"`)
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&b, `,"member%d":%d`, i, i)
	}
	b.WriteString(`}`)
	many := []byte(b.String())
	d.Decode(many)
	if n := testing.AllocsPerRun(100, func() { d.Decode(many) }); n != 0 {
		t.Errorf("%v allocations per Decode of 101 members, want 0", n)
	}
	if d.Lookup("member99") != 100 || d.Lookup("member100") != -1 || d.Stats().Dup != -1 {
		t.Errorf("Lookup in 101 members: %d %d, Dup %d", d.Lookup("member99"), d.Lookup("member100"), d.Stats().Dup)
	}
}
