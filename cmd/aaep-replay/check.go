package main

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/input"
	"github.com/aaep-tools/aaepkit/inputs"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/numflag"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/models"
)

// CheckOptions are what check was asked: its inputs and flags.
type CheckOptions struct {
	*app

	Inputs []string
	// Rules lists the rules instead of checking anything.
	Rules  bool
	JSON   bool
	FailOn string
	// Threshold is FailOn parsed: the lowest level that fails the check.
	Threshold   protocol.Level
	Protocol    string
	Profile     string
	Disable     []string
	MaxFindings int
	Summary     bool
	All         bool
	// AllowIncomplete exits by the findings of what was read when part of
	// the input could not be read (the report still says INCOMPLETE).
	AllowIncomplete bool
}

// NewCmdCheck builds check; runF, when given, runs instead of checkRun
// (tests of the command line).
func NewCmdCheck(a *app, runF func(*CheckOptions) error) *cobra.Command {
	opts := &CheckOptions{app: a}
	cmd := &cobra.Command{
		Use:   "check FILE...",
		Short: "Check every session of captures (or JSONL files) against its protocol",
		Long: `check reads captures or JSONL files once and applies every rule of the
AAEP, ASP and KAHN protocol models to each session, then prints a report
grouped by session: rule ID, level, message index, time offset and what went
wrong.

` + inputsHelp + ` Several inputs (a rotated set, captures
of two machines) are checked as one stream in time order: offsets count from
the earliest start and #N is the record number in "merge" of the same files.

When the listing is longer than a screen (the terminal's height, or 50
lines when standard output is not a terminal), the text report shows a
summary instead: findings per rule and level, the worst sessions and the
first occurrence of each rule. --all lists every finding whatever the
length; --summary shows the summary whatever the length. --json is always
complete.

A report never passes input it could not read: a torn or damaged capture, an
empty input or a line over the size limit makes the verdict INCOMPLETE, with
the reason ("complete": false in JSON).

Exit status: 0 when no finding reaches the --fail-on level (MUST by default),
1 when one does, 2 for usage or file errors and for INCOMPLETE input (with
--allow-incomplete, INCOMPLETE input exits 0 or 1 by the findings of what was
read).`,
		Example: `  aaep-replay check session.aaep
  aaep-replay check run-*.aaep --summary
  aaep-replay check captures/ --all | less
  aaep-replay check --json --fail-on should session.aaep > report.json
  aaep-replay check --protocol kahn run.jsonl
  aaep-replay check --rules`,
		Args: func(cmd *cobra.Command, args []string) error {
			if opts.Rules {
				return cobra.NoArgs(cmd, args)
			}
			return needFiles("check", "a capture or JSONL FILE (several, a glob, a directory, or - for standard input)", 1, -1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if !opts.Rules {
				if opts.Summary && opts.All {
					return cli.Usagef("--summary and --all exclude each other")
				}
				var err error
				if opts.Threshold, err = parseFailOn(opts.FailOn); err != nil {
					return err
				}
				// Rules and options are checked once, before anything is read.
				if _, err := opts.newEngine(protocol.Sink{}); err != nil {
					return cli.Usagef("%w", err)
				}
				opts.Inputs = args
			}
			if runF != nil {
				return runF(opts)
			}
			return checkRun(opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.JSON, "json", false, "print the report as JSON (for CI)")
	f.StringVar(&opts.FailOn, "fail-on", "must", "lowest level that makes the exit status 1: must, should, info or never")
	f.StringVar(&opts.Protocol, "protocol", "", "treat every message as this protocol ("+strings.Join(models.Names(), ", ")+") instead of detecting it")
	f.StringVar(&opts.Profile, "profile", "lenient", "where a specification contradicts itself: lenient or strict")
	f.StringSliceVar(&opts.Disable, "disable", nil, "rule IDs not to report (repeatable, comma-separated)")
	f.BoolVar(&opts.Rules, "rules", false, "list every rule with its level and exit")
	numflag.Int(f, &opts.MaxFindings, "max-findings", protocol.DefaultMaxFindings, numflag.Positive(), "list at most this many findings (all are counted)")
	f.BoolVar(&opts.Summary, "summary", false, "text report: findings per rule and level, worst sessions, first occurrence of each rule")
	f.BoolVar(&opts.All, "all", false, "text report: every finding, however long (default: a summary when the list is longer than a screen)")
	f.BoolVar(&opts.AllowIncomplete, "allow-incomplete", false, "when part of the input cannot be read, exit by the findings of the rest instead of 2 (the report still says INCOMPLETE)")
	return cmd
}

// newEngine starts a checker with the rules and options asked for.
func (opts *CheckOptions) newEngine(sink protocol.Sink) (*protocol.Engine, error) {
	return protocol.NewEngine(models.All(), opts.Protocol, &protocol.Options{Profile: opts.Profile, Disabled: opts.Disable}, sink)
}

// checkRun checks the inputs (or lists the rules) and prints the report.
func checkRun(opts *CheckOptions) error {
	if opts.Rules {
		return listRules(opts.app, opts.JSON)
	}
	a, threshold := opts.app, opts.Threshold
	srcs, err := a.sources("check", opts.Inputs)
	if err != nil {
		return err
	}
	if isPrefixArg(opts.Inputs) {
		// The captures of a fleet: each checked on its own, concurrently.
		return checkEach(opts, srcs)
	}
	name := strings.Join(inputs.Names(srcs), ", ")
	// The report streams: each session is written when it ends, so memory
	// holds only the sessions open at once, however long the input.
	rep := protocol.NewReport(name)
	rep.MaxFindings = opts.MaxFindings
	switch {
	case opts.All:
		rep.View = protocol.ViewAll
	case opts.Summary:
		rep.View = protocol.ViewSummary
	default:
		rep.View, rep.Screen = protocol.ViewAuto, a.screenLines()
	}
	out, jsonOut := a.Out, (*bufio.Writer)(nil)
	if opts.JSON {
		// One document, read whole by its consumer: written in 64 KiB
		// pieces rather than a write per session.
		jsonOut = bufio.NewWriterSize(a.Out, 64<<10)
		out = jsonOut
	}
	rep.Stream(out, opts.JSON, threshold)
	eng, err := opts.newEngine(rep.Sink(nil))
	if err != nil {
		return cli.Usagef("%w", err)
	}
	meter := a.meter("check")
	sum, err := input.ReadSources(a.ctx, srcs, input.Options{Progress: meter, Prepare: eng.Preparation()}, input.Handler{
		Header: func(_ input.Format, h capfile.Header) { eng.Begin(streamInfo(h)) },
		Message: func(m *protocol.Message) error {
			eng.Feed(m)
			return nil
		},
		Conn: eng.Connection,
	})
	meter.Stop()
	if err != nil && sum.Format == "" {
		// Not even recognised as a capture or JSON lines: nothing to report.
		return cli.WithCode(cli.ExitUsage, err)
	}
	// Damage part-way through still gets a complete report of what was
	// read before it, with the verdict INCOMPLETE.
	eng.Finish()
	rep.Stats = eng.Stats()
	for _, reason := range unreadReasons(sum, err) {
		rep.Incomplete(reason)
	}
	werr := rep.Close()
	if werr == nil && jsonOut != nil {
		werr = jsonOut.Flush()
	}
	if werr != nil {
		return cli.WithCode(cli.ExitUsage, fmt.Errorf("writing report: %w", werr))
	}
	if !rep.Complete() && !opts.AllowIncomplete {
		if err != nil {
			return cli.WithCode(cli.ExitUsage, err)
		}
		fmt.Fprintf(a.Err, "aaep-replay: %s: INCOMPLETE: %s (--allow-incomplete judges what was read)\n", name, strings.Join(unreadReasons(sum, nil), "; "))
		return cli.Silent(cli.ExitUsage)
	}
	if rep.Failed(threshold) {
		return cli.Silent(cli.ExitFailure)
	}
	return nil
}

// streamInfo tells the checkers what a capture's header says about it.
func streamInfo(h capfile.Header) protocol.StreamInfo {
	return protocol.StreamInfo{Tool: h.Tool, Replay: h.Meta["replay_of"] != ""}
}

// unreadReasons says why part of the input was not read (nothing when all of it was).
func unreadReasons(sum input.Summary, err error) []string {
	var out []string
	if err != nil {
		out = append(out, fmt.Sprintf("reading stopped after %d messages: %v", sum.Messages, err))
	}
	if sum.Torn != nil {
		out = append(out, fmt.Sprintf("the capture ends in a torn record after %d messages (%v)", sum.Messages, sum.Torn))
	}
	out = append(out, sum.Gaps()...)
	if len(out) == 0 && sum.Messages == 0 {
		out = append(out, "the input holds no messages")
	}
	return out
}

// parseFailOn parses --fail-on; "never" (protocol.Never) fails on nothing.
func parseFailOn(s string) (protocol.Level, error) {
	l, err := protocol.ParseThreshold(s)
	if err != nil {
		return 0, cli.Usagef("--fail-on: %w", err)
	}
	return l, nil
}

func listRules(a *app, asJSON bool) error {
	return protocol.WriteRules(a.Out, models.All(), asJSON)
}
