package capturecmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/numflag"
	meter "github.com/aaep-tools/aaepkit/internal/progress"
	"github.com/aaep-tools/aaepkit/objstore"
	"github.com/aaep-tools/aaepkit/spool"
)

// storageOptions are the flags of recording to object storage.
type storageOptions struct {
	spool      string
	drain      string
	endpoint   string
	pathStyle  bool
	virtual    bool
	noSign     bool
	uploadWait time.Duration
	timeout    time.Duration
	warnAfter  time.Duration
	maxSize    sizeFlag
	minFree    sizeFlag
}

func addStorageFlags(f *pflag.FlagSet, o *storageOptions) {
	f.StringVar(&o.drain, "drain-spool", "", "upload every part left under this spool root, each to the destination its directory records, and exit (hosts being retired or moved)")
	f.StringVar(&o.spool, "spool", "", "with --output s3://...: local directory where parts are written before upload (default under the user's cache directory)")
	f.StringVar(&o.endpoint, "s3-endpoint", "", "S3-compatible server, e.g. http://127.0.0.1:9000 for MinIO (default AWS, or $AWS_ENDPOINT_URL_S3)")
	f.BoolVar(&o.pathStyle, "s3-path-style", false, "address buckets as HOST/BUCKET/KEY (the default for any --s3-endpoint that is not AWS)")
	f.BoolVar(&o.virtual, "s3-virtual-host", false, "address buckets as BUCKET.HOST/KEY, also on an --s3-endpoint that is not AWS (servers that want virtual-hosted requests)")
	f.BoolVar(&o.noSign, "s3-no-sign", false, "send S3 requests unsigned, without credentials (a bucket that allows anyone to write; a warning says so)")
	numflag.Duration(f, &o.uploadWait, "upload-wait", 2*time.Minute, numflag.NonNegative("do not wait"), "at the end, wait this long for parts still uploading; what is left stays in the spool for the next run")
	f.Var(&o.maxSize, "spool-max-size", "with --output s3://...: largest size of this recorder's parts in the spool (e.g. 2GiB); past it the oldest of them whose upload failed are dropped; 0: no limit")
	f.Var(&o.minFree, "spool-min-free", "with --output s3://...: free space to leave on the spool's file system (e.g. 1GiB); under it the oldest parts whose upload failed are dropped; 0: none")
	numflag.Duration(f, &o.warnAfter, "upload-warn-after", 10*time.Minute, numflag.NonNegative("never warn"), "warn on stderr when parts have waited this long with no upload succeeding")
	numflag.Duration(f, &o.timeout, "s3-timeout", objstore.DefaultStallTimeout, numflag.Positive(), "abandon (and retry) an S3 request when nothing moved for this long; a slow transfer that keeps moving goes on")
}

// objOptions are the object storage options of the flags, with warnings
// (requests that go unsigned) to warnf. The recorder retries uploads
// itself (the spool's backoff), so the client does not.
func (s *storageOptions) objOptions(warnf func(format string, args ...any)) objstore.Options {
	return objstore.Options{Endpoint: s.endpoint, PathStyle: s.pathStyle, VirtualHost: s.virtual, Retries: -1, StallTimeout: s.timeout,
		Anonymous: s.noSign, Warnf: warnf}
}

// partStamp is the time format in part names: fixed width, so that names
// sort in time order.
const partStamp = "20060102T150405.000Z"

// remoteOutput records into the spool and uploads closed parts.
type remoteOutput struct {
	url      objstore.URL
	store    objstore.Store
	up       *spool.Uploader
	local    string // the capture file (or rotation pattern) in the spool
	rotating bool
	logs     *logLines
	// leftovers counts the parts of other destinations found waiting under
	// the spool root at start, with no recorder holding them.
	leftovers int
	maxSize   int64 // --spool-max-size
}

