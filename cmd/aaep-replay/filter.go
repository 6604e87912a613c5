package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/aaep-tools/aaepkit/capedit"
	"github.com/aaep-tools/aaepkit/internal/cli"
)

func newFilterCmd(a *app) *cobra.Command {
	var (
		out  string
		opts capedit.FilterOptions
		ts   timeShiftFlag
	)
	cmd := &cobra.Command{
		Use:   "filter FILE [--session ID]... [--type TYPE]... -o OUT",
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
		Args: needFiles("filter", "the capture FILE to filter", 1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return cli.Usagef("filter needs an output file: -o OUT")
			}
			if opts.Match.Empty() && !opts.MessagesOnly {
				return cli.Usagef("filter needs at least one of --session, --type, --urgency, --messages-only")
			}
			opts.Stdout = a.Out
			opts.TimeShift = ts.v
			opts.Progress = a.meter("filter")
			res, err := capedit.Filter(a.ctx, args[0], out, opts)
			opts.Progress.Stop()
			if res != nil {
				fileopsWarn(a.Err, res.Warnings)
			}
			return fileopsDone(err, func() {
				fmt.Fprintf(a.summaryTo(out), "kept %d of %d records in %s\n", res.Written, res.Read, outName(out))
			})
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "output", "o", "", "capture file to write (required; - for standard output)")
	f.StringSliceVar(&opts.Match.Sessions, "session", nil, "keep messages of this session")
	f.StringSliceVar(&opts.Match.Types, "type", nil, "keep messages of this type (exact or suffix)")
	f.StringSliceVar(&opts.Match.Urgencies, "urgency", nil, "keep messages of this urgency")
	f.BoolVar(&opts.MessagesOnly, "messages-only", false, "drop connection events and markers too")
	addTimeShift(f, &ts)
	return cmd
}
