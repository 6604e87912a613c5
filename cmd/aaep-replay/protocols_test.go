package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/internal/cli"
)

// TestOtherProtocolsThroughCaptures: ASP and KAHN streams are files; they
// must survive import into a capture and be checked from it as cleanly as
// from the JSONL itself.
func TestOtherProtocolsThroughCaptures(t *testing.T) {
	for _, tc := range []struct {
		fixture, protocol, session string
	}{
		{"../../protocol/asp/testdata/negotiation.jsonl", "asp", "asp session 019cc8a0-0000-7a00-8000-00000000a001"},
		{"../../protocol/kahn/testdata/coder.jsonl", "kahn", "kahn session agent-coder-1/coder"},
	} {
		t.Run(tc.protocol, func(t *testing.T) {
			capture := filepath.Join(t.TempDir(), tc.protocol+".aaep")
			if code, _, stderr := replay(t, "import", tc.fixture, "-o", capture); code != 0 {
				t.Fatalf("import exit %d: %s", code, stderr)
			}
			for _, in := range []string{tc.fixture, capture} {
				code, out, stderr := replay(t, "check", in)
				if code != cli.ExitOK {
					t.Fatalf("check %s: exit %d\n%s%s", in, code, out, stderr)
				}
				if !strings.Contains(out, tc.session) || !strings.Contains(out, ": clean") || !strings.Contains(out, "("+tc.protocol+" ") {
					t.Errorf("check %s does not report a clean %s session:\n%s", in, tc.protocol, out)
				}
			}
		})
	}
}
