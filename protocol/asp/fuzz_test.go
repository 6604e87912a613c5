package asp_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/protocol/protocoltest"
)

// FuzzCheck feeds arbitrary bytes, one message per line, to the ASP model
// in both profiles, recognised and forced. It must never panic; every step
// must name states of the machine and every finding a rule of the model.
func FuzzCheck(f *testing.F) {
	protocoltest.Fuzz(f, models,
		`{"performative":"PROPOSE","sessionId":"s","content":{"body":{"type":"session-invitation"}}}`,
		`{"type":"session_state","sessionId":"s","state":"ESCALATED"}`+"\n"+`{"performative":"INFORM","sessionId":"s","content":{"body":{"informType":"resolution"}}}`,
		`{"type":"message","envelope":{"performative":"close","sessionId":7}}`)
}

// benchStream builds n clean negotiations (15 messages each), interleaved
// in pairs so that two sessions are open at a time.
func benchStream(n int) []string {
	var out []string
	for i := 0; i < n; i += 2 {
		a := fixedConv(fmt.Sprintf("019cc8a0-0000-7a00-8000-%012x", 2*i))
		b := fixedConv(fmt.Sprintf("019cc8a0-0000-7a00-8000-%012x", 2*i+1))
		la, lb := scripted(a, time.Duration(i)*time.Hour), scripted(b, time.Duration(i)*time.Hour)
		for j := range la {
			out = append(out, la[j], lb[j])
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
func BenchmarkCheck(b *testing.B) { protocoltest.Benchmark(b, models, benchStream(100)) }
