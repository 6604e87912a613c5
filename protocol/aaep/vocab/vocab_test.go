package vocab

import (
	"fmt"
	"slices"
	"testing"
)

func TestCompact(t *testing.T) {
	tests := []struct{ in, want string }{
		{"aaep:agent.tool.invoked", "aaep:agent.tool.invoked"},
		{"https://aaep-protocol.org/types/agent.tool.invoked", "aaep:agent.tool.invoked"},
		{"https://aaep-protocol.org/types/agent.*", "aaep:agent.*"},
		// Only the two spellings of §3.2.2 name a core type.
		{"medai:agent.awaiting.confirmation", "medai:agent.awaiting.confirmation"},
		{"http://aaep-protocol.org/types/agent.tool.invoked", "http://aaep-protocol.org/types/agent.tool.invoked"},
		{"https://aaep-protocol.org/vocab/v1#agent.tool.invoked", "https://aaep-protocol.org/vocab/v1#agent.tool.invoked"},
		{"subscription.request", "subscription.request"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := Compact(tt.in); got != tt.want {
			t.Errorf("Compact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCoreAndMessageTypes(t *testing.T) {
	for i, typ := range CoreTypes {
		if got := CoreIndex(typ); got != i {
			t.Errorf("CoreIndex(%q) = %d, want %d", typ, got, i)
		}
		if !IsCoreType(typ) || IsMessageType(typ) {
			t.Errorf("%q: IsCoreType %v, IsMessageType %v", typ, IsCoreType(typ), IsMessageType(typ))
		}
		if full := TypeURIPrefix + typ[len(CorePrefix):]; IsCoreType(full) || Compact(full) != typ {
			t.Errorf("full URI %q: IsCoreType %v (want false: compact form only), Compact %q", full, IsCoreType(full), Compact(full))
		}
	}
	for _, typ := range MessageTypes {
		if !IsMessageType(typ) || IsCoreType(typ) {
			t.Errorf("%q: IsMessageType %v, IsCoreType %v", typ, IsMessageType(typ), IsCoreType(typ))
		}
	}
	for _, typ := range []string{"", "aaep:agent.session", "agent.session.started", "aaep:producer.manifest", "subscription.requested", "aaep:subscription.request"} {
		if IsCoreType(typ) || IsMessageType(typ) || CoreIndex(typ) != -1 {
			t.Errorf("%q is neither a core type nor a message type", typ)
		}
	}
}

func TestNearCoreType(t *testing.T) {
	tests := []struct{ in, want string }{
		{"AAEP:agent.Tool.Invoked", TypeToolInvoked},
		{" aaep:agent.tool.invoked ", TypeToolInvoked},
		{"http://aaep-protocol.org/types/agent.tool.invoked", TypeToolInvoked},
		{"https://aaep-protocol.org/vocab/v1#agent.awaiting.confirmation", TypeAwaitingConfirmation},
		{"aaep:agent.tool.invoked", TypeToolInvoked},
		{"medai:agent.tool.invoked", ""},
		{"aaep:agent.tool.called", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := NearCoreType(tt.in); got != tt.want {
			t.Errorf("NearCoreType(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestMatchPattern(t *testing.T) {
	tests := []struct {
		pattern, typ string
		want         bool
	}{
		{"aaep:agent.*", "aaep:agent.tool.invoked", true},
		{"aaep:agent.tool.*", "aaep:agent.tool.invoked", true},
		{"aaep:agent.tool.*", "aaep:agent.session.started", false},
		{"aaep:agent.session.started", "aaep:agent.session.started", true},
		{"aaep:agent.session.started", "aaep:agent.session.completed", false},
		{"https://aaep-protocol.org/types/agent.tool.*", "aaep:agent.tool.completed", true},
		{"https://aaep-protocol.org/types/agent.tool.completed", "aaep:agent.tool.completed", true},
		// §5.3.1.7 / NEG-FILTER-INCLUDE: the default include does not cover extension types.
		{"aaep:agent.*", "medai:patient.consulted", false},
		{"medai:*", "medai:patient.consulted", true},
		{"*", "medai:patient.consulted", true},
		{"*", "", true},
		// A literal without "*" is no prefix, and patterns are case-sensitive.
		{"aaep:agent.tool", "aaep:agent.tool.invoked", false},
		{"aaep:Agent.*", "aaep:agent.tool.invoked", false},
		// "*" only counts at the end.
		{"aaep:*.invoked", "aaep:agent.tool.invoked", false},
		{"", "aaep:agent.tool.invoked", false},
	}
	for _, tt := range tests {
		if got := MatchPattern(tt.pattern, tt.typ); got != tt.want {
			t.Errorf("MatchPattern(%q, %q) = %v, want %v", tt.pattern, tt.typ, got, tt.want)
		}
	}
}

func TestPatternRelations(t *testing.T) {
	spec := []struct {
		p    string
		want int
	}{{"", -1}, {"*", 0}, {"aaep:*", 5}, {"aaep:agent.tool.*", 16}, {"aaep:agent.tool.invoked", 1 << 20}}
	for _, tt := range spec {
		if got := Specificity(tt.p); got != tt.want {
			t.Errorf("Specificity(%q) = %d, want %d", tt.p, got, tt.want)
		}
	}
	tests := []struct {
		q, p              string
		subsumes, overlap bool
	}{
		{"aaep:agent.*", "aaep:agent.tool.*", true, true},
		{"aaep:agent.tool.*", "aaep:agent.*", false, true},
		{"aaep:agent.*", "aaep:agent.tool.invoked", true, true},
		{"aaep:agent.tool.invoked", "aaep:agent.*", false, true},
		{"aaep:agent.tool.invoked", "aaep:agent.tool.invoked", true, true},
		{"aaep:agent.tool.invoked", "aaep:agent.tool.completed", false, false},
		{"aaep:agent.tool.*", "aaep:agent.session.*", false, false},
		{"*", "medai:*", true, true},
		{"aaep:agent.*", "medai:*", false, false},
	}
	for _, tt := range tests {
		if got := Subsumes(tt.q, tt.p); got != tt.subsumes {
			t.Errorf("Subsumes(%q, %q) = %v, want %v", tt.q, tt.p, got, tt.subsumes)
		}
		if got := Overlap(tt.q, tt.p); got != tt.overlap {
			t.Errorf("Overlap(%q, %q) = %v, want %v", tt.q, tt.p, got, tt.overlap)
		}
	}
}

// TestPatternSet runs every question on each set twice: as given (searched
// linearly) and padded past smallSet with patterns that match nothing asked
// (searched through maps). Both must answer alike.
func TestPatternSet(t *testing.T) {
	type query struct {
		typ, match         string // Match(typ)
		pattern            string
		covers, overlapsTo bool // Covers(pattern), Overlaps(pattern)
	}
	tests := []struct {
		name    string
		set     []string
		queries []query
	}{
		{"default include", []string{"aaep:agent.*"}, []query{
			{"aaep:agent.tool.invoked", "aaep:agent.*", "aaep:agent.tool.*", true, true},
			{"medai:patient.consulted", "", "medai:*", false, false},
			{"aaep:producer.manifest", "", "aaep:*", false, true},
		}},
		{"most specific wins", []string{"aaep:agent.*", "aaep:agent.tool.*", "aaep:agent.tool.invoked"}, []query{
			{"aaep:agent.tool.invoked", "aaep:agent.tool.invoked", "aaep:agent.tool.invoked", true, true},
			{"aaep:agent.tool.completed", "aaep:agent.tool.*", "aaep:agent.tool.completed", true, true},
			{"aaep:agent.session.started", "aaep:agent.*", "*", false, true},
		}},
		{"full-URI patterns", []string{"https://aaep-protocol.org/types/agent.progress.updated"}, []query{
			{"aaep:agent.progress.updated", "aaep:agent.progress.updated", "https://aaep-protocol.org/types/agent.progress.updated", true, true},
			{"aaep:agent.progress", "", "aaep:agent.progress.*", false, true},
		}},
		{"literals only", []string{"aaep:agent.session.started", "aaep:agent.session.completed"}, []query{
			{"aaep:agent.session.errored", "", "aaep:agent.session.*", false, true},
			{"aaep:agent.session.started", "aaep:agent.session.started", "aaep:agent.tool.*", false, false},
		}},
		{"empty", nil, []query{
			{"aaep:agent.tool.invoked", "", "aaep:*", false, false},
		}},
	}
	pad := make([]string, 0, smallSet+1)
	for i := range smallSet + 1 {
		pad = append(pad, fmt.Sprintf("zz:pad.%d", i))
	}
	for _, tt := range tests {
		for _, large := range []bool{false, true} {
			set := tt.set
			if large {
				set = append(slices.Clone(tt.set), pad...)
			}
			ps := CompilePatterns(set)
			if large != (ps.literal != nil) {
				t.Fatalf("%s: %d patterns searched through maps: %v", tt.name, len(set), ps.literal != nil)
			}
			for _, q := range tt.queries {
				if got := ps.Match(q.typ); got != q.match {
					t.Errorf("%s (large %v): Match(%q) = %q, want %q", tt.name, large, q.typ, got, q.match)
				}
				if got := ps.Covers(q.pattern); got != q.covers {
					t.Errorf("%s (large %v): Covers(%q) = %v, want %v", tt.name, large, q.pattern, got, q.covers)
				}
				if got := ps.Overlaps(q.pattern); got != q.overlapsTo {
					t.Errorf("%s (large %v): Overlaps(%q) = %v, want %v", tt.name, large, q.pattern, got, q.overlapsTo)
				}
			}
		}
	}
}

func TestLanguages(t *testing.T) {
	tests := []struct {
		list []string
		tag  string
		want bool
	}{
		{[]string{"en-US"}, "en-US", true},
		{[]string{"en-US"}, "EN-us", true},
		// Ch. 11: a bare language and its regions match both ways.
		{[]string{"en-US"}, "en", true},
		{[]string{"en"}, "en-US", true},
		{[]string{"en-US"}, "en-GB", false},
		{[]string{"en-US"}, "yo-NG", false},
		{[]string{"yo-NG", "fr"}, "fr-CA", true},
		{nil, "en", false},
		{[]string{"en-US"}, "", false},
	}
	pad := make([]string, 0, smallSet+1)
	for i := range smallSet + 1 {
		pad = append(pad, fmt.Sprintf("x%c-ZZ", 'a'+i))
	}
	for _, tt := range tests {
		for _, large := range []bool{false, true} {
			list := tt.list
			if large {
				list = append(slices.Clone(tt.list), pad...)
			}
			if got := NewLanguages(list).Has(tt.tag); got != tt.want {
				t.Errorf("NewLanguages(%v).Has(%q) (large %v) = %v, want %v", tt.list, tt.tag, large, got, tt.want)
			}
		}
	}
}

func TestCompareVersions(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"1.0.0", "1.0.0", 0},
		{"1.0.0", "1.2.0", -1},
		{"1.2.0", "1.0.0", 1},
		{"1.10.0", "1.9.0", 1}, // numbers, not text
		{"10.0.0", "9.9.9", 1},
		{"99999999999999999999.0.0", "99999999999999999998.0.0", 1}, // any length
		{"01.0.0", "1.0.0", 0},
		// Semantic-version precedence (§3.4.4): a pre-release is lower
		// than its release. The checker's former copy ignored pre-releases.
		{"1.0.0-draft", "1.0.0", -1},
		{"1.0.0", "1.0.0-draft", 1},
		{"0.1.0-draft", "0.1.0-draft", 0},
		{"1.0.0-alpha", "1.0.0-alpha.1", -1},
		{"1.0.0-alpha.1", "1.0.0-alpha.beta", -1},
		{"1.0.0-beta.2", "1.0.0-beta.11", -1},
		{"1.0.0-beta", "1.0.0-alpha", 1},
		{"1.0.0-rc.1", "1.0.0", -1},
		{"1.0.0+build.5", "1.0.0", 0},
		// Lenient reading of what is not a version: missing parts are 0.
		{"1", "1.0.0", 0},
		{"1.0", "1.0.0", 0},
		{"x.y.z", "0.0.0", 0},
	}
	for _, tt := range tests {
		if got := CompareVersions(tt.a, tt.b); got != tt.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestVersionTerms(t *testing.T) {
	valid := map[string]bool{"1.0.0": true, "0.1.0-draft": true, "1.0.0-rc.1": true, "10.20.30": true,
		"1": false, "1.0": false, "v1.0.0": false, "1.0.0-": false, "1.0.0+build": false, "": false, " 1.0.0": false}
	for v, want := range valid {
		if got := ValidVersion(v); got != want {
			t.Errorf("ValidVersion(%q) = %v, want %v", v, got, want)
		}
	}
	if !IsPublished("1.0.0") || IsPublished("1.0") || IsPublished("0.1.0-draft") || !IsPublished(Version) {
		t.Errorf("IsPublished: only 1.0.0 is published, and Version %s must be", Version)
	}
	pv := PublishedVersions()
	pv[0] = "changed"
	if !IsPublished("1.0.0") {
		t.Error("PublishedVersions returned the package's own slice")
	}
	// A producer speaking 1.0.0 accepts a request it can answer with a
	// version not above the request and of the same major version.
	serves := []struct {
		requested string
		want      bool
	}{
		{"1.0.0", true},
		{"1.2.0", true},
		{"1.0.1", true},
		{"2.0.0", false},
		{"9.0.0", false},
		{"0.9.0", false},
		{"1.0.0-draft", false}, // 1.0.0 is above 1.0.0-draft
		{"1.1.0-draft", true},
		{"1", false}, // not a semantic version (MSG-REQ-SCHEMA)
		{"1.x", false},
		{"", false},
	}
	for _, tt := range serves {
		if got := Serves("1.0.0", tt.requested); got != tt.want {
			t.Errorf("Serves(1.0.0, %q) = %v, want %v", tt.requested, got, tt.want)
		}
	}
}

func TestCapabilityDefaults(t *testing.T) {
	if got := DefaultInclude(); !slices.Equal(got, []string{"aaep:agent.*"}) {
		t.Errorf("DefaultInclude() = %v", got)
	}
	if got := DefaultLanguages(); !slices.Equal(got, []string{"en-US"}) {
		t.Errorf("DefaultLanguages() = %v", got)
	}
	if got := DefaultCoalesce(); !slices.Equal(got, []string{"sentence", "completion"}) {
		t.Errorf("DefaultCoalesce() = %v", got)
	}
	if !IsVerbosity(DefaultVerbosity) {
		t.Errorf("DefaultVerbosity %q is no verbosity", DefaultVerbosity)
	}
	if got := DefaultLevels(); !slices.Equal(got, []int{1}) {
		t.Errorf("DefaultLevels() = %v", got)
	}
	a := DefaultInclude()
	a[0] = "changed"
	if DefaultInclude()[0] != "aaep:agent.*" {
		t.Error("defaults share their slice")
	}
	for v, want := range map[string]bool{"terse": true, "normal": true, "detailed": true, "Normal": false, "": false, "verbose": false} {
		if got := IsVerbosity(v); got != want {
			t.Errorf("IsVerbosity(%q) = %v, want %v", v, got, want)
		}
	}
}

// TestEnumerations: the verbosity and reason-code lists the checker's
// message specs take from here, in the order findings name them, each a
// fresh slice; and ValidVersionBytes agrees with ValidVersion.
func TestEnumerations(t *testing.T) {
	for _, tc := range []struct {
		name string
		list func() []string
		want []string
	}{
		{"Verbosities", Verbosities, []string{"terse", "normal", "detailed"}},
		{"ReasonCodes", ReasonCodes, []string{"version_unsupported", "manifest_signature_required", "capabilities_incompatible",
			"rate_limit", "authentication_required", "authorization_denied", "transport_unavailable", "unknown"}},
	} {
		got := tc.list()
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s() = %v, want %v", tc.name, got, tc.want)
		}
		got[0] = "changed"
		if tc.list()[0] != tc.want[0] {
			t.Errorf("%s() returned the package's own slice", tc.name)
		}
	}
	for _, v := range Verbosities() {
		if !IsVerbosity(v) {
			t.Errorf("IsVerbosity(%q) = false for a listed verbosity", v)
		}
	}
	for _, v := range []string{"1.0.0", "0.1.0-draft", "1.0", "v1.0.0", "1.0.0+build", ""} {
		if ValidVersionBytes([]byte(v)) != ValidVersion(v) {
			t.Errorf("ValidVersionBytes(%q) = %v, ValidVersion says %v", v, !ValidVersion(v), ValidVersion(v))
		}
	}
}
