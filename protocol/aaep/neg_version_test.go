package aaep

import (
	"slices"
	"testing"
)

// TestNegVersionPrecedence: NEG-VERSION compares versions by semantic-version
// precedence (package vocab), pre-releases included: 1.0.0 is above a
// request for 1.0.0-draft, so accepting it is reported. The checker's former
// copy of the comparison ignored pre-releases and let it pass, while serve's
// copy accepted any "1." request; §3.4.4 makes aaep_version a semantic
// version, which decides it.
func TestNegVersionPrecedence(t *testing.T) {
	tests := []struct {
		requested, accepted string
		want                []string
	}{
		{"1.0.0-draft", "1.0.0", []string{"NEG-VERSION"}},
		{"1.0.0-rc.1", "1.0.0", []string{"NEG-VERSION"}},
		{"1.0.0", "1.0.0", nil},
		{"1.10.0", "1.0.0", nil},
		{"10.0.0", "1.0.0", nil},
		{"0.9.0", "1.0.0", []string{"NEG-VERSION"}},
	}
	for _, tt := range tests {
		t.Run(tt.requested+" accepted as "+tt.accepted, func(t *testing.T) {
			res := run(t, "", stream(SREQ(caps{}).set("aaep_version", tt.requested), SACC("sub_1", caps{}).set("aaep_version", tt.accepted))...)
			if got := res.seqIDs(); !slices.Equal(got, tt.want) {
				t.Errorf("findings %v, want %v\n%s", got, tt.want, res.describe())
			}
		})
	}
}
