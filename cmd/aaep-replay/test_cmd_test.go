package main

import (
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/internal/subtest"
	"github.com/aaep-tools/aaepkit/protocol"
)

func Test_NewCmdTest(t *testing.T) {
	defaults := func(a *app) TestOptions {
		return TestOptions{app: a, Scenarios: []string{"confirmation-default-reject"}, Listen: defaultTestListen, AttachTimeout: subtest.DefaultAttachTimeout, Check: checkFlags{Profile: "lenient"},
			FailOn: "must", Threshold: protocol.Must, SSEEvent: "recorded"}
	}
	const sc = "--scenario confirmation-default-reject"
	cases := []cmdCase[TestOptions]{
		{name: "defaults", argv: "test " + sc},
		{name: "files", argv: "test a.yaml b.yaml", want: func(o *TestOptions) { o.Files, o.Scenarios = []string{"a.yaml", "b.yaml"}, nil }},
		{name: "level", argv: "test --level 2", want: func(o *TestOptions) { o.Scenarios, o.Levels = nil, []int{2} }},
		{name: "two levels", argv: "test --level 1 --level 2", want: func(o *TestOptions) { o.Scenarios, o.Levels = nil, []int{1, 2} }},
		{name: "two scenarios", argv: "test " + sc + " --scenario clarification", want: func(o *TestOptions) {
			o.Scenarios = append(o.Scenarios, "clarification")
		}},
		{name: "list", argv: "test --list", want: func(o *TestOptions) { o.Scenarios, o.List = nil, true }},
		{name: "list a level as JSON", argv: "test --list --level 3 --json", want: func(o *TestOptions) { o.Scenarios, o.List, o.Levels, o.JSON = nil, true, []int{3}, true }},
		{name: "listen", argv: "test " + sc + " --listen 127.0.0.1:9000", want: func(o *TestOptions) { o.Listen = "127.0.0.1:9000" }},
		{name: "to", argv: "test " + sc + " --to ws://127.0.0.1:9000/aaep", want: func(o *TestOptions) { o.To = "ws://127.0.0.1:9000/aaep" }},
		{name: "exec", argv: "test " + sc + " --exec ./sub.sh{url}", want: func(o *TestOptions) { o.Exec = "./sub.sh{url}" }},
		{name: "grpc", argv: "test " + sc + " --transport grpc --exec ./sub.sh{url}", want: func(o *TestOptions) { o.Transport, o.Exec = "grpc", "./sub.sh{url}" }},
		{name: "websocket", argv: "test " + sc + " --transport websocket", want: func(o *TestOptions) { o.Transport = "websocket" }},
		{name: "sse", argv: "test " + sc + " --transport sse", want: func(o *TestOptions) { o.Transport = "sse" }},
		{name: "sse with to", argv: "test " + sc + " --transport sse --to ws://x/", err: "--to dials a WebSocket subscriber: not with --transport sse"},
		{name: "attach timeout", argv: "test " + sc + " --attach-timeout 3s", want: func(o *TestOptions) { o.AttachTimeout = 3 * time.Second }},
		{name: "reports", argv: "test " + sc + " --json --junit out.xml", want: func(o *TestOptions) { o.JSON, o.JUnit = true, "out.xml" }},
		{name: "strict", argv: "test " + sc + " --profile strict", want: func(o *TestOptions) { o.Check.Profile = "strict" }},
		{name: "bad profile", argv: "test " + sc + " --profile loose", err: `--profile: unknown profile "loose" (want strict or lenient)`},
		{name: "fail on should", argv: "test " + sc + " --fail-on SHOULD", want: func(o *TestOptions) { o.FailOn, o.Threshold = "SHOULD", protocol.Should }},
		{name: "bad fail-on", argv: "test " + sc + " --fail-on sometimes", err: `--fail-on: unknown level "sometimes" (want must, should, info or never)`},
		{name: "require evidence", argv: "test " + sc + " --require-evidence", want: func(o *TestOptions) { o.RequireEvidence = true }},
		{name: "unnamed SSE events", argv: "test " + sc + " --sse-event none", want: func(o *TestOptions) { o.SSEEvent = "none" }},
		{name: "page", argv: "test " + sc + " --page http://localhost:5173/?aaep={url}", want: func(o *TestOptions) { o.Page = "http://localhost:5173/?aaep={url}" }},
		{name: "announcements", argv: "test " + sc + " --exec ./sub.sh{url} --announcements", want: func(o *TestOptions) { o.Exec, o.Announcements = "./sub.sh{url}", true }},
		{name: "page and exec", argv: "test " + sc + " --page http://x/{url} --exec a{url}", err: "--page opens the subscriber: not with --to or --exec"},
		{name: "page not a URL", argv: "test " + sc + " --page index.html{url}", err: `--page "index.html{url}": want an http://, https:// or file:// URL`},
		{name: "page without url", argv: "test " + sc + " --page http://x/", err: `--page "http://x/": put {url} where the page takes the replay's URL`},
		{name: "page over grpc", argv: "test " + sc + " --page http://x/{url} --transport grpc", err: "--page opens a web subscriber: not with --transport grpc"},
		{name: "announcements without exec", argv: "test " + sc + " --announcements", err: "--announcements is for an --exec subscriber (it writes them to descriptor 3; --page hears a page's own)"},
		{name: "record", argv: "test " + sc + " --record run.aaep --force", want: func(o *TestOptions) { o.Record, o.Force = "run.aaep", true }},

		{name: "nothing to play", argv: "test", err: "test needs a SCENARIO file, --scenario NAME or --level N (see aaep-replay test --list)"},
		{name: "bad level", argv: "test --level 4", err: "--level 4: want 1, 2 or 3"},
		{name: "list with a scenario", argv: "test --list " + sc, err: "--list shows the built-in scenarios: no SCENARIO or --scenario with it"},
		{name: "to and exec", argv: "test " + sc + " --to ws://x/ --exec a{url}", err: "--to and --exec exclude each other"},
		{name: "to and listen", argv: "test " + sc + " --to ws://x/ --listen 127.0.0.1:1", err: "--listen and --to exclude each other"},
		{name: "http target", argv: "test " + sc + " --to http://x", err: `--to "http://x": want a ws:// or wss:// URL`},
		{name: "exec without url", argv: "test " + sc + " --exec ./sub.sh", err: `--exec "./sub.sh": put {url} where the subscriber takes the replay's URL`},
		{name: "grpc with to", argv: "test " + sc + " --transport grpc --to ws://x/", err: "--to dials a WebSocket subscriber: not with --transport grpc"},
		{name: "bad transport", argv: "test " + sc + " --transport carrier-pigeon", err: `--transport "carrier-pigeon": want sse, websocket or grpc (by default the way the subscriber attaches tells)`},
		{name: "zero attach timeout", argv: "test " + sc + " --attach-timeout 0", err: `invalid argument "0" for "--attach-timeout" flag: want a positive duration such as 500ms or 2s`},
	}
	testNewCmd(t, NewCmdTest, defaults, cases)
}
