// Package spool carries capture files from a local spool directory to
// object storage. A recorder writing to s3://BUCKET/PREFIX/name.aaep writes
// each part into the spool first, with the same flush-interval durability as
// a local capture; when a part is closed, Uploader uploads it (in parts when
// it is large) and removes it from the spool only once the upload is
// confirmed. Failures are retried with exponential backoff for as long as
// the recorder runs; a part never leaves the spool unless it is stored.
//
// A recorder that was killed leaves its last part in the spool without an
// index. The next Uploader for the same destination (Recover) repairs such
// a part (keeping every record that was flushed) and uploads every part the
// spool still holds before anything new.
//
// A spool directory holds the parts of one bucket prefix, for any number of
// destination names under it (agent-1.aaep, agent-2.aaep): Open takes an
// exclusive lock per name, so two recorders never record or upload one
// name's parts at once, and a recorder only ever uploads its own name's.
// The directory records its prefix and server (.destination.json), so
// that parts left behind (Leftovers) can be uploaded by anyone (Drain).
package spool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/objstore"
)

// Ext is the extension of the capture files a spool uploads.
const Ext = ".aaep"

// Default backoff between upload attempts.
const (
	DefaultMinBackoff = 500 * time.Millisecond
	DefaultMaxBackoff = 30 * time.Second
)

// Dir returns the spool directory of destination u under root: one
// directory per bucket and prefix, so the file names in it are the object
// names.
func Dir(root string, u objstore.URL) string {
	prefix := ""
	if i := strings.LastIndex(u.Key, "/"); i >= 0 {
		prefix = u.Key[:i]
	}
	parts := []string{root, u.Scheme, u.Bucket}
	for _, p := range strings.Split(prefix, "/") {
		if p != "" {
			parts = append(parts, escape(p))
		}
	}
	return filepath.Join(parts...)
}

// escape keeps a key segment from meaning something else on disk.
func escape(seg string) string {
	switch seg {
	case ".", "..":
		return "%2E" + seg[1:]
	}
	return seg
}

// DefaultRoot is the spool root under the user's cache directory.
func DefaultRoot() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no --spool directory given and no user cache directory: %w", err)
	}
	return filepath.Join(dir, "aaep-capture", "spool"), nil
}

// Options configure an Uploader.
type Options struct {
	// MinBackoff and MaxBackoff bound the wait between upload attempts of a
	// part; it doubles from one to the other.
	MinBackoff, MaxBackoff time.Duration
	// Logf receives one line per upload and recovery; Warnf (default
	// Logf) one per failure and warning. Neither ever receives
	// credentials: errors name objects, not keys.
	Logf, Warnf func(format string, args ...any)
	// WarnAfter, when positive, warns (Warnf) when parts have waited this
	// long without any upload succeeding meanwhile, and again every
	// WarnAfter while that lasts.
	WarnAfter time.Duration
	// Limits bound the spool on disk.
	Limits Limits
	// Endpoint and PathStyle are recorded in the spool directory beside
	// the prefix, for --drain-spool.
	Endpoint  string
	PathStyle bool
	// Replace lets an upload replace an existing object of its name
	// (aaep-replay serve --record --force); by default uploads are
	// conditional and never replace one.
	Replace bool
}

// Stats are an Uploader's running totals.
type Stats struct {
	Added     int64  // parts queued by Add (closed by this run)
	Uploaded  int64  // parts stored and removed from the spool
	Bytes     int64  // bytes uploaded
	Errors    int64  // failed upload attempts
	Retries   int64  // attempts started again after a failure
	Recovered int64  // parts found in the spool at Open
	Repaired  int64  // of those, parts that had no index (a killed recorder)
	Pending   int    // parts waiting in the spool
	LastError string // the last upload error, if any
	// LastUpload is when the last upload succeeded (zero: none yet).
	LastUpload time.Time
	// OldestWaiting is when the oldest part waiting was queued (zero:
	// none waits); a part from an earlier run counts from its last change.
	OldestWaiting time.Time
	// Dropped parts were deleted unuploaded to keep the spool within its
	// Limits: how many, their bytes and names.
	Dropped      int64
	DroppedBytes int64
	DroppedParts []string
	// Conflicts name the parts whose object name another object holds:
	// not uploaded, kept in the spool, no longer retried by this run.
	Conflicts []string
	// OverLimit is set while the recorder's parts break the spool's
	// Limits with none that may be dropped (recording goes on).
	OverLimit bool
}

// queued is a part waiting in the spool.
type queued struct {
	path  string
	since time.Time
	// failed is set once an upload of the part was tried and failed: only
	// such parts are dropped to keep the spool within its Limits.
	failed bool
}

