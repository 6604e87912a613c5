package kahn_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/kahn"
)

// FuzzCheck feeds arbitrary bytes, one event per line, to the KAHN agent and
// CI models in both profiles, recognised and forced: no panic, steps in
// machine states, findings under listed rules.
func FuzzCheck(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"ts":"2026-05-05T09:00:00.000Z","run_id":"r","event":"audit_checkpoint","agent_id":null,"checkpoint_id":"a","result":"pass","duration_s":1}`))
	f.Add([]byte(`{"ts":"x","run_id":"r","event":"agent_transition","agent_id":"a","step":1e400,"from":"blocked_on_clarification","to":7}`))
	states := map[string]map[string]bool{}
	for _, md := range []protocol.Model{kahn.New(), kahn.NewCI()} {
		states[md.Name()] = map[string]bool{}
		for _, s := range md.Machine().States {
			states[md.Name()][s.Name] = true
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, force := range []string{"", "kahn", "kahn-ci"} {
			for _, profile := range []string{"lenient", "strict"} {
				e, err := protocol.NewEngine([]protocol.Model{kahn.New(), kahn.NewCI()}, force, &protocol.Options{Profile: profile}, protocol.Sink{
					Finding: func(fd protocol.Finding) {
						if strings.Contains(fd.Message, "missing from the") {
							t.Errorf("finding with an unlisted rule: %+v", fd)
						}
					},
					Step: func(s protocol.Step) {
						if !states[s.Protocol][s.From] || !states[s.Protocol][s.To] {
							t.Errorf("step with unknown state: %+v", s)
						}
					},
				})
				if err != nil {
					t.Fatal(err)
				}
				for i, l := range bytes.Split(data, []byte("\n")) {
					e.Feed(&protocol.Message{Index: int64(i), Raw: l})
				}
				e.Finish()
			}
		}
	})
}

// BenchmarkCheck measures KAHN events checked per second: 100 coder runs
// (22 events each), two agents open at a time.
func BenchmarkCheck(b *testing.B) {
	var stream [][]byte
	for i := 0; i < 100; i += 2 {
		ra, rb := runB{fmt.Sprintf("bench-%d", i)}, runB{fmt.Sprintf("bench-%d", i+1)}
		la, lb := coderOf(ra, time.Duration(i)*time.Minute), coderOf(rb, time.Duration(i)*time.Minute)
		for j := range la {
			stream = append(stream, []byte(la[j]), []byte(lb[j]))
		}
	}
	var n int64
	for _, l := range stream {
		n += int64(len(l))
	}
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		findings := 0
		e, err := protocol.NewEngine([]protocol.Model{kahn.New()}, "", nil, protocol.Sink{Finding: func(protocol.Finding) { findings++ }})
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
