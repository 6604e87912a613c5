package main

import (
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/timing"
)

// replayCases are the cases of the flags serve, push and view share
// (replayFlags): verb and rest make the command line around them, replay
// finds them in the verb's options.
func replayCases[O any](verb, rest string, replay func(*O) *replayFlags) []cmdCase[O] {
	with := func(edit func(f *replayFlags)) func(*O) { return func(o *O) { edit(replay(o)) } }
	argv := func(flags string) string { return verb + " in.aaep " + rest + " " + flags }
	return []cmdCase[O]{
		{name: "speed", argv: argv("--speed 4"), want: with(func(f *replayFlags) { f.speed = 4 })},
		{name: "slowest speed", argv: argv("--speed 0.01"), want: with(func(f *replayFlags) { f.speed = 0.01 })},
		{name: "fastest speed", argv: argv("--speed 1000"), want: with(func(f *replayFlags) { f.speed = 1000 })},
		{name: "no-delay", argv: argv("--no-delay"), want: with(func(f *replayFlags) { f.noDelay = true })},
		{name: "max-idle", argv: argv("--max-idle 2s"), want: with(func(f *replayFlags) { f.maxIdle = 2 * time.Second })},
		{name: "max-idle 0 is no cap", argv: argv("--max-idle 0"), want: with(func(f *replayFlags) { f.maxIdle = 0 })},
		{name: "precise", argv: argv("--precise"), want: with(func(f *replayFlags) { f.precise = true })},
		{name: "from a time", argv: argv("--from 1m30s"), want: with(func(f *replayFlags) {
			f.from, f.fromPos = "1m30s", timing.Position{Set: true, Time: 90 * time.Second}
		})},
		{name: "from a clock time", argv: argv("--from 1:30"), want: with(func(f *replayFlags) {
			f.from, f.fromPos = "1:30", timing.Position{Set: true, Time: 90 * time.Second}
		})},
		{name: "until a record", argv: argv("--until #400"), want: with(func(f *replayFlags) {
			f.to, f.toPos = "#400", timing.Position{Set: true, ByIndex: true, Index: 400}
		})},
		{name: "until a bare record number", argv: argv("--until=120"), want: with(func(f *replayFlags) {
			f.to, f.toPos = "120", timing.Position{Set: true, ByIndex: true, Index: 120}
		})},
		{name: "until, old spelling", argv: argv("--to #40"), want: with(func(f *replayFlags) {
			f.to, f.toPos = "#40", timing.Position{Set: true, ByIndex: true, Index: 40}
		})},
		{name: "sessions", argv: argv("--session s1,s2 --session s3"), want: with(func(f *replayFlags) { f.sessions = []string{"s1", "s2", "s3"} })},
		{name: "types", argv: argv("--type tool.invoked --type aaep:agent.state.changed"), want: with(func(f *replayFlags) {
			f.types = []string{"tool.invoked", "aaep:agent.state.changed"}
		})},
		{name: "types, old spelling", argv: argv("--filter-type tool.invoked"), want: with(func(f *replayFlags) { f.types = []string{"tool.invoked"} })},
		{name: "sessions, old spelling", argv: argv("--filter-session s1"), want: with(func(f *replayFlags) { f.sessions = []string{"s1"} })},
		{name: "loop forever", argv: argv("--loop 0"), want: with(func(f *replayFlags) { f.loop = 0 })},
		{name: "loop thrice", argv: argv("--loop 3"), want: with(func(f *replayFlags) { f.loop = 3 })},
		{name: "record", argv: argv("--record run.aaep --force"), want: with(func(f *replayFlags) { f.record, f.force = "run.aaep", true })},
		{name: "json", argv: argv("--json"), want: with(func(f *replayFlags) { f.json = true })},

		{name: "speed zero", argv: argv("--speed 0"), err: `invalid argument "0" for "--speed" flag: want a number from 0.01 to 1000`},
		{name: "speed too high", argv: argv("--speed 5000"), err: `invalid argument "5000" for "--speed" flag: want a number from 0.01 to 1000`},
		{name: "speed NaN", argv: argv("--speed NaN"), err: `invalid argument "NaN" for "--speed" flag: want a number from 0.01 to 1000`},
		{name: "speed Inf", argv: argv("--speed +Inf"), err: `invalid argument "+Inf" for "--speed" flag: want a number from 0.01 to 1000`},
		{name: "speed not a number", argv: argv("--speed fast"), err: `invalid argument "fast" for "--speed" flag: not a number; want a number from 0.01 to 1000`},
		{name: "negative max-idle", argv: argv("--max-idle -2s"), err: `invalid argument "-2s" for "--max-idle" flag: want 0 (no cap) or a positive duration such as 500ms or 2s`},
		{name: "max-idle without unit", argv: argv("--max-idle 5"), err: `invalid argument "5" for "--max-idle" flag: not a duration; want 0 (no cap) or a positive duration such as 500ms or 2s`},
		{name: "negative loop", argv: argv("--loop -1"), err: `invalid argument "-1" for "--loop" flag: want 0 (forever) or a positive whole number`},
		{name: "fractional loop", argv: argv("--loop 1.5"), err: `invalid argument "1.5" for "--loop" flag: not a whole number; want 0 (forever) or a positive whole number`},
		{name: "bad from", argv: argv("--from soon"), err: `--from: bad position "soon": want a time offset such as 1m30s or 1:30, or a record number such as #120`},
		{name: "bad until", argv: argv("--until #x"), err: `--until: bad position "#x": want a record number such as #120`},
		{name: "two spellings of until", argv: argv("--until #5 --to #60"), err: "--until and --to are two spellings of one flag: give one of them"},
		{name: "no-delay with a speed", argv: argv("--no-delay --speed 2"), err: "--no-delay sends every event at once, so --speed 2 means nothing with it: give one of them"},
		{name: "bad until, old spelling", argv: argv("--to -5s"), err: `--until: bad position "-5s": want a time offset such as 1m30s or 1:30, or a record number such as #120`},
	}
}

