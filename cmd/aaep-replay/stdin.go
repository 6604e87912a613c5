package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/aaep-tools/aaepkit/internal/cli"
)

// stdinName is how messages name standard input read through a file.
const stdinName = "standard input"

// spoolStdin copies standard input into a file of its own in a new
// temporary directory, for a verb that reads its input more than once
// (import reads a first timestamp before the lines; repair scans for
// frames): name is the file's base name. done removes the directory.
func (a *app) spoolStdin(verb, name string) (path string, done func(), err error) {
	if f, ok := a.In.(*os.File); ok && cli.IsTerminal(f) {
		return "", nil, cli.Usagef("%s -: standard input is a terminal; pipe the input in, or name the file", verb)
	}
	dir, err := os.MkdirTemp("", "aaep-"+verb+"-stdin-")
	if err != nil {
		return "", nil, fmt.Errorf("%s: keep standard input: %w", verb, err)
	}
	done = func() { os.RemoveAll(dir) }
	path = filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		_, err = io.Copy(f, a.In)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		done()
		return "", nil, fmt.Errorf("%s: read standard input: %w", verb, err)
	}
	return path, done, nil
}

// renamedError is err with every mention of a spooled file's path said as
// what it stands for; errors.Is and errors.As see err.
type renamedError struct {
	err      error
	from, to string
}

func (e *renamedError) Error() string { return strings.ReplaceAll(e.err.Error(), e.from, e.to) }
func (e *renamedError) Unwrap() error { return e.err }

// renamed says path as name in err's message (nil stays nil).
func renamed(err error, path, name string) error {
	if err == nil {
		return nil
	}
	return &renamedError{err: err, from: path, to: name}
}
