package capedit

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ErrSameFile is returned when an output names one of the inputs.
var ErrSameFile = errors.New("output is the same file as an input")

// CheckOutput returns an error wrapping ErrSameFile when out is one of
// inputs: the same path, or an existing file that os.SameFile says is the
// same (a hard link, a symbolic link, another spelling of the path).
func CheckOutput(out string, inputs ...string) error {
	if out == "" {
		return errors.New("no output file given")
	}
	outAbs, _ := filepath.Abs(out)
	ost, oerr := os.Stat(out)
	for _, in := range inputs {
		inAbs, _ := filepath.Abs(in)
		if inAbs == outAbs {
			return fmt.Errorf("%w: %s", ErrSameFile, out)
		}
		if oerr != nil {
			continue
		}
		if ist, err := os.Stat(in); err == nil && os.SameFile(ist, ost) {
			return fmt.Errorf("%w: %s is %s", ErrSameFile, out, in)
		}
	}
	if oerr == nil && ost.IsDir() {
		return fmt.Errorf("output %s is a directory", out)
	}
	return nil
}

// AtomicFile is an output written under a temporary name in its final
// directory and renamed into place by Commit. Until Commit succeeds the
// final path is untouched.
type AtomicFile struct {
	*os.File
	path string
	mode os.FileMode
	done bool
}

// CreateAtomic creates a temporary file beside path. The caller writes to
// it and then calls Commit, or Abort to throw it away; calling Abort after
// Commit does nothing, so `defer f.Abort()` is the usual pattern.
func CreateAtomic(path string) (*AtomicFile, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	mode := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		mode = st.Mode().Perm()
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("create output %s: %w", path, err)
	}
	return &AtomicFile{File: f, path: path, mode: mode}, nil
}

// Path returns the final path of the file.
func (f *AtomicFile) Path() string { return f.path }

// Commit syncs and closes the temporary file, renames it to the final path
// and syncs the directory. On failure the temporary file is removed.
func (f *AtomicFile) Commit() error {
	if f.done {
		return errors.New("output already committed or aborted")
	}
	f.done = true
	tmp := f.Name()
	err := f.Chmod(f.mode)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, f.path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write output %s: %w", f.path, err)
	}
	if err := syncDir(filepath.Dir(f.path)); err != nil {
		return fmt.Errorf("write output %s: sync directory: %w", f.path, err)
	}
	return nil
}

// Abort closes and removes the temporary file, unless Commit already ran.
func (f *AtomicFile) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.Close()
	os.Remove(f.Name())
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// WriteFile writes the output file out through fn, atomically: it refuses an
// out that is one of inputs, lets fn write to a temporary file and commits
// it only when fn returns nil. On error nothing is left at out (an existing
// file there is kept as it was).
func WriteFile(out string, inputs []string, fn func(w io.Writer) error) error {
	if err := CheckOutput(out, inputs...); err != nil {
		return err
	}
	f, err := CreateAtomic(out)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := fn(f); err != nil {
		return err
	}
	return f.Commit()
}
