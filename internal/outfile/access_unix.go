//go:build unix

package outfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// writable asks the system whether the user may write the existing file at
// path, as cp does (access(2) with the effective ids): nil, ErrNotWritable,
// or the error that makes it unwritable for everyone (a read-only file
// system).
func writable(path string, _ os.FileInfo) error {
	err := unix.Faccessat(unix.AT_FDCWD, path, unix.W_OK, unix.AT_EACCESS)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		return ErrNotWritable
	case errors.Is(err, unix.EROFS):
		return err
	}
	return nil // the write decides
}

// ownerOf is the owner and group of a file as Stat found it.
func ownerOf(st os.FileInfo) *ownerID {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	return &ownerID{int(sys.Uid), int(sys.Gid)}
}

// createTemp creates the temporary file name, which must not exist.
func createTemp(name string, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
}

// syncDir makes a rename into target's directory durable (fsync of the
// directory).
func syncDir(name, target string) error {
	d, err := os.Open(filepath.Dir(target))
	if err != nil {
		return &Error{Op: "sync directory of", Path: name, Err: err}
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return &Error{Op: "sync directory of", Path: name, Err: err}
	}
	return nil
}
