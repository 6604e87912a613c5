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
	"github.com/aaep-tools/aaepkit/protocol/report"
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
			if err := report.WriteRules(&b, models.All(), tc.asJSON); err != nil {
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
	if err := report.WriteRules(&b, models.All(), true); err != nil {
		t.Fatal(err)
	}
	var got []struct {
		ID, Level, Summary, Doc, Spec, Protocol string
		StrictLevel                             string `json:"strict_level"`
		Party                                   string
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
		strict := ""
		if w.StrictLevel != 0 {
			strict = w.StrictLevel.String()
		}
		if g.ID != w.ID || g.Level != w.Level.String() || g.StrictLevel != strict || g.Party != w.Party.String() || g.Summary != w.Summary || g.Doc != w.Doc || g.Spec != w.Spec || g.Protocol != w.Protocol {
			t.Errorf("rule %d: %+v, want %+v", i, g, w)
		}
		if (g.Profiles != nil) != w.Profiles.Differ() || (g.Profiles != nil && (g.Profiles.Lenient != w.Profiles.Lenient || g.Profiles.Strict != w.Profiles.Strict)) {
			t.Errorf("rule %s: profiles %+v, want %+v", w.ID, g.Profiles, w.Profiles)
		}
	}
}

// TestRuleValues: every declared rule has a unique ID, a level, a party, a
// summary, its rationale (Doc) and the place that states it; where the
// profiles differ, each has a reading, and a rule whose level differs
// between the profiles says how each reads it.
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
		if r.Party != protocol.Producer && r.Party != protocol.Subscriber && r.Party != protocol.Either {
			t.Errorf("rule %s has no party (%v): whose duty is it?", r.ID, r.Party)
		}
		if r.StrictLevel != 0 && (r.StrictLevel == r.Level || !r.Profiles.Differ()) {
			t.Errorf("rule %s: strict level %v beside level %v, profiles %+v; a strict level differs from the lenient one and the profiles say why", r.ID, r.StrictLevel, r.Level, r.Profiles)
		}
		if r.Spec == "" {
			t.Errorf("rule %s does not say where it is stated (Spec)", r.ID)
		}
		if strings.TrimSpace(r.Doc) == "" {
			t.Errorf("rule %s has no Doc (why its level, what the checker observes, when it stays silent)", r.ID)
		}
		if p := r.Profiles; p.Differ() && (p.Lenient == "" || p.Strict == "" || p.Lenient == p.Strict) {
			t.Errorf("rule %s: profile readings %+v, want two different readings", r.ID, p)
		}
	}
}

// The specification documents of shared/spec/ that a rule's Spec may
// cite by name.
var specDocs = []string{"AAEP ", "ASP Session State Machine", "KAHN agent events"}

// Why a rule cites the rule catalog only, not a document of shared/spec/.
const (
	aspDocs    = "stated by npayload's ASP documentation pages (envelope, content, hash chain, timeouts), which shared/spec does not hold; asp-kahn.md §1 records what they say"
	kahnCI     = "KAHN's CI transition schema (card kahn-005) is not in shared/spec; asp-kahn.md §2.4 records it"
	inferred   = "no published text states it ([INFERRED]): the catalog proposes it, which is why such rules are warnings or carry an [INFERRED] note"
	toolkitOwn = "the toolkit's own stream-level rule (recognising which protocol a stream speaks), asp-kahn.md §3"
)

// catalogOnly lists, with the reason, every rule whose Spec cites only the
// rule catalog. A rule that gains a section of shared/spec/ leaves the list;
// a new rule without one must be added here with its reason.
var catalogOnly = map[string]string{
	"ASP-C03": aspDocs, "ASP-E01": aspDocs, "ASP-E01W": aspDocs, "ASP-E02": aspDocs, "ASP-E03": aspDocs,
	"ASP-E04": aspDocs, "ASP-E04W": aspDocs, "ASP-E05": aspDocs, "ASP-E06": aspDocs, "ASP-E07": aspDocs,
	"ASP-E08": aspDocs, "ASP-E09": aspDocs, "ASP-E10": aspDocs, "ASP-E11": aspDocs, "ASP-E11W": aspDocs,
	"ASP-E12": aspDocs, "ASP-H01": aspDocs, "ASP-H03": aspDocs, "ASP-S09": aspDocs, "ASP-S11": aspDocs,
	"ASP-T02": aspDocs, "ASP-T05": aspDocs,
	"ASP-C01": inferred, "ASP-C02": inferred, "ASP-E07W": inferred, "ASP-S04": inferred, "ASP-S08": inferred,
	"KA-B06W": inferred, "KA-R01": inferred, "KA-R02": inferred, "KA-R05": inferred, "KA-S01W": inferred,
	"KC-01": kahnCI, "KC-02": kahnCI, "KC-03": kahnCI, "KC-04": kahnCI, "KC-05": kahnCI,
	"KC-B01": kahnCI, "KC-B02": kahnCI, "KC-B03": kahnCI,
	"KC-02W": inferred, "KC-06": inferred, "KC-R01": inferred, "KC-S01": inferred,
	"ASP-X01": toolkitOwn, "STREAM-AMBIGUOUS-PROTOCOL": toolkitOwn, "STREAM-NOT-JSON": toolkitOwn, "STREAM-UNKNOWN-PROTOCOL": toolkitOwn,
}

// TestRuleSpecSections: every rule's Spec cites a section of a document in
// shared/spec/, except the rules catalogOnly lists with the reason; and
// every rule catalogOnly lists exists and indeed cites no such document.
func TestRuleSpecSections(t *testing.T) {
	declared := map[string]bool{}
	for _, r := range protocol.ListRules(models.All()) {
		declared[r.ID] = true
		cites := false
		for _, d := range specDocs {
			cites = cites || strings.HasPrefix(r.Spec, d)
		}
		why, listed := catalogOnly[r.ID]
		switch {
		case !cites && !listed:
			t.Errorf("rule %s cites no section of shared/spec/ (Spec %q) and is not listed in catalogOnly with a reason", r.ID, r.Spec)
		case cites && listed:
			t.Errorf("rule %s cites shared/spec/ (Spec %q) but catalogOnly lists it (%s)", r.ID, r.Spec, why)
		case listed && why == inferred && !strings.Contains(r.Spec, "INFERRED"):
			t.Errorf("rule %s is listed as [INFERRED] but its Spec %q does not say so", r.ID, r.Spec)
		}
	}
	for id := range catalogOnly {
		if !declared[id] {
			t.Errorf("catalogOnly lists %s, which no model declares", id)
		}
	}
}
