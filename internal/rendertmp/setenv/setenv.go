// Package setenv points TMPDIR at the helper's private directory
// (rendertmp.Dir) when the program starts, before go-graphviz's package
// init compiles Graphviz into TMPDIR/go-graphviz: aaep-render imports it,
// and Go initializes this package first (it imports only the standard
// library and its import path sorts before github.com/goccy/...). When the
// directory is refused, TMPDIR names a path that cannot be created, so that
// go-graphviz keeps no cache at all (it does not panic then), and Err says
// why: the program reports it and exits.
package setenv

import (
	"os"

	"github.com/aaep-tools/aaepkit/internal/rendertmp"
)

// Err is why TMPDIR could not be pointed at the private directory; nil
// when it was.
var Err error

// nowhere is a TMPDIR in which no directory can be made (a path under a
// device), on every system that has /dev/null.
const nowhere = "/dev/null/aaep-render"

func init() {
	dir, err := rendertmp.Dir()
	if err != nil {
		Err = err
		dir = nowhere
	}
	Err = firstErr(Err, os.Setenv("TMPDIR", dir))
}

func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
