//go:build !unix

package procgroup

import "os/exec"

// Set does nothing: Windows has no process groups to signal; only the
// child itself is stopped, not what it started.
func Set(cmd *exec.Cmd) {}

// Interrupt kills the child: Windows has no SIGTERM to send it.
func Interrupt(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

// Kill kills the child.
func Kill(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
