// Package outfile opens the files that commands write, under one policy that
// never destroys a user's file:
//
//   - An output that is, or resolves to (symbolic link, hard link, another
//     spelling of the path), one of the command's inputs is refused before
//     anything is opened for writing.
//   - "-" is standard output where the command's output is a stream
//     (Options.Stdout set), and a usage error where it cannot be; it never
//     names a file called "-".
//   - A regular file (or a path that does not exist yet) is written to a
//     temporary file beside it, synced, and renamed over it by Commit; the
//     existing file's mode (and, when permitted, owner) is kept, and a new
//     file gets 0644 less the umask. A symbolic link is followed: its target
//     is written and the link stays a link.
//   - Anything else (a device such as /dev/null, a FIFO, a Unix socket) is
//     written in place as a stream and never renamed over.
//   - A live recording (Options.Live) does not replace an existing non-empty
//     file unless Options.Force, and stays out of sight under its temporary
//     name until Publish, so a recording that fails before it records
//     anything leaves no file behind.
//   - No output replaces an original recording (capfile.Header.Original: a
//     capture a recorder wrote, which nothing can make again), or a file
//     that starts like a capture but whose header cannot be read, unless
//     Options.Force. Derived captures, JSON Lines, drawings are replaced.
//   - An existing file the user may not write (access(2) denies it, as it
//     does cp; on Windows, a file with the read-only attribute), or one
//     whose owner the replacement could not keep (another user's file in a
//     directory the user may write), is refused. Windows has no owner in
//     the file's mode bits: there the owner is neither checked nor kept,
//     and access control lists are left to the system (a file the user may
//     not write fails when it is replaced, with the system's error).
//   - Commit replaces only the file that Open looked at: a file that
//     appeared at the path meanwhile, or replaced the one that was there (a
//     command's own output named by AAEP_CPUPROFILE, say), is left alone
//     and the output refused.
//
// Every error this package returns is an *Error: a refused or unwritable
// output (cli.KindOutput, exit code 2).
package outfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/term"

	"github.com/aaep-tools/aaepkit/capfile"
)

// Sentinel errors, matched with errors.Is.
var (
	// ErrSameFile: the output is one of the inputs.
	ErrSameFile = errors.New("output is the same file as an input")
	// ErrExists: a live recording would replace an existing, non-empty file.
	ErrExists = errors.New("already exists; not overwritten (--force replaces it)")
	// ErrNoStdout: "-" was given where the output cannot be standard output.
	ErrNoStdout = errors.New("cannot be standard output")
	// ErrTerminal: binary output was to go to a terminal.
	ErrTerminal = errors.New("standard output is a terminal; refusing to write binary data to it (redirect it, or name a file)")
	// ErrDirectory: the output names a directory.
	ErrDirectory = errors.New("is a directory")
	// ErrOriginal: the output is an original recording (or a capture whose
	// header cannot be read), which is replaced only with Force.
	ErrOriginal = errors.New("an original recording, which cannot be made again; not replaced (--force replaces it)")
	// ErrNotWritable: the user has no write permission on the existing
	// output. It matches fs.ErrPermission too.
	ErrNotWritable = fmt.Errorf("no write permission; not replaced (%w)", fs.ErrPermission)
	// ErrOwner: replacing the output would change its owner (another
	// user's file, in a directory the user may write). It matches
	// fs.ErrPermission too.
	ErrOwner = fmt.Errorf("owned by another user, and a replacement would not be; not replaced (%w)", fs.ErrPermission)
	// ErrGroup: replacing the output, the user's own file, would change
	// its group (one the user is not a member of). It matches
	// fs.ErrPermission too.
	ErrGroup = fmt.Errorf("its group is not one of yours, and a replacement would not keep it; not replaced (%w)", fs.ErrPermission)
	// ErrChanged: a file appeared at the output's path, or replaced the one
	// that was there, while the output was written.
	ErrChanged = errors.New("changed while the output was being written (another writer?); not replaced")
)

// Error is the error of every function of this package: an output refused
// or not written.
type Error struct {
	Op   string // what was being done: "refuse", "create", "write", "commit", ...
	Path string // the output as the user named it
	Err  error
}

