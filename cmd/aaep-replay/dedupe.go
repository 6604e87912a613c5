package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/capedit"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/numflag"
)

// DedupeOptions are what dedupe was asked: its input and flags.
type DedupeOptions struct {
	*app

	Inputs []string
	Output string
	Dedupe capedit.DedupeOptions
	// Reading says how the end of reading a damaged or torn capture is judged.
	Reading capfile.ReadPolicy
}

// NewCmdDedupe builds dedupe; runF, when given, runs instead of dedupeRun
// (tests of the command line).
func NewCmdDedupe(a *app, runF func(*DedupeOptions) error) *cobra.Command {
	o := &DedupeOptions{app: a}
	opts := &o.Dedupe
	cmd := &cobra.Command{
		Use:   "dedupe FILE... -o OUT",
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
		Args: needFiles("dedupe", "the capture FILE to deduplicate", 1, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Output == "" {
				return cli.Usagef("dedupe needs an output file: -o OUT")
			}
			o.Inputs = args
			if runF != nil {
				return runF(o)
			}
			return dedupeRun(o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", "", "capture file to write (required; - for standard output)")
	f.BoolVar(&o.Dedupe.Force, "force", false, "replace an original recording (a capture a recorder wrote) at the output; never an input")
	addReadingFlags(f, &o.Reading)
	numflag.Duration(f, &opts.Window, "window", capedit.DefaultDedupeWindow, numflag.NonNegative("the whole capture"), "how far back a first delivery is remembered (0: the whole capture)")
	addTimeShift(f, &opts.TimeShift)
	return cmd
}

// dedupeRun writes the input without its redelivered events.
func dedupeRun(o *DedupeOptions) error {
	a, out, opts := o.app, o.Output, o.Dedupe
	opts.Stdout = a.Out
	opts.Inputs = a.inputOptions("dedupe")
	opts.Progress = a.meter("dedupe")
	res, err := capedit.Dedupe(a.ctx, o.Inputs, out, opts)
	opts.Progress.Stop()
	var ws []capedit.Warning
	if res != nil {
		ws = res.Warnings
	}
	return a.fileopsDone(o.Reading, ws, err, func() {
		fmt.Fprintf(a.summaryTo(out), "dropped %s of %d records; wrote %d to %s\n",
			fileopsCount(res.Dropped, "redelivered event", "redelivered events"), res.Read, res.Written, outName(out))
	})
}
