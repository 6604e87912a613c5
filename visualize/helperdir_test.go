package visualize

import (
	"errors"
	"testing"
)

// TestHelperError: a helper that crashed is reported by its panic's line,
// without the goroutine trace.
func TestHelperError(t *testing.T) {
	stderr := "panic: open /tmp/go-graphviz/wazero-x: permission denied\n\ngoroutine 1 [running]:\ngithub.com/goccy/go-graphviz/internal/wasm.init.0()\n"
	if got, want := helperError(stderr, errors.New("exit status 2")), "the helper crashed: panic: open /tmp/go-graphviz/wazero-x: permission denied"; got != want {
		t.Errorf("helperError = %q, want %q", got, want)
	}
	if got := helperError("aaep-render: parse dot: syntax error\n", errors.New("exit status 1")); got != "aaep-render: parse dot: syntax error" {
		t.Errorf("helperError = %q", got)
	}
	if got := helperError("", errors.New("exit status 1")); got != "exit status 1" {
		t.Errorf("helperError = %q", got)
	}
}
