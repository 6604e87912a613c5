package aaep_test

import (
	"bytes"
	"testing"

	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/aaep"
)

// prepared returns raw prepared by the AAEP model, as the reading
// goroutine prepares it, and the Event Prepared finds for it.
func prepared(t testing.TB, raw []byte) (*protocol.Message, *aaep.Event) {
	t.Helper()
	eng, err := protocol.NewEngine([]protocol.Model{aaep.New()}, "", &protocol.Options{}, protocol.StreamInfo{}, protocol.Sink{})
	if err != nil {
		t.Fatal(err)
	}
	prep := eng.Preparation()
	m := &protocol.Message{Raw: raw}
	m.Decode(new(payload.Doc))
	prep.Prepare(m, prep.NewSlot(), false)
	return m, aaep.Prepared(m)
}

// fieldNames are known keys, in and out of the payloads below, and names
// the model does not know.
var fieldNames = []string{"type", "session_id", "tool", "tool_call_id", "status", "from_state", "progress",
	"reply_token", "x_vendor", "tool ", "", "Tool", "extensions", "note"}

// TestFieldSameAsDocGet reads every name from the prepared Event and from
// the payload's decoding: the same raw value (nil when absent), the last
// of repeated members, for known keys and others, many unknown ones too.
func TestFieldSameAsDocGet(t *testing.T) {
	many := []byte(`{"type":"aaep:agent.tool.invoked"`)
	for i := range 40 {
		many = append(many, `,"x_`...)
		many = append(many, byte('a'+i%26), byte('a'+i/26))
		many = append(many, `":1`...)
	}
	many = append(many, `,"x_vendor":"last","note":[1,2]}`...)
	for _, raw := range [][]byte{
		[]byte(`{"type":"aaep:agent.tool.invoked","session_id":"s1","tool":"search","tool_call_id":"c1","x_vendor":{"a":1}}`),
		[]byte(`{"tool":"first","status":"ok","tool":"second","x_vendor":1,"x_vendor":2}`),
		[]byte(`{"from_state":"idle","progress":{"percent":50},"reply_token":null,"":"empty name","tool ":"spaced"}`),
		[]byte("\ufeff" + `{"type":"aaep:agent.state.changed","from_state":"a","to_state":"b"}`),
		[]byte(`{"tool":"caf\u00e9","Tool":"upper","note":"x"}`),
		many,
	} {
		m, ev := prepared(t, raw)
		if ev == nil {
			t.Fatalf("%s: no prepared Event", raw)
		}
		for _, name := range fieldNames {
			got, want := ev.Field(aaep.FieldOf(name)), m.Doc.Get(name)
			if !bytes.Equal(got, want) || (got == nil) != (want == nil) {
				t.Errorf("%.40s: Field(%q) = %q, Doc.Get = %q", raw, name, got, want)
			}
			if aaep.FieldOf(name).Name() != name {
				t.Errorf("FieldOf(%q).Name() = %q", name, aaep.FieldOf(name).Name())
			}
		}
	}
}

// TestPreparedNone: no Event for a message that was not prepared, one
// that is not a JSON object, or one whose payload changed since.
func TestPreparedNone(t *testing.T) {
	if ev := aaep.Prepared(&protocol.Message{Raw: []byte(`{"tool":"x"}`)}); ev != nil {
		t.Error("an unprepared message has a prepared Event")
	}
	for _, raw := range []string{`[1,2]`, `"text"`, `{"tool":`, ``} {
		if _, ev := prepared(t, []byte(raw)); ev != nil {
			t.Errorf("%q: a prepared Event for a payload that is not a JSON object", raw)
		}
	}
	m, ev := prepared(t, []byte(`{"tool":"x"}`))
	if ev == nil {
		t.Fatal("no prepared Event")
	}
	m.Raw = []byte(`{"tool":"x"}`) // the same text, other bytes
	if aaep.Prepared(m) != nil {
		t.Error("a message whose payload changed keeps its prepared Event")
	}
}

// FuzzFieldSameAsDocGet: for any payload that is a JSON object, each of
// its member names reads the same from the prepared Event as from the
// decoding.
func FuzzFieldSameAsDocGet(f *testing.F) {
	for _, s := range []string{`{"tool":"a","tool":"b"}`, `{"x":1,"x":{"y":2},"status":"ok"}`, `{"":0}`, `{"a\u0000":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, ev := prepared(t, raw)
		if ev == nil {
			return
		}
		for _, mem := range m.Doc.Members() {
			name := string(mem.Name)
			if got, want := ev.Field(aaep.FieldOf(name)), m.Doc.Get(name); !bytes.Equal(got, want) {
				t.Errorf("Field(%q) = %q, Doc.Get = %q", name, got, want)
			}
		}
		for _, name := range fieldNames {
			if got, want := ev.Field(aaep.FieldOf(name)), m.Doc.Get(name); !bytes.Equal(got, want) || (got == nil) != (want == nil) {
				t.Errorf("Field(%q) = %q, Doc.Get = %q", name, got, want)
			}
		}
	})
}
