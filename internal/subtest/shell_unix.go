//go:build unix

package subtest

import "os/exec"

// shell runs command with /bin/sh.
func shell(command string) *exec.Cmd { return exec.Command("/bin/sh", "-c", command) }
