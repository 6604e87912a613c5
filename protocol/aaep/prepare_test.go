package aaep_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/internal/sample"
	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/aaep"
	"github.com/aaep-tools/aaepkit/protocol/report"
)

// TestPreparedSameAsUnprepared feeds one stream three ways: unprepared,
// every message prepared fully (ahead), and prepared with the rules
// checked ahead for some messages only, as the reading goroutine does when
// it balances; the reports must be identical.
func TestPreparedSameAsUnprepared(t *testing.T) {
	events := sample.Stream(sample.Options{Sessions: 150, Seed: 17, Violations: true})
	run := func(ahead func(i int) bool) string {
		var out strings.Builder
		rep := report.New("prep")
		rep.View = report.ViewAll
		rep.Stream(&out, true, protocol.Info)
		eng, err := protocol.NewEngine([]protocol.Model{aaep.New()}, "", &protocol.Options{Profile: "strict"}, protocol.StreamInfo{}, rep.Sink(nil))
		if err != nil {
			t.Fatal(err)
		}
		prep := eng.Preparation()
		slots := []*protocol.Slot{prep.NewSlot(), prep.NewSlot()}
		for i, e := range events {
			dir := protocol.FromProducer
			if e.FromSubscriber {
				dir = protocol.ToProducer
			}
			raw := e.JSON
			if i%50 == 0 && !e.FromSubscriber {
				// An envelope fault for the single-message rules.
				raw = bytes.Replace(raw, []byte(`"timestamp":"`), []byte(`"timestamp":"x`), 1)
			}
			m := &protocol.Message{Index: int64(i), Dir: dir, Raw: raw}
			if ahead != nil {
				m.Decode(new(payload.Doc))
				prep.Prepare(m, slots[i%2], ahead(i))
			}
			eng.Feed(m)
		}
		eng.Finish()
		rep.Stats = eng.Stats()
		if err := rep.Close(); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	want := run(nil)
	if !strings.Contains(want, `"EVT-`) || !strings.Contains(want, `"ENV-`) || !strings.Contains(want, `"SEQ-`) {
		t.Fatal("the stream exercises too few rules to tell the ways apart")
	}
	for name, ahead := range map[string]func(int) bool{
		"all ahead":  func(int) bool { return true },
		"none ahead": func(int) bool { return false },
		"some ahead": func(i int) bool { return i%3 == 0 },
	} {
		if got := run(ahead); got != want {
			t.Errorf("%s: report differs from the unprepared one (%d bytes, want %d)", name, len(got), len(want))
		}
	}
}
