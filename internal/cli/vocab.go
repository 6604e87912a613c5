package cli

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Vocabulary maps the old spellings of flags to the one spelling every
// command uses for the same meaning. The old spellings keep working,
// hidden: they are not listed in help.
var Vocabulary = map[string]string{
	"filter-type":    "type",    // aaep-capture's and the reference tool's spelling
	"filter-session": "session", // aaep-capture
	"filter-urgency": "urgency", // aaep-capture
	"to":             "until",   // the end of a range (push's --to names its target)
}

// AliasAnnotation marks a hidden flag that is an old spelling of another
// (Vocabulary); its value is the flag's name.
const AliasAnnotation = "vocabulary-alias-of"

// UseVocabulary makes cmd and its subcommands accept the old spellings of
// their flags (Vocabulary): each old spelling is a hidden flag that sets the
// flag of the new spelling, not listed in help. A command that defines both
// spellings as different flags (push: --to URL and --until POS) keeps both
// as they are. Both spellings of one flag on one command line are a usage
// error (the last would silently win): --until #5 --to #60.
func UseVocabulary(cmd *cobra.Command) {
	for _, c := range append([]*cobra.Command{cmd}, cmd.Commands()...) {
		fs := c.Flags()
		var pairs [][2]string
		for old, canon := range Vocabulary {
			f := fs.Lookup(canon)
			if f == nil || fs.Lookup(old) != nil {
				continue
			}
			fs.AddFlag(&pflag.Flag{
				Name: old, Usage: "old spelling of --" + canon, Value: f.Value, DefValue: f.DefValue,
				NoOptDefVal: f.NoOptDefVal, Hidden: true,
				Annotations: map[string][]string{AliasAnnotation: {canon}},
			})
			pairs = append(pairs, [2]string{old, canon})
		}
		if len(pairs) == 0 {
			continue
		}
		prevE, prev := c.PreRunE, c.PreRun
		c.PreRunE = func(cmd *cobra.Command, args []string) error {
			for _, p := range pairs {
				if cmd.Flags().Changed(p[0]) && cmd.Flags().Changed(p[1]) {
					return Usagef("--%s and --%s are two spellings of one flag: give one of them", p[1], p[0])
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
