package asp_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/asp"
)

// FuzzCheck feeds arbitrary bytes, one message per line, to the ASP model
// in both profiles, recognised and forced. It must never panic; every step
// must name states of the machine and every finding a rule of the model.
func FuzzCheck(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"performative":"PROPOSE","sessionId":"s","content":{"body":{"type":"session-invitation"}}}`))
	f.Add([]byte(`{"type":"session_state","sessionId":"s","state":"ESCALATED"}` + "\n" + `{"performative":"INFORM","sessionId":"s","content":{"body":{"informType":"resolution"}}}`))
	f.Add([]byte(`{"type":"message","envelope":{"performative":"close","sessionId":7}}`))
	states := map[string]bool{}
	for _, s := range asp.New().Machine().States {
		states[s.Name] = true
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := bytes.Split(data, []byte("\n"))
		for _, force := range []string{"", "asp"} {
			for _, profile := range []string{"lenient", "strict"} {
				e, err := protocol.NewEngine([]protocol.Model{asp.New()}, force, &protocol.Options{Profile: profile}, protocol.Sink{
					Finding: func(fd protocol.Finding) {
						if strings.Contains(fd.Message, "missing from the") {
							t.Errorf("finding with an unlisted rule: %+v", fd)
						}
					},
					Step: func(s protocol.Step) {
						if !states[s.From] || !states[s.To] {
							t.Errorf("step with unknown state: %+v", s)
						}
					},
				})
				if err != nil {
					t.Fatal(err)
				}
				for i, l := range lines {
					e.Feed(&protocol.Message{Index: int64(i), Raw: l})
				}
				e.Finish()
			}
		}
	})
}

// benchStream builds n clean negotiations (15 messages each), interleaved
// in pairs so that two sessions are open at a time.
func benchStream(n int) [][]byte {
	var out [][]byte
	for i := 0; i < n; i += 2 {
		a := fixedConv(fmt.Sprintf("019cc8a0-0000-7a00-8000-%012x", 2*i))
		b := fixedConv(fmt.Sprintf("019cc8a0-0000-7a00-8000-%012x", 2*i+1))
		la, lb := scripted(a, time.Duration(i)*time.Hour), scripted(b, time.Duration(i)*time.Hour)
		for j := range la {
			out = append(out, []byte(la[j]), []byte(lb[j]))
		}
	}
	return out
}

// scripted is the clean negotiation of conversation c, starting at base+at.
func scripted(c *conv, at time.Duration) []string {
	lines := c.executing(alpha, beta, at)
	return append(lines,
		c.msg(beta, at+10*sec, "INFORM", obj{{"informType", "progress"}}),
		c.msg(beta, at+20*sec, "INFORM", obj{{"informType", "result"}}),
		c.msg(alpha, at+21*sec, "CLOSE", reason("fulfilled")),
		c.msg(beta, at+22*sec, "CLOSE", reason("fulfilled")))
}

// BenchmarkCheck measures ASP messages checked per second (engine,
// recognition and checker; lenient profile).
func BenchmarkCheck(b *testing.B) {
	stream := benchStream(100)
	var bytesIn int64
	for _, l := range stream {
		bytesIn += int64(len(l))
	}
	b.SetBytes(bytesIn)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		findings := 0
		e, err := protocol.NewEngine([]protocol.Model{asp.New()}, "", nil, protocol.Sink{Finding: func(protocol.Finding) { findings++ }})
		if err != nil {
			b.Fatal(err)
		}
		for i, l := range stream {
			e.Feed(&protocol.Message{Index: int64(i), Raw: l})
		}
		e.Finish()
		if findings != 0 {
			b.Fatalf("%d findings in the clean benchmark stream", findings)
		}
	}
	b.ReportMetric(float64(len(stream))*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}
