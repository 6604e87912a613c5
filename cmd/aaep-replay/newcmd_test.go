package main

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/cobra"

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
	names := map[string]bool{}
	for _, tc := range cases {
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
