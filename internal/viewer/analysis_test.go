package viewer

import (
	"encoding/json"
	"testing"
)

// TestRuleCountsJSON: a session's counts by rule are written as the map
// they replaced was: an object, keys sorted, {} when there are none.
func TestRuleCountsJSON(t *testing.T) {
	var rc ruleCounts
	for _, r := range []string{"aaep.seq.b", "aaep.seq.a", "aaep.seq.b", "aaep.\"q\""} {
		rc = rc.add(r)
	}
	for _, c := range []struct {
		facts sessionFacts
		want  string
	}{
		{sessionFacts{}, `{}`},
		{sessionFacts{Rules: rc}, `{"aaep.\"q\"":1,"aaep.seq.a":1,"aaep.seq.b":2}`},
	} {
		b, err := json.Marshal(c.facts)
		if err != nil {
			t.Fatal(err)
		}
		var got struct{ Rules json.RawMessage }
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if string(got.Rules) != c.want {
			t.Errorf("rules %v: %s, want %s", c.facts.Rules, got.Rules, c.want)
		}
		want, _ := json.Marshal(map[string]int64{"aaep.\"q\"": 1, "aaep.seq.a": 1, "aaep.seq.b": 2})
		if c.facts.Rules != nil && string(got.Rules) != string(want) {
			t.Errorf("rules: %s, a map's JSON: %s", got.Rules, want)
		}
	}
}

// TestLaneIndex: a snapshot finds the sessions it published by key and by
// id (several of an id, in order of first message), and none published
// after it or of a block about the stream.
func TestLaneIndex(t *testing.T) {
	x := newLaneIndex()
	views := []*sessionView{
		{ID: "s1", Key: "s1", Lane: 0},
		{ID: "s1", Stream: "b", Key: "b|s1", Lane: 1},
		{ID: "subscription-1", Stream: "b", Key: "b|subscription-1", Lane: 2, stream: true},
		{ID: "s1", Stream: "a", Key: "a|s1", Lane: 3},
	}
	for _, v := range views {
		x.add(v.Key, v.ID, v.Lane)
	}
	sn := &snapshot{lanes: x, views: views[:3]}
	if v := sn.byKey("b|s1"); v != views[1] {
		t.Errorf("byKey(b|s1) = %v", v)
	}
	if v := sn.byKey("a|s1"); v != nil {
		t.Errorf("byKey(a|s1) = %v before it was published", v)
	}
	if v := sn.byKey("b|subscription-1"); v != nil {
		t.Errorf("byKey of a block about the stream = %v", v)
	}
	if got := sn.byID("s1"); len(got) != 2 || got[0] != views[0] || got[1] != views[1] {
		t.Errorf("byID(s1) = %v", got)
	}
	sn.views = views
	if got := sn.byID("s1"); len(got) != 3 || got[2] != views[3] {
		t.Errorf("byID(s1) = %v, all published", got)
	}
	if got := sn.byID("nothing"); len(got) != 0 {
		t.Errorf("byID(nothing) = %v", got)
	}
}
