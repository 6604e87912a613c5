package aaep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/internal/sample"
	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol"
)

// handChecks pairs each hand-written check with the catalog pattern it
// replaces on the hot path (§1.2).
var handChecks = []struct {
	name  string
	check func([]byte) bool
	re    *regexp.Regexp
}{
	{"event_id", func(s []byte) bool { return isID(s, "evt_") }, reEventID},
	{"session_id", func(s []byte) bool { return isID(s, "sess_") }, reSessionID},
	{"reply_token", func(s []byte) bool { return isID(s, "rpl_") }, reReplyToken},
	{"subscription_id", func(s []byte) bool { return isID(s, "sub_") }, reSubscription},
	{"tool_call_id", func(s []byte) bool { return isID(s, "call_") }, reToolCallID},
	{"output_id", func(s []byte) bool { return isID(s, "out_") }, reOutputID},
	{"tool", isToolName, reTool},
	{"language tag", isLanguageTag, reLanguageTag},
	{"script", isScript, reScript},
	{"content_type", isContentType, reContentType},
}

var patternSamples = []string{
	"", "evt_", "evt_a", "evt_" + strings.Repeat("a", 64), "evt_" + strings.Repeat("a", 65), "evt_abc\n", "evt_ab-c", "EVT_abc",
	"sess_2c91a7", "sess_", "rpl_4f8a", "sub_8a4f", "call_7a2b", "out_3a8c2", "evt_é",
	"fetch_balance", "_x", "1fetch", "a.b-c_d", strings.Repeat("t", 256), strings.Repeat("t", 257),
	"en", "en-US", "es-419", "zh-Hans-CN", "abcdefghi", "en-", "-en", "en--US", "en_US", "x-0",
	"Latn", "latn", "LATN", "Lat", "Latin",
	"text/plain", "application/ld+json", "text", "/plain", "text/", "1text/plain", "text/plain;charset=utf-8",
}

// TestHandChecksMatchPatterns holds every hand-written check to its regex.
func TestHandChecksMatchPatterns(t *testing.T) {
	for _, h := range handChecks {
		for _, s := range patternSamples {
			if got, want := h.check([]byte(s)), h.re.MatchString(s); got != want {
				t.Errorf("%s check of %q = %v, pattern %s says %v", h.name, s, got, h.re, want)
			}
		}
	}
}

// FuzzHandChecks compares the hand checks with their patterns, and the
// timestamp parser with the prose-strict pattern, on arbitrary strings.
func FuzzHandChecks(f *testing.F) {
	for _, s := range patternSamples {
		f.Add(s)
	}
	for _, s := range timestampSamples {
		f.Add(s.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, h := range handChecks {
			if got, want := h.check([]byte(s)), h.re.MatchString(s); got != want {
				t.Errorf("%s check of %q = %v, pattern says %v", h.name, s, got, want)
			}
		}
		checkTimestampAgainstPattern(t, s)
	})
}

// checkTimestampAgainstPattern: the parser accepts with 0, 3 or 6 fraction
// digits exactly what the prose-strict pattern accepts, minus dates the
// calendar does not have (which the pattern cannot see).
func checkTimestampAgainstPattern(t *testing.T, s string) {
	t.Helper()
	p := parseStrict(s)
	proseOK := p.ok && (!p.hasFrac || p.fracLen == 3 || p.fracLen == 6)
	reOK := reTimestampProse.MatchString(s)
	if proseOK && !reOK {
		t.Errorf("parser accepts %q, the prose pattern does not", s)
	}
	if reOK && !proseOK {
		// Only an impossible calendar date may separate them.
		if day, err := time.Parse("2006-01-02", s[:10]); err == nil && day.Format("2006-01-02") == s[:10] {
			t.Errorf("prose pattern accepts %q, the parser does not (%s)", s, p.problem)
		}
	}
}

