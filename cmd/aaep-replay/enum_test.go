package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/internal/cli"
)

// TestEnumeratedFlagValues: a value an enumerated flag does not have is a
// usage error before anything is opened: exit 2 naming the values that
// exist, not a missing input, and no output written. (An urgency nothing
// can match used to select nothing: show printed nothing and exited 0.)
func TestEnumeratedFlagValues(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "missing.aaep")
	out := filepath.Join(dir, "out.aaep")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"show", in, "--urgency", "critcal"}, `--urgency "critcal": want background, normal or critical`},
		{[]string{"show", in, "--urgency", "critical,urgent"}, `--urgency "urgent": want background, normal or critical`},
		{[]string{"filter", in, "-o", out, "--urgency", "Critical"}, `--urgency "Critical": want background, normal or critical`},
		{[]string{"filter", in, "-o", out, "--filter-urgency", "high"}, `--urgency "high": want background, normal or critical`},
		{[]string{"check", in, "--fail-on", "mus"}, "want must, should, info or never"},
		{[]string{"check", in, "--profile", "lax"}, "want strict or lenient"},
		{[]string{"check", in, "--protocol", "aaepx"}, "aaep, asp, kahn"},
		{[]string{"visualize", in, "-o", out + ".gif", "--format", "gif"}, "want svg, png or dot"},
		{[]string{"visualize", in, "-o", out + ".svg", "--profile", "lax"}, `--profile: unknown profile "lax" (want strict or lenient)`},
		{[]string{"visualize", in, "-o", out + ".svg", "--protocol", "aaepx"}, `--protocol: unknown protocol "aaepx"`},
		{[]string{"show", in, "--profile", "lax"}, `--profile: unknown profile "lax" (want strict or lenient)`},
		{[]string{"show", in, "--protocol", "aaepx"}, `--protocol: unknown protocol "aaepx"`},
		{[]string{"view", in, "--profile", "lax"}, `--profile: unknown profile "lax" (want strict or lenient)`},
		{[]string{"test", "--level", "1", "--profile", "lax", "--exec", "true {url}"}, `--profile: unknown profile "lax" (want strict or lenient)`},
		{[]string{"test", "--level", "4", "--exec", "true {url}"}, "want 1, 2 or 3"},
		{[]string{"test", "--level", "1", "--transport", "carrier-pigeon", "--exec", "true {url}"}, "want sse, websocket or grpc"},
		{[]string{"diff", in, in + "2", "--color", "sometimes"}, "auto, always or never"},
	} {
		code, _, stderr := replay(t, c.args...)
		if code != cli.ExitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, %q; want 2 and %q", c.args, code, stderr, c.want)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Fatalf("%q: left %v", c.args, ents)
		}
	}
	// A value that exists goes through to the input (and its error).
	if code, _, stderr := replay(t, "show", in, "--urgency", "background,critical"); code != cli.ExitUsage || !strings.Contains(stderr, "missing.aaep") {
		t.Errorf("show --urgency background,critical: exit %d, %q; want the missing input named", code, stderr)
	}
}
