package sample

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestStreamIsValidJSONInOrder(t *testing.T) {
	msgs := Stream(Options{Sessions: 8, Seed: 1, Violations: true})
	if len(msgs) < 8*10 {
		t.Fatalf("only %d messages for 8 sessions", len(msgs))
	}
	sessions := map[string]bool{}
	for i, m := range msgs {
		if !json.Valid(m.JSON) {
			t.Fatalf("message %d is not valid JSON: %s", i, m.JSON)
		}
		if i > 0 && m.Offset < msgs[i-1].Offset {
			t.Fatalf("message %d goes back in time", i)
		}
		sessions[m.Session] = true
	}
	if len(sessions) != 8 {
		t.Errorf("%d sessions, want 8", len(sessions))
	}
}

func TestStreamDeterministic(t *testing.T) {
	a, b := Stream(Options{Seed: 7}), Stream(Options{Seed: 7})
	if len(a) != len(b) {
		t.Fatal("different lengths for the same seed")
	}
	for i := range a {
		if !bytes.Equal(a[i].JSON, b[i].JSON) {
			t.Fatalf("message %d differs for the same seed", i)
		}
	}
}

func TestEventsSize(t *testing.T) {
	ev := Events(2000, 3)
	if len(ev) != 2000 {
		t.Fatalf("got %d events", len(ev))
	}
	total := 0
	for _, e := range ev {
		total += len(e)
	}
	if avg := total / len(ev); avg < 330 || avg > 530 {
		t.Errorf("average event size %d bytes, want about 430", avg)
	}
}
