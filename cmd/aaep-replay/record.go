package main

import (
	"context"
	"fmt"
	"io"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/outfile"
	"github.com/aaep-tools/aaepkit/objstore"
)

// recordOptions are the output policy of --record: a recording of live
// data, which never replaces the capture being replayed, nor an earlier
// recording without --force, and cannot be standard output (replies and
// summaries are printed there).
func (f *replayFlags) recordOptions(input string) outfile.Options {
	return outfile.Options{
		Inputs:   append([]string{input}, f.sources...),
		Live:     true,
		Force:    f.force,
		NoStdout: "replies and summaries are printed there; name a file",
	}
}

// checkRecord refuses a --record output before anything listens or
// connects: the input (by name, link or inode), "-", or an existing
// non-empty file without --force.
func (f *replayFlags) checkRecord(ctx context.Context, input string) error {
	if f.record == "" {
		return nil
	}
	if objstore.IsURL(f.record) {
		_, _, err := f.checkRemoteRecord(ctx)
		return err
	}
	wrap := func(err error) error { return cli.Output(fmt.Errorf("--record %w", err)) }
	if outfile.IsStdout(f.record) {
		_, err := outfile.Open(f.record, f.recordOptions(input))
		return wrap(err)
	}
	if err := outfile.Check(f.record, f.recordOptions(input)); err != nil {
		return wrap(err)
	}
	return nil
}

// recordFile is the --record capture, a serve.RecordWriter. The file appears
// at its path with the first message on the wire (sent or received): a run
// that records no message leaves no file, and does not replace an earlier
// one even with --force.
type recordFile struct {
	name   string
	w      *capfile.Writer
	f      *outfile.File // nil for a recording to object storage
	remote *remoteRecord // set for one
	shown  bool
}

// AddOrigin lists a subscriber in the recording's header (serve.OriginAdder).
func (r *recordFile) AddOrigin(o capfile.Origin) error { return r.w.AddOrigin(o) }

// Append records rec; serve calls it from one goroutine at a time.
func (r *recordFile) Append(rec *capfile.Record) error {
	if !r.shown && (rec.Kind == capfile.KindReceived || rec.Kind == capfile.KindSent) {
		if r.f != nil {
			if err := r.f.Publish(); err != nil {
				return err
			}
		}
		r.shown = true
	}
	return r.w.Append(rec)
}

// close finishes the recording, or removes it when it holds no message; it
// says so on stderr. A stream (a device, a FIFO) already carries the
// capture's start, so it is always finished.
func (r *recordFile) close(stderr io.Writer) error {
	if r == nil {
		return nil
	}
	if r.remote != nil {
		err := r.w.Close()
		keep := r.shown && err == nil
		if uerr := r.remote.finish(keep); err == nil {
			err = uerr
		}
		if !r.shown {
			fmt.Fprintf(stderr, "aaep-replay: --record %s: no message went over the wire; nothing uploaded\n", r.name)
		}
		if err != nil {
			return fmt.Errorf("--record: %w", err)
		}
		return nil
	}
	if !r.shown && r.f.Kind() == outfile.Regular {
		r.w.Close()
		r.f.Discard()
		fmt.Fprintf(stderr, "aaep-replay: --record %s: no message went over the wire; no file written\n", r.name)
		return nil
	}
	err := r.w.Close()
	if cerr := r.f.Commit(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("--record: %w", err)
	}
	return nil
}

// discard gives up a recording that never started (an error before serving).
func (r *recordFile) discard() {
	if r == nil {
		return
	}
	r.w.Close()
	if r.remote != nil {
		r.remote.finish(false)
		return
	}
	r.f.Discard()
}
