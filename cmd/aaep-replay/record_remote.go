package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/objstore"
	"github.com/aaep-tools/aaepkit/spool"
)

// recordUploadWait bounds the wait for the --record upload at the end; what
// is not stored by then stays in the spool for the next run.
const recordUploadWait = 2 * time.Minute

// remoteRecord is a --record s3://... recording: written into the spool as
// aaep-capture writes its parts, and uploaded when it is closed.
type remoteRecord struct {
	url   objstore.URL
	store objstore.Store
	up    *spool.Uploader
	local string
	file  *os.File
}

// checkRemoteRecord checks an s3:// --record before anything listens: a
// name (not a prefix), credentials the server accepts, a bucket that exists,
// and no object of that name unless --force.
func (f *replayFlags) checkRemoteRecord(ctx context.Context) (objstore.URL, objstore.Store, error) {
	u, err := objstore.Parse(f.record)
	if err != nil {
		return u, nil, cli.Usagef("--record: %w", err)
	}
	if u.IsPrefix() {
		return u, nil, cli.Usagef("--record %s names a prefix; name the capture: %sname.aaep", u, u)
	}
	var o objstore.Options
	if f.storage != nil {
		o = *f.storage
	}
	store, err := objstore.Open(ctx, u, o)
	if err != nil {
		return u, nil, cli.Usagef("--record: %w", err)
	}
	exists, err := objstore.Exists(ctx, store, u.Key)
	switch {
	case errors.Is(err, objstore.ErrAccess), errors.Is(err, objstore.ErrNoBucket):
		return u, nil, cli.Unavailable(fmt.Errorf("--record: %w", err))
	case err != nil:
		return u, nil, cli.Output(fmt.Errorf("--record: %w", err))
	case exists && !f.force:
		return u, nil, cli.Output(fmt.Errorf("--record %s already exists; not overwritten (--force replaces it)", u))
	}
	return u, store, nil
}

// openRemoteRecord starts a recording to object storage.
func (f *replayFlags) openRemoteRecord(ctx context.Context, h capfile.Header, stderr io.Writer) (*recordFile, error) {
	u, store, err := f.checkRemoteRecord(ctx)
	if err != nil {
		return nil, err
	}
	root, err := spool.DefaultRoot()
	if err != nil {
		return nil, cli.Usagef("--record: %w", err)
	}
	up, err := spool.Open(store, u, spool.Dir(root, u), spool.Options{Replace: f.force, Logf: func(format string, args ...any) {
		fmt.Fprintf(stderr, "aaep-replay: --record: "+format+"\n", args...)
	}})
	if err != nil {
		return nil, cli.Output(fmt.Errorf("--record: %w", err))
	}
	rr := &remoteRecord{url: u, store: store, up: up, local: filepath.Join(up.Dir(), path.Base(u.Key))}
	file, err := os.OpenFile(rr.local, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		up.Close(context.Background())
		return nil, cli.Output(fmt.Errorf("--record: %w", err))
	}
	rr.file = file
	// The header grows with each subscriber's source, as for a file.
	w, err := capfile.NewWriter(file, h, &capfile.WriterOptions{HeaderReserve: recordHeaderRoom, HeaderAt: file})
	if err != nil {
		rr.finish(false)
		return nil, cli.Output(fmt.Errorf("--record: %w", err))
	}
	return &recordFile{name: f.record, w: w, remote: rr}, nil
}

// finish uploads a closed recording (keep) or drops it, and stops the
// uploader.
func (rr *remoteRecord) finish(keep bool) error {
	serr := rr.file.Sync()
	rr.file.Close()
	switch {
	case !keep:
		os.Remove(rr.local)
	case serr == nil:
		rr.up.Add(rr.local)
	}
	// A recording that could not be synced stays in the spool, where the
	// next run finds it.
	ctx, cancel := context.WithTimeout(context.Background(), recordUploadWait)
	defer cancel()
	if err := rr.up.Close(ctx); err != nil || !keep {
		return err
	}
	return serr
}
