package spool

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Limits bound what one recorder keeps in a spool on disk: each recorder
// (each destination name) answers for its own parts, whatever the others
// sharing the directory keep, so that a fast recorder never costs a slow
// one its data. The policy when a limit is broken: the oldest of the
// recorder's parts whose upload was tried and failed are dropped (deleted,
// counted in Stats.Dropped and named by Warnf) until it is within its
// limits again; a part never tried, the part being uploaded and the part
// being written are never dropped. When no part may be dropped, recording
// goes on past the limit with a warning (Stats.OverLimit): only a full
// disk stops a recording.
type Limits struct {
	// MaxBytes bounds the recorder's capture files in the spool directory
	// (the part being written included); 0: no bound.
	MaxBytes int64
	// MinFree is the free space to leave on the spool's file system; 0:
	// none.
	MinFree int64
}

// checkEvery is how often the limits are checked between parts (the part
// being written grows meanwhile).
const checkEvery = time.Second

// limited reports whether any limit is set.
func (l Limits) limited() bool { return l.MaxBytes > 0 || l.MinFree > 0 }

// enforce drops the oldest parts that failed to upload while a limit is
// broken, and says when none may be dropped.
func (u *Uploader) enforce() {
	l := u.opts.Limits
	if !l.limited() {
		return
	}
	u.enforceMu.Lock()
	defer u.enforceMu.Unlock()
	for {
		used := u.Bytes()
		free, ferr := freeBytes(u.dir)
		var broken string
		switch {
		case l.MaxBytes > 0 && used > l.MaxBytes:
			broken = fmt.Sprintf("the spool holds %d bytes of %s, over its limit of %d (--spool-max-size)", used, u.name, l.MaxBytes)
		case l.MinFree > 0 && ferr == nil && free < l.MinFree:
			broken = fmt.Sprintf("%d bytes free on the spool's file system, under the floor of %d (--spool-min-free)", free, l.MinFree)
		default:
			u.setOverLimit(false)
			return
		}
		path, size, ok := u.dropOldest()
		if !ok {
			if u.setOverLimit(true) {
				u.opts.Warnf("warning: spool: %s, and no part of %s has failed to upload (only those are dropped): recording goes on past the limit", broken, u.name)
			}
			return
		}
		u.opts.Warnf("spool: %s; dropped the oldest part whose upload failed, %s (%d bytes, never uploaded)", broken, filepath.Base(path), size)
	}
}

// setOverLimit records whether the spool is over its limits with nothing
// to drop, and reports whether it just went over.
func (u *Uploader) setOverLimit(over bool) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	was := u.stats.OverLimit
	u.stats.OverLimit = over
	return over && !was
}

// dropOldest deletes the oldest waiting part whose upload was tried and
// failed, and that is not being uploaded.
func (u *Uploader) dropOldest() (string, int64, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	i := 0
	if u.busy {
		i = 1 // queue[0] is being uploaded
	}
	for i < len(u.queue) && !u.queue[i].failed {
		i++
	}
	if i >= len(u.queue) {
		return "", 0, false
	}
	path := u.queue[i].path
	var size int64
	if st, err := os.Stat(path); err == nil {
		size = st.Size()
	}
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		u.opts.Warnf("spool: cannot drop %s: %v", path, err)
		return "", 0, false
	}
	u.queue = append(u.queue[:i], u.queue[i+1:]...)
	u.stats.Pending = len(u.queue)
	u.stats.Dropped++
	u.stats.DroppedBytes += size
	u.stats.DroppedParts = append(u.stats.DroppedParts, filepath.Base(path))
	u.cond.Broadcast()
	return path, size, true
}

// maintain checks the limits every checkEvery and warns while parts have
// waited longer than WarnAfter with no upload succeeding meanwhile.
func (u *Uploader) maintain(ctx context.Context) {
	every := checkEvery
	if w := u.opts.WarnAfter; w > 0 {
		every = min(every, max(w/4, 100*time.Millisecond))
	}
	t := time.NewTicker(every)
	defer t.Stop()
	var warned time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			u.enforce()
			if u.opts.WarnAfter > 0 {
				warned = u.warnStalled(now, warned)
			}
		}
	}
}

// warnStalled warns when parts have waited WarnAfter with no upload
// succeeding meanwhile, at most once every WarnAfter; it returns when it
// last warned.
func (u *Uploader) warnStalled(now, warned time.Time) time.Time {
	after := u.opts.WarnAfter
	st := u.Stats()
	if st.OldestWaiting.IsZero() {
		return warned
	}
	quiet := st.OldestWaiting
	if st.LastUpload.After(quiet) {
		quiet = st.LastUpload
	}
	if now.Sub(quiet) < after || now.Sub(warned) < after {
		return warned
	}
	last := ""
	if st.LastError != "" {
		last = "; last error: " + st.LastError
	}
	u.opts.Warnf("warning: no upload has succeeded for %v; %d part(s) wait in %s%s", now.Sub(quiet).Round(time.Second), st.Pending, u.dir, last)
	return now
}
