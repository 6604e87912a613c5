package main

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/spf13/cobra"

	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/serve"
)

// PushOptions are what push was asked: its inputs and flags.
type PushOptions struct {
	*app

	Inputs []string
	// To is the subscriber's WebSocket URL.
	To     string
	Replay replayFlags
}

// NewCmdPush builds push; runF, when given, runs instead of pushRun (tests
// of the command line).
func NewCmdPush(a *app, runF func(*PushOptions) error) *cobra.Command {
	opts := &PushOptions{app: a}
	cmd := &cobra.Command{
		Use:   "push FILE --to ws://HOST/PATH",
		Short: "Replay a capture into a subscriber that listens for a WebSocket connection",
		Long: `push connects out to a subscriber listening at --to (ws:// or wss://,
offering the aaep.v1 subprotocol) and replays the capture to it with the same
timing, range and filter options as serve. A subscription.request the
subscriber sends first is answered; replies are printed.

Because --to names the target here, the end of the range is --until (a time
offset or record number, inclusive).

Exit status: 0 when the replay finished (or was interrupted), 1 when the
connection failed or the subscriber left early, 2 for usage and file errors.`,
		Example: `  aaep-replay push session.aaep --to ws://127.0.0.1:9000/aaep
  aaep-replay push session.aaep --to ws://127.0.0.1:9000/aaep --speed 2 --until 5m --record run.aaep`,
		Args: needFiles("push", "the capture FILE to replay (several, a glob or a directory are replayed as one, in time order)", 1, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Inputs = args
			u, err := url.Parse(opts.To)
			if opts.To == "" || err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
				return cli.Usagef("--to %q: want a ws:// or wss:// URL", opts.To)
			}
			if err := opts.Replay.validate("until"); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return pushRun(opts)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.To, "to", "", "WebSocket URL of the listening subscriber (required)")
	opts.Replay.add(fs, "until")
	return cmd
}

// pushRun replays the inputs, merged into one capture when there are
// several, into the subscriber at opts.To.
func pushRun(opts *PushOptions) error {
	a, target := opts.app, opts.To
	replayed, paths, err := a.replayed("push", opts.Inputs)
	if err != nil {
		return err
	}
	input := replayed.Name
	f := &opts.Replay
	f.sources = paths
	f.storage, f.stderr = &a.storage, a.Err
	so, err := f.options(a.ctx, replayed, "until")
	if err != nil {
		return err
	}
	printer := serve.NewPrinter(a.Out, f.json)
	so.Notify = printer.Notify
	hdr, err := checkCapture(a.ctx, replayed, a.Err)
	if err != nil {
		return err
	}
	rec, err := f.openRecord(a.ctx, input, hdr, target, "push")
	if err != nil {
		return err
	}
	if rec != nil {
		so.Record = rec
	}
	_, err = serve.Push(a.ctx, target, so, serve.PushOptions{})
	if cerr := rec.close(a.Err); cerr != nil && err == nil {
		return cli.Output(cerr)
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, serve.ErrNotFinished):
		return cli.Unavailable(err)
	case isConnectError(err):
		return cli.Unavailable(err)
	default:
		return cli.Input(fmt.Errorf("%s: %w", input, err))
	}
}

// isConnectError reports a failure to reach the subscriber.
func isConnectError(err error) bool {
	var ce *serve.ConnectError
	return errors.As(err, &ce)
}
