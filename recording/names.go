package recording

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/aaep-tools/aaepkit/objstore"
)

// Extensions are the file name endings a directory (or an object storage
// prefix) is searched for.
var Extensions = []string{".aaep", ".jsonl", ".ndjson"}

// ErrNoMatch is returned for a glob, directory or prefix that names no input.
var ErrNoMatch = errors.New("no input matches")

// expand turns names into parts, in order: each name is "-" (standard
// input, at most once), an s3:// object or prefix, an existing file, a
// directory (its files ending in one of the extensions, sorted by name; not
// recursive) or a glob pattern (matches sorted by name). A name that names
// nothing is an error that says which. A file named twice is read once.
func expand(ctx context.Context, names []string, opts *Options) ([]*Part, error) {
	var out []*Part
	seen := map[string]bool{}
	add := func(p *Part) {
		if !seen[p.Name] {
			seen[p.Name] = true
			out = append(out, p)
		}
	}
	exts := opts.Extensions
	if len(exts) == 0 {
		exts = Extensions
	}
	for _, arg := range names {
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
			add(stdinPart(in))
			continue
		case arg == "":
			return nil, errors.New("an empty input name")
		}
		if scheme, _, ok := strings.Cut(arg, "://"); ok && !strings.ContainsAny(scheme, `/\`) {
			if !objstore.IsURL(arg) {
				return nil, fmt.Errorf("%s: no reader for %s:// inputs", arg, scheme)
			}
			parts, err := objectParts(ctx, arg, opts, exts)
			if err != nil {
				return nil, err
			}
			for _, p := range parts {
				add(p)
			}
			continue
		}
		st, err := os.Stat(arg)
		switch {
		case err == nil && st.IsDir():
			files, err := dirInputs(arg, exts)
			if err != nil {
				return nil, err
			}
			for _, f := range files {
				add(stampFile(filePart(f), opts))
			}
		case err == nil && !st.Mode().IsRegular():
			// A FIFO (or a device) is read once, as a stream, as standard
			// input is: a second open would wait for a writer that has
			// gone, and the bytes a first look took would be lost.
			f, err := OpenStream(ctx, arg)
			if err != nil {
				return nil, err
			}
			add(&Part{Name: arg, stdin: f, size: -1})
		case err == nil:
			add(stampFile(filePart(arg), opts))
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
				add(stampFile(filePart(f), opts))
			}
		default:
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no input")
	}
	return out, nil
}

// objectParts lists the objects an s3:// name means: the object itself, or
// every object under a prefix whose key ends in one of exts, in key order
// (the time order of a rotated recording's parts).
func objectParts(ctx context.Context, arg string, opts *Options, exts []string) ([]*Part, error) {
	u, err := objstore.Parse(arg)
	if err != nil {
		return nil, err
	}
	store, err := objstore.Open(ctx, u, opts.Storage)
	if err != nil {
		return nil, err
	}
	if !u.IsPrefix() {
		p := objectPart(store, u.Key)
		if opts.Changed != nil {
			obj, err := store.Stat(ctx, u.Key)
			if err != nil {
				return nil, err
			}
			p.stamp = Stamp{Size: obj.Size, Modified: obj.Modified, ETag: obj.ETag}
		}
		return []*Part{p}, nil
	}
	list, err := store.List(ctx, u.Key)
	if err != nil {
		return nil, err
	}
	var out []*Part
	for _, obj := range list {
		for _, ext := range exts {
			if strings.HasSuffix(obj.Key, ext) {
				p := objectPart(store, obj.Key)
				p.stamp = Stamp{Size: obj.Size, Modified: obj.Modified, ETag: obj.ETag}
				// The listing's size: a small object is fetched whole
				// by its first read (objstore.WholeBelow).
				p.size = obj.Size
				out = append(out, p)
				break
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w %s: no %s object under it", ErrNoMatch, arg, strings.Join(exts, ", "))
	}
	return out, nil
}

// stampFile notes a local file's size and modification time for
// Options.Changed (a file that cannot be stated keeps a zero stamp, and its
// reading says what is wrong).
func stampFile(p *Part, opts *Options) *Part {
	if opts.Changed != nil {
		if st, err := os.Stat(p.path); err == nil {
			p.stamp = Stamp{Size: st.Size(), Modified: st.ModTime()}
		}
	}
	return p
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

// IsPrefix reports whether name is an object storage prefix
// (s3://BUCKET/PREFIX/), which may hold many recordings.
func IsPrefix(name string) bool {
	if !objstore.IsURL(name) {
		return false
	}
	u, err := objstore.Parse(name)
	return err == nil && u.IsPrefix()
}

// OpenStream opens a FIFO or device for reading. Opening a FIFO waits for
// a writer, in the kernel, where no signal reaches Go: the wait is given
// up when ctx ends (Ctrl-C), and the open, if it ever completes, closed.
func OpenStream(ctx context.Context, path string) (*os.File, error) {
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		ch <- opened{f, err}
	}()
	select {
	case o := <-ch:
		return o.f, o.err
	case <-ctx.Done():
		go func() {
			if o := <-ch; o.f != nil {
				o.f.Close()
			}
		}()
		return nil, fmt.Errorf("%s: waiting for a writer: %w", path, context.Cause(ctx))
	}
}
