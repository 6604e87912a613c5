package main

import (
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/protocol"
	"github.com/aaep-tools/aaepkit/protocol/check"
	"github.com/aaep-tools/aaepkit/protocol/models"
)

// checkFlags are the checker's flags, declared once for every verb that
// checks (check, show, view, visualize, test): which protocol to force,
// which profile reads the specification, which rules to leave out.
type checkFlags struct {
	Protocol string
	Profile  protocol.Profile
	Disable  []string
}

// The checker's flags, by name (add's arguments).
const (
	flagProtocol = "protocol"
	flagProfile  = "profile"
	flagDisable  = "disable"
)

// add declares the flags named (every flag of the group when none is) on fs.
func (c *checkFlags) add(fs *pflag.FlagSet, names ...string) {
	has := func(name string) bool { return len(names) == 0 || slices.Contains(names, name) }
	if has(flagProtocol) {
		fs.StringVar(&c.Protocol, flagProtocol, "", "treat every message as this protocol ("+strings.Join(models.Names(), ", ")+") instead of recognising each")
	}
	if has(flagProfile) {
		c.Profile = protocol.Lenient
		fs.Var((*profileValue)(&c.Profile), flagProfile, "how to read a specification where it contradicts itself: lenient or strict")
	}
	if has(flagDisable) {
		fs.StringSliceVar(&c.Disable, flagDisable, nil, "rule IDs not to report (repeatable, comma-separated)")
	}
}

// config is the analysis driver's configuration the flags ask for.
func (c *checkFlags) config() check.Config {
	return check.Config{Models: models.All, Protocol: c.Protocol, Options: protocol.Options{Profile: c.Profile, Disabled: c.Disable}}
}

// validate refuses what no engine accepts (an unknown profile, protocol or
// rule): a usage error naming the flag, before anything is read.
func (c *checkFlags) validate() error {
	for _, f := range []struct {
		name  string
		flags checkFlags
	}{
		{flagProfile, checkFlags{Profile: c.Profile}},
		{flagProtocol, checkFlags{Protocol: c.Protocol}},
		{flagDisable, checkFlags{Disable: c.Disable}},
	} {
		if err := f.flags.config().Validate(); err != nil {
			return cli.Usagef("--%s: %w", f.name, err)
		}
	}
	return nil
}

// profileValue is --profile: any word is taken when parsed (check --rules
// ignores the checker's flags) and refused by validate.
type profileValue protocol.Profile

func (p *profileValue) String() string     { return string(*p) }
func (p *profileValue) Set(s string) error { *p = profileValue(s); return nil }
func (p *profileValue) Type() string       { return "string" }