func (e *Error) Error() string {
	switch {
	case errors.Is(e.Err, ErrSameFile), errors.Is(e.Err, ErrExists), errors.Is(e.Err, ErrNoStdout),
		errors.Is(e.Err, ErrDirectory), errors.Is(e.Err, ErrTerminal), errors.Is(e.Err, ErrOriginal),
		errors.Is(e.Err, ErrNotWritable), errors.Is(e.Err, ErrOwner), errors.Is(e.Err, ErrGroup), errors.Is(e.Err, ErrChanged):
		return fmt.Sprintf("%s: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("%s %s: %v", e.Op, e.Path, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Options say how an output is opened.
type Options struct {
	// Inputs are the files the command reads ("-" and "" are ignored). An
	// output that resolves to one of them is refused with ErrSameFile.
	Inputs []string
	// Stdout is where "-" writes. When nil, "-" is refused with ErrNoStdout
	// and NoStdout (if set) says why.
	Stdout   io.Writer
	NoStdout string
	// Binary refuses "-" when Stdout is a terminal (ErrTerminal).
	Binary bool
	// Live marks a recording of live data, which cannot be made again: an
	// existing non-empty regular file is not replaced unless Force, and the
	// file stays under its temporary name until Publish (or Commit).
	Live bool
	// Force replaces an original recording (ErrOriginal), and with Live any
	// existing file (ErrExists).
	Force bool
}

// Kind says what an output is.
type Kind int

const (
	// Regular: a regular file, written through a temporary file and renamed.
	Regular Kind = iota
	// Stream: standard output, a device, a FIFO or a socket, written in place.
	Stream
)

func (k Kind) String() string {
	if k == Regular {
		return "regular file"
	}
	return "stream"
}

// File is an open output. Write to it, then Commit (or Abort). It is not safe
// for concurrent use, except that Publish may be called from any goroutine
// while no Write runs.
type File struct {
	name   string // as the user gave it
	target string // symbolic links resolved
	kind   Kind
	opts   Options

	w      io.Writer // where Write goes
	file   *os.File  // the temporary file, or the opened device/FIFO
	conn   net.Conn  // a Unix socket
	mode   os.FileMode
	owner  *ownerID
	orig   os.FileInfo // the regular file at the target when opened, or nil
	shown  bool        // the temporary file is at target (Publish ran)
	done   bool
	err    error // sticky write error
	nbytes int64
}

type ownerID struct{ uid, gid int }

// Open opens the output path under the package's policy. Nothing is opened
// for writing before every check passed.
func Open(path string, o Options) (*File, error) {
	fail := func(op string, err error) (*File, error) { return nil, &Error{Op: op, Path: path, Err: err} }
	if path == "" {
		return fail("open", errors.New("no output file named"))
	}
	if path == "-" || isStdoutName(path) {
		return openStdout(o)
	}
	st, err := os.Stat(path) // through every link, /proc's included
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fail("open", err)
	}
	f := &File{name: path, target: path, opts: o}
	if exists {
		if err := refuse(path, st, o); err != nil {
			return nil, err
		}
		if !st.Mode().IsRegular() {
			return f.openInPlace(st) // by the name given: a pipe behind /dev/stderr has no other
		}
	}
	// A regular file, or nothing yet: the temporary file goes beside the
	// file the links lead to.
	if f.target, err = resolve(path); err != nil {
		return fail("open", err)
	}
	return f.openTemp(st)
}

// refuse makes every check of the policy on an existing output st at path:
// nil when o may write it.
func refuse(path string, st os.FileInfo, o Options) error {
	fail := func(err error) error { return &Error{Op: "refuse", Path: path, Err: err} }
	if err := checkInputs(path, st, o.Inputs); err != nil {
		return err
	}
	switch {
	case st.IsDir():
		return &Error{Op: "open", Path: path, Err: ErrDirectory}
	case !st.Mode().IsRegular():
		return nil // a device, FIFO or socket: opening it for writing checks the rest
	case o.Live && !o.Force && st.Size() > 0:
		return fail(ErrExists)
	}
	if err := writable(path, st); err != nil {
		if errors.Is(err, ErrNotWritable) {
			return fail(ErrNotWritable)
		}
		return &Error{Op: "open", Path: path, Err: err}
	}
	if o := ownerOf(st); o != nil {
		if euid := os.Geteuid(); euid != 0 && o.uid != euid {
			return fail(ErrOwner)
		}
	}
	if !o.Force && st.Size() > 0 {
		if err := refuseOriginal(path); err != nil {
			return fail(err)
		}
	}
	return nil
}

// refuseOriginal returns ErrOriginal when the file at path is an original
// recording, or starts like a capture whose header cannot be read.
func refuseOriginal(path string) error {
	file, err := os.Open(path)
	if err != nil {
		return nil // not readable: not one the user could read back either; the write decides
	}
	defer file.Close()
	var head [capfile.SniffLen]byte
	n, _ := io.ReadFull(file, head[:])
	if d := capfile.Detect(head[:n]); d != capfile.Capture && d != capfile.DamagedCapture {
		return nil
	}
	if _, err := file.Seek(0, io.SeekStart); err != nil {
		return nil
	}
	r, err := capfile.NewReader(file)
	if err != nil {
		return fmt.Errorf("%w (a capture whose header cannot be read: %v)", ErrOriginal, err)
	}
	defer r.Close()
	if h := r.Header(); h.Original() {
		return ErrOriginal
	}
	return nil
}

// IsStdout reports whether path names standard output: "-", or one of the
// names of this process's standard output (/dev/stdout, /dev/fd/1), which
// are written as "-" is.
func IsStdout(path string) bool { return path == "-" || isStdoutName(path) }

// isStdoutName reports the names of this process's standard output, which
// are written as "-" is.
func isStdoutName(path string) bool {
	switch filepath.Clean(path) {
	case "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1":
		return true
	}
	return false
}

// Check makes the checks Open makes on an existing output (an input,
// an original recording without Force, a file the user may not write...),
// without opening anything, so that a command can refuse before it starts
// reading. A path that does not exist passes.
func Check(path string, o Options) error {
	if path == "" || IsStdout(path) {
		return nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil // nothing there: Open says what is wrong
	}
	return refuse(path, st, o)
}

func checkInputs(path string, out os.FileInfo, inputs []string) error {
	for _, in := range inputs {
		if in == "" || in == "-" {
			continue
		}
		ist, err := os.Stat(in)
		if err != nil || !os.SameFile(ist, out) {
			continue
		}
		err = ErrSameFile
		if in != path {
			err = fmt.Errorf("%w %s", ErrSameFile, in)
		}
		return &Error{Op: "refuse", Path: path, Err: err}
	}
	return nil
}

func openStdout(o Options) (*File, error) {
	if o.Stdout == nil {
		err := ErrNoStdout
		if o.NoStdout != "" {
			err = fmt.Errorf("%w: %s", ErrNoStdout, o.NoStdout)
		}
		return nil, &Error{Op: "open", Path: "-", Err: err}
	}
	if sf, ok := o.Stdout.(*os.File); ok {
		if o.Binary && term.IsTerminal(int(sf.Fd())) {
			return nil, &Error{Op: "open", Path: "-", Err: ErrTerminal}
		}
		// A redirection such as ">> input" would read what it writes.
		if st, err := sf.Stat(); err == nil && st.Mode().IsRegular() {
			if err := checkInputs("-", st, o.Inputs); err != nil {
				return nil, err
			}
		}
	}
	return &File{name: "-", target: "-", kind: Stream, opts: o, w: o.Stdout, shown: true}, nil
}

// resolve follows symbolic links at path (dangling ones included) to the
// name that is written.
func resolve(path string) (string, error) {
	p := path
	for range 40 {
		st, err := os.Lstat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return p, nil
			}
			return "", err
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			return p, nil
		}
		link, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(p), link)
		}
		p = link
	}
	return "", errors.New("too many levels of symbolic links")
}

