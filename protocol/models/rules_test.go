package models_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/models"
	"github.com/aaep-tools/aaepkit/protocol/protocoltest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestRuleListGolden: the rule list `aaep-replay check --rules` prints, in
// both forms, is printed from the declared rule values (go test -update
// rewrites the golden files).
func TestRuleListGolden(t *testing.T) {
	for _, tc := range []struct {
		name   string
		asJSON bool
		golden string
	}{
		{"text", false, "testdata/rules.txt"},
		{"json", true, "testdata/rules.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := protocol.WriteRules(&b, models.All(), tc.asJSON); err != nil {
				t.Fatal(err)
			}
			protocoltest.Golden(t, tc.golden, b.Bytes(), *update)
		})
	}
}

// TestRuleListJSON: the JSON form holds every rule once with every field
// of its declared value, and the profile readings where they differ.
func TestRuleListJSON(t *testing.T) {
	var b bytes.Buffer
	if err := protocol.WriteRules(&b, models.All(), true); err != nil {
		t.Fatal(err)
	}
	var got []struct {
		ID, Level, Summary, Doc, Spec, Protocol string
		Profiles                                *struct{ Lenient, Strict string }
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := protocol.ListRules(models.All())
	if len(got) != len(want) {
		t.Fatalf("%d rules in the JSON list, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.ID != w.ID || g.Level != w.Level.String() || g.Summary != w.Summary || g.Doc != w.Doc || g.Spec != w.Spec || g.Protocol != w.Protocol {
			t.Errorf("rule %d: %+v, want %+v", i, g, w)
		}
		if (g.Profiles != nil) != w.Profiles.Differ() || (g.Profiles != nil && (g.Profiles.Lenient != w.Profiles.Lenient || g.Profiles.Strict != w.Profiles.Strict)) {
			t.Errorf("rule %s: profiles %+v, want %+v", w.ID, g.Profiles, w.Profiles)
		}
	}
}

// TestRuleValues: every declared rule has a unique ID, a level, a summary
// and the place that states it; where the profiles differ, each has a
// reading.
func TestRuleValues(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range protocol.ListRules(models.All()) {
		if seen[r.ID] {
			t.Errorf("rule %s is declared twice", r.ID)
		}
		seen[r.ID] = true
		if r.Level == 0 || r.Summary == "" || !strings.HasSuffix(r.Summary, ".") {
			t.Errorf("rule %s lacks a level or a summary sentence", r.ID)
		}
		if r.Spec == "" {
			t.Errorf("rule %s does not say where it is stated (Spec)", r.ID)
		}
		if p := r.Profiles; p.Differ() && (p.Lenient == "" || p.Strict == "" || p.Lenient == p.Strict) {
			t.Errorf("rule %s: profile readings %+v, want two different readings", r.ID, p)
		}
	}
}
