package capturecmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"

	"github.com/aaep-tools/aaepkit/internal/cli"
)

// runSibling runs the sibling as a child on this process's standard
// streams and returns its exit status. Windows has no exec: an interrupt
// (Ctrl+C, Ctrl+Break) reaches every process of the console, the child
// included, which stops as aaep-capture would; this process waits for it.
func runSibling(_ context.Context, path string, args []string) error {
	cmd := exec.Command(path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee):
		// The child reported its error itself.
		if ee.ExitCode() == cli.ExitUsage {
			return cli.Silent(cli.KindUsage)
		}
		return cli.Silent(cli.KindFailure)
	}
	return cli.Unavailable(fmt.Errorf("running %s: %w", path, err))
}
