//go:build unix

package outfile_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/aaep-tools/aaepkit/internal/outfile"
)

func umask() os.FileMode {
	m := syscall.Umask(0o022)
	syscall.Umask(m)
	return os.FileMode(m)
}

func TestNewFileMode(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "new.out")
	if err := writeAll(t, out, outfile.Options{}, "hello"); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := 0o644 &^ umask(); st.Mode().Perm() != want {
		t.Errorf("mode %v, want %v (0644 less the umask)", st.Mode().Perm(), want)
	}
	if got := read(t, out); got != "hello" {
		t.Errorf("content %q", got)
	}
	sameNames(t, dir, "new.out")
}

func TestExistingFileReplacedKeepingMode(t *testing.T) {
	for _, mode := range []os.FileMode{0o600, 0o640, 0o755} {
		dir := t.TempDir()
		out := filepath.Join(dir, "old.out")
		write(t, out, "old content that is longer")
		if err := os.Chmod(out, mode); err != nil {
			t.Fatal(err)
		}
		before, _ := os.Stat(out)
		if err := writeAll(t, out, outfile.Options{}, "new"); err != nil {
			t.Fatal(err)
		}
		st, _ := os.Stat(out)
		if st.Mode().Perm() != mode {
			t.Errorf("mode %v, want the old file's %v", st.Mode().Perm(), mode)
		}
		if os.SameFile(before, st) {
			t.Errorf("the file was rewritten in place, want a rename of a new file")
		}
		if got := read(t, out); got != "new" {
			t.Errorf("content %q", got)
		}
		sameNames(t, dir, "old.out")
	}
}

// mknod makes a character device like /dev/null (1,3) or /dev/full (1,7) in dir.
func mknod(t *testing.T, path string, minor uint32) {
	t.Helper()
	dev := int((1 << 8) | minor)
	if err := syscall.Mknod(path, syscall.S_IFCHR|0o666, dev); err != nil {
		t.Fatalf("making a device to write to needs CAP_MKNOD (root, as .ci/run runs): %v", err)
	}
}

func TestDeviceWrittenInPlace(t *testing.T) {
	dir := t.TempDir()
	null := filepath.Join(dir, "null")
	mknod(t, null, 3)
	link := filepath.Join(dir, "null-link")
	os.Symlink("null", link)
	for _, out := range []string{null, link} {
		f, err := outfile.Open(out, outfile.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if f.Kind() != outfile.Stream {
			t.Errorf("%s opened as %v, want a stream", out, f.Kind())
		}
		if _, err := io.WriteString(f, "discarded"); err != nil {
			t.Fatal(err)
		}
		if err := f.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	st, _ := os.Lstat(null)
	if st.Mode()&fs.ModeCharDevice == 0 || st.Mode()&fs.ModeDevice == 0 {
		t.Errorf("the device is now a %v", st.Mode())
	}
	sameNames(t, dir, "null", "null-link")

	// Like /dev/full: the write fails, the error says so, the device stays.
	full := filepath.Join(dir, "full")
	mknod(t, full, 7)
	err := writeAll(t, full, outfile.Options{}, "no room")
	if !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("writing to a full device: %v, want ENOSPC", err)
	}
	if st, _ := os.Lstat(full); st.Mode()&fs.ModeCharDevice == 0 {
		t.Errorf("the full device is now a %v", st.Mode())
	}
	sameNames(t, dir, "full", "null", "null-link")
}

func TestFIFOWrittenInPlace(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- err.Error()
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- string(b)
	}()
	if err := writeAll(t, fifo, outfile.Options{}, "through the pipe"); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "through the pipe" {
		t.Errorf("reader got %q", s)
	}
	if st, _ := os.Lstat(fifo); st.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("the FIFO is now a %v", st.Mode())
	}
	sameNames(t, dir, "pipe")
}

func TestSocketWrittenInPlace(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- err.Error()
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(c)
		got <- string(b)
	}()
	if err := writeAll(t, sock, outfile.Options{}, "over the socket"); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "over the socket" {
		t.Errorf("listener got %q", s)
	}
	if st, _ := os.Lstat(sock); st.Mode()&fs.ModeSocket == 0 {
		t.Errorf("the socket is now a %v", st.Mode())
	}
}

// TestDevStdout: /dev/stdout is standard output, as "-" is, whatever it
// leads to (a pipe has no other name).
func TestDevStdout(t *testing.T) {
	for _, name := range []string{"/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"} {
		var buf bytes.Buffer
		if err := writeAll(t, name, outfile.Options{Stdout: &buf}, "out"); err != nil || buf.String() != "out" {
			t.Errorf("%s: %v, stdout got %q", name, err, buf.String())
		}
		if err := writeAll(t, name, outfile.Options{}, "out"); !errors.Is(err, outfile.ErrNoStdout) {
			t.Errorf("%s where stdout cannot be: %v", name, err)
		}
	}
	// /dev/stderr, here a pipe: written in place.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := make(chan string, 1)
	go func() { b, _ := io.ReadAll(r); got <- string(b) }()
	name := filepath.Join("/proc/self/fd", fmt.Sprint(w.Fd()))
	if err := writeAll(t, name, outfile.Options{}, "through the pipe"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if s := <-got; s != "through the pipe" {
		t.Errorf("pipe got %q", s)
	}
}
