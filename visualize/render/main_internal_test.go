package render

import (
	"bytes"
	"strings"
	"testing"
)

func TestRunInputLimit(t *testing.T) {
	tests := []struct {
		name  string
		input string
		code  int
		want  string
	}{
		{"at the limit", "digraph { a }", 0, ""},
		{"over the limit", "digraph { a  }", 2, "dot input larger than 13 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(nil, strings.NewReader(tt.input), &out, &errOut, len("digraph { a }"))
			if code != tt.code || !strings.Contains(errOut.String(), tt.want) {
				t.Errorf("run = %d, stderr %q; want %d and %q", code, errOut.String(), tt.code, tt.want)
			}
		})
	}
}

func TestRunVersion(t *testing.T) {
	for _, arg := range []string{"--version", "-v"} {
		var out, errOut strings.Builder
		if code := run([]string{arg}, strings.NewReader(""), &out, &errOut, MaxDOT); code != 0 || !strings.HasPrefix(out.String(), "aaep-render version "+Version) {
			t.Errorf("%s: exit %d, %q %q", arg, code, out.String(), errOut.String())
		}
	}
}
