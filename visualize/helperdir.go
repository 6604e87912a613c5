package visualize

import "github.com/aaep-tools/aaepkit/internal/rendertmp"

// ErrHelperDir means the helper's private directory cannot be used: it is
// not a directory, belongs to another user, or others may use it.
var ErrHelperDir = rendertmp.ErrRefused

// HelperTempDir returns the directory the helper is started with as its
// TMPDIR (which the helper also sets itself): aaep-render under the user's
// cache directory, mode 0700, checked before each use (package rendertmp).
func HelperTempDir() (string, error) { return rendertmp.Dir() }
