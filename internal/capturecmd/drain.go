package capturecmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/aaep-tools/aaepkit/internal/cli"
	meter "github.com/aaep-tools/aaepkit/internal/progress"
	"github.com/aaep-tools/aaepkit/objstore"
	"github.com/aaep-tools/aaepkit/spool"
)

// drainRun is --drain-spool ROOT: every destination under ROOT with parts
// waiting and no recorder holding it is uploaded to the prefix (and
// server) its directory records, then the command exits: 0 when nothing is
// left, 1 when parts stay (each named, on the last line), 2 when ROOT
// cannot be read. With --json a summary goes to standard output.
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
	sum := drainSummary{Root: root, Destinations: []drainedDest{}, Left: []string{}}
	if len(lefts) == 0 {
		fmt.Fprintf(o.Err, "aaep-capture: nothing to drain under %s\n", root)
	}
	var failed []error
	for _, l := range lefts {
		d := drainedDest{Dest: l.Dest, Spool: l.Dir, Left: []string{}}
		if parent.Err() != nil {
			err = fmt.Errorf("%s: not drained (interrupted)", l.Dir)
			d.Left = append(d.Left, l.Parts...)
		} else {
			err = drainOne(parent, hard, o, l, logs, &d)
		}
		if err != nil {
			failed = append(failed, err)
			d.Error = err.Error()
		}
		sum.Uploaded += d.Uploaded
		sum.Bytes += d.Bytes
		for _, p := range d.Left {
			sum.Left = append(sum.Left, filepath.Join(l.Dir, p))
		}
		sum.Destinations = append(sum.Destinations, d)
	}
	for _, err := range failed {
		fmt.Fprintf(o.Err, "aaep-capture: %v\n", err)
	}
	var end error // parts stay: the uploads failed, each said why
	if len(failed) > 0 {
		end = cli.Silent(cli.KindUnavailable)
	}
	sum.ExitCode = cli.Code(end)
	if len(lefts) > 0 {
		fmt.Fprintln(o.Err, sum.line())
	}
	if o.json {
		enc := json.NewEncoder(o.Out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(sum); err != nil {
			return cli.Output(err)
		}
	}
	return end
}

// drainSummary is what --drain-spool did, for --json.
type drainSummary struct {
	Root         string        `json:"root"`
	Destinations []drainedDest `json:"destinations"`
	Uploaded     int64         `json:"uploaded"`
	Bytes        int64         `json:"bytes"`
	// Left names the parts still under Root (their paths).
	Left     []string `json:"left"`
	ExitCode int      `json:"exit_code"`
}

// drainedDest is what was drained of one destination.
type drainedDest struct {
	Dest     string   `json:"destination"`
	Spool    string   `json:"spool"`
	Uploaded int64    `json:"uploaded"`
	Bytes    int64    `json:"bytes"`
	Left     []string `json:"left"`
	Error    string   `json:"error,omitempty"`
}

// line is the drain's last line: what was uploaded and, by name, what is
// left.
func (s drainSummary) line() string {
	line := fmt.Sprintf("aaep-capture: drained %s: %d part(s) uploaded, %s", s.Root, s.Uploaded, meter.Size(s.Bytes))
	if len(s.Left) == 0 {
		return line + "; nothing left"
	}
	return line + fmt.Sprintf("; %d part(s) left: %s", len(s.Left), strings.Join(s.Left, ", "))
}

// drainOne uploads the parts of one destination, and says in d what it
// uploaded and what is left.
func drainOne(ctx, hard context.Context, o *options, l spool.Leftover, logs *logLines, d *drainedDest) error {
	d.Left = append(d.Left[:0], l.Parts...)
	dst, err := spool.ReadDestination(l.Dir)
	if err != nil {
		return fmt.Errorf("%v; its %d part(s) stay", err, len(l.Parts))
	}
	u, err := objstore.Parse(l.Dest)
	if err != nil {
		return err
	}
	so := o.storage.objOptions(func(format string, args ...any) { logs.printf("warning: "+format, args...) })
	if so.Endpoint == "" {
		so.Endpoint, so.PathStyle = dst.Endpoint, dst.PathStyle
	}
	store, err := objstore.Open(ctx, u, so)
	if err != nil {
		return fmt.Errorf("%s: %w", l.Dest, err)
	}
	up, err := spool.Open(store, u, l.Dir, spool.Options{Logf: logs.infof, Warnf: logs.printf, Endpoint: dst.Endpoint, PathStyle: dst.PathStyle})
	if err != nil {
		return err // taken by a recorder meanwhile: it names the holder
	}
	// As at the end of a recording: --upload-wait at most, nothing more
	// after a second signal.
	wctx, cancel := context.WithTimeout(hard, o.storage.uploadWait)
	defer cancel()
	cerr := up.Close(wctx)
	st := up.Stats()
	d.Uploaded, d.Bytes = st.Uploaded, st.Bytes
	d.Left = d.Left[:0]
	for _, p := range up.Pending() {
		d.Left = append(d.Left, filepath.Base(p))
	}
	d.Left = append(d.Left, st.Conflicts...)
	fmt.Fprintf(o.Err, "aaep-capture: drained %s: %d part(s) uploaded, %s\n", l.Dest, st.Uploaded, meter.Size(st.Bytes))
	if cerr != nil {
		return fmt.Errorf("%s: %w", l.Dest, cerr)
	}
	return nil
}
