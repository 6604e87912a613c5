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

// UseVocabulary makes cmd and its subcommands spell their flags as
// Vocabulary says: a flag defined under an old spelling is renamed to the
// new one, and the old spelling is accepted as a hidden alias. A command
// that defines both spellings as different flags (push: --to URL and
// --until POS) keeps both as they are.
func UseVocabulary(cmd *cobra.Command) {
	for _, c := range append([]*cobra.Command{cmd}, cmd.Commands()...) {
		fs := c.Flags()
		skip := map[string]bool{}
		for old, canon := range Vocabulary {
			if fs.Lookup(old) != nil && fs.Lookup(canon) != nil {
				skip[old] = true
			}
		}
		fs.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
			if canon, ok := Vocabulary[name]; ok && !skip[name] {
				return pflag.NormalizedName(canon)
			}
			return pflag.NormalizedName(name)
		})
	}
}