// Uploader uploads the parts of one spool directory to one store prefix.
type Uploader struct {
	store  objstore.Store
	dest   objstore.URL // its Key is the prefix ("" or ending in "/")
	name   string       // the destination name: this Uploader's parts are it and its rotated parts
	dir    string
	opts   Options
	lockFD *os.File

	mu      sync.Mutex
	cond    *sync.Cond
	queue   []queued // oldest first
	busy    bool     // an upload is under way
	closing bool
	stats   Stats
	done    chan struct{}
	// enforceMu serializes the checks of the limits.
	enforceMu sync.Mutex
	cancel    context.CancelFunc
	// maintained is closed when maintain has returned (at once when it
	// does not run), so that Close returns with nothing left running.
	maintained chan struct{}
}

// Open opens (creating it) the spool directory dir for the prefix of dest
// in store, locks it, and starts uploading in the background. It fails when
// another process holds the directory.
func Open(store objstore.Store, dest objstore.URL, dir string, opts Options) (*Uploader, error) {
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = DefaultMinBackoff
	}
	if opts.MaxBackoff < opts.MinBackoff {
		opts.MaxBackoff = max(DefaultMaxBackoff, opts.MinBackoff)
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if opts.Warnf == nil {
		opts.Warnf = opts.Logf
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	name := path.Base(dest.Key)
	lockFD, err := lock(dir, name, Holder(dest))
	if err != nil {
		return nil, err
	}
	prefix := dest
	if i := strings.LastIndex(prefix.Key, "/"); i >= 0 {
		prefix.Key = prefix.Key[:i+1]
	} else {
		prefix.Key = ""
	}
	if err := writeDestination(dir, Destination{Prefix: prefix.String(), Endpoint: opts.Endpoint, PathStyle: opts.PathStyle}); err != nil {
		unlock(lockFD)
		lockFD.Close()
		return nil, fmt.Errorf("spool: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	u := &Uploader{store: store, dest: prefix, name: name, dir: dir, opts: opts, lockFD: lockFD, done: make(chan struct{}), cancel: cancel,
		maintained: make(chan struct{})}
	u.cond = sync.NewCond(&u.mu)
	if err := u.recover(); err != nil {
		u.release()
		cancel()
		return nil, err
	}
	go u.run(ctx)
	if opts.WarnAfter > 0 || opts.Limits.limited() {
		go func() {
			defer close(u.maintained)
			u.maintain(ctx)
		}()
	} else {
		close(u.maintained)
	}
	return u, nil
}

// Dir is the spool directory.
func (u *Uploader) Dir() string { return u.dir }

// Key returns the object key a spooled file is uploaded to.
func (u *Uploader) Key(path string) string { return u.dest.Key + filepath.Base(path) }

// recover queues the parts left in the spool, oldest name first, repairing
// those without an index.
func (u *Uploader) recover() error {
	entries, err := os.ReadDir(u.dir)
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	var names []string
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, "."):
			// Locks, and temporary files of an interrupted repair of
			// this destination's parts (another's may be under way).
			if tmp, ok := strings.CutSuffix(name, ".repair.tmp"); ok && DestName(tmp[1:]) == u.name {
				os.Remove(filepath.Join(u.dir, name))
			}
		case e.Type().IsRegular() && strings.HasSuffix(name, Ext) && DestName(name) == u.name:
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		path := filepath.Join(u.dir, name)
		repaired, err := repairInPlace(path)
		if err != nil {
			// Not a capture we can read: leave it where it is, say so.
			u.opts.Warnf("spool: %s cannot be uploaded and stays in the spool: %v", path, err)
			continue
		}
		u.stats.Recovered++
		if repaired {
			u.stats.Repaired++
		}
		u.opts.Logf("spool: found %s from an earlier run%s; uploading it first to %s", name, map[bool]string{true: " (not closed: repaired)"}[repaired], u.store.Describe(u.Key(path)))
		since := time.Now()
		if st, err := os.Stat(path); err == nil {
			since = st.ModTime()
		}
		u.queue = append(u.queue, queued{path: path, since: since})
	}
	u.stats.Pending = len(u.queue)
	return nil
}

