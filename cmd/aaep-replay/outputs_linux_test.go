//go:build linux

package main

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

// TestBinaryNotToTerminal: a capture or a PNG is not written to a terminal;
// text is.
func TestBinaryNotToTerminal(t *testing.T) {
	dir := outputsDir(t)
	tty := binarytest.Terminal(t)
	for _, c := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"cut", "src.aaep", "-o", "-"}, false},
		{[]string{"merge", "src.aaep", "other.aaep", "-o", "-"}, false},
		{[]string{"repair", "src.aaep", "-o", "-"}, false},
		{[]string{"export", "src.aaep"}, true},
		{[]string{"visualize", "src.aaep", "--format", "dot", "-o", "-"}, true},
	} {
		cmd := exec.Command(replayBin.Path(t), c.args...)
		cmd.Dir = dir
		var errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = tty, &errb
		err := cmd.Run()
		switch {
		case c.ok && err != nil:
			t.Errorf("%q to a terminal: %v %s", c.args, err, errb.String())
		case !c.ok && (err == nil || !strings.Contains(errb.String(), "standard output is a terminal")):
			t.Errorf("%q to a terminal: %v %q; want a refusal", c.args, err, errb.String())
		}
	}
}

func TestOutputThroughSymlinkAndModes(t *testing.T) {
	mask := syscall.Umask(0o022)
	syscall.Umask(mask)
	for _, v := range writerVerbs() {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			dir := outputsDir(t)
			// A new file: 0644 less the umask.
			if code, _, stderr := runBinary(t, dir, v.args(dir, "new.out")...); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			st, err := os.Stat(filepath.Join(dir, "new.out"))
			if err != nil {
				t.Fatal(err)
			}
			if want := os.FileMode(0o644 &^ mask); st.Mode().Perm() != want {
				t.Errorf("new file mode %v, want %v", st.Mode().Perm(), want)
			}
			// An existing file keeps its mode.
			os.Chmod(filepath.Join(dir, "new.out"), 0o600)
			if code, _, stderr := runBinary(t, dir, v.args(dir, "new.out")...); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if st, _ := os.Stat(filepath.Join(dir, "new.out")); st.Mode().Perm() != 0o600 {
				t.Errorf("replaced file mode %v, want the old 0600", st.Mode().Perm())
			}
			// A symbolic link: its target is written, the link stays.
			os.Mkdir(filepath.Join(dir, "t"), 0o755)
			os.WriteFile(filepath.Join(dir, "t", "target.out"), []byte("old"), 0o640)
			os.Symlink("t/target.out", filepath.Join(dir, "link.out"))
			if code, _, stderr := runBinary(t, dir, v.args(dir, "link.out")...); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if lst, _ := os.Lstat(filepath.Join(dir, "link.out")); lst.Mode()&fs.ModeSymlink == 0 {
				t.Errorf("the link was replaced by a %v", lst.Mode())
			}
			got, _ := os.ReadFile(filepath.Join(dir, "t", "target.out"))
			want, _ := os.ReadFile(filepath.Join(dir, "new.out"))
			if v.capture {
				got, want = recordPayloads(t, got), recordPayloads(t, want)
			}
			if len(got) < 10 || (!bytes.Equal(got, want) && v.name != "import") {
				t.Errorf("the link's target holds %d bytes, not the output", len(got))
			}
			if st, _ := os.Stat(filepath.Join(dir, "t", "target.out")); st.Mode().Perm() != 0o640 {
				t.Errorf("the target's mode became %v", st.Mode().Perm())
			}
			noTempFiles(t, dir)
			noTempFiles(t, filepath.Join(dir, "t"))
		})
	}
}

func TestOutputToDevice(t *testing.T) {
	for _, v := range writerVerbs() {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			dir := outputsDir(t)
			null, full := filepath.Join(dir, "null"), filepath.Join(dir, "full")
			for _, d := range []struct {
				path  string
				minor int
			}{{null, 3}, {full, 7}} {
				if err := syscall.Mknod(d.path, syscall.S_IFCHR|0o666, 1<<8|d.minor); err != nil {
					t.Fatalf("making a device to write to needs CAP_MKNOD (root, as .ci/run runs): %v", err)
				}
			}
			if code, _, stderr := runBinary(t, dir, v.args(dir, "null")...); code != 0 {
				t.Errorf("-o null (a device like /dev/null): exit %d, %s", code, stderr)
			}
			code, _, stderr := runBinary(t, dir, v.args(dir, "full")...)
			if code != 2 || !strings.Contains(stderr, "no space left on device") {
				t.Errorf("-o full (a device like /dev/full): exit %d, %q; want 2 and ENOSPC", code, stderr)
			}
			for _, p := range []string{null, full} {
				st, err := os.Lstat(p)
				if err != nil || st.Mode()&fs.ModeCharDevice == 0 {
					t.Errorf("%s is no longer a character device: %v %v", p, st.Mode(), err)
				}
			}
			noTempFiles(t, dir)
		})
	}
}