// openInPlace opens a device, FIFO or socket for writing, without creating,
// truncating or renaming anything.
func (f *File) openInPlace(st os.FileInfo) (*File, error) {
	f.kind, f.shown = Stream, true
	if st.Mode()&fs.ModeSocket != 0 {
		c, err := net.Dial("unix", f.target)
		if err != nil {
			return nil, &Error{Op: "open", Path: f.name, Err: err}
		}
		f.conn, f.w = c, c
		return f, nil
	}
	file, err := os.OpenFile(f.target, os.O_WRONLY, 0)
	if err != nil {
		return nil, &Error{Op: "open", Path: f.name, Err: err}
	}
	f.file, f.w = file, file
	return f, nil
}

// openTemp creates the temporary file beside the target.
func (f *File) openTemp(st os.FileInfo) (*File, error) {
	f.kind = Regular
	perm := os.FileMode(0o644) // less the umask, applied by open(2)
	if st != nil {
		f.orig = st
		f.mode = st.Mode().Perm() | st.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)
		perm = 0o600
		f.owner = ownerOf(st)
	}
	dir, base := filepath.Split(f.target)
	if dir == "" {
		dir = "."
	}
	var file *os.File
	var err error
	for range 10 {
		var rnd [6]byte
		_, _ = rand.Read(rnd[:])
		name := filepath.Join(dir, "."+base+".tmp-"+hex.EncodeToString(rnd[:]))
		file, err = createTemp(name, perm)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		// The temporary name is ours, not the user's: say what is wrong
		// with the directory the user named.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = &fs.PathError{Op: "directory", Path: filepath.Clean(dir), Err: pe.Err}
		}
		return nil, &Error{Op: "create", Path: f.name, Err: err}
	}
	f.file, f.w = file, file
	return f, nil
}

