//go:build unix

package transport

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts the child in its own process group, so that stopping
// it also stops what it started, and a terminal's Ctrl-C reaches only the
// recorder (which then stops the child in order).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func interruptProcess(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	}
}

func killProcess(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