// repairInPlace gives a capture left without an index (its recorder was
// killed) an index, keeping every intact record, and reports whether it
// had to. An empty or header-less file (killed before its header was
// flushed) is removed.
func repairInPlace(path string) (bool, error) {
	r, err := capfile.Open(path)
	if err != nil {
		var ce *capfile.CorruptionError
		if errors.As(err, &ce) && capfile.IsTorn(err) {
			// Torn inside the header: nothing was recorded.
			return false, errors.Join(errors.New("no complete header"), os.Remove(path))
		}
		if st, serr := os.Stat(path); serr == nil && st.Size() == 0 {
			return false, errors.Join(errors.New("empty file"), os.Remove(path))
		}
		return false, err
	}
	clean := r.Clean()
	r.Close()
	if clean {
		return false, nil
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".repair.tmp")
	if err := repairTo(path, tmp); err != nil {
		os.Remove(tmp)
		return false, err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return false, err
	}
	return true, nil
}

// Add queues a closed part for upload. It does not block.
func (u *Uploader) Add(path string) {
	u.mu.Lock()
	u.queue = append(u.queue, queued{path: path, since: time.Now()})
	u.stats.Added++
	u.stats.Pending = len(u.queue)
	u.cond.Broadcast()
	u.mu.Unlock()
	u.enforce()
}

// Pending returns the paths of the parts waiting in the spool, oldest
// first.
func (u *Uploader) Pending() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	paths := make([]string, len(u.queue))
	for i, q := range u.queue {
		paths[i] = q.path
	}
	return paths
}

// Bytes is the size of this recorder's capture files in the spool
// directory (its destination name's: the parts waiting and the part being
// written), not those of other recorders sharing the directory.
func (u *Uploader) Bytes() int64 {
	entries, err := os.ReadDir(u.dir)
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), Ext) || DestName(e.Name()) != u.name {
			continue
		}
		if info, err := e.Info(); err == nil {
			n += info.Size()
		}
	}
	return n
}

// Stats returns the running totals.
func (u *Uploader) Stats() Stats {
	u.mu.Lock()
	defer u.mu.Unlock()
	st := u.stats
	st.DroppedParts = append([]string(nil), st.DroppedParts...)
	st.Conflicts = append([]string(nil), st.Conflicts...)
	if len(u.queue) > 0 {
		st.OldestWaiting = u.queue[0].since
	}
	return st
}

// run uploads queued parts in order, retrying each until it is stored.
func (u *Uploader) run(ctx context.Context) {
	defer close(u.done)
	backoff := u.opts.MinBackoff
	for {
		u.mu.Lock()
		for len(u.queue) == 0 && !u.closing {
			u.cond.Wait()
		}
		if len(u.queue) == 0 || ctx.Err() != nil {
			u.mu.Unlock()
			return
		}
		path := u.queue[0].path
		u.busy = true
		u.mu.Unlock()

		n, err := u.upload(ctx, path)

		u.mu.Lock()
		u.busy = false
		if err == nil {
			u.queue = u.queue[1:]
			u.stats.Uploaded++
			u.stats.Bytes += n
			u.stats.LastUpload = time.Now()
			u.stats.Pending = len(u.queue)
			u.cond.Broadcast()
			u.mu.Unlock()
			backoff = u.opts.MinBackoff
			continue
		}
		if ctx.Err() != nil {
			u.mu.Unlock()
			return
		}
		var conflict *errConflict
		if errors.As(err, &conflict) {
			// Retrying cannot help: report it, keep the file, go on.
			u.queue = u.queue[1:]
			u.stats.Pending = len(u.queue)
			u.stats.Conflicts = append(u.stats.Conflicts, filepath.Base(path))
			u.stats.LastError = err.Error()
			u.cond.Broadcast()
			u.mu.Unlock()
			u.opts.Warnf("upload of %s refused: %v", filepath.Base(path), err)
			continue
		}
		u.stats.Errors++
		u.stats.LastError = err.Error()
		if len(u.queue) > 0 && u.queue[0].path == path {
			u.queue[0].failed = true
		}
		u.mu.Unlock()
		u.opts.Warnf("upload of %s failed: %v; retrying in %v (the part stays in %s)", filepath.Base(path), err, backoff, u.dir)
		u.enforce() // the part may be dropped now, if a limit is broken
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		u.mu.Lock()
		u.stats.Retries++
		u.mu.Unlock()
		backoff = min(2*backoff, u.opts.MaxBackoff)
	}
}

// errConflict is an upload refused because another object holds the
// part's name.
type errConflict struct{ msg string }

func (e *errConflict) Error() string { return e.msg }

