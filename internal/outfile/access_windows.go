//go:build windows

package outfile

import (
	"io/fs"
	"os"

	"golang.org/x/sys/windows"
)

// writable refuses a file with the read-only attribute, which Go reports as
// a mode without write bits (os.Chmod sets it the same way): the promise
// that a read-only file is never replaced holds on Windows too. Access
// control lists are not read: a file they forbid to write fails when it is
// replaced, with the system's error.
func writable(_ string, st os.FileInfo) error {
	if st.Mode().Perm()&0o200 == 0 {
		return ErrNotWritable
	}
	return nil
}

// ownerOf is nil: Windows files have no owner in their mode, so the owner
// of a replaced file is neither checked nor kept.
func ownerOf(os.FileInfo) *ownerID { return nil }

// createTemp creates the temporary file name, which must not exist, shared
// for deletion: Windows renames (Commit, Publish) and removes a file that
// is open only when every handle of it allows that, and os.OpenFile's do
// not.
func createTemp(name string, perm os.FileMode) (*os.File, error) {
	p, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	attrs := uint32(windows.FILE_ATTRIBUTE_NORMAL)
	if perm&0o200 == 0 {
		attrs = windows.FILE_ATTRIBUTE_READONLY
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ|windows.GENERIC_WRITE,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, windows.CREATE_NEW, attrs, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(h), name), nil
}

// syncDir does nothing: Windows cannot flush a directory (NTFS journals its
// metadata itself), so a rename is as durable as the system makes it.
func syncDir(string, string) error { return nil }
