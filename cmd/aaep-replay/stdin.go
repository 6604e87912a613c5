package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/ctxio"
	"github.com/aaep-tools/aaepkit/recording"
)

// stdinName is how messages name standard input read through a file.
const stdinName = "standard input"

// spoolInput keeps a stream the verb must read more than once (import
// reads a first timestamp before the lines; repair scans for frames) in a
// file of its own in a new temporary directory: standard input (-), or a
// FIFO or device named in, which is opened once. It returns the file to
// read and how messages name it; any other input is returned as it is.
// base is the temporary file's base name; done removes the directory. The
// copy ends on Ctrl-C or SIGTERM even while the stream's writer is silent.
func (a *app) spoolInput(verb, in, base string) (path, name string, done func(), err error) {
	var src io.Reader
	switch st, serr := os.Stat(in); {
	case in == "-":
		if f, ok := a.In.(*os.File); ok && cli.IsTerminal(f) {
			return "", "", nil, cli.Usagef("%s -: standard input is a terminal; pipe the input in, or name the file", verb)
		}
		src, name = a.In, stdinName
	case serr == nil && !st.Mode().IsRegular() && !st.IsDir():
		f, err := recording.OpenStream(a.ctx, in)
		if err != nil {
			return "", "", nil, cli.Input(fmt.Errorf("%s: %w", verb, err))
		}
		defer f.Close()
		src, name = f, in
	default:
		return in, in, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "aaep-"+verb+"-stdin-")
	if err != nil {
		return "", "", nil, fmt.Errorf("%s: keep %s: %w", verb, name, err)
	}
	done = func() { os.RemoveAll(dir) }
	path = filepath.Join(dir, base)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		_, err = io.Copy(f, ctxio.Reader(a.ctx, src))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		done()
		return "", "", nil, fmt.Errorf("%s: read %s: %w", verb, name, err)
	}
	return path, name, done, nil
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