var timestampSamples = []struct {
	in      string
	ok      bool
	fracLen int
	instant string // RFC 3339 in UTC, when ok
}{
	{"2026-05-24T14:22:11.342Z", true, 3, "2026-05-24T14:22:11.342Z"},
	{"2026-05-24T15:22:11.342+01:00", true, 3, "2026-05-24T14:22:11.342Z"},
	{"2026-05-24T09:22:11-05:00", true, 0, "2026-05-24T14:22:11Z"},
	{"2026-05-24T14:22:11.342123Z", true, 6, "2026-05-24T14:22:11.342123Z"},
	{"2026-05-24T14:22:11.3Z", true, 1, "2026-05-24T14:22:11.3Z"},
	{"2024-02-29T00:00:00Z", true, 0, "2024-02-29T00:00:00Z"},
	{"2026-06-30T23:59:60Z", true, 0, "2026-07-01T00:00:00Z"},
	{"2025-02-29T00:00:00Z", false, 0, ""},
	{"2026-05-24t14:22:11Z", false, 0, ""},
	{"2026-05-24T14:22:11z", false, 0, ""},
	{"2026-05-24T14:22:11", false, 0, ""},
	{"2026-05-24T14:22:11.Z", false, 0, ""},
	{"2026-05-24T14:22:11+1:00", false, 0, ""},
	{"2026-05-24T14:22:11+24:00", false, 0, ""},
	{"May 24, 2026 14:22:11", false, 0, ""},
	{"2026-13-01T00:00:00Z", false, 0, ""},
	{"2026-05-24T14:61:00Z", false, 0, ""},
}

func TestParseStrict(t *testing.T) {
	for _, c := range timestampSamples {
		p := parseStrict(c.in)
		if p.ok != c.ok {
			t.Errorf("parseStrict(%q).ok = %v (%s), want %v", c.in, p.ok, p.problem, c.ok)
			continue
		}
		checkTimestampAgainstPattern(t, c.in)
		if !c.ok {
			if p.problem == "" {
				t.Errorf("parseStrict(%q) gives no reason", c.in)
			}
			continue
		}
		if p.fracLen != c.fracLen {
			t.Errorf("parseStrict(%q).fracLen = %d, want %d", c.in, p.fracLen, c.fracLen)
		}
		if got := p.t.UTC().Format(time.RFC3339Nano); got != c.instant {
			t.Errorf("parseStrict(%q) = %s, want %s", c.in, got, c.instant)
		}
	}
}

