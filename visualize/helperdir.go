package visualize

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// helperDirName is the helper's directory under the user's cache
// directory: the TMPDIR the helper runs with.
const helperDirName = "aaep-render"

// ErrHelperDir means the helper's private directory cannot be used: it is
// not a directory, belongs to another user, or others may write to it.
var ErrHelperDir = errors.New("refused the helper's temporary directory")

// HelperTempDir returns the directory the helper is started with as its
// TMPDIR: aaep-render under the user's cache directory, created with mode
// 0700 when missing. go-graphviz keeps its compiled WebAssembly (code the
// helper runs) in TMPDIR/go-graphviz, created by whoever ran first; in the
// shared system temp directory that is another user's directory (a crash
// for everyone else) or a place any local user can fill first. The
// directory is used only when it is a directory of the user's own (not a
// link) that neither group nor others may use, in a parent that others
// cannot rename it out of; anything else is refused (ErrHelperDir), never
// repaired.
func HelperTempDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("%w: no user cache directory to keep its compiled Graphviz in (%w); set XDG_CACHE_HOME or HOME", ErrHelperDir, err)
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", fmt.Errorf("%w: %w", ErrHelperDir, err)
	}
	dir := filepath.Join(base, helperDirName)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("%w: %w", ErrHelperDir, err)
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
		return fmt.Errorf("%w %s: it %s; remove it, or set XDG_CACHE_HOME to a directory of your own", ErrHelperDir, dir, fmt.Sprintf(format, args...))
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrHelperDir, err)
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
		return fmt.Errorf("%w: %w", ErrHelperDir, err)
	}
	if pst.Mode().Perm()&0o022 != 0 && pst.Mode()&fs.ModeSticky == 0 {
		return refuse("is in %s, which others may write to (mode %#o, not sticky)", parent, pst.Mode().Perm())
	}
	return nil
}