func Test_NewCmdServe(t *testing.T) {
	defaults := func(a *app) ServeOptions {
		return ServeOptions{app: a, Inputs: []string{"in.aaep"}, Replay: replayFlags{speed: 1, loop: 1},
			Listen: "127.0.0.1:8765", SSEEvent: "recorded", Keepalive: 15 * time.Second}
	}
	cases := []cmdCase[ServeOptions]{
		{name: "defaults", argv: "serve in.aaep"},
		{name: "several inputs", argv: "serve run-1.aaep run-2.aaep dir/", want: func(o *ServeOptions) { o.Inputs = []string{"run-1.aaep", "run-2.aaep", "dir/"} }},
		{name: "the documented --input form", argv: "--input in.aaep --speed 4 --max-idle 2s", want: func(o *ServeOptions) {
			o.Replay.speed, o.Replay.maxIdle = 4, 2*time.Second
		}},
		{name: "the --input= form", argv: "--input=in.aaep --shared", want: func(o *ServeOptions) { o.Shared = true }},
		{name: "listen", argv: "serve in.aaep --listen 0.0.0.0:9000", want: func(o *ServeOptions) { o.Listen = "0.0.0.0:9000" }},
		{name: "grpc", argv: "serve in.aaep --grpc 127.0.0.1:8766", want: func(o *ServeOptions) { o.GRPC = "127.0.0.1:8766" }},
		{name: "grpc over TLS", argv: "serve in.aaep --grpc 127.0.0.1:8766 --grpc-cert s.pem --grpc-key s-key.pem", want: func(o *ServeOptions) {
			o.GRPC, o.GRPCTLS = "127.0.0.1:8766", grpcTLSFlags{Cert: "s.pem", Key: "s-key.pem"}
		}},
		{name: "grpc over mutual TLS", argv: "serve in.aaep --grpc 127.0.0.1:8766 --grpc-cert s.pem --grpc-key s-key.pem --grpc-client-ca ca.pem", want: func(o *ServeOptions) {
			o.GRPC, o.GRPCTLS = "127.0.0.1:8766", grpcTLSFlags{Cert: "s.pem", Key: "s-key.pem", ClientCA: "ca.pem"}
		}},
		{name: "grpc TLS without --grpc", argv: "serve in.aaep --grpc-cert s.pem --grpc-key s-key.pem", err: "--grpc-cert, --grpc-key and --grpc-client-ca configure the gRPC listener: give --grpc ADDR too"},
		{name: "grpc certificate without its key", argv: "serve in.aaep --grpc :1 --grpc-cert s.pem", err: "--grpc-cert needs --grpc-key, its private key"},
		{name: "grpc key without its certificate", argv: "serve in.aaep --grpc :1 --grpc-key s-key.pem", err: "--grpc-key needs --grpc-cert, its certificate"},
		{name: "grpc client CA without TLS", argv: "serve in.aaep --grpc :1 --grpc-client-ca ca.pem", err: "--grpc-client-ca asks for mutual TLS: give the server's --grpc-cert and --grpc-key too"},
		{name: "shared", argv: "serve in.aaep --shared", want: func(o *ServeOptions) { o.Shared = true }},
		{name: "control and paused", argv: "serve in.aaep --control --paused", want: func(o *ServeOptions) { o.Control, o.Paused = true, true }},
		{name: "sse-event none", argv: "serve in.aaep --sse-event none", want: func(o *ServeOptions) { o.SSEEvent = "none" }},
		{name: "sse-event name", argv: "serve in.aaep --sse-event message", want: func(o *ServeOptions) { o.SSEEvent = "message" }},
		{name: "cors origins", argv: "serve in.aaep --cors-origin http://localhost:3000 --cors-origin *", want: func(o *ServeOptions) {
			o.CORSOrigin = []string{"http://localhost:3000", "*"}
		}},
		{name: "allow origins", argv: "serve in.aaep --control --allow-origin http://localhost:3000 --allow-origin https://dash.example", want: func(o *ServeOptions) {
			o.Control, o.AllowOrigin = true, []string{"http://localhost:3000", "https://dash.example"}
		}},
		{name: "keepalive off", argv: "serve in.aaep --keepalive 0", want: func(o *ServeOptions) { o.Keepalive = 0 }},
		{name: "keepalive", argv: "serve in.aaep --keepalive 5s", want: func(o *ServeOptions) { o.Keepalive = 5 * time.Second }},
		{name: "shortest keepalive", argv: "serve in.aaep --keepalive 1s", want: func(o *ServeOptions) { o.Keepalive = time.Second }},
		{name: "close-at-end", argv: "serve in.aaep --close-at-end", want: func(o *ServeOptions) { o.CloseAtEnd = true }},

		{name: "no file", argv: "serve", err: "serve needs the capture FILE to replay (several, a glob or a directory are replayed as one, in time order) (see aaep-replay serve --help)"},
		{name: "--input without a file", argv: "--input", err: "flag needs an argument: --input"},
		{name: "paused without control", argv: "serve in.aaep --paused", err: "--paused goes with --control"},
		{name: "cors origin without scheme", argv: "serve in.aaep --cors-origin localhost:3000", err: `--cors-origin: origin "localhost:3000": want scheme://host[:port], such as http://localhost:3000`},
		{name: "cors origin with a path", argv: "serve in.aaep --cors-origin http://a/b", err: `--cors-origin: origin "http://a/b": want scheme://host[:port], such as http://localhost:3000`},
		{name: "allow origin without scheme", argv: "serve in.aaep --allow-origin localhost:3000", err: `--allow-origin: origin "localhost:3000": want scheme://host[:port], such as http://localhost:3000`},
		{name: "allow origin as a wildcard", argv: "serve in.aaep --allow-origin *", err: `--allow-origin: origin "*": want scheme://host[:port], such as http://localhost:3000`},
		{name: "negative keepalive", argv: "serve in.aaep --keepalive -1s", err: `invalid argument "-1s" for "--keepalive" flag: want 0 (off) or a duration of at least 1s`},
		{name: "keepalive under a second", argv: "serve in.aaep --keepalive 999ms", err: `invalid argument "999ms" for "--keepalive" flag: want 0 (off) or a duration of at least 1s`},
		{name: "keepalive of a nanosecond", argv: "serve in.aaep --keepalive 1ns", err: `invalid argument "1ns" for "--keepalive" flag: want 0 (off) or a duration of at least 1s`},
		{name: "push's target", argv: "serve in.aaep --to ws://x/", err: `--until: bad position "ws://x/": want a clock time [[hh:]mm:]ss[.fraction]`},
		{name: "unknown flag", argv: "serve in.aaep --open", err: "unknown flag: --open"},
	}
	cases = append(cases, replayCases("serve", "", func(o *ServeOptions) *replayFlags { return &o.Replay })...)
	testNewCmd(t, NewCmdServe, defaults, cases)
}

