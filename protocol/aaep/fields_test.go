package aaep_test

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/internal/sample"
	"github.com/aaep-tools/aaepkit/peek"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/aaep"
	"github.com/aaep-tools/aaepkit/protocol/models"
)

// discard is a Reporter that drops everything.
type discard struct{}

func (discard) Report(string, string, *protocol.Message, string, string, ...any) {}
func (discard) Step(protocol.Step)                                               {}
func (discard) SessionDone(protocol.SessionSummary)                              {}

// fieldCorpus is every message of the single-rule cases and of a sample
// stream, lines of the ASP and KAHN fixtures, and messages where a strict
// decoder and peek.Peek could part ways.
func fieldCorpus(t testing.TB) [][]byte {
	var out [][]byte
	for _, c := range allCases() {
		out = append(out, c.msg)
	}
	for _, m := range sample.Stream(sample.Options{Sessions: 8, Seed: 3, Violations: true}) {
		out = append(out, m.JSON)
	}
	for _, f := range []string{"../asp/testdata/negotiation.jsonl", "../asp/testdata/violations.jsonl", "../kahn/testdata/coder.jsonl", "../kahn/testdata/ci.jsonl"} {
		out = append(out, fileLines(t, f)...)
	}
	deep := func(n int) string { return `{"type":"x","a":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}` }
	for _, s := range []string{
		``, ` `, `[]`, `""`, `{}`, ` { } `, `{} x`, `{"a":tru}`, `{"a":1,}`, `{"a":01}`, `{"a":"\x"}`,
		`{"type":"aaep:agent.session.started","type":1}`, `{"type":1,"type":"aaep:agent.session.started"}`,
		`{"t\u0079pe":"aaep:agent.session.started","session_id":"sess_\u0041"}`, `{"type":"\ud800"}`,
		`{"urgency":"critical","session_id":5,"event_id":null,"timestamp":"2026-01-01T00:00:00Z"}`,
		`{"urgency":"soon","type":"confirmation.reply"}`,
		`{"performative":"PROPOSE","sessionId":"s1","messageId":"m1","envelope":{}}`,
		`{"type":"message","envelope":{"performative":"INFORM"}}`, `{"type":"send","envelope":[1]}`, `{"envelope":"x"}`,
		`{"event":"agent_transition","run_id":"r1","ts":"2026-01-01T00:00:00Z"}`, `{"event":7,"run_id":"r1","ts":["x"]}`,
		deep(400), deep(499), deep(500), deep(511), deep(512), deep(600),
		"\xef\xbb\xbf{}", `{"type":"` + "\xff" + `"}`, "{\"a\":\"\x01\"}",
		`{"error":"invalid_token","message":"Reply token does not match any outstanding confirmation."}`,
	} {
		out = append(out, []byte(s))
	}
	return out
}

