package protocoltest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/check"
)

// Fuzz fuzzes the models that models makes. Each input is split into
// lines and checked in the lenient and the strict profile, once with
// recognition and once forced to each model. No input may panic the
// checkers; every step must name states of its model's machine, and every
// finding a rule its model (or the engine, for the stream) lists. The
// seeds are the files testdata/*.jsonl of the calling package and seeds.
func Fuzz(f *testing.F, models func() []protocol.Model, seeds ...string) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	states := map[string]map[string]bool{}
	rules := map[string]map[string]bool{protocol.StreamProtocol: {}}
	for _, r := range protocol.StreamRules() {
		rules[protocol.StreamProtocol][r.ID] = true
	}
	forces := []string{""}
	for _, md := range models() {
		name := md.Name()
		forces = append(forces, name)
		states[name], rules[name] = map[string]bool{}, map[string]bool{}
		for _, s := range md.Machine().States {
			states[name][s.Name] = true
		}
		for _, r := range md.Rules() {
			rules[name][r.ID] = true
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := bytes.Split(data, []byte("\n"))
		for _, force := range forces {
			for _, profile := range []string{"lenient", "strict"} {
				e, err := check.NewPass(check.Config{Models: models, Protocol: force, Options: protocol.Options{Profile: protocol.Profile(profile)}}, nil, protocol.Sink{
					Finding: func(fd protocol.Finding) {
						if !rules[fd.Protocol][fd.RuleID] {
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
				for i, l := range lines {
					e.Message(&protocol.Message{Index: int64(i), Raw: l})
				}
				e.Finish()
			}
		}
	})
}

// Benchmark measures the models that models makes checking stream, a
// stream that must be clean, and reports messages per second besides the
// bytes (the whole stream, one engine per iteration).
func Benchmark(b *testing.B, models func() []protocol.Model, stream []string) {
	raw := make([][]byte, len(stream))
	var n int64
	for i, l := range stream {
		raw[i] = []byte(l)
		n += int64(len(l))
	}
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		findings := 0
		e, err := check.NewPass(check.Config{Models: models}, nil, protocol.Sink{Finding: func(protocol.Finding) { findings++ }})
		if err != nil {
			b.Fatal(err)
		}
		for i, l := range raw {
			e.Message(&protocol.Message{Index: int64(i), Raw: l})
		}
		e.Finish()
		if findings != 0 {
			b.Fatalf("%d findings in the clean benchmark stream", findings)
		}
	}
	b.ReportMetric(float64(len(raw))*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}