// reportLeftovers names on stderr the destinations under the spool root
// whose parts wait with no recorder holding them, and counts their parts.
func reportLeftovers(root, dir, name string, logs *logLines) int {
	lefts, err := spool.Leftovers(root, dir, name)
	if err != nil {
		logs.printf("warning: spool %s: %v", root, err)
		return 0
	}
	n := 0
	for _, l := range lefts {
		n += len(l.Parts)
		dest := l.Dest
		if dest == "" {
			dest = l.Name + " (no record of its destination)"
		}
		logs.printf("spool: %d part(s) of %s (%s) wait in %s with no recorder; not uploaded by this one", len(l.Parts), dest, meter.Size(l.Bytes), l.Dir)
	}
	if n > 0 {
		logs.printf("spool: aaep-capture --drain-spool %s uploads them", root)
	}
	return n
}

// logLines prints upload messages through the progress display once it
// exists, and to stderr before. With --quiet only warnings and errors
// (printf) pass, not the line of each part (infof).
type logLines struct {
	mu    sync.Mutex
	w     io.Writer
	quiet bool
	pf    func(format string, args ...any)
}

func (l *logLines) infof(format string, args ...any) {
	if !l.quiet {
		l.printf(format, args...)
	}
}

func (l *logLines) printf(format string, args ...any) {
	l.mu.Lock()
	pf, w := l.pf, l.w
	l.mu.Unlock()
	if pf != nil {
		pf("aaep-capture: "+format+"\n", args...)
		return
	}
	fmt.Fprintf(w, "aaep-capture: "+format+"\n", args...)
}

func (l *logLines) use(pf func(format string, args ...any)) {
	l.mu.Lock()
	l.pf = pf
	l.mu.Unlock()
}

// openRemoteOutput opens an s3:// output: the spool (uploading what an
// earlier run left in it first) and the store, and returns where the
// recorder writes. Nothing here waits for the server, so that recording
// starts at once whatever S3 does: the start-up check of the credentials
// and the bucket runs beside the recording (startCheck), except when an
// earlier run's recording of the same object waits in the spool (it goes
// first).
func openRemoteOutput(ctx context.Context, o *options) (*remoteOutput, error) {
	u, err := objstore.Parse(o.output)
	if err != nil {
		return nil, cli.Usagef("--output: %w", err)
	}
	if u.IsPrefix() {
		return nil, cli.Usagef("--output %s names a prefix; name the capture: %sname.aaep", u, u)
	}
	rotating := o.rotateSize > 0 || o.rotateEvery > 0
	if lim := int64(o.storage.maxSize); lim > 0 && o.rotateSize > 0 && lim < 2*int64(o.rotateSize) {
		// The part being written may fill --rotate-size and the one
		// uploading too: a smaller limit would drop every part.
		return nil, cli.Usagef("--spool-max-size %s is smaller than two parts of --rotate-size %s (the part being written and the one uploading); give at least %s", o.storage.maxSize.String(), meter.Size(int64(o.rotateSize)), meter.Size(2*int64(o.rotateSize)))
	}
	if o.ring > 0 {
		return nil, cli.Usagef("--ring deletes local files; for object storage use the bucket's lifecycle rules")
	}
	logs := &logLines{w: o.Err, quiet: o.quiet}
	store, err := objstore.Open(ctx, u, o.storage.objOptions(func(format string, args ...any) { logs.printf("warning: "+format, args...) }))
	if err != nil {
		return nil, cli.Usagef("%w", err)
	}
	root := o.storage.spool
	if root == "" {
		if root, err = spool.DefaultRoot(); err != nil {
			return nil, cli.Usagef("%w", err)
		}
	}
	dir := spool.Dir(root, u)
	up, err := spool.Open(store, u, dir, spool.Options{Logf: logs.infof, Warnf: logs.printf, WarnAfter: o.storage.warnAfter,
		Endpoint: o.storage.endpoint, PathStyle: o.storage.pathStyle,
		Limits: spool.Limits{MaxBytes: int64(o.storage.maxSize), MinFree: int64(o.storage.minFree)}})
	if err != nil {
		return nil, cli.Output(err)
	}
	ro := &remoteOutput{url: u, store: store, up: up, local: filepath.Join(dir, path.Base(u.Key)), rotating: rotating, logs: logs, maxSize: int64(o.storage.maxSize)}
	ro.leftovers = reportLeftovers(root, dir, path.Base(u.Key), logs)
	if !rotating && up.Stats().Recovered > 0 {
		// One object named as asked, and an earlier recording of that
		// name still in the spool, where this one would be written: it
		// is uploaded first.
		wctx, cancel := context.WithTimeout(ctx, o.storage.uploadWait)
		err := up.Flush(wctx)
		cancel()
		if err != nil {
			up.Close(wctx) // cancelled: nothing more is waited for
			return nil, cli.Unavailable(err)
		}
	}
	return ro, nil
}