func fileLines(t testing.TB, path string) [][]byte {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		out = append(out, bytes.Clone(sc.Bytes()))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func checkReadFields(t testing.TB, r protocol.FieldReader, raw []byte) {
	m := &protocol.Message{Raw: raw}
	r.ReadFields(m)
	if want := peek.Peek(raw); m.Fields != want {
		t.Fatalf("ReadFields(%q) = %+v, peek.Peek %+v", raw, m.Fields, want)
	}
}

// TestReadFieldsAsPeek: the AAEP checker reads the routing fields exactly
// as peek.Peek does, which is the engine's contract for a FieldReader.
func TestReadFieldsAsPeek(t *testing.T) {
	r, ok := aaep.New().NewChecker(discard{}, nil).(protocol.FieldReader)
	if !ok {
		t.Fatal("the AAEP checker is not a protocol.FieldReader")
	}
	corpus := fieldCorpus(t)
	if len(corpus) < 200 {
		t.Fatalf("corpus of %d messages", len(corpus))
	}
	for _, raw := range corpus {
		checkReadFields(t, r, raw)
	}
}

func FuzzReadFields(f *testing.F) {
	for _, raw := range fieldCorpus(f) {
		f.Add(raw)
	}
	r := aaep.New().NewChecker(discard{}, nil).(protocol.FieldReader)
	f.Fuzz(func(t *testing.T, raw []byte) { checkReadFields(t, r, raw) })
}

// plainModel hides its checker's FieldReader, so the engine peeks.
type plainModel struct{ protocol.Model }

type plainChecker struct{ c protocol.Checker }

func (p plainModel) NewChecker(r protocol.Reporter, opts *protocol.Options) protocol.Checker {
	return plainChecker{p.Model.NewChecker(r, opts)}
}
func (p plainChecker) Handle(m *protocol.Message) { p.c.Handle(m) }
func (p plainChecker) Finish()                    { p.c.Finish() }

// TestEngineReadsFieldsOnce: a stream mixing AAEP with ASP and KAHN
// messages, fed the way package input does (one Message and one payload
// buffer reused for every record), gets the same report, steps and
// summaries whether the AAEP checker reads the routing fields or the
// engine peeks.
func TestEngineReadsFieldsOnce(t *testing.T) {
	var stream [][]byte
	aaepMsgs := sample.Stream(sample.Options{Sessions: 6, Seed: 9, Violations: true})
	asp := fileLines(t, "../asp/testdata/negotiation.jsonl")
	kahn := fileLines(t, "../kahn/testdata/coder.jsonl")
	// pad makes a and b equally long with trailing white space, so that an
	// AAEP message after another protocol's message fills the same bytes
	// of the shared buffer.
	pad := func(a, b []byte) ([]byte, []byte) {
		for len(a) < len(b) {
			a = append(a, ' ')
		}
		for len(b) < len(a) {
			b = append(b, ' ')
		}
		return a, b
	}
	for i := 0; i < len(aaepMsgs); i++ {
		stream = append(stream, bytes.Clone(aaepMsgs[i].JSON))
		if i+1 == len(aaepMsgs) {
			break
		}
		var other []byte
		switch {
		case i%7 == 3 && len(asp) > 0:
			other, asp = asp[0], asp[1:]
		case i%5 == 1 && len(kahn) > 0:
			stream = append(stream, kahn[0][:len(kahn[0])/2])
			other, kahn = kahn[0], kahn[1:]
		default:
			continue
		}
		i++
		next := bytes.Clone(aaepMsgs[i].JSON)
		other, next = pad(bytes.Clone(other), next)
		stream = append(stream, other, next)
	}
	stream = append(stream, []byte("not json"), []byte(`{"unknown":true}`))

	run := func(ms []protocol.Model) string {
		rep := protocol.NewReport("mixed")
		var steps bytes.Buffer
		eng, err := protocol.NewEngine(ms, "", nil, rep.Sink(func(s protocol.Step) {
			steps.WriteString(s.Session + " " + s.Label + " " + s.From + ">" + s.To + "\n")
		}))
		if err != nil {
			t.Fatal(err)
		}
		var m protocol.Message
		buf := make([]byte, 0, 1<<16)
		for i, raw := range stream {
			buf = append(buf[:0], raw...)
			m = protocol.Message{Index: int64(i), Offset: time.Duration(i) * time.Millisecond, Raw: buf}
			eng.Feed(&m)
		}
		eng.Finish()
		rep.Stats = eng.Stats()
		var out bytes.Buffer
		if err := rep.WriteJSON(&out, protocol.Must); err != nil {
			t.Fatal(err)
		}
		return out.String() + steps.String()
	}
	var plain []protocol.Model
	for _, m := range models.All() {
		plain = append(plain, plainModel{m})
	}
	got, want := run(models.All()), run(plain)
	if got != want {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "got"), []byte(got), 0o644)
		os.WriteFile(filepath.Join(dir, "want"), []byte(want), 0o644)
		t.Fatalf("reports differ (with FieldReader: %s/got, peeking: %s/want)", dir, dir)
	}
	if !strings.Contains(got, `"aaep":`) || !strings.Contains(got, `"asp":`) || !strings.Contains(got, `"kahn":`) {
		t.Fatalf("the mixed stream does not reach all three protocols:\n%.400s", got)
	}
}
