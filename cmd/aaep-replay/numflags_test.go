package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/aaep-tools/aaepkit/internal/cli"
)

// TestEveryNumericFlagChecked: every numeric flag of every verb is declared
// through internal/numflag (so NaN, infinities and out-of-bound values are
// refused as they are parsed, the same way everywhere), and refuses NaN.
func TestEveryNumericFlagChecked(t *testing.T) {
	root := newRootCmd(&app{Streams: cli.Streams{}})
	checked := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			switch f.Value.Type() {
			case "float", "float32", "float64", "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "duration":
			default:
				return
			}
			name := c.Name() + " --" + f.Name
			if typ := fmt.Sprintf("%T", f.Value); !strings.HasPrefix(typ, "*numflag.") {
				t.Errorf("%s is a %s, not declared through internal/numflag", name, typ)
				return
			}
			checked++
			for _, bad := range []string{"NaN", "Inf", "-Inf", "1e400"} {
				if err := f.Value.Set(bad); err == nil {
					t.Errorf("%s accepts %q", name, bad)
				}
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if checked < 10 {
		t.Errorf("only %d numeric flags found", checked)
	}
}
