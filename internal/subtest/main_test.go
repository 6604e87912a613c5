package subtest

import (
	"flag"
	"os"
	"testing"
)

// TestMain lets more runs wait side by side than there are cores, unless
// -parallel says otherwise: a run spends its time waiting on the replay's
// pace and the subscriber's delays, not computing.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", "6")
	}
	os.Exit(m.Run())
}
