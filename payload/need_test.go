package payload

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

// needs are the decodings DecodeOnly is held to, from nothing to all.
var needs = []Need{0, NeedMembers, NeedStats, NeedSession, NeedRouting, NeedMembers | NeedStats, NeedStats | NeedSession, NeedAll}

// checkNeed holds d, decoded by DecodeOnly with need, to full, the same
// payload decoded by Decode: what every decoding gives and what need asks
// for are equal, the rest is zero.
func checkNeed(t *testing.T, d, full *Doc, need Need) {
	t.Helper()
	in := full.Raw()
	if d.Valid() != full.Valid() || d.JSONValid() != full.JSONValid() || d.Kind() != full.Kind() || d.BOM() != full.BOM() ||
		d.UTF8() != full.UTF8() || d.Start() != full.Start() || !reflect.DeepEqual(d.Err(), full.Err()) {
		t.Fatalf("DecodeOnly(%.60q, %b): valid %v/%v kind %v bom %v utf8 %v start %d err %v; Decode: %v/%v %v %v %v %d %v", in, need,
			d.Valid(), d.JSONValid(), d.Kind(), d.BOM(), d.UTF8(), d.Start(), d.Err(),
			full.Valid(), full.JSONValid(), full.Kind(), full.BOM(), full.UTF8(), full.Start(), full.Err())
	}
	st, fst := d.Stats(), full.Stats()
	if st.Depth != fst.Depth || st.TooDeep != fst.TooDeep || st.NonASCII != fst.NonASCII {
		t.Fatalf("DecodeOnly(%.60q, %b): depth %d too deep %v non-ASCII %v; Decode: %d %v %v", in, need,
			st.Depth, st.TooDeep, st.NonASCII, fst.Depth, fst.TooDeep, fst.NonASCII)
	}
	want := Stats{Depth: fst.Depth, TooDeep: fst.TooDeep, NonASCII: fst.NonASCII, LongStringMember: -1, BigIntMember: -1, Dup: -1}
	if need&NeedMembers != 0 {
		want.Dup = fst.Dup
		if len(d.Members()) != len(full.Members()) {
			t.Fatalf("DecodeOnly(%.60q, %b): %d members, Decode %d", in, need, len(d.Members()), len(full.Members()))
		}
		for i, m := range d.Members() {
			if fm := full.Members()[i]; string(m.Name) != string(fm.Name) || string(m.Value) != string(fm.Value) {
				t.Fatalf("DecodeOnly(%.60q, %b): member %d %s:%s, Decode %s:%s", in, need, i, m.Name, m.Value, fm.Name, fm.Value)
			}
		}
	} else if len(d.Members()) != 0 || d.Get("type") != nil || d.Lookup("type") != -1 {
		t.Fatalf("DecodeOnly(%.60q, %b): members %d without NeedMembers", in, need, len(d.Members()))
	}
	if need&NeedStats != 0 {
		want.LongString, want.LongStringAt, want.BigInt = fst.LongString, fst.LongStringAt, fst.BigInt
		if need&NeedMembers != 0 {
			want.LongStringMember, want.BigIntMember = fst.LongStringMember, fst.BigIntMember
		}
	}
	if !reflect.DeepEqual(*st, want) {
		t.Fatalf("DecodeOnly(%.60q, %b): stats %+v, want %+v", in, need, *st, want)
	}
	var wr Routing
	switch {
	case need&NeedRouting != 0:
		wr = full.Routing
	case need&NeedSession != 0:
		wr = Routing{SessionID: full.Routing.SessionID, ASPSessionID: full.Routing.ASPSessionID, RunID: full.Routing.RunID}
	}
	if d.Routing != wr {
		t.Fatalf("DecodeOnly(%.60q, %b): routing %+v, want %+v", in, need, d.Routing, wr)
	}
	if wantNeed := need | (need&NeedRouting)>>1; d.Decoded() != wantNeed || full.Decoded() != NeedAll {
		t.Fatalf("DecodeOnly(%.60q, %b): Decoded %b (Decode's %b)", in, need, d.Decoded(), full.Decoded())
	}
}

