package peek

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// reference decodes the routing fields of a valid JSON object with
// encoding/json. ok is false when the input is out of scope for a
// comparison: not valid JSON, not UTF-8, not an object, or with a duplicate
// key (where "last wins" and "last string wins" may differ).
func reference(b []byte) (f Fields, ok bool) {
	if !json.Valid(b) || !utf8.Valid(b) {
		return f, false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return f, false
	}
	f.Object = true
	seen := map[string]bool{}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return f, false
		}
		key := kt.(string)
		if seen[key] {
			return f, false
		}
		seen[key] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return f, false
		}
		if key == "envelope" && raw[0] == '{' {
			f.ASPHasEnvelop = true
		}
		var s string
		if raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
			continue
		}
		if dst := f.slot([]byte(key)); dst != nil {
			*dst = s
		}
	}
	return f, true
}

func TestPeekMatchesEncodingJSON(t *testing.T) {
	for _, in := range []string{
		`{"type":"aaep:agent.tool.invoked","event_id":"evt_1","session_id":"s","urgency":"critical","timestamp":"t"}`,
		`{"t\u0079pe":"escaped key","producer":{"type":"nested"}}`,
		`{"summary":"` + strings.Repeat("long plain text ", 40) + `","type":"after a long string"}`,
		`{"a":"x\\\"y","type":"b\u00e9"}`,
		`{"type":"abc","x":[1,2,{"y":"z"}],"event":"e","run_id":"r","ts":"1"}`,
	} {
		want, ok := reference([]byte(in))
		if !ok {
			t.Fatalf("reference rejects %q", in)
		}
		if got := Peek([]byte(in)); got != want {
			t.Errorf("Peek(%q) =\n %+v, want\n %+v", in, got, want)
		}
	}
}

// FuzzPeek checks Peek against encoding/json on every valid UTF-8 JSON
// object without duplicate keys, and that it never panics on anything.
func FuzzPeek(f *testing.F) {
	f.Add([]byte(`{"type":"aaep:agent.session.started","session_id":"sess_1","x":[{"a":"b"}]}`))
	f.Add([]byte(`{"t\u0079pe":"a\"b","urgency":"normal","envelope":{}}`))
	f.Add([]byte(`{"performative":"PROPOSE","sessionId":"s","messageId":"m"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got := Peek(b)
		want, ok := reference(b)
		if ok && got != want {
			t.Fatalf("Peek(%q) =\n %+v, want\n %+v", b, got, want)
		}
	})
}

func BenchmarkPeek(b *testing.B) {
	ev := []byte(`{"@context":"https://aaep-protocol.org/context/v1","type":"aaep:agent.tool.invoked","event_id":"evt_0000000000000012","session_id":"sess_test01","timestamp":"2026-05-24T14:22:11.084Z","producer":{"agent_id":"retirement-planner","agent_version":"1.4.2"},"urgency":"normal","sequence_number":12,"summary_normal":"Step 12 of the retirement plan.","summary_detailed":"` + strings.Repeat("Checking balances and projected income. ", 3) + `"}`)
	b.SetBytes(int64(len(ev)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if f := Peek(ev); !f.Object {
			b.Fatal("not an object")
		}
	}
}
