package main

import (
	"fmt"
	"net/http"
	"os/exec"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/protocol/models"
	"github.com/aaep-tools/aaepkit/serve"
	"github.com/aaep-tools/aaepkit/timing"
	"github.com/aaep-tools/aaepkit/viewer"
)

func init() { register(newViewCmd) }

func newViewCmd(a *app) *cobra.Command {
	var (
		f        replayFlags
		listen   string
		open     bool
		shared   bool
		paused   bool
		protocol string
		profile  string
	)
	cmd := &cobra.Command{
		Use:   "view FILE",
		Short: "Explore a capture in a web browser and step its replay into subscribers",
		Long: `view serves a web page for the capture at a local address (printed), and on
the same port the replay endpoints of serve, so that subscribers can be
attached while you watch:

  Sessions   every session with protocol, span, message count and verdict
             (MUST/SHOULD/INFO counts); filter by type, urgency, source, rule.
  Timeline   all sessions on one time axis, a lane each; findings in red;
             zoom and pan with the buttons, the wheel or the keyboard.
  Inspector  a message exactly as recorded, pretty-printed, with its times,
             source, direction, transport attributes and findings.
  Trace      the session's path through its state machine; selecting a step
             selects its message, and back.
  Replay     play, pause, step one event, seek to the selected event, speed,
             and what each attached subscriber received and replied.

The replay is one shared timeline, paused until you play or step it
(--paused=false plays as soon as a subscriber attaches). The same control is
a JSON API under /control (see serve --control). Every flag of serve applies.
The page works offline: everything it needs is inside aaep-replay.`,
		Example: `  aaep-replay view session.aaep --open
  aaep-replay view session.aaep --listen 127.0.0.1:9000 --speed 2
  # attach a subscriber to ws://127.0.0.1:8765/aaep/v1/ws, then in the page: Step`,
		Args: needFiles("view", "the capture FILE to explore", 1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			input := args[0]
			opts, err := f.options(input, "until")
			if err != nil {
				return err
			}
			if protocol != "" {
				if _, ok := knownModel(protocol); !ok {
					return cli.Usagef("--protocol %q: want one of %s", protocol, strings.Join(models.Names(), ", "))
				}
			}
			if profile != "lenient" && profile != "strict" {
				return cli.Usagef("--profile %q: want lenient or strict", profile)
			}
			opts.Shared = shared
			if shared {
				opts.Control = timing.NewController(opts.Clock, opts.Timing, paused)
			} else if cmd.Flags().Changed("paused") {
				return cli.Usagef("--paused needs the shared timeline (--shared)")
			}
			return serveReplay(a, input, listen, &f, opts, func(srv *serve.Server, addr string) (http.Handler, func(), error) {
				v, err := viewer.New(viewer.Options{Path: input, Replay: srv, Protocol: protocol, Profile: profile})
				if err != nil {
					return nil, nil, cli.WithCode(cli.ExitUsage, fmt.Errorf("%s: %w", input, err))
				}
				url := "http://" + addr + "/"
				fmt.Fprintf(a.Err, "aaep-replay: viewing %s at %s\n", input, url)
				if open {
					if err := openBrowser(url); err != nil {
						fmt.Fprintf(a.Err, "aaep-replay: warning: could not open a browser (%v); open %s yourself\n", err, url)
					}
				}
				return v, func() { v.Close() }, nil
			})
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&listen, "listen", "127.0.0.1:8765", "address to listen on (a non-loopback address prints a warning)")
	fs.BoolVar(&open, "open", false, "open the page in the default browser")
	fs.BoolVar(&shared, "shared", true, "one steerable timeline for all subscribers (--shared=false: each its own, no control)")
	fs.BoolVar(&paused, "paused", true, "start the replay paused (step or play from the page or /control)")
	fs.StringVar(&protocol, "protocol", "", "treat every message as this protocol ("+strings.Join(models.Names(), ", ")+")")
	fs.StringVar(&profile, "profile", "lenient", "checker profile: lenient or strict")
	f.add(fs, "until")
	f.storage, f.stderr = &a.storage, a.Err
	return cmd
}

func knownModel(name string) (string, bool) {
	for _, n := range models.Names() {
		if n == name {
			return n, true
		}
	}
	return "", false
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
