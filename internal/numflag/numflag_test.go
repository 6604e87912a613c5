package numflag_test

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/aaep-tools/aaepkit/internal/numflag"
)

func TestFlags(t *testing.T) {
	type vars struct {
		speed float64
		loop  int
		max   int64
		idle  time.Duration
		flush time.Duration
		keep  time.Duration
	}
	newSet := func(v *vars) *pflag.FlagSet {
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		fs.SetOutput(&strings.Builder{})
		numflag.Float(fs, &v.speed, "speed", 1, numflag.Between(0.01, 1000), "")
		numflag.Int(fs, &v.loop, "loop", 1, numflag.NonNegative("forever"), "")
		numflag.Int64(fs, &v.max, "max-events", 0, numflag.NonNegative("no limit"), "")
		numflag.Duration(fs, &v.idle, "max-idle", 0, numflag.NonNegative("no cap"), "")
		numflag.Duration(fs, &v.flush, "flush-interval", 100*time.Millisecond, numflag.Positive(), "")
		numflag.Duration(fs, &v.keep, "keepalive", 15*time.Second, numflag.ZeroOrAtLeast(float64(time.Second), "off"), "")
		return fs
	}
	cases := []struct {
		arg  string
		want string // error substring; "" for success
	}{
		{"--speed=2", ""},
		{"--speed=0.01", ""},
		{"--speed=NaN", "want a number from 0.01 to 1000"},
		{"--speed=nan", "want a number from 0.01 to 1000"},
		{"--speed=Inf", "want a number from 0.01 to 1000"},
		{"--speed=-Inf", "want a number from 0.01 to 1000"},
		{"--speed=0", "want a number from 0.01 to 1000"},
		{"--speed=-1", "want a number from 0.01 to 1000"},
		{"--speed=1e9", "want a number from 0.01 to 1000"},
		{"--speed=fast", "not a number"},
		{"--loop=0", ""},
		{"--loop=-1", "want 0 (forever) or a positive whole number"},
		{"--loop=1.5", "not a whole number"},
		{"--max-events=-5", "want 0 (no limit) or a positive whole number"},
		{"--max-events=99999999999999999999", "not a whole number"},
		{"--max-idle=0", ""},
		{"--max-idle=-1s", "0 (no cap) or a positive duration"},
		{"--flush-interval=0", "a positive duration"},
		{"--flush-interval=-1ms", "a positive duration"},
		{"--flush-interval=soon", "not a duration"},
		{"--flush-interval=50ms", ""},
		{"--keepalive=0", ""},
		{"--keepalive=1s", ""},
		{"--keepalive=1h", ""},
		{"--keepalive=999ms", "want 0 (off) or a duration of at least 1s"},
		{"--keepalive=1ns", "want 0 (off) or a duration of at least 1s"},
		{"--keepalive=-1s", "want 0 (off) or a duration of at least 1s"},
	}
	for _, c := range cases {
		var v vars
		fs := newSet(&v)
		err := fs.Parse([]string{c.arg})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.arg, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one containing %q", c.arg, err, c.want)
		}
	}
	var v vars
	fs := newSet(&v)
	if err := fs.Parse([]string{"--speed", "2.5", "--loop", "3", "--max-events", "7", "--max-idle", "2s", "--flush-interval", "10ms"}); err != nil {
		t.Fatal(err)
	}
	if v.speed != 2.5 || v.loop != 3 || v.max != 7 || v.idle != 2*time.Second || v.flush != 10*time.Millisecond {
		t.Errorf("parsed %+v", v)
	}
	// Defaults show in help as before.
	if d := fs.Lookup("flush-interval").DefValue; d != "100ms" {
		t.Errorf("default shown as %q", d)
	}
	if d := fs.Lookup("speed").DefValue; d != "1" {
		t.Errorf("default shown as %q", d)
	}
}
