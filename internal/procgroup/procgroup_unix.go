//go:build unix

package procgroup

import (
	"os/exec"
	"syscall"
)

// Set puts the child in its own process group, so that stopping
// it also stops what it started, and a terminal's Ctrl-C reaches only the
// recorder (which then stops the child in order).
func Set(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// Interrupt sends SIGTERM to the child's process group.
func Interrupt(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	}
}

// Kill sends SIGKILL to the child's process group.
func Kill(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
