package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/objstore"
)

// version is set at build time with -ldflags "-X main.version=..." (make
// build); go install and go build get the same form from the commit they
// build (cli.Version).
var version string

func init() { version = cli.Version(version) }

// app is what every verb's options start from, as cli/cli's Factory: the
// streams, the context that SIGINT/SIGTERM cancel, and the root's own
// flags. Its methods create what a verb needs when it runs (its inputs,
// the progress display), never while the command line is parsed.
type app struct {
	cli.Streams
	ctx context.Context
	// storage reaches object storage for s3:// inputs.
	storage objstore.Options
	// quiet (-q) turns the progress display off.
	quiet bool
}

// newRootCmd builds aaep-replay and every verb.
func newRootCmd(a *app) *cobra.Command {
	return newRoot(a,
		NewCmdCheck(a, nil),
		NewCmdCut(a, nil),
		NewCmdDiff(a, nil),
		NewCmdDedupe(a, nil),
		NewCmdExport(a, nil),
		NewCmdFilter(a, nil),
		NewCmdImport(a, nil),
		NewCmdInfo(a, nil),
		NewCmdMerge(a, nil),
		NewCmdPush(a, nil),
		NewCmdRepair(a, nil),
		NewCmdServe(a, nil),
		NewCmdShow(a, nil),
		NewCmdSplit(a, nil),
		NewCmdTest(a, nil),
		NewCmdView(a, nil),
		NewCmdVisualize(a, nil),
	)
}

// newRoot builds the root command over verbs: the legacy --input forms,
// the flags every verb shares (-q, object storage), usage errors for bad
// flags, the one vocabulary of flag names and shell completion. (Tests of
// a verb's flags build it over that verb alone.)
func newRoot(a *app, verbs ...*cobra.Command) *cobra.Command {
	root := &cobra.Command{
		Use:   "aaep-replay",
		Short: "Replay, check, visualize and edit AAEP capture files",
		Long: `aaep-replay works on capture files written by aaep-capture.

The documented short forms are kept:
  aaep-replay --input session.aaep               same as: aaep-replay serve session.aaep
  aaep-replay --input session.aaep --visualize   same as: aaep-replay visualize session.aaep
Any other flag given with --input is passed to that verb.`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          rootArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			// normalizeArgs has rewritten every --input form into a verb.
			if cmd.Flags().Changed("visualize") || cmd.Flags().Changed("input") {
				return cli.Usagef("--visualize needs --input FILE (or: aaep-replay visualize FILE)")
			}
			return cmd.Help()
		},
	}
	// Shown in help only; normalizeArgs rewrites these forms before parsing.
	root.Flags().String("input", "", "capture to serve (or, with --visualize, to draw)")
	root.Flags().Bool("visualize", false, "with --input: draw the capture's state-machine trace")
	root.PersistentFlags().BoolVarP(&a.quiet, "quiet", "q", false, "no progress display on a terminal's stderr")
	addStorageFlags(root, &a.storage)
	a.storage.Warnf = a.warnf
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cli.Usagef("%w", err) })
	for _, c := range verbs {
		c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cli.Usagef("%w", err) })
		root.AddCommand(c)
	}
	cli.UseVocabulary(root)
	cli.RefuseEmptyPaths(root, cli.PathFlags...)
	addCompletions(root)
	root.SuggestionsMinimumDistance = 2
	return root
}

// normalizeArgs turns the documented root forms into verb forms:
// "--input F [--visualize] rest" becomes "visualize F rest" or "serve F rest".
// Arguments that already start with a verb are returned unchanged.
func normalizeArgs(args []string) []string {
	if len(args) == 0 || (len(args[0]) > 0 && args[0][0] != '-') {
		return args
	}
	var input string
	haveInput, visualize := false, false
	rest := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		arg := args[i]
		switch {
		case arg == "--":
			rest = append(rest, args[i:]...)
			i = len(args)
		case arg == "--input" && i+1 < len(args):
			input, haveInput = args[i+1], true
			i++
		case len(arg) > 8 && arg[:8] == "--input=":
			input, haveInput = arg[8:], true
		case arg == "--visualize" || arg == "--visualize=true":
			visualize = true
		case arg == "--visualize=false":
		default:
			rest = append(rest, arg)
		}
	}
	if !haveInput {
		return args
	}
	verb := "serve"
	if visualize {
		verb = "visualize"
	}
	return append([]string{verb, input}, rest...)
}