// startCheck proves the credentials and the bucket (and, for one object
// named as asked, that no object has its name) beside the recording. The
// returned channel gives nil when the recording may go on (a key that may
// only write, or a server that does not answer yet: uploads are retried),
// or the error that fails it for good (refused credentials, no bucket, not
// an S3 server, an existing object), once; it is closed when ctx ends
// first.
func (ro *remoteOutput) startCheck(ctx context.Context) <-chan error {
	ch := make(chan error, 1)
	go func() {
		defer close(ch)
		exists, err := objstore.Exists(ctx, ro.store, ro.url.Key)
		if ctx.Err() != nil {
			return
		}
		switch {
		case errors.Is(err, objstore.ErrDenied):
			// A key that may only write (s3:PutObject) cannot check; it
			// can still record, and uploads never replace an object.
			ro.logs.printf("warning: %v; the start-up check is skipped (a key that may only PutObject records all the same; uploads never replace an object)", err)
			err = nil
		case errors.Is(err, objstore.ErrAccess), errors.Is(err, objstore.ErrNoBucket):
			err = cli.Unavailable(err)
		case errors.Is(err, objstore.ErrNotS3):
			err = cli.Unavailable(fmt.Errorf("%w; is the S3 server's address right? (--s3-endpoint, $AWS_ENDPOINT_URL_S3)", err))
		case err != nil:
			ro.logs.printf("warning: %v; recording to the spool, uploads will be retried", err)
			err = nil
		case exists && !ro.rotating:
			// One object named as asked: an earlier recording of that
			// name is never replaced.
			err = cli.Output(fmt.Errorf("%s already exists; not overwritten (name another object, or rotate: --rotate-every/--rotate-size name parts by their start time)", ro.url))
		}
		ch <- err
	}()
	return ch
}

// partName names rotated part n, started at start, in the spool: the
// output's name, the part's start time, the part number.
func (ro *remoteOutput) partName(n int, start time.Time) string {
	ext := path.Ext(ro.local)
	stem := strings.TrimSuffix(ro.local, ext)
	return fmt.Sprintf("%s-%s-%06d%s", stem, start.UTC().Format(partStamp), n, ext)
}

// objects maps spool paths to the URLs of their objects.
func (ro *remoteOutput) objects(files []string) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = ro.store.Describe(ro.up.Key(f))
	}
	return out
}

// finish waits for the last uploads: at most --upload-wait, and not at all
// once hard (a second signal) is done.
func (ro *remoteOutput) finish(hard context.Context, wait time.Duration) error {
	ctx, cancel := context.WithTimeout(hard, wait)
	defer cancel()
	return ro.up.Close(ctx)
}

// droppedErr names the parts dropped to keep the spool within its limits
// (nil when none was): recorded events that never reached the bucket.
func (ro *remoteOutput) droppedErr() error {
	us := ro.up.Stats()
	if us.Dropped == 0 {
		return nil
	}
	return fmt.Errorf("%d part(s) dropped unuploaded to keep the spool within its limits (%s, %d bytes): their events are lost", us.Dropped, strings.Join(us.DroppedParts, ", "), us.DroppedBytes)
}

// summary says what reached the bucket and what stays in the spool.
func (ro *remoteOutput) summary() *uploadSummary {
	us := ro.up.Stats()
	s := &uploadSummary{Spool: ro.up.Dir(), Uploaded: us.Uploaded, Bytes: us.Bytes, Retries: us.Retries, Recovered: us.Recovered, Pending: us.Pending, Waiting: []string{}, Dropped: append([]string{}, us.DroppedParts...),
		Conflicts: append([]string{}, us.Conflicts...)}
	for _, p := range ro.up.Pending() {
		s.Waiting = append(s.Waiting, filepath.Base(p))
	}
	s.Prefix = ro.store.Describe(ro.url.Key[:strings.LastIndex(ro.url.Key, "/")+1])
	return s
}
