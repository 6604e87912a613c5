package protocol_test

import (
	"testing"

	"github.com/aaep-tools/aaepkit/protocol"
)

func TestProfiles(t *testing.T) {
	for _, tc := range []struct {
		name   string
		p      protocol.Profiles
		differ bool
		only   string
	}{
		{"same in both", protocol.Profiles{}, false, ""},
		{"two readings", protocol.Profiles{Lenient: "the implicit state counts", Strict: "the explicit chain only"}, true, ""},
		{"strict only", protocol.Profiles{Lenient: protocol.NotChecked, Strict: "reported"}, true, "strict"},
		{"lenient only, with a reason", protocol.Profiles{Lenient: "a warning", Strict: protocol.NotChecked + ": KA-B03 instead"}, true, "lenient"},
	} {
		if got := tc.p.Differ(); got != tc.differ {
			t.Errorf("%s: Differ() = %v, want %v", tc.name, got, tc.differ)
		}
		if got := tc.p.Only(); got != tc.only {
			t.Errorf("%s: Only() = %q, want %q", tc.name, got, tc.only)
		}
	}
}
