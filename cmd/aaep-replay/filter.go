package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/capedit"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/msgfilter"
)

// FilterOptions are what filter was asked: its input and flags.
type FilterOptions struct {
	*app

	Inputs []string
	Output string
	Filter capedit.FilterOptions
	// Reading says how the end of reading a damaged or torn capture is judged.
	Reading capfile.ReadPolicy
}

// NewCmdFilter builds filter; runF, when given, runs instead of filterRun
// (tests of the command line).
func NewCmdFilter(a *app, runF func(*FilterOptions) error) *cobra.Command {
	o := &FilterOptions{app: a}
	opts := &o.Filter
	cmd := &cobra.Command{
		Use:   "filter FILE... [--session ID]... [--type TYPE]... -o OUT",
		Short: "Write the messages of chosen sessions or types into a new capture",
		Long: `filter keeps the messages (received and sent) that match every given filter,
with aaep-capture's semantics: --type matches a type exactly or as a
suffix ("tool.invoked" matches "aaep:agent.tool.invoked"); --session matches
the AAEP session_id, ASP sessionId or KAHN run_id; --urgency matches the
urgency (absent counts as "normal"). Each flag may be repeated or given a
comma-separated list; any value of one flag may match.

Connection events and markers are kept unless --messages-only. Times and
the capture's start are unchanged.`,
		Example: `  aaep-replay filter session.aaep --session sess_1 -o one.aaep
  aaep-replay filter session.aaep --type tool.invoked,tool.completed -o tools.aaep`,
		Args: needFiles("filter", "the capture FILE to filter", 1, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Output == "" {
				return cli.Usagef("filter needs an output file: -o OUT")
			}
			if opts.Match.Empty() && !opts.MessagesOnly {
				return cli.Usagef("filter needs at least one of --session, --type, --urgency, --messages-only")
			}
			if err := cli.CheckEnum("urgency", opts.Match.Urgencies, msgfilter.UrgencyValues...); err != nil {
				return err
			}
			o.Inputs = args
			if runF != nil {
				return runF(o)
			}
			return filterRun(o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", "", "capture file to write (required; - for standard output)")
	f.BoolVar(&o.Filter.Force, "force", false, "replace an original recording (a capture a recorder wrote) at the output; never an input")
	addReadingFlags(f, &o.Reading)
	f.StringSliceVar(&opts.Match.Sessions, "session", nil, "keep messages of this session")
	f.StringSliceVar(&opts.Match.Types, "type", nil, "keep messages of this type (exact or suffix)")
	f.StringSliceVar(&opts.Match.Urgencies, "urgency", nil, "keep messages of this urgency")
	f.BoolVar(&opts.MessagesOnly, "messages-only", false, "drop connection events and markers too")
	addTimeShift(f, &opts.TimeShift)
	return cmd
}

// filterRun writes the chosen messages into the output.
func filterRun(o *FilterOptions) error {
	a, out, opts := o.app, o.Output, o.Filter
	opts.Stdout = a.Out
	opts.Inputs = a.inputOptions("filter")
	opts.Progress = a.meter("filter")
	res, err := capedit.Filter(a.ctx, o.Inputs, out, opts)
	opts.Progress.Stop()
	var ws []capedit.Warning
	if res != nil {
		ws = res.Warnings
	}
	return a.fileopsDone(o.Reading, ws, err, func() {
		fmt.Fprintf(a.summaryTo(out), "kept %d of %d records in %s\n", res.Written, res.Read, outName(out))
	})
}
