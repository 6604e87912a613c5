// Package rendertmp is the private directory the aaep-render helper keeps
// its temporary files in: go-graphviz's compiled WebAssembly, code the
// helper runs, which go-graphviz puts in TMPDIR/go-graphviz, created by
// whoever ran first. In the shared system temp directory that is another
// user's directory (a crash for everyone else) or a place any local user can
// fill first; so the helper's TMPDIR is Dir, a directory of the user's own.
//
// It imports only the standard library, so that package setenv, whose init
// points TMPDIR at Dir, runs before go-graphviz's init compiles anything
// (Go initializes packages in import-path order once their imports are).
package rendertmp

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Name is the directory's name under the user's cache directory.
const Name = "aaep-render"

// ErrRefused means the directory cannot be used: it is not a directory,
// belongs to another user, or others may use it.
var ErrRefused = errors.New("refused the helper's temporary directory")

// Dir returns the helper's private directory, Name under the user's cache
// directory, created with mode 0700 when missing. It is used only when it
// is a directory of the user's own (not a link) that neither group nor
// others may use, in a parent that others cannot rename it out of; anything
// else is refused (ErrRefused), never repaired.
func Dir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("%w: no user cache directory to keep its compiled Graphviz in (%w); set XDG_CACHE_HOME or HOME", ErrRefused, err)
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", fmt.Errorf("%w: %w", ErrRefused, err)
	}
	dir := filepath.Join(base, Name)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("%w: %w", ErrRefused, err)
	}
	if err := checkPrivateDir(base, dir); err != nil {
		return "", err
	}
	return dir, nil
}

// checkPrivateDir refuses dir unless it is a directory of the user's own
// with no access for group or others, in a parent others cannot write to
// (or a sticky one, as /tmp, where they cannot rename it).
func checkPrivateDir(parent, dir string) error {
	refuse := func(format string, args ...any) error {
		return fmt.Errorf("%w %s: it %s; remove it, or set XDG_CACHE_HOME to a directory of your own", ErrRefused, dir, fmt.Sprintf(format, args...))
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrRefused, err)
	}
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		return refuse("is a symbolic link, not a directory")
	case !st.IsDir():
		return refuse("is not a directory")
	}
	if err := ownedByUser(st); err != nil {
		return refuse("%v", err)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return refuse("has mode %#o: group or others may use it, want 0700", perm)
	}
	pst, err := os.Stat(parent)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrRefused, err)
	}
	if pst.Mode().Perm()&0o022 != 0 && pst.Mode()&fs.ModeSticky == 0 {
		return refuse("is in %s, which others may write to (mode %#o, not sticky)", parent, pst.Mode().Perm())
	}
	return nil
}