// TestDecodeFields: the decoder's top-level split and convenience fields.
func TestDecodeFields(t *testing.T) {
	raw := []byte(` {"type":"https://aaep-protocol.org/types/agent.tool.invoked", "event_id":"evt_1","session_id":"sess_\u0031",` +
		`"timestamp":"2026-05-24T15:22:11.342+01:00","urgency":"normal","sequence_number":7,"tool":"x","custom":{"a":[1,{"b":2}]},` +
		`"irreversible":true,"custom":3} `)
	var ev Event
	if err := decodeBytes(raw, &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Type != "https://aaep-protocol.org/types/agent.tool.invoked" || ev.Core != TypeToolInvoked || !ev.IsEvent {
		t.Errorf("type %q core %q event %v", ev.Type, ev.Core, ev.IsEvent)
	}
	if ev.EventID != "evt_1" || ev.SessionID != "sess_1" || ev.Urgency != "normal" {
		t.Errorf("ids %q %q urgency %q", ev.EventID, ev.SessionID, ev.Urgency)
	}
	if !ev.TimeOK || !ev.Time.Equal(time.Date(2026, 5, 24, 14, 22, 11, 342e6, time.UTC)) {
		t.Errorf("time %v ok %v", ev.Time, ev.TimeOK)
	}
	if !ev.HasSeqNo || ev.SeqNo != 7 {
		t.Errorf("seqno %d %v", ev.SeqNo, ev.HasSeqNo)
	}
	if s, ok := ev.Str("tool"); !ok || s != "x" {
		t.Errorf("Str(tool) = %q %v", s, ok)
	}
	if b, ok := ev.Bool("irreversible"); !ok || !b {
		t.Errorf("Bool(irreversible) = %v %v", b, ok)
	}
	if n, ok := ev.Int("custom"); !ok || n != 3 {
		t.Errorf("Int(custom) = %d %v (the last duplicate wins)", n, ok)
	}
	if ev.scan.dupKey != "custom" || ev.scan.depth != 4 || ev.scan.keys != 10 {
		t.Errorf("scan stats %+v", ev.scan)
	}
	if _, ok := ev.Object("tool"); ok {
		t.Error("Object(tool) succeeded on a string")
	}
	if !ev.Has("custom") || ev.Has("missing") {
		t.Error("Has is wrong")
	}
	// The map is reused for the next message and holds only its fields.
	if err := decodeBytes([]byte(`{"type":"subscription.close"}`), &ev); err != nil {
		t.Fatal(err)
	}
	if len(ev.Fields()) != 1 || ev.IsEvent || ev.Core != "" || ev.Has("tool") {
		t.Errorf("second decode: fields %v event %v core %q", ev.Fields(), ev.IsEvent, ev.Core)
	}
}

// TestDecodeErrors: what is not a JSON object is refused with a position.
func TestDecodeErrors(t *testing.T) {
	for _, in := range []string{"", " ", "[]", `"x"`, "{", `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":tru}`, `{"a":1.}`, `{"a":-}`,
		`{"a":1e}`, `{"a":"\x"}`, `{"a":"\u12"}`, "{\"a\":\"\x01\"}", `{"a":1}x`, `{a:1}`, `{"a":[1,]}`, `{"a":NaN}`} {
		var ev Event
		err := decodeBytes([]byte(in), &ev)
		var de *decodeError
		if !errors.As(err, &de) {
			t.Errorf("decode(%q) = %v, want a decodeError", in, err)
			continue
		}
		if de.offset < 0 || de.offset > len(in) || !strings.Contains(err.Error(), "at byte") {
			t.Errorf("decode(%q) error %q has a bad offset %d", in, err, de.offset)
		}
	}
}

// FuzzEventFromDoc: the Event built from a payload decoding holds the
// decoding's members (the last of a repeated name), its routing strings and
// its verdict. (payload.FuzzDecode holds the decoding to encoding/json.)
func FuzzEventFromDoc(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{"a":[1,2,{"b":null}],"c":"\u00e9\n"}`, `[1]`, `{"a":1,"a":2}`, `{"a":-0.5e+3}`, `{"\u0061":true}`,
		`{"type":"aaep:agent.tool.invoked","session_id":"sess_1","type":3}`, "\xef\xbb\xbf{\"a\":1}", `{"a":tru}`,
		`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k3":"again","k17":17}`} {
		f.Add([]byte(s))
	}
	var ev Event
	var d payload.Doc
	f.Fuzz(func(t *testing.T, data []byte) {
		d.Decode(data)
		err := decode(&d, &ev)
		if (err == nil) != d.IsObject() {
			t.Fatalf("decode(%q) error %v, but the decoding says object=%v", data, err, d.IsObject())
		}
		if err != nil {
			return
		}
		fields := ev.Fields()
		for _, m := range d.Members() {
			want := d.Get(string(m.Name))
			if got, ok := fields[string(m.Name)]; !ok || !bytes.Equal(got, want) {
				t.Fatalf("decode(%q): field %q = %s, the decoding %s", data, m.Name, got, want)
			}
			if got := ev.raw(string(m.Name)); !bytes.Equal(got, want) {
				t.Fatalf("decode(%q): raw(%q) = %s, the decoding %s", data, m.Name, got, want)
			}
		}
		if len(fields) > len(d.Members()) || (len(fields) < len(d.Members())) != (ev.scan.dupKey != "") {
			t.Fatalf("decode(%q): %d fields of %d members, duplicate %q", data, len(fields), len(d.Members()), ev.scan.dupKey)
		}
		r := &d.Routing
		if ev.Type != r.Type || ev.EventID != r.EventID || ev.SessionID != r.SessionID || ev.Urgency != r.Urgency || ev.Timestamp != r.Timestamp {
			t.Fatalf("decode(%q): event strings differ from the routing fields %+v", data, *r)
		}
	})
}

