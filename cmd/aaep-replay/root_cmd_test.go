package main

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/objstore"
)

// Test_NewCmdRoot covers what the root adds to every verb: -q and the
// object storage flags (into the app the verbs share), the documented
// --input forms (serve, or visualize with --visualize), and its usage
// errors.
func Test_NewCmdRoot(t *testing.T) {
	type ran struct {
		verb   string
		inputs []string
		quiet  bool
		store  objstore.Options
		// what the verb's own flags say it was asked
		speed  float64
		output string
	}
	for _, tc := range []struct {
		name string
		argv string
		want ran
		err  string
	}{
		{name: "quiet before the verb", argv: "-q serve in.aaep", want: ran{verb: "serve", inputs: []string{"in.aaep"}, quiet: true, speed: 1}},
		{name: "quiet after the verb", argv: "visualize in.aaep --quiet", want: ran{verb: "visualize", inputs: []string{"in.aaep"}, quiet: true}},
		{name: "object storage", argv: "--s3-endpoint http://127.0.0.1:9000 --s3-path-style serve s3://b/k.aaep", want: ran{
			verb: "serve", inputs: []string{"s3://b/k.aaep"}, store: objstore.Options{Endpoint: "http://127.0.0.1:9000", PathStyle: true}, speed: 1,
		}},
		{name: "unsigned object storage", argv: "visualize s3://b/k.aaep --s3-no-sign", want: ran{
			verb: "visualize", inputs: []string{"s3://b/k.aaep"}, store: objstore.Options{Anonymous: true},
		}},
		{name: "--input serves", argv: "--input in.aaep", want: ran{verb: "serve", inputs: []string{"in.aaep"}, speed: 1}},
		{name: "--input= serves, with serve's flags", argv: "--input=in.aaep --speed 4", want: ran{verb: "serve", inputs: []string{"in.aaep"}, speed: 4}},
		{name: "--input --visualize draws", argv: "--input in.aaep --visualize", want: ran{verb: "visualize", inputs: []string{"in.aaep"}}},
		{name: "--visualize first", argv: "--visualize -q --input in.aaep --output t.svg", want: ran{verb: "visualize", inputs: []string{"in.aaep"}, quiet: true, output: "t.svg"}},
		{name: "--visualize=true", argv: "--input in.aaep --visualize=true", want: ran{verb: "visualize", inputs: []string{"in.aaep"}}},
		{name: "--visualize=false serves", argv: "--input in.aaep --visualize=false", want: ran{verb: "serve", inputs: []string{"in.aaep"}, speed: 1}},
		{name: "a verb first is left alone", argv: "serve --input", err: "unknown flag: --input"},

		{name: "--visualize alone", argv: "--visualize", err: "--visualize needs --input FILE (or: aaep-replay visualize FILE)"},
		{name: "--input without a value", argv: "--input", err: "flag needs an argument: --input"},
		{name: "unknown verb", argv: "serv in.aaep", err: "unknown command \"serv\" for aaep-replay\n\nDid you mean this?\n\tserve\nRun 'aaep-replay --help' for the list of commands."},
		{name: "unknown root flag", argv: "--speed 2", err: "unknown flag: --speed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			a := &app{Streams: cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, ctx: context.Background()}
			var got *ran
			root := newRoot(a,
				NewCmdServe(a, func(o *ServeOptions) error {
					got = &ran{verb: "serve", inputs: o.Inputs, quiet: o.quiet, store: o.storage, speed: o.Replay.speed}
					return nil
				}),
				NewCmdVisualize(a, func(o *VisualizeOptions) error {
					got = &ran{verb: "visualize", inputs: o.Inputs, quiet: o.quiet, store: o.storage, output: o.Output}
					return nil
				}))
			root.SetArgs(normalizeArgs(strings.Fields(tc.argv)))
			root.SetOut(&out)
			root.SetErr(&errb)
			err := cli.Execute(context.Background(), root)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err || cli.Code(err) != cli.ExitUsage || got != nil {
					t.Fatalf("%q: error %v (exit %d), ran %+v; want %q, exit 2", tc.argv, err, cli.Code(err), got, tc.err)
				}
				return
			}
			if err != nil || got == nil {
				t.Fatalf("%q: error %v, ran %+v", tc.argv, err, got)
			}
			// Object storage's warnings go to the command's stderr.
			if got.store.Warnf == nil {
				t.Errorf("%q: no warnings of object storage", tc.argv)
			}
			got.store.Warnf = nil
			if !reflect.DeepEqual(*got, tc.want) {
				t.Errorf("%q ran\n\t%+v\nwant\n\t%+v", tc.argv, *got, tc.want)
			}
		})
	}
}

// TestRootBuildsEveryVerb: the root holds every verb, each built by its
// own NewCmdXxx, and nothing else but cobra's help and completion.
func TestRootBuildsEveryVerb(t *testing.T) {
	root := newRootCmd(&app{Streams: cli.Streams{}})
	var names []string
	for _, c := range root.Commands() {
		names = append(names, c.Name())
	}
	want := []string{"check", "cut", "dedupe", "diff", "export", "filter", "import", "info", "merge", "push", "repair", "serve", "show", "split", "test", "view", "visualize"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("verbs %q, want %q", names, want)
	}
}
