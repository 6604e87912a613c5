//go:build linux

package capturecmd

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/aaep-tools/aaepkit/internal/binarytest"
)

// TestCaptureToStdoutAndDevices: -o - pipes the capture onward; a device is
// written in place; - cannot be rotated or share stdout with --json.
func TestCaptureToStdoutAndDevices(t *testing.T) {
	dir := jsonlDir(t)
	code, stdout, stderr := runCapture(t, dir, "events.jsonl", "-o", "-")
	if code != 0 || received(t, stdout) != 50 {
		t.Errorf("-o -: exit %d, %s", code, stderr)
	}
	for _, args := range [][]string{{"--rotate-every", "1h"}, {"--json"}} {
		code, _, stderr := runCapture(t, dir, append([]string{"events.jsonl", "-o", "-"}, args...)...)
		if code != 2 || !strings.Contains(stderr, "standard output") {
			t.Errorf("-o - %v: exit %d, %q", args, code, stderr)
		}
	}
	// Never to a terminal.
	cmd := exec.Command(binary(t), "events.jsonl", "-o", "-")
	cmd.Dir = dir
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = binarytest.Terminal(t), &errb
	if err := cmd.Run(); err == nil || !strings.Contains(errb.String(), "standard output is a terminal") {
		t.Errorf("-o - to a terminal: %v, %q; want a refusal", err, errb.String())
	}
	null := filepath.Join(dir, "null")
	if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Fatalf("making a device to write to needs CAP_MKNOD (root, as .ci/run runs): %v", err)
	}
	if code, _, stderr := runCapture(t, dir, "events.jsonl", "-o", "null"); code != 0 {
		t.Errorf("-o a device: exit %d, %s", code, stderr)
	}
	if st, _ := os.Lstat(null); st.Mode()&fs.ModeCharDevice == 0 {
		t.Errorf("the device is now a %v", st.Mode())
	}
	noTemp(t, dir)
}