// TestRawHelpers covers the typed readers of raw values.
func TestRawHelpers(t *testing.T) {
	ints := map[string]struct {
		v  int64
		ok bool
	}{"0": {0, true}, "-7": {-7, true}, "3.0": {3, true}, "1e3": {1000, true}, "1.5": {0, false}, `"3"`: {0, false},
		"99999999999999999999": {0, false}, "true": {0, false}, "": {0, false}}
	for in, w := range ints {
		if v, ok := payload.Value(in).Int(); v != w.v || ok != w.ok {
			t.Errorf("(%s).Int() = %d %v, want %d %v", in, v, ok, w.v, w.ok)
		}
	}
	if s, ok := payload.Value(`"a\"b\u00e9"`).Str(); !ok || s != `a"bé` {
		t.Errorf("Str = %q %v", s, ok)
	}
	if _, ok := payload.Value(`1`).Str(); ok {
		t.Error("Str accepted a number")
	}
	if f, ok := payload.Value(`-2.5e1`).Number(); !ok || f != -25 {
		t.Errorf("Number = %v %v", f, ok)
	}
	for in, want := range map[string]bool{"https://a.example/x?y=1#z": true, "queue://customer-service/advisor": true, "urn:isbn:1": true,
		"mailto:a@b.example": true, "not a uri": false, "/relative/path": false, "https://a.example/%zz": false, ":x": false, "1http://x": false} {
		if got := isURI([]byte(in)); got != want {
			t.Errorf("isURI(%q) = %v, want %v", in, got, want)
		}
	}
	for in, want := range map[string]bool{"2026-05-24T14:22:11.342Z": true, "2026-05-24t14:22:11.342123456z": true, "2026-05-24 14:22:11Z": false, "yesterday": false} {
		if got := isDateTime([]byte(in)); got != want {
			t.Errorf("isDateTime(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestFindSecret covers the secret heuristics one by one.
func TestFindSecret(t *testing.T) {
	for in, want := range map[string]bool{
		"password: hunter22":                    true,
		"PASSWORD=Tr0ub4dor&3":                  true,
		"Please reset your password.":           false,
		"password: ****":                        false,
		"aws_secret_access_key = wJalrXUtnFE":   true,
		"x-api-key: 0123456789":                 true,
		"Authorization: Basic YWxhZGRpbjpvcGVu": true,
		"bearer abcdefghijklmnop1234":           true,
		"the bearer of the letter":              false,
		"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5":      true,
		"ssh-rsa is an algorithm":               false,
		"sk-ant-api03-abcdefghijklmnopqrstu":    true,
		"desk-abcdefghijklmnopqrstuvwxyz":       false,
		"github_pat_11ABCDEFG0123456789abcdef":  true,
		"card 5555-5555-5555-4444 expires":      true,
		"card 5555-5555-5555-4445 expires":      false,
		"order 12345678901234567":               false,
		"SSN 078-05-1120":                       true,
		"SSN 000-12-3456":                       false,
		"range 123-45-67890":                    false,
	} {
		if got := findSecret([]byte(in)) != ""; got != want {
			t.Errorf("findSecret(%q) = %v (%q), want %v", in, got, findSecret([]byte(in)), want)
		}
	}
}

// BenchmarkDecode measures decoding one event as the engine and the
// checker do: the front end's pass into a reused Doc, then the Event built
// from it.
func BenchmarkDecode(b *testing.B) {
	raw := []byte(`{"@context":"https://aaep-protocol.org/context/v1","type":"aaep:agent.tool.completed","event_id":"evt_0f3c2a8b5d1e7f4a9c3b2a8b5d1e7f4a","session_id":"sess_2c91a7b4d23f1e88","timestamp":"2026-11-02T09:00:01.342Z","producer":{"agent_id":"travel-assistant","agent_version":"2.4.1"},"urgency":"normal","sequence_number":5,"tool":"search_flights","tool_call_id":"call_7a2b9c4e1d3f","status":"success","duration_ms":1885,"summary_normal":"Found 14 itineraries; the cheapest direct one costs 286 euros."}`)
	var ev Event
	var d payload.Doc
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	cpu0 := ProcessCPU()
	for i := 0; i < b.N; i++ {
		d.Decode(raw)
		if err := decode(&d, &ev); err != nil {
			b.Fatal(err)
		}
	}
	if cpu := ProcessCPU() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkDecodeBaseline is the reference the decoder is measured
// against: one json.Unmarshal into map[string]json.RawMessage, which
// validates and splits like decode but allocates every key and value.
func BenchmarkDecodeBaseline(b *testing.B) {
	raw := []byte(`{"@context":"https://aaep-protocol.org/context/v1","type":"aaep:agent.tool.completed","event_id":"evt_0f3c2a8b5d1e7f4a9c3b2a8b5d1e7f4a","session_id":"sess_2c91a7b4d23f1e88","timestamp":"2026-11-02T09:00:01.342Z","producer":{"agent_id":"travel-assistant","agent_version":"2.4.1"},"urgency":"normal","sequence_number":5,"tool":"search_flights","tool_call_id":"call_7a2b9c4e1d3f","status":"success","duration_ms":1885,"summary_normal":"Found 14 itineraries; the cheapest direct one costs 286 euros."}`)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	cpu0 := ProcessCPU()
	for i := 0; i < b.N; i++ {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			b.Fatal(err)
		}
	}
	if cpu := ProcessCPU() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

// decodeBytes decodes raw with the front end and builds ev from it.
func decodeBytes(raw []byte, ev *Event) error { return decode(payload.Decode(raw), ev) }

type nopReporter struct{}

func (nopReporter) Report(*protocol.Rule, string, *protocol.Message, string, string, ...any) {}
func (nopReporter) Step(protocol.Step)                                                       {}
func (nopReporter) SessionDone(protocol.SessionSummary)                                      {}

// BenchmarkSingleRules measures decoding plus every single-message rule
// (no engine, no sequence checker) over realistic ~430-byte events.
func BenchmarkSingleRules(b *testing.B) {
	events := sample.Events(4096, 42)
	c := New().NewChecker(nopReporter{}, nil).(*checker)
	msgs := make([]protocol.Message, len(events))
	for i, e := range events {
		msgs[i] = protocol.Message{Index: int64(i), Raw: e}
		msgs[i].Decode(new(payload.Doc))
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := ProcessCPU()
	for i := 0; i < b.N; i++ {
		m := &msgs[i%len(msgs)]
		c.m = m
		if err := decode(m.Doc, c.ev); err != nil {
			b.Fatal(err)
		}
		c.session = c.ev.SessionID
		c.runChecks(c.eventChecks)
		c.runChecks(c.coreChecks)
	}
	cpu := ProcessCPU() - cpu0
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	if cpu > 0 {
		b.ReportMetric(float64(b.N)/cpu.Seconds(), "events/cpu-s")
	}
}

// TestDecodeManyUnknownKeys: past the size where unknown keys are indexed,
// a repeated key is still found, and its last value wins.
func TestDecodeManyUnknownKeys(t *testing.T) {
	for _, n := range []int{3, unknownIndexMin - 1, unknownIndexMin, 40} {
		var b strings.Builder
		b.WriteString(`{"type":"aaep:agent.state.changed"`)
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, `,"x%d":%d`, i, i)
		}
		b.WriteString(`,"x1":"again"}`)
		var ev Event
		for round := 0; round < 2; round++ { // the second round reuses the Event
			if err := decodeBytes([]byte(b.String()), &ev); err != nil {
				t.Fatal(err)
			}
			if ev.scan.dupKey != "x1" || len(ev.unknown) != n {
				t.Errorf("%d keys, round %d: dupKey %q, %d unknown keys", n, round, ev.scan.dupKey, len(ev.unknown))
			}
			if v, _ := ev.Str("x1"); v != "again" {
				t.Errorf("%d keys, round %d: x1 = %q, want the last value", n, round, v)
			}
			if k, ok := ev.Int(fmt.Sprintf("x%d", n-1)); !ok || k != int64(n-1) {
				t.Errorf("%d keys, round %d: last key = %d %v", n, round, k, ok)
			}
		}
	}
}

// TestDecodeDeepNesting: nesting past payload.MaxDepth is valid JSON that the
// decoder reads without recursion, marking it too deep; a deep value with a
// mismatched bracket or a bad literal is still an error.
func TestDecodeDeepNesting(t *testing.T) {
	deep := func(open, mid, close string) []byte {
		return []byte(`{"a":1,"x":` + strings.Repeat(open, 3*payload.MaxDepth) + mid + strings.Repeat(close, 3*payload.MaxDepth) + `,"z":"end"}`)
	}
	var ev Event
	if err := decodeBytes(deep(`[`, `{"k":[true,null,"s"]}`, `]`), &ev); err != nil || !ev.scan.tooDeep || ev.Fields()["z"] == nil {
		t.Errorf("deep arrays: err %v tooDeep %v fields %v", err, ev.scan.tooDeep, ev.Fields())
	}
	if err := decodeBytes(deep(`{"k":`, `[]`, `}`), &ev); err != nil || !ev.scan.tooDeep {
		t.Errorf("deep objects: err %v tooDeep %v", err, ev.scan.tooDeep)
	}
	for name, bad := range map[string][]byte{
		"mismatched bracket": deep(`[`, `1`, `}`),
		"bad literal":        deep(`[`, `nul`, `]`),
		"missing colon":      deep(`{"k"`, ``, `}`),
		"unterminated":       []byte(`{"x":` + strings.Repeat(`[`, 3*payload.MaxDepth)),
	} {
		if err := decodeBytes(bad, &ev); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
