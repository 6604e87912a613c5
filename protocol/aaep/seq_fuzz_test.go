package aaep

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/protocol"
)

// FuzzSeqStream feeds arbitrary message streams through the AAEP model in
// both profiles. Each input line is one message: a control byte (bit 7:
// direction, bits 4-5: source, bits 0-3: seconds since the previous
// message) followed by the payload. The checker must not panic, must report
// only rules of its table, and must summarise every session it followed.
func FuzzSeqStream(f *testing.F) {
	for i, c := range seqCases() {
		if i%3 != 0 {
			continue // a third of the cases is seed enough
		}
		var buf bytes.Buffer
		var prev time.Duration
		for _, m := range build(c.msgs) {
			secs := (m.Offset - prev) / time.Second
			prev = m.Offset
			ctl := byte(min(secs, 15)) | byte(m.Source&3)<<4
			if m.Dir == protocol.ToProducer {
				ctl |= 0x80
			}
			buf.WriteByte(ctl)
			buf.Write(bytes.ReplaceAll(m.Raw, []byte("\n"), nil))
			buf.WriteByte('\n')
		}
		f.Add(buf.Bytes())
	}
	declared := map[string]bool{}
	for _, r := range protocol.ListRules([]protocol.Model{New()}) {
		declared[r.ID] = true
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var msgs []*protocol.Message
		var off time.Duration
		for i, line := range bytes.Split(data, []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			ctl := line[0]
			off += time.Duration(ctl&0x0f) * time.Second
			dir := protocol.FromProducer
			if ctl&0x80 != 0 {
				dir = protocol.ToProducer
			}
			msgs = append(msgs, &protocol.Message{Index: int64(i), Offset: off, Received: testStart.Add(off), Dir: dir,
				Source: int(ctl>>4) & 3, Raw: line[1:]})
		}
		for _, profile := range []string{"lenient", "strict"} {
			var sessions, done = map[string]bool{}, map[string]int{}
			eng, err := protocol.NewEngine([]protocol.Model{New()}, "aaep", &protocol.Options{Profile: protocol.Profile(profile)}, protocol.StreamInfo{}, protocol.Sink{
				Finding: func(f protocol.Finding) {
					if !declared[f.RuleID] {
						t.Errorf("rule %s is not in the rule table", f.RuleID)
					}
				},
				Step: func(s protocol.Step) {
					if s.Session == "" || s.Label == "" {
						t.Errorf("step without session or label: %+v", s)
					}
					sessions[s.Session] = true
				},
				SessionDone: func(s protocol.SessionSummary) { done[s.Session]++ },
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range msgs {
				c := *m
				eng.Feed(&c)
			}
			eng.Finish()
			for id := range sessions {
				if done[id] == 0 && !strings.HasPrefix(id, "subscription-") {
					t.Errorf("session %s has steps but no summary", id)
				}
			}
		}
	})
}
