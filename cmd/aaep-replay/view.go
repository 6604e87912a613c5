package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/viewer"
	"github.com/aaep-tools/aaepkit/serve"
	"github.com/aaep-tools/aaepkit/timing"
)

// ViewOptions are what view was asked: its input and flags.
type ViewOptions struct {
	*app

	Inputs  []string
	Replay  replayFlags
	Listen  string
	GRPC    string
	GRPCTLS grpcTLSFlags
	Open    bool
	Shared  bool
	Paused  bool
	// Check are the checker's flags: --protocol, --profile.
	Check  checkFlags
	Follow bool
	// AllowOrigin are the origins whose pages may use the API and /control.
	AllowOrigin []string
}

// NewCmdView builds view; runF, when given, runs instead of viewRun (tests
// of the command line).
func NewCmdView(a *app, runF func(*ViewOptions) error) *cobra.Command {
	opts := &ViewOptions{app: a}
	cmd := &cobra.Command{
		Use:   "view FILE...",
		Short: "Explore a capture in a web browser and step its replay into subscribers",
		Long: `view serves a web page for the capture at a local address (printed), and on
the same port the replay endpoints of serve, so that subscribers can be
attached while you watch. The page is one screen: a timeline across the top,
then three panes side by side (a phone stacks them):

  Timeline   an axis, a minimap of the whole capture, a lane per session for
             as many as fit; drag to zoom to a range; tool calls and waits for
             a reply as bars, findings in red, the replay's position in blue.
  Sessions   sortable by any column (MUST first finds the broken ones), only
             those with findings; below, the session's messages (replies
             included) or the whole capture's, in virtual lists.
  Inspector  a message exactly as recorded, pretty-printed, with its times,
             source, direction, transport attributes and findings; copy it
             as JSON or as a curl seek; export the list as JSONL or a capture.
  Trace      the session's path through its state machine; selecting a step
             selects its message, and back.
  Replay     play, pause, step 1 or 10, seek (selected message, time,
             scrubber), speed, and what each subscriber received and replied.

The filter bar takes expressions such as
  type == "tool.invoked" && level >= MUST
(fields type, session, source, direction, urgency, rule, level, index, or
any JSON field; == != < <= > >= ~ && || !) and a full-text search. Keys: /
filter, n/N next/previous finding, Space play/pause, . step, > step 10, [ ]
seek the replay to the previous/next finding. The URL keeps the state.

The replay is one shared timeline, paused until you play or step it
(--paused=false plays as soon as a subscriber attaches). The same control is
a JSON API under /control (see serve --control). Every flag of serve applies.
The API and /control answer the page itself and programs, not another web
page (--allow-origin names one that may), and only requests whose Host
header names this server (DNS rebinding).
The page works offline: everything it needs is inside aaep-replay.

--follow keeps up with a capture aaep-capture is still writing, as tail -f
does: one reader waits at the end of the file while the recorder holds it
open, each new record is checked once as it arrives, and the page hears of
it at once (no polling): its rows, counts, sessions and timeline grow, a live
mark shows, and the list follows the end until you scroll up.`,
		Example: `  aaep-replay view session.aaep --open
  aaep-replay view session.aaep --listen 127.0.0.1:9000 --speed 2
  aaep-replay view live.aaep --follow
  # attach a subscriber to ws://127.0.0.1:8765/aaep/v1/ws, then in the page: Step`,
		Args: needFiles("view", "the capture FILE to explore", 1, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Inputs = args
			if err := opts.Replay.validate("until"); err != nil {
				return err
			}
			if err := opts.Check.validate(); err != nil {
				return err
			}
			if err := checkAllowOrigins(opts.AllowOrigin); err != nil {
				return err
			}
			if err := opts.GRPCTLS.check(opts.GRPC); err != nil {
				return err
			}
			if !opts.Shared && cmd.Flags().Changed("paused") {
				return cli.Usagef("--paused needs the shared timeline (--shared)")
			}
			if runF != nil {
				return runF(opts)
			}
			return viewRun(opts)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.Listen, "listen", "127.0.0.1:8765", "address to listen on (a non-loopback address prints a warning)")
	fs.StringVar(&opts.GRPC, "grpc", "", "also serve the replay to gRPC subscribers (aaep.v1.AaepService) on this address; the page's replay steers them too")
	opts.GRPCTLS.add(fs)
	fs.BoolVar(&opts.Open, "open", false, "open the page in the default browser")
	fs.BoolVar(&opts.Shared, "shared", true, "one steerable timeline for all subscribers (--shared=false: each its own, no control)")
	fs.BoolVar(&opts.Paused, "paused", true, "start the replay paused (step or play from the page or /control)")
	opts.Check.add(fs, flagProtocol, flagProfile)
	fs.BoolVar(&opts.Follow, "follow", false, "keep up with a capture that is still being written: each new record is checked and shown as it arrives")
	addAllowOrigin(fs, &opts.AllowOrigin, "the viewer's API and /control")
	opts.Replay.add(fs, "until")
	return cmd
}

// viewMemoryLimit is the soft memory limit view sets for itself (unless
// GOMEMLIMIT says otherwise): the background check of a large capture
// makes garbage quickly, and a viewer left open should not hold twice what
// it uses.
const viewMemoryLimit = 224 << 20

// viewRun serves the page and the replay of opts.Inputs until interrupted.
func viewRun(opts *ViewOptions) error {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(viewMemoryLimit)
	}
	a := opts.app
	rec, paths, err := a.replayed("view", opts.Inputs)
	if err != nil {
		return err
	}
	input := rec.Name
	f := &opts.Replay
	f.sources = paths
	f.storage, f.stderr = &a.storage, a.Err
	f.growing = opts.Follow
	so, err := f.options(a.ctx, rec, "until")
	if err != nil {
		return err
	}
	so.Shared = opts.Shared
	so.AllowOrigins = opts.AllowOrigin
	if opts.Shared {
		so.Control = timing.NewController(so.Clock, so.Timing, opts.Paused)
	}
	return serveReplay(a, rec, opts.Listen, opts.GRPC, &opts.GRPCTLS, f, so, func(srv *serve.Server, addr string) (http.Handler, func(), error) {
		v, err := viewer.New(viewer.Options{Recording: rec, Replay: srv, AllowOrigins: opts.AllowOrigin, Protocol: opts.Check.Protocol, Profile: string(opts.Check.Profile), Follow: opts.Follow, Context: a.ctx})
		if err != nil {
			return nil, nil, cli.Input(fmt.Errorf("%s: %w", input, err))
		}
		url := "http://" + addr + "/"
		fmt.Fprintf(a.Err, "aaep-replay: viewing %s at %s\n", input, url)
		if opts.Open {
			if err := openBrowser(url); err != nil {
				fmt.Fprintf(a.Err, "aaep-replay: warning: could not open a browser (%v); open %s yourself\n", err, url)
			}
		}
		return v, func() { v.Close() }, nil
	})
}

// openBrowser asks the desktop to open url.
func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	return nil
}
