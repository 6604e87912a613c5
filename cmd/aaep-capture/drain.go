package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aaep-tools/aaepkit/internal/cli"
	meter "github.com/aaep-tools/aaepkit/internal/progress"
	"github.com/aaep-tools/aaepkit/objstore"
	"github.com/aaep-tools/aaepkit/spool"
)

// drainRun is --drain-spool ROOT: every destination under ROOT with parts
// waiting and no recorder holding it is uploaded to the prefix (and
// server) its directory records, then the command exits: 0 when nothing is
// left, 1 when parts stay (each named), 2 when ROOT cannot be read.
func drainRun(o *options) error {
	root := o.storage.drain
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		return cli.Usagef("--drain-spool %s: not a directory", root)
	}
	parent := o.ctx
	if parent == nil {
		parent = context.Background()
	}
	hard := hardStop(parent)
	lefts, err := spool.Leftovers(root, "", "")
	if err != nil {
		return cli.Input(fmt.Errorf("--drain-spool: %w", err))
	}
	logs := &logLines{w: o.Err, quiet: o.quiet}
	if len(lefts) == 0 {
		fmt.Fprintf(o.Err, "aaep-capture: nothing to drain under %s\n", root)
		return nil
	}
	var failed []error
	for _, l := range lefts {
		if parent.Err() != nil {
			failed = append(failed, fmt.Errorf("%s: not drained (interrupted)", l.Dir))
			continue
		}
		if err := drainOne(parent, hard, o, l, logs); err != nil {
			failed = append(failed, err)
		}
	}
	for _, err := range failed {
		fmt.Fprintf(o.Err, "aaep-capture: %v\n", err)
	}
	if len(failed) > 0 {
		return cli.Silent(cli.ExitFailure)
	}
	return nil
}

// drainOne uploads the parts of one destination.
func drainOne(ctx, hard context.Context, o *options, l spool.Leftover, logs *logLines) error {
	d, err := spool.ReadDestination(l.Dir)
	if err != nil {
		return fmt.Errorf("%v; its %d part(s) stay", err, len(l.Parts))
	}
	u, err := objstore.Parse(l.Dest)
	if err != nil {
		return err
	}
	so := o.storage.objOptions(func(format string, args ...any) { logs.printf("warning: "+format, args...) })
	if so.Endpoint == "" {
		so.Endpoint, so.PathStyle = d.Endpoint, d.PathStyle
	}
	store, err := objstore.Open(ctx, u, so)
	if err != nil {
		return fmt.Errorf("%s: %w", l.Dest, err)
	}
	up, err := spool.Open(store, u, l.Dir, spool.Options{Logf: logs.infof, Warnf: logs.printf, Endpoint: d.Endpoint, PathStyle: d.PathStyle})
	if err != nil {
		return err // taken by a recorder meanwhile: it names the holder
	}
	// As at the end of a recording: --upload-wait at most, nothing more
	// after a second signal.
	wctx, cancel := context.WithTimeout(hard, o.storage.uploadWait)
	defer cancel()
	cerr := up.Close(wctx)
	st := up.Stats()
	fmt.Fprintf(o.Err, "aaep-capture: drained %s: %d part(s) uploaded, %s\n", l.Dest, st.Uploaded, meter.Size(st.Bytes))
	if cerr != nil {
		return fmt.Errorf("%s: %w", l.Dest, cerr)
	}
	return nil
}
