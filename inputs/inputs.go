// Package inputs turns the inputs named on a command line into a list of
// sources to read: files, globs (run-*.aaep), directories (every capture and
// JSONL file in them), "-" for standard input, and URLs of schemes that other
// packages register (an object store, for instance).
//
// A Source only names an input and opens it. A capture reader uses the index
// at the end of a capture when the opened Handle can also be read at any
// offset (it implements Random); otherwise it reads the stream from the
// start, as it does for standard input.
//
// Merge orders several streams by absolute time, so that commands read a
// rotated set or captures from several machines as one stream.
package inputs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// Source is one input: a capture or a JSON Lines file.
type Source interface {
	// Name is how messages and reports refer to the input (a path, "-",
	// a URL).
	Name() string
	// Open opens the input for reading from its start.
	Open(ctx context.Context) (Handle, error)
}

// Handle is an opened input.
type Handle interface {
	io.Reader
	io.Closer
}

// Random is implemented by handles that can also be read at any offset (a
// file, a ranged object read); capture readers then use the index.
type Random interface {
	io.ReaderAt
	Size() int64
}

// Resolver expands one argument of a registered URL scheme into sources.
type Resolver func(ctx context.Context, arg string) ([]Source, error)

var (
	schemesMu sync.RWMutex
	schemes   = map[string]Resolver{}
)

// Register makes Expand hand arguments that start with scheme + "://" to r.
func Register(scheme string, r Resolver) {
	schemesMu.Lock()
	defer schemesMu.Unlock()
	schemes[strings.ToLower(scheme)] = r
}

// Extensions are the file name endings a directory is searched for.
var Extensions = []string{".aaep", ".jsonl", ".ndjson"}

// ErrNoMatch is returned for a glob or directory that names no input.
var ErrNoMatch = errors.New("no input matches")

// Options tune Expand.
type Options struct {
	// Stdin is what "-" reads (os.Stdin when nil).
	Stdin io.Reader
	// Extensions, when set, replaces the package's Extensions for
	// directories (a command that reads only captures lists ".aaep").
	Extensions []string
}

// Expand turns command-line arguments into sources, in order: each
// argument is "-" (standard input, at most once), a URL of a registered
// scheme, an existing file, a directory (its files ending in one of
// Extensions, sorted by name; not recursive) or a glob pattern (matches
// sorted by name). An argument that names nothing is an error that says
// which. A file named twice is read once.
func Expand(ctx context.Context, args []string, opts Options) ([]Source, error) {
	var out []Source
	seen := map[string]bool{}
	add := func(s Source) {
		if !seen[s.Name()] {
			seen[s.Name()] = true
			out = append(out, s)
		}
	}
	for _, arg := range args {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		switch {
		case arg == "-":
			if seen["-"] {
				return nil, errors.New("standard input (-) named twice")
			}
			in := opts.Stdin
			if in == nil {
				in = os.Stdin
			}
			add(Stdin(in))
			continue
		case arg == "":
			return nil, errors.New("an empty input name")
		}
		if scheme, _, ok := strings.Cut(arg, "://"); ok && !strings.ContainsAny(scheme, `/\`) {
			schemesMu.RLock()
			r := schemes[strings.ToLower(scheme)]
			schemesMu.RUnlock()
			if r == nil {
				return nil, fmt.Errorf("%s: no reader for %s:// inputs", arg, scheme)
			}
			srcs, err := r(ctx, arg)
			if err != nil {
				return nil, err
			}
			if len(srcs) == 0 {
				return nil, fmt.Errorf("%w %s", ErrNoMatch, arg)
			}
			for _, s := range srcs {
				add(s)
			}
			continue
		}
		st, err := os.Stat(arg)
		switch {
		case err == nil && st.IsDir():
			exts := opts.Extensions
			if len(exts) == 0 {
				exts = Extensions
			}
			files, err := dirInputs(arg, exts)
			if err != nil {
				return nil, err
			}
			for _, f := range files {
				add(File(f))
			}
		case err == nil:
			add(File(arg))
		case errors.Is(err, fs.ErrNotExist) && strings.ContainsAny(arg, "*?["):
			matches, gerr := filepath.Glob(arg)
			if gerr != nil {
				return nil, fmt.Errorf("%s: %w", arg, gerr)
			}
			var files []string
			for _, m := range matches {
				if st, err := os.Stat(m); err == nil && !st.IsDir() {
					files = append(files, m)
				}
			}
			if len(files) == 0 {
				return nil, fmt.Errorf("%w %s", ErrNoMatch, arg)
			}
			sort.Strings(files)
			for _, f := range files {
				add(File(f))
			}
		default:
			return nil, err
		}
	}
	return out, nil
}

// dirInputs lists the files of dir ending in one of exts, sorted by name.
func dirInputs(dir string, exts []string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range ents {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		for _, ext := range exts {
			if strings.HasSuffix(e.Name(), ext) {
				files = append(files, filepath.Join(dir, e.Name()))
				break
			}
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%w %s: the directory holds no %s file", ErrNoMatch, dir, strings.Join(exts, ", "))
	}
	sort.Strings(files)
	return files, nil
}

// Names returns the names of srcs.
func Names(srcs []Source) []string {
	out := make([]string, len(srcs))
	for i, s := range srcs {
		out[i] = s.Name()
	}
	return out
}

// Paths returns the local file paths among srcs (for commands that must
// not write over an input).
func Paths(srcs []Source) []string {
	var out []string
	for _, s := range srcs {
		if p := LocalPath(s); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// File is the source of a local file.
func File(path string) Source { return fileSource(path) }

type fileSource string

func (f fileSource) Name() string { return string(f) }

func (f fileSource) Open(context.Context) (Handle, error) {
	fh, err := os.Open(string(f))
	if err != nil {
		return nil, err
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, err
	}
	if st.IsDir() {
		fh.Close()
		return nil, fmt.Errorf("%s is a directory", f)
	}
	if !st.Mode().IsRegular() {
		// A FIFO or device reads as a stream.
		return fh, nil
	}
	return &fileHandle{File: fh, size: st.Size()}, nil
}

type fileHandle struct {
	*os.File
	size int64
}

func (f *fileHandle) Size() int64 { return f.size }

// Stdin is the source "-" reading r. Closing it does not close r.
func Stdin(r io.Reader) Source { return stdinSource{r} }

type stdinSource struct{ r io.Reader }

func (stdinSource) Name() string { return "-" }

func (s stdinSource) Open(context.Context) (Handle, error) {
	return struct {
		io.Reader
		io.Closer
	}{s.r, io.NopCloser(nil)}, nil
}

// LocalPath returns the path of a local file source, or "".
func LocalPath(s Source) string {
	if f, ok := s.(fileSource); ok {
		return string(f)
	}
	return ""
}
