package binarytest_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/internal/binarytest"
)

// TestCommandsDoNotLinkTesting checks that no command of the module (the
// main packages under cmd/) links the testing package, which a production
// binary must not: its flags, its code and its state would ship in it. Test
// helpers (internal/browsertest, internal/testdeps) import testing; code the
// commands use takes what it needs from packages that do not
// (internal/headless). A failure names the packages that import testing.
func TestCommandsDoNotLinkTesting(t *testing.T) {
	const module = "github.com/aaep-tools/aaepkit"
	out, err := exec.Command(binarytest.GoTool(), "list", "-f", `{{if eq .Name "main"}}{{.ImportPath}}{{end}}`, module+"/cmd/...").Output()
	if err != nil {
		t.Fatalf("go list %s/cmd/...: %v", module, stderrOf(err))
	}
	cmds := strings.Fields(string(out))
	for _, want := range []string{"aaep-capture", "aaep-replay"} {
		if !slices.Contains(cmds, module+"/cmd/"+want) {
			t.Fatalf("go list %s/cmd/... = %q, want it to have cmd/%s", module, cmds, want)
		}
	}
	for _, cmd := range cmds {
		out, err := exec.Command(binarytest.GoTool(), "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, cmd).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", cmd, stderrOf(err))
		}
		var linked bool
		var importers []string
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			pkg, imports, _ := strings.Cut(line, " ")
			if pkg == "testing" {
				linked = true
			}
			if slices.Contains(strings.Fields(imports), "testing") {
				importers = append(importers, pkg)
			}
		}
		if linked || len(importers) > 0 {
			t.Errorf("%s links the testing package, imported by %s", cmd, strings.Join(importers, ", "))
		}
	}
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return err.Error() + ": " + string(ee.Stderr)
	}
	return err.Error()
}
