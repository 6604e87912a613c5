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
	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/aaep"
	"github.com/aaep-tools/aaepkit/protocol/models"
	"github.com/aaep-tools/aaepkit/protocol/report"
)

// fieldCorpus is every message of the single-rule cases and of a sample
// stream, lines of the ASP and KAHN fixtures, and messages at the edges of
// the decoding (broken, duplicated, escaped, deep, not UTF-8).
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

// TestCorpusDecodedAhead: each message of the corpus, after an AAEP
// prelude, gets the same findings whether the engine decodes it or the
// caller decoded it beforehand (Message.Decode, as a reading goroutine
// does), and the AAEP model recognises it by the decoding's routing fields.
func TestCorpusDecodedAhead(t *testing.T) {
	corpus := fieldCorpus(t)
	if len(corpus) < 200 {
		t.Fatalf("corpus of %d messages", len(corpus))
	}
	prelude := []byte(`{"type":"aaep:agent.session.started","session_id":"sess_1","event_id":"evt_1"}`)
	check := func(raw []byte, ahead bool) string {
		rep := report.New("corpus")
		eng, err := protocol.NewEngine(models.All(), "", nil, protocol.StreamInfo{}, rep.Sink(nil))
		if err != nil {
			t.Fatal(err)
		}
		var docs [2]payload.Doc
		for i, r := range [][]byte{prelude, raw} {
			m := protocol.Message{Index: int64(i), Raw: r}
			if ahead {
				m.Decode(&docs[i])
			}
			eng.Feed(&m)
		}
		eng.Finish()
		var out bytes.Buffer
		if err := rep.WriteJSON(&out, protocol.Must); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	for _, raw := range corpus {
		if got, want := check(raw, true), check(raw, false); got != want {
			t.Fatalf("%q decoded ahead:\n%s\ndecoded by the engine:\n%s", raw, got, want)
		}
		d := payload.Decode(raw)
		m := &protocol.Message{Raw: raw, Doc: d}
		rt := &d.Routing
		aaepLike := strings.HasPrefix(rt.Type, "aaep:") || strings.HasPrefix(rt.EventID, "evt_") || strings.HasPrefix(rt.SessionID, "sess_")
		if aaepLike && !aaep.New().Recognize(m) {
			t.Errorf("%q: routing %+v, not recognised as AAEP", raw, *rt)
		}
	}
}

// TestEngineDecodesOnce: a stream mixing AAEP with ASP and KAHN messages,
// fed the way package recording does (one Message and one payload buffer
// reused for every record), gets the same report, steps and summaries
// whether the engine decodes each message or a reader decoded them ahead
// into Docs of its own, several messages in flight at once.
func TestEngineDecodesOnce(t *testing.T) {
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

	run := func(ahead bool) string {
		rep := report.New("mixed")
		var steps bytes.Buffer
		eng, err := protocol.NewEngine(models.All(), "", nil, protocol.StreamInfo{}, rep.Sink(func(s protocol.Step) {
			steps.WriteString(s.Session + " " + s.Label + " " + s.From + ">" + s.To + "\n")
		}))
		if err != nil {
			t.Fatal(err)
		}
		var m protocol.Message
		buf := make([]byte, 0, 1<<16)
		var docs [4]payload.Doc // a reader's ring of decodings
		for i, raw := range stream {
			if !ahead {
				buf = append(buf[:0], raw...)
				m = protocol.Message{Index: int64(i), Offset: time.Duration(i) * time.Millisecond, Raw: buf}
				eng.Feed(&m)
				continue
			}
			m = protocol.Message{Index: int64(i), Offset: time.Duration(i) * time.Millisecond, Raw: bytes.Clone(raw)}
			m.Decode(&docs[i%len(docs)])
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
	got, want := run(true), run(false)
	if got != want {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "got"), []byte(got), 0o644)
		os.WriteFile(filepath.Join(dir, "want"), []byte(want), 0o644)
		t.Fatalf("reports differ (decoded ahead: %s/got, by the engine: %s/want)", dir, dir)
	}
	if !strings.Contains(got, `"aaep":`) || !strings.Contains(got, `"asp":`) || !strings.Contains(got, `"kahn":`) {
		t.Fatalf("the mixed stream does not reach all three protocols:\n%.400s", got)
	}
}
