package cli

import (
	"strings"

	"github.com/spf13/cobra"
)

// StrictCompletion makes the completion command of root (cobra's, made now
// as cobra would make it for args) refuse a shell it does not know: cobra's
// own prints its help and exits 0 for `completion tcsh`, as if a script had
// been written. Without a shell it still prints its help.
func StrictCompletion(root *cobra.Command, args []string) {
	root.InitDefaultCompletionCmd(args...)
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		var shells []string
		for _, s := range c.Commands() {
			shells = append(shells, s.Name())
		}
		c.Args = func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return Usagef("completion %q: not a shell completion is written for (want %s)", args[0], strings.Join(shells, ", "))
			}
			return nil
		}
		c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	}
}