// Replaces reports whether the output will replace an existing non-empty
// file (one that Force let a live recording replace, say).
func (f *File) Replaces() bool { return f.orig != nil && f.orig.Size() > 0 }

// Name is the output as the user named it ("-" for standard output).
func (f *File) Name() string { return f.name }

// Kind says whether the output is a regular file or a stream.
func (f *File) Kind() Kind { return f.kind }

// HeaderAt returns the file being written for in-place rewrites of what
// was written first (a capture's header); ok is false for streams, which
// cannot seek.
func (f *File) HeaderAt() (w io.WriterAt, ok bool) {
	if f.kind != Regular || f.file == nil {
		return nil, false
	}
	return f.file, true
}

// SyscallConn is the regular file's raw descriptor (syscall.Conn), so that
// a capture writer marks the file as being written while it writes it
// (capfile.BeingWritten); an error for other outputs.
func (f *File) SyscallConn() (syscall.RawConn, error) {
	if f.kind != Regular || f.file == nil {
		return nil, errors.New("outfile: not a regular file")
	}
	return f.file.SyscallConn()
}

// Written is the number of bytes written so far.
func (f *File) Written() int64 { return f.nbytes }

// Write writes p. Errors are sticky.
func (f *File) Write(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	if f.done {
		return 0, &Error{Op: "write", Path: f.name, Err: os.ErrClosed}
	}
	n, err := f.w.Write(p)
	f.nbytes += int64(n)
	if err != nil {
		f.err = &Error{Op: "write", Path: f.name, Err: err}
		return n, f.err
	}
	return n, nil
}

// Sync makes what was written durable: fsync for files and devices that
// support it; a no-op for the rest.
func (f *File) Sync() error {
	if f.err != nil {
		return f.err
	}
	if f.file == nil {
		return nil
	}
	if err := f.file.Sync(); err != nil && !(f.kind == Stream && unsyncable(err)) {
		return &Error{Op: "sync", Path: f.name, Err: err}
	}
	return nil
}

// unsyncable reports an fsync error that only means the file cannot be synced.
func unsyncable(err error) bool {
	return errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EROFS)
}

// Publish makes a live recording visible at its path (see Options.Live): the
// temporary file is renamed to the target, and from then on a crash or kill
// leaves the file there with whatever was flushed. Without Force it fails
// with ErrExists if a non-empty file appeared at the path meanwhile. It does
// nothing for outputs that are not live or are already visible.
func (f *File) Publish() error {
	if f.shown || f.kind != Regular || !f.opts.Live {
		return nil
	}
	if f.done {
		return &Error{Op: "publish", Path: f.name, Err: os.ErrClosed}
	}
	if err := f.rename(); err != nil {
		return err
	}
	f.shown = true
	return nil
}

// rename moves the temporary file to the target, keeping the target's mode.
// A live recording without Force never replaces a non-empty file: the name is
// claimed with a hard link, which fails when something is there.
func (f *File) rename() error {
	tmp := f.file.Name()
	if f.mode != 0 {
		if err := f.file.Chmod(f.mode); err != nil {
			return &Error{Op: "commit", Path: f.name, Err: err}
		}
		if f.owner != nil {
			if err := f.file.Chown(f.owner.uid, f.owner.gid); err != nil && !f.ownedAsBefore() {
				return &Error{Op: "refuse", Path: f.name, Err: ownershipError(f.owner, os.Geteuid())}
			}
			_ = f.file.Chmod(f.mode) // chown clears set-id bits
		}
	}
	live := f.opts.Live && !f.opts.Force
	if live || f.orig == nil {
		// Nothing was there (or, live, nothing but an empty file may be):
		// the name is claimed with a hard link, which fails when something
		// is there now.
		err := os.Link(tmp, f.target)
		if err == nil {
			os.Remove(tmp)
			return syncDir(f.name, f.target)
		}
		if errors.Is(err, fs.ErrExist) {
			st, serr := os.Stat(f.target)
			switch {
			case live && (serr != nil || !st.Mode().IsRegular() || st.Size() > 0):
				return &Error{Op: "refuse", Path: f.name, Err: ErrExists}
			case !live && (serr != nil || f.orig == nil || !os.SameFile(st, f.orig)):
				return &Error{Op: "refuse", Path: f.name, Err: ErrChanged}
			}
		} else if _, serr := os.Lstat(f.target); serr == nil && f.orig == nil && !live {
			// No hard links here: at least nothing may have appeared.
			return &Error{Op: "refuse", Path: f.name, Err: ErrChanged}
		}
		// An empty file may be replaced; a file system without hard links
		// falls back to rename.
	} else if st, err := os.Stat(f.target); err == nil && !os.SameFile(st, f.orig) {
		return &Error{Op: "refuse", Path: f.name, Err: ErrChanged}
	}
	if err := os.Rename(tmp, f.target); err != nil {
		return &Error{Op: "commit", Path: f.name, Err: err}
	}
	return syncDir(f.name, f.target)
}

