package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/numflag"
	"github.com/aaep-tools/aaepkit/internal/recdiff"
)

// DiffOptions are what diff was asked: its two sides and flags.
type DiffOptions struct {
	*app

	A, B   string
	JSON   bool
	Stat   bool
	Color  string
	Match  string
	Ignore []string
	Keep   []string
	// Check are the checker's flags (--protocol, --profile, --disable):
	// the findings compared are those check finds with them.
	Check checkFlags
	// TimeToleranceArg is --time-tolerance as given ("20%", "0.2", "off");
	// TimeTolerance is it read: a fraction, negative for off.
	TimeToleranceArg string
	TimeTolerance    float64
	TimeFloor        time.Duration
}

// compare is the comparison the flags ask for.
func (opts *DiffOptions) compare() recdiff.Options {
	return recdiff.Options{
		Match: opts.Match, Ignore: opts.Ignore, Keep: opts.Keep,
		TimeTolerance: opts.TimeTolerance, TimeFloor: opts.TimeFloor,
		Check: opts.Check.config(),
	}
}

// NewCmdDiff builds diff; runF, when given, runs instead of diffRun.
func NewCmdDiff(a *app, runF func(*DiffOptions) error) *cobra.Command {
	opts := &DiffOptions{app: a}
	cmd := &cobra.Command{
		Use:   "diff A B",
		Short: "Show what changed between two recordings, session by session, at the protocol's level",
		Long: `diff compares two recordings (A and B: each a capture, a quoted glob, a
directory or an s3:// object or prefix) as the agent's behaviour, not as
bytes: identifiers, timestamps, reply tokens, sequence numbers and where an
output was cut into chunks are left out.

Sessions are matched by session id when the two sides share ids, else by
what started them (the request_text of their first message, else its
summary_normal) and, among sessions that started alike, by order; those
left then by order (a session whose request changed is compared with the
one it was). --match id, order, start or a member's name pairs by that
alone. Sessions on one side only are listed.

For each matched pair it compares the sequence of events (type, state
change, tool, decision: a minimal edit script, with the members of events
that match compared too), the tool calls (name, reversibility, risk,
args_summary, status), confirmations and clarifications (asked or not,
options, default, decision), the output text joined across chunks, the final
state, the findings (new in B, fixed in B, by rule and level, as check finds
them) and the timing (duration, time to first output, time waiting for the
user) within --time-tolerance. The replies of a subscriber (two test --record
or serve --record recordings) are compared the same way: each reply is an
event of its session, its decision that of the confirmation it answers, and
the subscription requests are the events of their stream.

Exit status, as diff(1): 0 when the recordings are the same, 1 when they
differ, 2 for trouble (usage, a file that cannot be read, INCOMPLETE input).`,
		Example: `  aaep-replay diff v1.aaep v2.aaep
  aaep-replay diff --stat 'runs/v1-*.aaep' 'runs/v2-*.aaep'
  aaep-replay diff --json v1/ v2/ > diff.json
  aaep-replay diff --ignore summary_normal --time-tolerance off s3://runs/v1/ s3://runs/v2/`,
		Args: needFiles("diff", "two recordings, A and B (each a capture, a quoted glob, a directory or an s3:// prefix)", 2, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.A, opts.B = args[0], args[1]
			var err error
			if opts.TimeTolerance, err = parseTolerance(opts.TimeToleranceArg); err != nil {
				return err
			}
			switch opts.Color {
			case "auto", "always", "never":
			default:
				return cli.Usagef("--color: %q is not auto, always or never", opts.Color)
			}
			if err := opts.Check.validate(); err != nil {
				return err
			}
			cmp := opts.compare()
			if err := cmp.Validate(); err != nil {
				return cli.Usagef("%w", err)
			}
			if runF != nil {
				return runF(opts)
			}
			return diffRun(opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.JSON, "json", false, "print the comparison as JSON (for scripts)")
	f.BoolVar(&opts.Stat, "stat", false, "one line per session that differs, and the totals")
	f.StringVar(&opts.Color, "color", "auto", "colour the text: auto (on a terminal), always or never")
	f.StringVar(&opts.Match, "match", "", "how to pair sessions: id, order, start (what started them) or a member's name (default: id when the sides share ids, else start)")
	f.StringArrayVar(&opts.Ignore, "ignore", nil, "leave this member path out of the comparison of events (repeatable; a.b.c, * for any name, **. for any depth)")
	f.StringArrayVar(&opts.Keep, "keep", nil, "compare this member path even though it is ignored by default (repeatable; e.g. timestamp)")
	f.StringVar(&opts.TimeToleranceArg, "time-tolerance", "20%", "how much B's timing may differ from A's: a percentage, or off")
	numflag.Duration(f, &opts.TimeFloor, "time-floor", 250*time.Millisecond, numflag.NonNegative("every difference counts"), "timing differences smaller than this never count, whatever the percentage")
	opts.Check.add(f)
	return cmd
}

// parseTolerance reads --time-tolerance: "20%", "0.2", or "off" (-1).
func parseTolerance(s string) (float64, error) {
	if s == "off" || s == "none" {
		return -1, nil
	}
	pct := strings.HasSuffix(s, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil || v < 0 {
		return 0, cli.Usagef("--time-tolerance: %q is not a percentage (20%%) or off", s)
	}
	if pct {
		v /= 100
	}
	return v, nil
}

// diffRun opens both sides, compares them and prints the comparison.
func diffRun(opts *DiffOptions) error {
	a := opts.app
	var sides [2]recdiff.Side
	for i, name := range []string{opts.A, opts.B} {
		recs, err := a.recordings("diff", []string{name})
		if err != nil {
			return err
		}
		sides[i] = recdiff.Side{Name: name, Recordings: recs}
	}
	cmp := opts.compare()
	cmp.KeepSame = opts.JSON // the JSON form lists every session
	res, err := recdiff.Run(a.ctx, sides[0], sides[1], cmp)
	if err != nil {
		if a.ctx.Err() != nil {
			return context.Cause(a.ctx)
		}
		return cli.Input(fmt.Errorf("diff: %w", err))
	}
	if opts.JSON {
		err = res.WriteJSON(a.Out)
	} else {
		color := opts.Color == "always"
		if opts.Color == "auto" && os.Getenv("NO_COLOR") == "" {
			if f, ok := a.Out.(*os.File); ok && cli.IsTerminal(f) {
				color = true
			}
		}
		err = res.WriteText(a.Out, recdiff.TextOptions{Color: color, Stat: opts.Stat})
	}
	if err != nil {
		return cli.Output(fmt.Errorf("writing the comparison: %w", err))
	}
	switch {
	case len(res.Incomplete) > 0:
		for _, why := range res.Incomplete {
			fmt.Fprintf(a.Err, "aaep-replay: diff: INCOMPLETE: %s\n", why)
		}
		return cli.Silent(cli.KindIncomplete) // no verdict
	case !res.Same():
		return cli.Silent(cli.KindFindings) // they differ
	}
	return nil
}