func Test_NewCmdPush(t *testing.T) {
	defaults := func(a *app) PushOptions {
		return PushOptions{app: a, Inputs: []string{"in.aaep"}, To: "ws://127.0.0.1:9000/aaep", Replay: replayFlags{speed: 1, loop: 1}}
	}
	const needs = "push needs the capture FILE to replay (several, a glob or a directory are replayed as one, in time order) (see aaep-replay push --help)"
	cases := []cmdCase[PushOptions]{
		{name: "defaults", argv: "push in.aaep --to ws://127.0.0.1:9000/aaep"},
		{name: "several inputs", argv: "push a.aaep b.aaep --to ws://127.0.0.1:9000/aaep", want: func(o *PushOptions) { o.Inputs = []string{"a.aaep", "b.aaep"} }},
		{name: "wss", argv: "push in.aaep --to=wss://agent.example/aaep", want: func(o *PushOptions) { o.To = "wss://agent.example/aaep" }},
		// --to names the target here; the end of the range is --until.
		{name: "to and until", argv: "push in.aaep --to ws://127.0.0.1:9000/aaep --until 5m", want: func(o *PushOptions) {
			o.Replay.to, o.Replay.toPos = "5m", timing.Position{Set: true, Time: 5 * time.Minute}
		}},

		{name: "no file", argv: "push --to ws://127.0.0.1:9000/aaep", err: needs},
		{name: "no target", argv: "push in.aaep", err: `--to "": want a ws:// or wss:// URL`},
		{name: "http target", argv: "push in.aaep --to http://x", err: `--to "http://x": want a ws:// or wss:// URL`},
		{name: "target without host", argv: "push in.aaep --to ws:///aaep", err: `--to "ws:///aaep": want a ws:// or wss:// URL`},
		{name: "serve's flag", argv: "push in.aaep --to ws://x/ --listen :1", err: "unknown flag: --listen"},
	}
	cases = append(cases, replayCases("push", "--to ws://127.0.0.1:9000/aaep", func(o *PushOptions) *replayFlags { return &o.Replay })...)
	// The old spelling --to is push's target, not the end of the range.
	for i := range cases {
		switch cases[i].name {
		case "bad until, old spelling":
			cases[i] = cmdCase[PushOptions]{name: "--to is the target", argv: "push in.aaep --to ws://127.0.0.1:9000/aaep --to -5s", err: `--to "-5s": want a ws:// or wss:// URL`}
		case "until, old spelling":
			cases[i] = cmdCase[PushOptions]{name: "the last --to is the target", argv: "push in.aaep --to ws://x/ --to ws://127.0.0.1:9000/aaep"}
		case "two spellings of until":
			cases[i] = cmdCase[PushOptions]{name: "--to and --until are two flags", argv: "push in.aaep --until #5 --to #60", err: `--to "#60": want a ws:// or wss:// URL`}
		}
	}
	testNewCmd(t, NewCmdPush, defaults, cases)
}