// ownedAsBefore reports whether the temporary file already has the owner
// and group of the file it replaces.
// ownershipError says why a replacement could not keep the output's
// owner and group: another user's file (ErrOwner), or the user's own
// file whose group the user may not give (ErrGroup: "owned by another
// user" was wrong there).
func ownershipError(o *ownerID, euid int) error {
	if o.uid == euid {
		return ErrGroup
	}
	return ErrOwner
}

func (f *File) ownedAsBefore() bool {
	st, err := f.file.Stat()
	if err != nil {
		return false
	}
	o := ownerOf(st)
	return o != nil && *o == *f.owner
}

// Commit finishes the output. A regular file is synced, closed and renamed
// over the target (its directory synced): the target holds either its old
// content or all of the new one. A stream is synced where it can be and
// closed (standard output is left open). After a failed write Commit returns
// that error and, for a regular file that is not a published recording,
// leaves the target untouched.
func (f *File) Commit() error {
	if f.done {
		return &Error{Op: "commit", Path: f.name, Err: errors.New("output already committed or aborted")}
	}
	if f.err != nil {
		err := f.err
		f.Abort()
		return err
	}
	err := f.Sync()
	if f.kind == Regular && err == nil && !f.shown {
		err = f.rename()
		if err == nil {
			f.shown = true
		}
	}
	if cerr := f.close(); err == nil && cerr != nil {
		err = &Error{Op: "close", Path: f.name, Err: cerr}
	}
	f.done = true
	if err != nil && f.kind == Regular && !f.shown {
		os.Remove(f.file.Name())
	}
	return err
}

// Abort gives up the output. A regular file's temporary file is removed and
// the target is left as it was; a live recording already published stays
// (it holds what was recorded). Abort after Commit does nothing, so
// `defer f.Abort()` is the usual pattern.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.close()
	if f.kind == Regular && !f.shown {
		os.Remove(f.file.Name())
	}
}

// Discard gives up the output and, for a published live recording, removes
// it too: for a recording that failed before it recorded anything worth
// keeping. Streams are only closed.
func (f *File) Discard() {
	shown := f.shown && f.kind == Regular
	done := f.done
	f.Abort()
	if shown && !done {
		os.Remove(f.target)
	}
}

func (f *File) close() error {
	switch {
	case f.conn != nil:
		return f.conn.Close()
	case f.file != nil:
		return f.file.Close()
	}
	return nil
}

// WriteFile opens path with o, lets fn write the output, and commits it
// when fn returns nil. When fn fails the output is abandoned (the target is
// left as it was), unless the error is marked with KeepPartial: then what fn
// wrote is committed and fn's error is returned.
func WriteFile(path string, o Options, fn func(w io.Writer) error) error {
	f, err := Open(path, o)
	if err != nil {
		return err
	}
	defer f.Abort()
	ferr := fn(f)
	if ferr != nil && !IsPartial(ferr) {
		return ferr
	}
	if err := f.Commit(); err != nil {
		return err
	}
	return ferr
}

// partialError marks an error after which the output written so far is kept.
type partialError struct{ err error }

func (e partialError) Error() string { return e.err.Error() }
func (e partialError) Unwrap() error { return e.err }

// KeepPartial marks err (damage found in an input, say) as one after which
// WriteFile commits what was written before it. A nil err stays nil.
func KeepPartial(err error) error {
	if err == nil {
		return nil
	}
	return partialError{err}
}

// IsPartial reports whether err was marked with KeepPartial.
func IsPartial(err error) bool {
	var p partialError
	return errors.As(err, &p)
}
