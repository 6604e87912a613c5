//go:build !windows

package capturecmd

import (
	"context"
	"fmt"
	"os"
	"syscall"

	"github.com/aaep-tools/aaepkit/internal/cli"
)

// runSibling replaces this process with the sibling: same process id,
// standard streams, signals and exit status.
func runSibling(_ context.Context, path string, args []string) error {
	err := syscall.Exec(path, append([]string{path}, args...), os.Environ())
	return cli.Unavailable(fmt.Errorf("running %s: %w", path, err))
}