// TestDecodeOnly: each Need gives what Decode gives for what it asks,
// zero for the rest, on payloads of every shape, into a reused Doc that
// held a different payload before.
func TestDecodeOnly(t *testing.T) {
	inputs := append([]string{
		`{"type":"aaep:agent.tool.invoked","event_id":"evt_1","session_id":"sess_1","timestamp":"2026-01-01T00:00:00Z","urgency":"critical","detail":"a long string here","n":9007199254740993}`,
		`{"performative":"PROPOSE","sessionId":"s-1","messageId":"m\u002d1","envelope":{"x":"y"},"a":1,"a":2}`,
		`{"event":"agent_transition","run_id":"r\"1","ts":"x"}`,
		`{"session_id":"sess_9","type":"aaep:x", "a": @@@}`,
		"\xEF\xBB\xBF{\"s\":\"caf\xc3\xa9\",\"session_id\":\"\xe2\x82\xac\"}",
		`{"x":` + strings.Repeat(`[`, MaxDepth+2) + strings.Repeat(`]`, MaxDepth+2) + `,"session_id":"deep"}`,
	}, fuzzSeeds...)
	var d Doc
	for _, in := range inputs {
		full := Decode([]byte(in))
		for _, need := range needs {
			d.Decode([]byte(`{"type":"before","session_id":"old","z":"a string that is long"}`))
			d.DecodeOnly([]byte(in), need)
			checkNeed(t, &d, full, need)
		}
	}
}

// TestDecodeOnlySession: what the recorder asks for on an AAEP event:
// the session key and the flags, nothing else.
func TestDecodeOnlySession(t *testing.T) {
	for _, tc := range []struct {
		in        string
		key       string
		jsonValid bool
	}{
		{`{"type":"aaep:agent.tool.invoked","event_id":"evt_1","session_id":"sess_1","n":[1,{"session_id":"no"}]}`, "sess_1", true},
		{`{"performative":"PROPOSE","sessionId":"019478a3"}`, "019478a3", true},
		{`{"run_id":"run_1","event":"agent_transition"}`, "run_1", true},
		{`{"session_id":"a","session_id":"b\u0021"}`, "b!", true},
		{`{"session_id":"a","session_id":3}`, "", true},
		{`{"session_id":"sess_2","x":tru}`, "sess_2", false},
		{"\xEF\xBB\xBF{\"session_id\":\"s\"}", "s", false},
	} {
		var d Doc
		d.DecodeOnly([]byte(tc.in), NeedSession)
		if d.Routing.SessionKey() != tc.key || d.JSONValid() != tc.jsonValid || d.Routing.Type != "" || d.Routing.EventID != "" || len(d.Members()) != 0 {
			t.Errorf("%s: key %q json-valid %v type %q event_id %q members %d, want %q %v and nothing else",
				tc.in, d.Routing.SessionKey(), d.JSONValid(), d.Routing.Type, d.Routing.EventID, len(d.Members()), tc.key, tc.jsonValid)
		}
	}
}

// TestRoutingStrings: the strings made for the routing fields, escaped or
// not, interned or sharing one allocation, are right and stay right after
// the Doc is reused.
func TestRoutingStrings(t *testing.T) {
	in := `{"event_id":"evt\u005f1","type":"aaep:a\u002eb","timestamp":"t\"1","session_id":"s\u0031","messageId":"m","ts":"x\\y","urgency":"high","run_id":"r"}`
	want := Routing{EventID: "evt_1", Type: "aaep:a.b", Timestamp: `t"1`, SessionID: "s1", ASPMessageID: "m", TS: `x\y`, Urgency: "high", RunID: "r"}
	var d Doc
	d.Decode([]byte(in))
	got := d.Routing
	if got != want {
		t.Fatalf("routing %+v, want %+v", got, want)
	}
	d.Decode([]byte(`{"event_id":"EVT_2","timestamp":"T2","type":"other","session_id":"s2"}`))
	if got != want || d.Routing.EventID != "EVT_2" || d.Routing.Timestamp != "T2" || d.Routing.SessionID != "s2" {
		t.Fatalf("after reuse: kept %+v, new %+v", got, d.Routing)
	}
	long := strings.Repeat("x", internMaxLen+1)
	d.Decode([]byte(`{"session_id":"` + long + `","type":"` + long + `y"}`))
	if d.Routing.SessionID != long || d.Routing.Type != long+"y" {
		t.Fatalf("long strings: %q %q", d.Routing.SessionID, d.Routing.Type)
	}
}

