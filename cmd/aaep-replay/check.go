package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/aaep-tools/aaepkit/input"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/models"
)

func init() { register(newCheckCmd) }

type checkOptions struct {
	input    string
	json     bool
	failOn   string
	protocol string
	profile  string
	disable  []string
	rules    bool
	max      int
}

func newCheckCmd(a *app) *cobra.Command {
	opts := &checkOptions{}
	cmd := &cobra.Command{
		Use:   "check FILE",
		Short: "Check every session of a capture (or JSONL file) against its protocol",
		Long: `check reads a capture file or a JSONL file once and applies every rule of the
AAEP, ASP and KAHN protocol models to each session, then prints a report
grouped by session: rule ID, level, message index, time offset and what went
wrong.

Exit status: 0 when no finding reaches the --fail-on level (MUST by default),
1 when one does, 2 for usage or file errors.`,
		Example: `  aaep-replay check session.aaep
  aaep-replay check --json --fail-on should session.aaep > report.json
  aaep-replay check --protocol kahn run.jsonl
  aaep-replay check --rules`,
		Args: func(cmd *cobra.Command, args []string) error {
			if opts.rules {
				return cobra.NoArgs(cmd, args)
			}
			if len(args) != 1 {
				return cli.Usagef("check takes one FILE (a capture or a JSONL file, - for stdin)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.rules {
				return listRules(a, opts.json)
			}
			opts.input = args[0]
			return checkRun(a, opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.json, "json", false, "print the report as JSON (for CI)")
	f.StringVar(&opts.failOn, "fail-on", "must", "lowest level that makes the exit status 1: must, should, info or never")
	f.StringVar(&opts.protocol, "protocol", "", "treat every message as this protocol ("+strings.Join(models.Names(), ", ")+") instead of detecting it")
	f.StringVar(&opts.profile, "profile", "lenient", "where a specification contradicts itself: lenient or strict")
	f.StringSliceVar(&opts.disable, "disable", nil, "rule IDs not to report (repeatable, comma-separated)")
	f.BoolVar(&opts.rules, "rules", false, "list every rule with its level and exit")
	f.IntVar(&opts.max, "max-findings", protocol.DefaultMaxFindings, "list at most this many findings (all are counted)")
	return cmd
}

func checkRun(a *app, opts *checkOptions) error {
	threshold, never, err := parseFailOn(opts.failOn)
	if err != nil {
		return err
	}
	// The report streams: each session is written when it ends, so memory
	// holds only the sessions open at once, however long the input.
	rep := protocol.NewReport(opts.input)
	rep.MaxFindings = opts.max
	rep.Stream(a.Out, opts.json, threshold)
	eng, err := protocol.NewEngine(models.All(), opts.protocol, &protocol.Options{Profile: opts.profile, Disabled: opts.disable}, rep.Sink(nil))
	if err != nil {
		return cli.Usagef("%v", err)
	}
	sum, err := input.Each(a.ctx, opts.input, func(m *protocol.Message) error {
		eng.Feed(m)
		return nil
	})
	if err != nil && !sum.Started() {
		return cli.WithCode(cli.ExitUsage, err)
	}
	// Damage part-way through still gets a complete report of what was
	// read before it, then exit status 2.
	eng.Finish()
	rep.Stats = eng.Stats()
	if werr := rep.Close(); werr != nil {
		return cli.WithCode(cli.ExitUsage, fmt.Errorf("writing report: %w", werr))
	}
	if err != nil {
		return cli.WithCode(cli.ExitUsage, err)
	}
	if sum.Torn != nil {
		fmt.Fprintf(a.Err, "aaep-replay: warning: %s: %v; checked the %d messages before it\n", opts.input, sum.Torn, sum.Messages)
	}
	if !never && rep.Failed(threshold) {
		return cli.Silent(cli.ExitFailure)
	}
	return nil
}

// parseFailOn parses --fail-on; "never" makes check exit 0 whatever it finds.
func parseFailOn(s string) (protocol.Level, bool, error) {
	if strings.EqualFold(s, "never") {
		return protocol.Must, true, nil
	}
	l, err := protocol.ParseLevel(s)
	if err != nil {
		return 0, false, cli.Usagef("--fail-on: %v", err)
	}
	return l, false, nil
}

func listRules(a *app, asJSON bool) error {
	rules := protocol.RuleTable(models.All())
	if asJSON {
		return writeJSON(a.Out, rules)
	}
	for _, r := range rules {
		fmt.Fprintf(a.Out, "%-6s %-34s %s\n", r.Level, r.ID, r.Summary)
	}
	return nil
}
