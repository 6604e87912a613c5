package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/capedit"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/numflag"
)

// timeShiftFlag is --time-shift on the verbs that write one capture.
type timeShiftFlag struct{ p *capedit.TimeShift }

func (f timeShiftFlag) String() string {
	if f.p == nil || f.p.IsZero() {
		return ""
	}
	return f.p.String()
}
func (f timeShiftFlag) Type() string { return "shift" }
func (f timeShiftFlag) Set(s string) error {
	v, err := capedit.ParseTimeShift(s)
	if err != nil {
		return err
	}
	*f.p = v
	return nil
}

const timeShiftUsage = "move the output's wall-clock start: by a duration (+1.5s, -200ms) or to a time (2026-11-02T09:00:00Z); payloads are untouched"

// addTimeShift defines --time-shift, read into p.
func addTimeShift(fs *pflag.FlagSet, p *capedit.TimeShift) {
	fs.Var(timeShiftFlag{p}, "time-shift", timeShiftUsage)
}

// SplitOptions are what split was asked: its input and flags.
type SplitOptions struct {
	*app

	Inputs []string
	// Output is the prefix of the parts' names ("": the input's).
	Output string
	Split  capedit.SplitOptions
	// Reading says how the end of reading a damaged or torn capture is judged.
	Reading capfile.ReadPolicy
}

// NewCmdSplit builds split; runF, when given, runs instead of splitRun
// (tests of the command line).
func NewCmdSplit(a *app, runF func(*SplitOptions) error) *cobra.Command {
	o := &SplitOptions{app: a}
	opts := &o.Split
	cmd := &cobra.Command{
		Use:   "split FILE... (--records N | --duration D | --by-session) [-o PREFIX.aaep]",
		Short: "Cut a capture into parts by record count, by duration or by session",
		Long: `split writes a capture as several, each a complete capture with its own
header and index (editcap -c / -i and tcpdump -C / -G habits):

  --records N    a new part every N records (every kind counts, as record
                 numbers do)
  --duration D   a new part at every multiple of D since the capture's start,
                 as aaep-capture --rotate-every does; empty intervals make no
                 part
  --by-session   one part per session: its messages and every connection
                 event and marker; messages outside any session go to a
                 "no-session" part

Parts are named after -o (default: FILE itself): run.aaep gives
run-000001.aaep, run-000002.aaep, ... (the names of rotation), or
run-SESSION.aaep by session. An existing file is never written over without
--force, and the input never. Count and duration parts after the first
start at their first record (or interval), so their records keep their
absolute times and merge --join-sources puts them back together; the first
part and session parts keep the capture's start, as filter does.`,
		Example: `  aaep-replay split long.aaep --duration 10m -o long.aaep
  aaep-replay split session.aaep --records 100000
  aaep-replay split session.aaep --by-session -o parts/session.aaep`,
		Args: needFiles("split", "the capture FILE to split", 1, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Output == "-" {
				return cli.Usagef("split writes several files: -o names their prefix, not standard output")
			}
			o.Inputs = args
			if runF != nil {
				return runF(o)
			}
			return splitRun(o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", "", "prefix of the parts' names (default: FILE): run.aaep gives run-000001.aaep, ...")
	numflag.Int64(f, &opts.Records, "records", 0, numflag.NonNegative("not by count"), "a new part every N records")
	numflag.Duration(f, &opts.Duration, "duration", 0, numflag.NonNegative("not by duration"), "a new part at every multiple of this capture time (e.g. 10m)")
	f.BoolVar(&opts.BySession, "by-session", false, "one part per session")
	f.BoolVar(&opts.Force, "force", false, "replace existing files at the parts' names")
	addReadingFlags(f, &o.Reading)
	addTimeShift(f, &opts.TimeShift)
	cmd.MarkFlagsMutuallyExclusive("records", "duration", "by-session")
	cmd.MarkFlagsOneRequired("records", "duration", "by-session")
	return cmd
}

// splitRun writes the parts.
func splitRun(o *SplitOptions) error {
	a, opts := o.app, o.Split
	opts.Inputs = a.inputOptions("split")
	opts.Progress = a.meter("split")
	res, err := capedit.Split(a.ctx, o.Inputs, o.Output, opts)
	opts.Progress.Stop()
	var ws []capedit.Warning
	if res != nil {
		ws = res.Warnings
		for _, p := range res.Parts {
			fmt.Fprintf(a.Out, "wrote %d records to %s (%s to %s)\n", p.Records, cli.Quote(p.Path), p.First.Round(time.Millisecond), p.Last.Round(time.Millisecond))
		}
	}
	return a.fileopsDone(o.Reading, ws, err, func() {
		if res != nil {
			fmt.Fprintf(a.Out, "split %d records of %s into %d parts\n", res.Read, quoteNames(o.Inputs), len(res.Parts))
		}
	})
}
