package capturecmd

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/aaep-tools/aaepkit/internal/cli"
)

// TestEveryNumericFlagChecked: every numeric flag of aaep-capture is
// declared through internal/numflag, and refuses NaN and infinities.
func TestEveryNumericFlagChecked(t *testing.T) {
	cmd := newCaptureCmd(context.Background(), cli.Streams{}, nil)
	checked := 0
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		switch f.Value.Type() {
		case "float", "float64", "int", "int32", "int64", "uint", "uint64", "duration":
		default:
			return
		}
		if typ := fmt.Sprintf("%T", f.Value); !strings.HasPrefix(typ, "*numflag.") {
			t.Errorf("--%s is a %s, not declared through internal/numflag", f.Name, typ)
			return
		}
		checked++
		for _, bad := range []string{"NaN", "Inf", "-Inf"} {
			if err := f.Value.Set(bad); err == nil {
				t.Errorf("--%s accepts %q", f.Name, bad)
			}
		}
	})
	if checked < 7 {
		t.Errorf("only %d numeric flags found", checked)
	}
}