func Test_NewCmdView(t *testing.T) {
	defaults := func(a *app) ViewOptions {
		return ViewOptions{app: a, Inputs: []string{"in.aaep"}, Replay: replayFlags{speed: 1, loop: 1},
			Listen: "127.0.0.1:8765", Shared: true, Paused: true, Check: checkFlags{Profile: "lenient"}}
	}
	cases := []cmdCase[ViewOptions]{
		{name: "defaults", argv: "view in.aaep"},
		{name: "open", argv: "view in.aaep --open", want: func(o *ViewOptions) { o.Open = true }},
		{name: "follow", argv: "view in.aaep --follow", want: func(o *ViewOptions) { o.Follow = true }},
		{name: "listen", argv: "view in.aaep --listen 127.0.0.1:9000", want: func(o *ViewOptions) { o.Listen = "127.0.0.1:9000" }},
		{name: "grpc", argv: "view in.aaep --grpc 127.0.0.1:8766", want: func(o *ViewOptions) { o.GRPC = "127.0.0.1:8766" }},
		{name: "grpc over mutual TLS", argv: "view in.aaep --grpc 127.0.0.1:8766 --grpc-cert s.pem --grpc-key k.pem --grpc-client-ca ca.pem", want: func(o *ViewOptions) {
			o.GRPC, o.GRPCTLS = "127.0.0.1:8766", grpcTLSFlags{Cert: "s.pem", Key: "k.pem", ClientCA: "ca.pem"}
		}},
		{name: "grpc TLS without --grpc", argv: "view in.aaep --grpc-client-ca ca.pem", err: "--grpc-cert, --grpc-key and --grpc-client-ca configure the gRPC listener: give --grpc ADDR too"},
		{name: "playing at once", argv: "view in.aaep --paused=false", want: func(o *ViewOptions) { o.Paused = false }},
		{name: "not shared", argv: "view in.aaep --shared=false", want: func(o *ViewOptions) { o.Shared = false }},
		{name: "protocol and profile", argv: "view in.aaep --protocol asp --profile strict", want: func(o *ViewOptions) {
			o.Check.Protocol, o.Check.Profile = "asp", "strict"
		}},

		{name: "no file", argv: "view", err: "view needs the capture FILE to explore (see aaep-replay view --help)"},
		{name: "two files (an unquoted glob)", argv: "view a.aaep b.aaep", want: func(o *ViewOptions) { o.Inputs = []string{"a.aaep", "b.aaep"} }},
		{name: "paused without the shared timeline", argv: "view in.aaep --shared=false --paused", err: "--paused needs the shared timeline (--shared)"},
		{name: "unknown protocol", argv: "view in.aaep --protocol mcp", err: `--protocol: unknown protocol "mcp" (known: aaep, asp, kahn, kahn-ci)`},
		{name: "unknown profile", argv: "view in.aaep --profile loose", err: `--profile: unknown profile "loose" (want strict or lenient)`},
		{name: "allow origin", argv: "view in.aaep --allow-origin http://127.0.0.1:3000", want: func(o *ViewOptions) { o.AllowOrigin = []string{"http://127.0.0.1:3000"} }},
		{name: "allow origin with a path", argv: "view in.aaep --allow-origin http://a/b", err: `--allow-origin: origin "http://a/b": want scheme://host[:port], such as http://localhost:3000`},
	}
	cases = append(cases, replayCases("view", "", func(o *ViewOptions) *replayFlags { return &o.Replay })...)
	testNewCmd(t, NewCmdView, defaults, cases)
}
