package kahn_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/kahn"
	"github.com/aaep-tools/aaepkit/protocol/protocoltest"
)

// FuzzCheck feeds arbitrary bytes, one event per line, to the KAHN agent and
// CI models in both profiles, recognised and forced: no panic, steps in
// machine states, findings under listed rules.
func FuzzCheck(f *testing.F) {
	protocoltest.Fuzz(f, func() []protocol.Model { return []protocol.Model{kahn.New(), kahn.NewCI()} },
		`{"ts":"2026-05-05T09:00:00.000Z","run_id":"r","event":"audit_checkpoint","agent_id":null,"checkpoint_id":"a","result":"pass","duration_s":1}`,
		`{"ts":"x","run_id":"r","event":"agent_transition","agent_id":"a","step":1e400,"from":"blocked_on_clarification","to":7}`)
}

// BenchmarkCheck measures KAHN events checked per second: 100 coder runs
// (22 events each), two agents open at a time.
func BenchmarkCheck(b *testing.B) {
	var stream []string
	for i := 0; i < 100; i += 2 {
		ra, rb := runB{fmt.Sprintf("bench-%d", i)}, runB{fmt.Sprintf("bench-%d", i+1)}
		la, lb := coderOf(ra, time.Duration(i)*time.Minute), coderOf(rb, time.Duration(i)*time.Minute)
		for j := range la {
			stream = append(stream, la[j], lb[j])
		}
	}
	protocoltest.Benchmark(b, models, stream)
}

// coderOf is coderRun for run r, starting at base+at.
func coderOf(r runB, at time.Duration) []string {
	return lines(
		r.start(at, "coder", "Add /v2/health endpoint"),
		r.loop(at+1*sec, "coder", 0, "Read"),
		r.trans(at+5*sec, "coder", 4, "reflect", "thinking", "reflect:needs-edit"),
		r.loop(at+6*sec, "coder", 5, "Edit"),
		r.trans(at+10*sec, "coder", 9, "reflect", "thinking", "reflect:verify"),
		r.loop(at+11*sec, "coder", 10, "Bash"),
		r.audit(at+15*sec, "coder", "audit:test-coverage.unit", "pass"),
		r.audit(at+16*sec, "coder", "audit:contract-shape", "pass"),
		r.trans(at+17*sec, "coder", 14, "reflect", "converged", "converged:tests-green"),
		r.end(at+18*sec, "coder", "converged", 15, 3, 2, 2, 0, raw("1.0")),
	)
}
