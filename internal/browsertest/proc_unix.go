//go:build unix

package browsertest

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts Chromium in its own process group, so that Close also
// stops its renderer, GPU and zygote processes.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func killProcess(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