// TestInterned: session keys and names met before are not allocated again,
// a Doc sharing another's table finds its strings, and many more distinct
// values than the table holds are all read right.
func TestInterned(t *testing.T) {
	msg := func(i int) []byte {
		return []byte(fmt.Sprintf(`{"type":"aaep:agent.tool.invoked","session_id":"sess_%06d","urgency":"normal"}`, i))
	}
	var a, b Doc
	b.ShareInterned(&a)
	a.Decode(msg(1))
	b.Decode(msg(1))
	if unsafe.StringData(a.Routing.SessionID) != unsafe.StringData(b.Routing.SessionID) || unsafe.StringData(a.Routing.Type) != unsafe.StringData(b.Routing.Type) {
		t.Errorf("a Doc sharing the table made its own strings")
	}
	one := msg(1)
	if n := testing.AllocsPerRun(100, func() { b.Decode(one) }); n != 0 {
		t.Errorf("%v allocations per Decode of a message met before, want 0", n)
	}
	var c Doc
	for round := range 2 {
		for i := range 5 * internSlots {
			c.Decode(msg(i))
			if want := fmt.Sprintf("sess_%06d", i); c.Routing.SessionID != want || c.Routing.Type != "aaep:agent.tool.invoked" {
				t.Fatalf("round %d message %d: session %q type %q", round, i, c.Routing.SessionID, c.Routing.Type)
			}
		}
	}
}

// TestDecodeAllocs: an event's identifier and time, which differ in every
// message, cost one allocation between them; DecodeOnly with NeedSession
// allocates nothing once the session was met.
func TestDecodeAllocs(t *testing.T) {
	raw := []byte(`{"type":"aaep:agent.tool.invoked","event_id":"evt_1","session_id":"sess_1","timestamp":"2026-01-01T00:00:00Z","urgency":"normal","n":[1,2]}`)
	var d Doc
	d.Decode(raw)
	if n := testing.AllocsPerRun(100, func() { d.Decode(raw) }); n != 1 {
		t.Errorf("%v allocations per Decode, want 1", n)
	}
	if n := testing.AllocsPerRun(100, func() { d.DecodeOnly(raw, NeedSession) }); n != 0 {
		t.Errorf("%v allocations per DecodeOnly(NeedSession), want 0", n)
	}
	if d.Routing.SessionID != "sess_1" || d.Routing.EventID != "" {
		t.Errorf("DecodeOnly(NeedSession): %+v", d.Routing)
	}
}

// TestInternTableOnReuse: a Doc decoded once (the package's Decode) makes
// no table of interned strings; a Doc decoded again does, and keeps it.
func TestInternTableOnReuse(t *testing.T) {
	raw := []byte(`{"type":"aaep:agent.tool.invoked","session_id":"sess_1"}`)
	once := Decode(raw)
	if once.interned != nil || once.Routing.Type != "aaep:agent.tool.invoked" || once.Routing.SessionID != "sess_1" {
		t.Errorf("one decoding: table %v, routing %+v", once.interned != nil, once.Routing)
	}
	var d Doc
	d.DecodeOnly(raw, NeedSession)
	d.Decode(raw)
	table := d.interned
	d.Decode(raw)
	if table == nil || d.interned != table || d.Routing.Type != "aaep:agent.tool.invoked" {
		t.Errorf("reused Doc: table %p then %p, routing %+v", table, d.interned, d.Routing)
	}
}