// upload stores one part and removes it from the spool. The upload never
// replaces an object (unless Options.Replace): the server's answer to it,
// with the part's MD5 checked by the server, confirms it. When an object
// of that name exists (412), it is this part if it has the part's size
// and checksum (an earlier run uploaded it and was stopped before removing
// it from the spool); anything else is a conflict (errConflict).
func (u *Uploader) upload(ctx context.Context, path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	key := u.Key(path)
	put := u.store.PutNew
	if u.opts.Replace {
		put = u.store.Put
	}
	how := "uploaded"
	if err := put(ctx, key, f, st.Size()); err != nil {
		if !errors.Is(err, objstore.ErrExists) {
			return 0, err
		}
		obj, serr := u.store.Stat(ctx, key)
		if serr != nil {
			return 0, fmt.Errorf("%w; and: %w", err, serr)
		}
		if obj.Size != st.Size() || !objstore.ETagMatches(obj.ETag, f, st.Size()) {
			return 0, &errConflict{fmt.Sprintf("%s already exists and is not this part (%d bytes, ETag %s; the part: %d bytes); the part is not uploaded and stays in %s",
				u.store.Describe(key), obj.Size, obj.ETag, st.Size(), u.dir)}
		}
		how = "already stored (by an earlier run), confirmed by size and checksum:"
	}
	if err := os.Remove(path); err != nil {
		return 0, fmt.Errorf("uploaded, but not removed from the spool: %w", err)
	}
	u.opts.Logf("%s %s (%d bytes)", how, u.store.Describe(key), st.Size())
	return st.Size(), nil
}

// Flush waits until every queued part is uploaded, or ctx ends.
func (u *Uploader) Flush(ctx context.Context) error {
	stop := afterFunc(ctx, func() {
		u.mu.Lock()
		u.cond.Broadcast()
		u.mu.Unlock()
	})
	defer stop()
	u.mu.Lock()
	defer u.mu.Unlock()
	for len(u.queue) > 0 && ctx.Err() == nil {
		u.cond.Wait()
	}
	if len(u.queue) > 0 {
		return fmt.Errorf("%d part(s) from an earlier run not uploaded yet (%s); they stay in %s", len(u.queue), u.stats.LastError, u.dir)
	}
	return nil
}

// Close waits until every queued part is uploaded or ctx ends, then stops.
// It returns an error naming the parts left in the spool, which the next
// Uploader for the same spool uploads first. When it returns, nothing of
// the Uploader runs any more. A ctx that has already ended starts no
// upload: only one under way is abandoned.
func (u *Uploader) Close(ctx context.Context) error {
	if ctx.Err() != nil {
		// Before run can see closing and start the next part (or
		// the next attempt).
		u.cancel()
	}
	u.mu.Lock()
	u.closing = true
	u.cond.Broadcast()
	u.mu.Unlock()
	// Waited for here rather than in a context.AfterFunc, whose goroutine
	// may still be on its way out after Close returns.
	select {
	case <-u.done:
	case <-ctx.Done():
		u.cancel()
		u.mu.Lock()
		u.cond.Broadcast()
		u.mu.Unlock()
		<-u.done
	}
	u.cancel()
	<-u.maintained // it may drop parts (enforce): not after the lock is released
	u.release()
	u.mu.Lock()
	defer u.mu.Unlock()
	var errs []error
	if len(u.queue) > 0 {
		last := ""
		if u.stats.LastError != "" {
			last = " (last error: " + u.stats.LastError + ")"
		}
		errs = append(errs, fmt.Errorf("%d part(s) not uploaded%s; they stay in %s and are uploaded first by the next aaep-capture with the same --output", len(u.queue), last, u.dir))
	}
	if n := len(u.stats.Conflicts); n > 0 {
		errs = append(errs, fmt.Errorf("%d part(s) not uploaded because other objects hold their names (%s); they stay in %s", n, strings.Join(u.stats.Conflicts, ", "), u.dir))
	}
	return errors.Join(errs...)
}

// afterFunc is context.AfterFunc whose stop, once f has started, waits
// for it to have done its work: nothing of f is left to do once stop has
// returned (a started f may otherwise not have been scheduled yet).
func afterFunc(ctx context.Context, f func()) (stop func()) {
	done := make(chan struct{})
	stopped := context.AfterFunc(ctx, func() {
		defer close(done)
		f()
	})
	var once sync.Once
	return func() {
		once.Do(func() {
			if !stopped() {
				<-done
			}
		})
	}
}

func (u *Uploader) release() {
	if u.lockFD != nil {
		unlock(u.lockFD)
		u.lockFD.Close()
		u.lockFD = nil
	}
}

// repairTo writes the repaired copy of the part at path to tmp, synced to
// disk before it replaces the part.
func repairTo(path, tmp string) error {
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := capfile.RepairTo(path, f); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
