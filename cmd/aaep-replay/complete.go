package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/cli"
)

// captureExtensions are the file names shell completion offers for FILE
// arguments (directories are always offered).
var captureExtensions = []string{"aaep", "jsonl", "ndjson"}

// addCompletions makes shell completion (aaep-replay completion bash|zsh|
// fish|powershell) offer capture and JSONL files for every verb's FILE
// arguments, and the sessions of the capture named on the command line for
// --session.
func addCompletions(root *cobra.Command) {
	for _, c := range root.Commands() {
		switch c.Name() {
		case "completion", "help":
			continue
		}
		if c.ValidArgsFunction == nil {
			c.ValidArgsFunction = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
				return captureExtensions, cobra.ShellCompDirectiveFilterFileExt
			}
		}
		if c.Flags().Lookup("session") != nil {
			_ = c.RegisterFlagCompletionFunc("session", completeSessions)
		}
		for _, name := range []string{"output", "record"} {
			if c.Flags().Lookup(name) != nil {
				_ = c.RegisterFlagCompletionFunc(name, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
					return captureExtensions, cobra.ShellCompDirectiveFilterFileExt
				})
			}
		}
	}
}

// completeSessions lists the session IDs of the captures among args (from
// their indexes) that start with prefix.
func completeSessions(_ *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	var out []string
	seen := map[string]bool{}
	for _, path := range args {
		r, err := capfile.Open(path)
		if err != nil {
			continue
		}
		if x, err := r.FileIndex(); err == nil && x != nil {
			for _, s := range x.Sessions {
				if strings.HasPrefix(s.ID, prefix) && !seen[s.ID] {
					seen[s.ID] = true
					out = append(out, s.ID)
				}
			}
		}
		r.Close()
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// rootArgs refuses arguments to aaep-replay itself: an unknown verb gets
// cobra's "did you mean" suggestions.
func rootArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := "unknown command " + `"` + args[0] + `"` + " for aaep-replay"
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t")
	}
	return cli.Usagef("%s\nRun 'aaep-replay --help' for the list of commands.", msg)
}
