package binarytest

import (
	"io"
	"os"
	"strconv"
	"syscall"
	"testing"
	"unsafe"
)

// RunAs runs the command as Run does, as the user and group uid and gid
// (which only root may ask for): for tests of what a user without root's
// rights may and may not do.
func (b *Binary) RunAs(t testing.TB, uid, gid uint32, dir string, args ...string) (int, []byte, string) {
	t.Helper()
	return b.run(t, dir, &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid, NoSetGroups: false, Groups: []uint32{}}}, args)
}

// Terminal opens a new pseudo-terminal and returns its terminal side, for
// tests of what a command does when standard output is a terminal. What is
// written to it is read and discarded; both sides are closed at the end of
// the test.
func Terminal(t testing.TB) *os.File {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, ptmx.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatalf("unlock pseudo-terminal: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, ptmx.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatalf("pseudo-terminal number: %v", e)
	}
	tty, err := os.OpenFile("/dev/pts/"+strconv.FormatUint(uint64(n), 10), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tty.Close() })
	go io.Copy(io.Discard, ptmx) // what is written to the terminal is read, as a screen would
	return tty
}
