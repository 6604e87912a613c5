package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/aaep-tools/aaepkit/capedit"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/numflag"
)

// timeShiftFlag is --time-shift on the verbs that write one capture.
type timeShiftFlag struct{ v capedit.TimeShift }

func (f *timeShiftFlag) String() string {
	if f.v.IsZero() {
		return ""
	}
	return f.v.String()
}
func (f *timeShiftFlag) Type() string { return "shift" }
func (f *timeShiftFlag) Set(s string) error {
	v, err := capedit.ParseTimeShift(s)
	if err != nil {
		return err
	}
	f.v = v
	return nil
}

const timeShiftUsage = "move the output's wall-clock start: by a duration (+1.5s, -200ms) or to a time (2026-11-02T09:00:00Z); payloads are untouched"

func addTimeShift(fs *pflag.FlagSet, v *timeShiftFlag) {
	fs.Var(v, "time-shift", timeShiftUsage)
}

func newSplitCmd(a *app) *cobra.Command {
	var (
		out  string
		opts capedit.SplitOptions
		ts   timeShiftFlag
	)
	cmd := &cobra.Command{
		Use:   "split FILE (--records N | --duration D | --by-session) [-o PREFIX.aaep]",
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
		Args: needFiles("split", "the capture FILE to split", 1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.TimeShift = ts.v
			if out == "-" {
				return cli.Usagef("split writes several files: -o names their prefix, not standard output")
			}
			opts.Progress = a.meter("split")
			res, err := capedit.Split(a.ctx, args[0], out, opts)
			opts.Progress.Stop()
			if res != nil {
				fileopsWarn(a.Err, res.Warnings)
				for _, p := range res.Parts {
					fmt.Fprintf(a.Out, "wrote %d records to %s (%s to %s)\n", p.Records, p.Path, p.First.Round(time.Millisecond), p.Last.Round(time.Millisecond))
				}
			}
			if err != nil {
				return fileopsError(err)
			}
			fmt.Fprintf(a.Out, "split %d records of %s into %d parts\n", res.Read, args[0], len(res.Parts))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "output", "o", "", "prefix of the parts' names (default: FILE): run.aaep gives run-000001.aaep, ...")
	numflag.Int64(f, &opts.Records, "records", 0, numflag.NonNegative("not by count"), "a new part every N records")
	numflag.Duration(f, &opts.Duration, "duration", 0, numflag.NonNegative("not by duration"), "a new part at every multiple of this capture time (e.g. 10m)")
	f.BoolVar(&opts.BySession, "by-session", false, "one part per session")
	f.BoolVar(&opts.Force, "force", false, "replace existing files at the parts' names")
	addTimeShift(f, &ts)
	cmd.MarkFlagsMutuallyExclusive("records", "duration", "by-session")
	cmd.MarkFlagsOneRequired("records", "duration", "by-session")
	return cmd
}

func newDedupeCmd(a *app) *cobra.Command {
	var (
		out  string
		opts capedit.DedupeOptions
		ts   timeShiftFlag
	)
	cmd := &cobra.Command{
		Use:   "dedupe FILE -o OUT",
		Short: "Drop redelivered events: same source, same event_id, same bytes",
		Long: `dedupe writes a capture without the events a producer delivered twice:
a received message whose source, event_id and bytes equal an earlier one's
is left out and counted. Producers re-send recent events to a subscriber that
reconnects (SSE Last-Event-ID resumption, or a reference producer that
replays its buffer); AAEP allows it, and a checker counts them, but a replay
or an export wants each event once.

Messages without an event_id, messages the recorder sent, connection events
and markers are all kept; the same event_id with other bytes is not a
redelivery. --window bounds how far back (in capture time) a first delivery
is remembered, and so the memory used; 0 remembers the whole capture.`,
		Example: `  aaep-replay dedupe reconnecting.aaep -o once.aaep
  aaep-replay dedupe long.aaep --window 0 -o once.aaep`,
		Args: needFiles("dedupe", "the capture FILE to deduplicate", 1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return cli.Usagef("dedupe needs an output file: -o OUT")
			}
			opts.TimeShift = ts.v
			opts.Stdout = a.Out
			opts.Progress = a.meter("dedupe")
			res, err := capedit.Dedupe(a.ctx, args[0], out, opts)
			opts.Progress.Stop()
			if res != nil {
				fileopsWarn(a.Err, res.Warnings)
			}
			return fileopsDone(err, func() {
				fmt.Fprintf(a.summaryTo(out), "dropped %s of %d records; wrote %d to %s\n",
					fileopsCount(res.Dropped, "redelivered event", "redelivered events"), res.Read, res.Written, outName(out))
			})
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "output", "o", "", "capture file to write (required; - for standard output)")
	numflag.Duration(f, &opts.Window, "window", capedit.DefaultDedupeWindow, numflag.NonNegative("the whole capture"), "how far back a first delivery is remembered (0: the whole capture)")
	addTimeShift(f, &ts)
	return cmd
}
