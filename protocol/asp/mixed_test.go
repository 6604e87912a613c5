package asp_test

import (
	"path/filepath"
	"testing"

	"github.com/aaep-tools/aaepkit/internal/sample"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/aaep"
	"github.com/aaep-tools/aaepkit/protocol/asp"
	"github.com/aaep-tools/aaepkit/protocol/kahn"
	"github.com/aaep-tools/aaepkit/protocol/protocoltest"
)

// TestMixedStream interleaves AAEP sessions, the ASP negotiation and the
// KAHN coder run in one stream: the engine must hand every line to its own
// protocol, and the ASP and KAHN checkers must find the same clean sessions
// as when they run alone. One ambiguous and one unknown line are reported
// by the engine, not guessed.
func TestMixedStream(t *testing.T) {
	type line struct {
		raw   string
		proto string
		dir   protocol.Direction
	}
	var aaepLines []line
	for _, m := range sample.Stream(sample.Options{Sessions: 2, Seed: 7}) {
		d := protocol.FromProducer
		if m.FromSubscriber {
			d = protocol.ToProducer
		}
		aaepLines = append(aaepLines, line{string(m.JSON), "aaep", d})
	}
	var aspLines, kahnLines []line
	for _, l := range protocoltest.ReadLines(t, filepath.Join("testdata", "negotiation.jsonl")) {
		aspLines = append(aspLines, line{l, "asp", protocol.FromProducer})
	}
	for _, l := range protocoltest.ReadLines(t, filepath.Join("..", "kahn", "testdata", "coder.jsonl")) {
		kahnLines = append(kahnLines, line{l, "kahn", protocol.FromProducer})
	}
	// Round-robin merge, then the two lines no protocol can take alone.
	var all []line
	for i := 0; i < len(aaepLines) || i < len(aspLines) || i < len(kahnLines); i++ {
		for _, src := range [][]line{aaepLines, aspLines, kahnLines} {
			if i < len(src) {
				all = append(all, src[i])
			}
		}
	}
	all = append(all,
		line{`{"type":"aaep:agent.session.started","session_id":"sess_x","performative":"INFORM"}`, "stream", 0},
		line{`{"hello":"world"}`, "stream", 0})

	models := []protocol.Model{aaep.New(), asp.New(), kahn.New()}
	got := map[string][]protocol.Finding{}
	stepProto := map[int64]string{}
	e, err := protocol.NewEngine(models, "", nil, protocol.StreamInfo{}, protocol.Sink{
		Finding: func(f protocol.Finding) { got[f.Protocol] = append(got[f.Protocol], f) },
		Step: func(s protocol.Step) {
			if s.Index >= 0 {
				stepProto[s.Index] = s.Protocol
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{}
	for i, l := range all {
		e.Feed(&protocol.Message{Index: int64(i), Raw: []byte(l.raw), Dir: l.dir})
		if l.proto != "stream" {
			want[l.proto]++
		}
	}
	e.Finish()

	st := e.Stats()
	for _, p := range []string{"aaep", "asp", "kahn"} {
		if st.ByProtocol[p] != want[p] {
			t.Errorf("%s: engine dispatched %d messages, want %d", p, st.ByProtocol[p], want[p])
		}
	}
	for i, l := range all {
		if p, ok := stepProto[int64(i)]; ok && p != l.proto {
			t.Errorf("line %d (%s) produced a %s step", i, l.proto, p)
		}
		if l.proto != "aaep" && l.proto != "stream" && stepProto[int64(i)] != l.proto {
			t.Errorf("line %d (%s) produced no step of its protocol", i, l.proto)
		}
	}
	for _, p := range []string{"asp", "kahn"} {
		for _, f := range got[p] {
			t.Errorf("unexpected %s finding %s at #%d: %s", p, f.RuleID, f.Index, f.Message)
		}
	}
	var stream []string
	for _, f := range got[protocol.StreamProtocol] {
		stream = append(stream, f.RuleID)
	}
	if len(stream) != 2 || stream[0] != "STREAM-AMBIGUOUS-PROTOCOL" || stream[1] != "STREAM-UNKNOWN-PROTOCOL" {
		t.Errorf("stream findings %v, want the ambiguous and the unknown line", stream)
	}
}
