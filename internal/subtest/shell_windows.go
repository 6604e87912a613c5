//go:build windows

package subtest

import (
	"os"
	"os/exec"
)

// shell runs command with the command interpreter (cmd.exe), as /bin/sh
// would on Unix.
func shell(command string) *exec.Cmd {
	sh := os.Getenv("COMSPEC")
	if sh == "" {
		sh = "cmd.exe"
	}
	return exec.Command(sh, "/C", command)
}
