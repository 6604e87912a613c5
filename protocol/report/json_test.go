package report

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aaep-tools/aaepkit/protocol"
)

// awkward are strings that every JSON string encoder must get right.
var awkward = []string{
	"", "plain", `quote " and \ backslash`, "\b\f\n\r\t\x00\x01\x1f\x7f", "<script>&amp;</script>",
	"from_state ≠ previous to_state", "line\u2028sep\u2029par", "bad \xff utf-8 \xc3", "\xe2\x82", "emoji 😀 ok",
	strings.Repeat("long ", 200),
}

// fillRandom sets every field of the struct v points to, by reflection,
// so that a field added to SessionSummary or Finding is in the
// comparison whether or not appendSessionJSON knows it.
func fillRandom(t *testing.T, rng *rand.Rand, v reflect.Value) {
	t.Helper()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if !f.CanSet() {
			continue
		}
		switch {
		case f.Type() == reflect.TypeFor[protocol.Level]():
			f.Set(reflect.ValueOf([]protocol.Level{protocol.Info, protocol.Should, protocol.Must, protocol.Never, protocol.Level(9)}[rng.IntN(5)]))
		case f.Type() == reflect.TypeFor[protocol.Party]():
			f.Set(reflect.ValueOf([]protocol.Party{0, protocol.Producer, protocol.Subscriber, protocol.Either, protocol.Party(9)}[rng.IntN(5)]))
		case f.Kind() == reflect.String:
			if rng.IntN(4) == 0 {
				f.SetString("") // omitempty fields must be tried empty
			} else {
				f.SetString(awkward[rng.IntN(len(awkward))] + string(rune(rng.IntN(0x3000))))
			}
		case f.Kind() >= reflect.Int && f.Kind() <= reflect.Int64:
			f.SetInt(rng.Int64N(1<<62) - 1<<61)
		case f.Kind() == reflect.Bool:
			f.SetBool(rng.IntN(2) == 0)
		case f.Kind() == reflect.Struct:
			fillRandom(t, rng, f)
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.Struct:
			n := rng.IntN(4)
			s := reflect.MakeSlice(f.Type(), n, n)
			for j := 0; j < n; j++ {
				fillRandom(t, rng, s.Index(j))
			}
			f.Set(s)
		default:
			t.Fatalf("field %s of %s has kind %s: teach appendSessionJSON and this test about it", v.Type().Field(i).Name, v.Type(), f.Kind())
		}
	}
}

// marshalled is what the report wrote for a session before it was written
// by hand.
func marshalled(t testing.TB, s *Session) []byte {
	t.Helper()
	c := *s
	if c.Findings == nil {
		c.Findings = []protocol.Finding{}
	}
	b, err := json.MarshalIndent(&c, sessionIndent, "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSessionJSONIsMarshalIndent(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 1))
	tests := []Session{
		{},
		{SessionSummary: protocol.SessionSummary{Protocol: "aaep", Session: "sess_a", Messages: 7, First: -1, Last: time.Second, State: "completed", Complete: true}},
		{SessionSummary: protocol.SessionSummary{Protocol: "kahn"}, Findings: []protocol.Finding{{Protocol: "kahn", RuleID: "R", Level: protocol.Must, Index: -1, Message: "m", Short: "s"}}},
	}
	for range 2000 {
		var s Session
		fillRandom(t, rng, reflect.ValueOf(&s).Elem())
		// A handshake's block is about the stream: its findings are
		// written under "streams", never as a session.
		s.Handshake = false
		tests = append(tests, s)
	}
	for i, s := range tests {
		got := appendSessionJSON(nil, &s, sessionIndent)
		if want := marshalled(t, &s); !bytes.Equal(got, want) {
			t.Fatalf("session %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

// TestStreamJSONIsMarshalIndent: a "streams" entry is written as
// encoding/json would write a StreamFindings, on every field.
func TestStreamJSONIsMarshalIndent(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 2))
	tests := []StreamFindings{{}, {Stream: "sub_a"}}
	for range 500 {
		var st StreamFindings
		fillRandom(t, rng, reflect.ValueOf(&st).Elem())
		tests = append(tests, st)
	}
	for i, st := range tests {
		got := appendStreamJSON(nil, &st, sessionIndent)
		c := st
		if c.Findings == nil {
			c.Findings = []protocol.Finding{}
		}
		want, err := json.MarshalIndent(&c, sessionIndent, "  ")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("stream %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

func FuzzSessionJSON(f *testing.F) {
	for _, s := range awkward {
		f.Add(s, s, int64(len(s)))
	}
	f.Fuzz(func(t *testing.T, text, id string, n int64) {
		s := Session{
			SessionSummary: protocol.SessionSummary{Protocol: text, Session: id, Messages: int(n), First: time.Duration(n), State: text},
			Findings:       []protocol.Finding{{Protocol: id, Session: text, RuleID: id, Level: protocol.Level(n), Index: n, Message: text, Short: id}},
		}
		got := appendSessionJSON(nil, &s, sessionIndent)
		if want := marshalled(t, &s); !bytes.Equal(got, want) {
			t.Fatalf("got %s\nwant %s", got, want)
		}
		if !json.Valid(got) {
			t.Fatalf("not JSON: %s", got)
		}
		if utf8.ValidString(text) && !strings.ContainsAny(text, "\u2028\u2029") {
			var back struct {
				State string `json:"state"`
			}
			if err := json.Unmarshal(got, &back); err != nil || back.State != text {
				t.Fatalf("state %q came back as %q (%v)", text, back.State, err)
			}
		}
	})
}

// BenchmarkSessionJSON times writing one session block of a JSON report
// (a session with three findings), by hand and through encoding/json.
func BenchmarkSessionJSON(b *testing.B) {
	s := &Session{SessionSummary: protocol.SessionSummary{Protocol: "aaep", Session: "sess_32a4443329c66115", Messages: 9, First: 4851653727, Last: 8805362213, State: "completed", Complete: true}}
	for i := range 3 {
		s.Findings = append(s.Findings, protocol.Finding{Protocol: "aaep", Session: s.Session, RuleID: "SEQ-STATE-CHAIN", Level: protocol.Must, Index: int64(32 + i), Offset: 5964360813,
			Message: "this state change leaves \"deciding\" but the previous state change entered \"thinking\"; each from_state must continue from the previous to_state (or the implicit state)",
			Short:   "from_state ≠ previous to_state"})
	}
	b.Run("by-hand", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			buf = appendSessionJSON(buf[:0], s, sessionIndent)
		}
		b.SetBytes(int64(len(buf)))
	})
	b.Run("encoding-json", func(b *testing.B) {
		var n int
		for b.Loop() {
			n = len(marshalled(b, s))
		}
		b.SetBytes(int64(n))
	})
}
