// Command aaep-replay replays, checks, visualizes and edits AAEP capture files.
//
// Each verb has its own file: an XxxOptions struct (the app every verb
// shares, then the verb's arguments and flags), NewCmdXxx(app, runF), whose
// RunE only validates the command line into the options, and xxxRun, which
// does the work. root.go builds the root command over every verb.
package main

import (
	"context"
	"os"

	"github.com/aaep-tools/aaepkit/internal/cli"
)

func main() { os.Exit(Main(os.Args[1:])) }

// Main runs aaep-replay with args and returns the process exit code.
func Main(args []string) int {
	ctx, stop := cli.SignalContext(context.Background())
	defer stop()
	stderr := cli.MessageWriter(os.Stderr, append([]string{os.Getenv("AAEP_CPUPROFILE")}, args...)) // its name quoted too
	stopProfile, err := startProfile(args)
	if err != nil {
		return cli.Report(stderr, "aaep-replay", err)
	}
	code := cli.InterruptedCode(ctx, run(ctx, cli.System(), args))
	if err := stopProfile(); err != nil {
		if c := cli.Report(stderr, "aaep-replay", err); code == 0 {
			code = c
		}
	}
	return code
}

func run(ctx context.Context, s cli.Streams, args []string) int {
	s.Err = cli.MessageWriter(s.Err, args) // names with control characters quoted
	a := &app{Streams: s, ctx: ctx}
	root := newRootCmd(a)
	args = normalizeArgs(args)
	root.SetArgs(args)
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	cli.StrictCompletion(root, args) // after SetOut: the scripts go there
	err := cli.Execute(ctx, root)
	return cli.Report(s.Err, "aaep-replay", err)
}
