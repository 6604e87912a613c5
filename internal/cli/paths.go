package cli

import "github.com/spf13/cobra"

// PathFlags are the flags that name a file, a directory or an object:
// given, they may not be empty.
var PathFlags = []string{"output", "record", "junit", "state", "spool", "drain-spool", "cacert", "cert", "key", "subscribe-file"}

// RefuseEmptyPaths makes an empty value given to one of cmd's (and its
// subcommands') path flags a usage error (exit 2): an empty -o named no file,
// and was read as if -o had not been given (export wrote to standard
// output, others chose a default name).
func RefuseEmptyPaths(cmd *cobra.Command, names ...string) {
	for _, c := range append([]*cobra.Command{cmd}, cmd.Commands()...) {
		var present []string
		for _, n := range names {
			if c.Flags().Lookup(n) != nil {
				present = append(present, n)
			}
		}
		if len(present) == 0 {
			continue
		}
		prevE, prev := c.PreRunE, c.PreRun
		c.PreRun = nil
		c.PreRunE = func(cmd *cobra.Command, args []string) error {
			for _, n := range present {
				if f := cmd.Flags().Lookup(n); f != nil && f.Changed && f.Value.String() == "" {
					return Usagef("--%s '': an empty name names no file", n)
				}
			}
			switch {
			case prevE != nil:
				return prevE(cmd, args)
			case prev != nil:
				prev(cmd, args)
			}
			return nil
		}
	}
}
