package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/aaep-tools/aaepkit/capedit"
	"github.com/aaep-tools/aaepkit/internal/cli"
)

func init() { register(newInfoCmd) }

type infoOptions struct {
	json    bool
	speed   float64
	maxIdle time.Duration
	gap     time.Duration
}

func newInfoCmd(a *app) *cobra.Command {
	var o infoOptions
	cmd := &cobra.Command{
		Use:   "info FILE",
		Short: "Summarise a capture: times, records, types, sessions, sources, gaps, sizes",
		Long: `info reads a capture and prints its format version, start time and duration,
records by kind, messages by type, sessions, sources, reconnects and gaps,
invalid messages, compressed and uncompressed sizes, whether it was closed
cleanly, and how long a replay would take at --speed.

A torn capture (its recorder did not finish) is summarised up to its last
intact record, with a warning. A damaged one is summarised up to the damage
and the command exits with status 2.`,
		Example: `  aaep-replay info session.aaep
  aaep-replay info --speed 4 --max-idle 2s session.aaep
  aaep-replay info --json session.aaep`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.speed <= 0 {
				return cli.Usagef("--speed must be positive, got %g", o.speed)
			}
			s, err := capedit.Info(a.ctx, args[0], capedit.InfoOptions{Speed: o.speed, MaxIdle: o.maxIdle, Gap: o.gap})
			if s == nil {
				return cli.WithCode(cli.ExitUsage, err)
			}
			if o.json {
				if werr := writeJSON(a.Out, s); werr != nil {
					return cli.WithCode(cli.ExitUsage, werr)
				}
			} else if werr := s.WriteText(a.Out); werr != nil {
				return cli.WithCode(cli.ExitUsage, werr)
			}
			if err != nil {
				return cli.WithCode(cli.ExitUsage, err)
			}
			if s.Status == "torn" {
				fmt.Fprintf(a.Err, "aaep-replay: warning: %s was not closed cleanly; summarised its %d intact records (aaep-replay repair writes a clean copy)\n", s.File, s.Records)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.json, "json", false, "print the summary as JSON")
	f.Float64Var(&o.speed, "speed", 1, "replay speed for the replay time estimate")
	f.DurationVar(&o.maxIdle, "max-idle", 0, "cap on each wait between events for the replay time estimate (0: no cap)")
	f.DurationVar(&o.gap, "gap", capedit.DefaultGap, "shortest silence between received messages reported as a gap")
	return cmd
}

// fileopsWarn reports the torn inputs an edit worked around.
func fileopsWarn(w io.Writer, ws []capedit.Warning) {
	for _, x := range ws {
		fmt.Fprintf(w, "aaep-replay: warning: %s\n", x)
	}
}

// fileopsError gives an edit's error the exit code of a file error.
func fileopsError(err error) error { return cli.WithCode(cli.ExitUsage, err) }
