package protocol_test

import (
	"testing"

	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol"
)

// prepModel is the toy model with a preparation: the length of the
// payload's "toy" member.
type prepModel struct{ toyModel }

type toyPrep struct{ n int }

func (prepModel) NewPrep(*protocol.Options) protocol.Prep { return new(toyPrep) }
func (p *toyPrep) Prepare(m *protocol.Message, _ bool) {
	p.n = len(m.Doc.Get("toy"))
}

func TestPreparation(t *testing.T) {
	newEngine := func(models ...protocol.Model) *protocol.Engine {
		eng, err := protocol.NewEngine(models, "", nil, protocol.StreamInfo{}, protocol.Sink{})
		if err != nil {
			t.Fatal(err)
		}
		return eng
	}
	if p := newEngine(toyModel{}).Preparation(); p != nil {
		t.Fatal("an engine whose models do not prepare has a Preparation")
	}
	prep := newEngine(toyModel{}, prepModel{}).Preparation()
	if prep == nil {
		t.Fatal("an engine with a preparing model has no Preparation")
	}
	slot := prep.NewSlot()

	tests := []struct {
		name    string
		raw     string
		decode  bool
		change  func(m *protocol.Message) // after preparing
		wantOK  bool
		wantLen int
	}{
		{name: "prepared", raw: `{"toy":"open"}`, decode: true, wantOK: true, wantLen: len(`"open"`)},
		{name: "not decoded: left alone", raw: `{"toy":"open"}`, decode: false},
		{name: "payload replaced since", raw: `{"toy":"open"}`, decode: true,
			change: func(m *protocol.Message) { m.Raw = []byte(`{"toy":"open"}`) }},
		{name: "other slot's message", raw: `{"toy":"x"}`, decode: true, wantOK: true, wantLen: len(`"x"`)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := &protocol.Message{Raw: []byte(tc.raw)}
			if tc.decode {
				m.Decode(new(payload.Doc))
			}
			prep.Prepare(m, slot, true)
			if tc.change != nil {
				tc.change(m)
			}
			p, ok := protocol.PrepOf[*toyPrep](m)
			if ok != tc.wantOK {
				t.Fatalf("PrepOf ok = %v, want %v", ok, tc.wantOK)
			}
			if ok && p.n != tc.wantLen {
				t.Fatalf("prepared length %d, want %d", p.n, tc.wantLen)
			}
		})
	}
}
