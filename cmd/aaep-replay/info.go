package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/aaep-tools/aaepkit/capedit"
	"github.com/aaep-tools/aaepkit/inputs"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/numflag"
	"github.com/aaep-tools/aaepkit/internal/outfile"
	"github.com/aaep-tools/aaepkit/timing"
)

type infoOptions struct {
	json    bool
	speed   float64
	maxIdle time.Duration
	gap     time.Duration
}

func newInfoCmd(a *app) *cobra.Command {
	var o infoOptions
	cmd := &cobra.Command{
		Use:   "info FILE...",
		Short: "Summarise captures: times, records, types, sessions, sources, gaps, sizes",
		Long: `info reads a capture and prints its format version, start time and duration,
records by kind, messages by type, sessions, sources, reconnects and gaps,
invalid messages, compressed and uncompressed sizes, whether it was closed
cleanly, and how long a replay would take at --speed.

A torn capture (its recorder did not finish) is summarised up to its last
intact record, with a warning. A damaged one is summarised up to the damage
and the command exits with status 2.

` + inputsHelp + ` (A directory gives its .aaep files.) Each capture gets its own block, in
the order given (globs and directories sorted by name), followed by a total
over all of them (--json: {"files": [...], "total": {...}}).`,
		Example: `  aaep-replay info session.aaep
  aaep-replay info captures/
  aaep-replay info run-*.aaep --json
  aaep-replay info --speed 4 --max-idle 2s session.aaep
  aaep-replay info --json session.aaep`,
		Args: needFiles("info", "a capture FILE (several, a glob, a directory, or - for standard input)", 1, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			srcs, err := a.sources("info", args)
			if err != nil {
				return err
			}
			return infoRun(a, &o, srcs)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.json, "json", false, "print the summary as JSON")
	numflag.Float(f, &o.speed, "speed", 1, numflag.Between(timing.MinSpeed, timing.MaxSpeed), "replay speed for the replay time estimate")
	numflag.Duration(f, &o.maxIdle, "max-idle", 0, numflag.NonNegative("no cap"), "cap on each wait between events for the replay time estimate (0: no cap)")
	numflag.Duration(f, &o.gap, "gap", capedit.DefaultGap, numflag.Positive(), "shortest silence between received messages reported as a gap")
	return cmd
}

func infoRun(a *app, o *infoOptions, srcs []inputs.Source) error {
	meter := a.meter("info")
	defer meter.Stop()
	var (
		sums     []*capedit.Summary
		firstErr error
	)
	for i, src := range srcs {
		meter.File(src.Name())
		s, err := capedit.InfoSource(a.ctx, src, capedit.InfoOptions{Speed: o.speed, MaxIdle: o.maxIdle, Gap: o.gap, Progress: meter})
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			if len(srcs) > 1 {
				meter.Printf(a.Err, "aaep-replay: %v\n", err)
			}
		}
		if s == nil {
			continue
		}
		sums = append(sums, s)
		if s.Status == "torn" {
			meter.Printf(a.Err, "aaep-replay: warning: %s was not closed cleanly; summarised its %d intact records (aaep-replay repair writes a clean copy)\n", s.File, s.Records)
		}
		if o.json {
			continue
		}
		if i > 0 {
			fmt.Fprintln(a.Out)
		}
		if werr := s.WriteText(a.Out); werr != nil {
			return cli.WithCode(cli.ExitUsage, werr)
		}
	}
	meter.Stop()
	var werr error
	switch {
	case o.json && len(srcs) == 1 && len(sums) == 1:
		werr = writeJSON(a.Out, sums[0])
	case o.json:
		werr = writeJSON(a.Out, struct {
			Files []*capedit.Summary `json:"files"`
			Total *capedit.Total     `json:"total"`
		}{sums, capedit.Sum(sums)})
	case len(srcs) > 1 && len(sums) > 0:
		fmt.Fprintln(a.Out)
		werr = capedit.Sum(sums).WriteText(a.Out)
	}
	if werr != nil {
		return cli.WithCode(cli.ExitUsage, werr)
	}
	if firstErr != nil {
		if len(srcs) > 1 {
			return cli.Silent(cli.ExitUsage)
		}
		return cli.WithCode(cli.ExitUsage, firstErr)
	}
	return nil
}

// fileopsWarn reports the torn inputs an edit worked around.
func fileopsWarn(w io.Writer, ws []capedit.Warning) {
	for _, x := range ws {
		fmt.Fprintf(w, "aaep-replay: warning: %s\n", x)
	}
}

// fileopsError gives an edit's error the exit code of a file error.
func fileopsError(err error) error { return cli.WithCode(cli.ExitUsage, err) }

// summaryTo is where an edit says what it wrote: standard output, unless the
// output itself went there ("-o -").
func (a *app) summaryTo(out string) io.Writer {
	if out == "-" {
		return a.Err
	}
	return a.Out
}

// outName names an output in messages.
func outName(out string) string {
	if out == "-" {
		return "standard output"
	}
	return out
}

// fileopsDone ends an edit: on success or after damage in an input (the
// output then holds every record read before it: outfile.IsPartial) the
// summary is printed, then the damage is reported (exit 2).
func fileopsDone(err error, summary func()) error {
	if err == nil || outfile.IsPartial(err) {
		summary()
	}
	return fileopsError(err)
}
