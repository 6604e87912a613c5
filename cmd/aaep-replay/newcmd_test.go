package main

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/aaep-tools/aaepkit/internal/cli"
)

// cmdCase is one row of a Test_NewCmdXxx table: a command line, and either
// the options the verb is run with or the usage error it gets.
type cmdCase[O any] struct {
	name string
	// argv is the command line after "aaep-replay", split on spaces.
	argv string
	// want edits the table's default options into those argv should give;
	// nil with err set.
	want func(o *O)
	// err is the exact error text of a usage error (exit 2).
	err string
}

// parseCmd runs argv through aaep-replay's root holding the one verb
// newCmd builds, as Main runs it (the --input forms rewritten first, the
// error mapped to an exit code), with runF capturing the verb's options
// instead of running the verb. got is nil when runF was not reached.
func parseCmd[O any](t *testing.T, newCmd func(*app, func(*O) error) *cobra.Command, argv string) (a *app, got *O, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	a = &app{Streams: cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, ctx: context.Background()}
	root := newRoot(a, newCmd(a, func(o *O) error {
		got = o
		return nil
	}))
	root.SetArgs(normalizeArgs(strings.Fields(argv)))
	root.SetIn(a.In)
	root.SetOut(&out)
	root.SetErr(&errb)
	return a, got, cli.Execute(context.Background(), root)
}

// testNewCmd runs a Test_NewCmdXxx table: defaults gives the options of
// the verb's command line when no flag is set (with a, the shared app), each
// case's want edits them, and the options captured must equal the result
// exactly; an error case must fail with exactly its text and exit code 2,
// without running the verb.
func testNewCmd[O any](t *testing.T, newCmd func(*app, func(*O) error) *cobra.Command, defaults func(a *app) O, cases []cmdCase[O]) {
	t.Helper()
	verb := newCmd(&app{}, nil).Name()
	names := map[string]bool{}
	for _, tc := range cases {
		if tc.err == "" {
			tested[verb] = append(tested[verb], tc.argv)
		}
		if names[tc.name] {
			t.Fatalf("two cases named %q", tc.name)
		}
		names[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			a, got, err := parseCmd(t, newCmd, tc.argv)
			if tc.err != "" {
				if err == nil {
					t.Fatalf("%q: no error, want %q", tc.argv, tc.err)
				}
				if err.Error() != tc.err {
					t.Errorf("%q: error\n\t%s\nwant\n\t%s", tc.argv, err, tc.err)
				}
				if code := cli.Code(err); code != cli.ExitUsage {
					t.Errorf("%q: exit code %d, want %d", tc.argv, code, cli.ExitUsage)
				}
				if got != nil {
					t.Errorf("%q: the verb ran after a usage error", tc.argv)
				}
				return
			}
			if err != nil {
				t.Fatalf("%q: %v", tc.argv, err)
			}
			if got == nil {
				t.Fatalf("%q: the verb did not run", tc.argv)
			}
			want := defaults(a)
			if tc.want != nil {
				tc.want(&want)
			}
			if !reflect.DeepEqual(*got, want) {
				t.Errorf("%q: options\n\t%+v\nwant\n\t%+v", tc.argv, *got, want)
			}
		})
	}
}

// tested holds the command lines that the Test_NewCmdXxx tables run so far
// parsed into options, by verb.
var tested = map[string][]string{}

// TestEveryFlagInATable: every verb has a Test_NewCmdXxx table, and every
// flag of every verb (long and short form) is on one of its command lines
// that parse (so the options it gives are checked).
func TestEveryFlagInATable(t *testing.T) {
	for _, table := range []func(*testing.T){
		Test_NewCmdCheck, Test_NewCmdCut, Test_NewCmdDedupe, Test_NewCmdDiff, Test_NewCmdExport, Test_NewCmdFilter,
		Test_NewCmdImport, Test_NewCmdInfo, Test_NewCmdMerge, Test_NewCmdPush, Test_NewCmdRepair,
		Test_NewCmdServe, Test_NewCmdShow, Test_NewCmdSplit, Test_NewCmdTest, Test_NewCmdView, Test_NewCmdVisualize,
	} {
		table(t)
	}
	root := newRootCmd(&app{})
	for _, c := range root.Commands() {
		argvs, ok := tested[c.Name()]
		if !ok {
			t.Errorf("%s has no Test_NewCmd table", c.Name())
			continue
		}
		var words []string
		for _, argv := range argvs {
			words = append(words, strings.Fields(argv)...)
		}
		given := func(flag string) bool {
			for _, w := range words {
				if w == flag || strings.HasPrefix(w, flag+"=") {
					return true
				}
			}
			return false
		}
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Name == "help" {
				return
			}
			if !given("--" + f.Name) {
				t.Errorf("%s --%s is in no command line of its Test_NewCmd table", c.Name(), f.Name)
			}
			if f.Shorthand != "" && !given("-"+f.Shorthand) {
				t.Errorf("%s -%s is in no command line of its Test_NewCmd table", c.Name(), f.Shorthand)
			}
		})
	}
}
