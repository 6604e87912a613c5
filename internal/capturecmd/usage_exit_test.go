package capturecmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/internal/cli"
)

// TestUsageErrorsExit2: what no connection could ever fix is a usage error,
// exit 2, before anything is recorded (issue 34): a port out of range in an
// endpoint (it was retried as a network failure), a --header value with a
// line break (the same), a --metrics address that cannot be listened on,
// an invalid bucket name (a warning, then recording went on into the
// spool). Nothing listens on 127.0.0.1:1, so a command that got as far as
// connecting would exit 1 instead.
func TestUsageErrorsExit2(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.aaep")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"endpoint port", []string{"http://127.0.0.1:99999", "-o", out}, "endpoint http://127.0.0.1:99999: port 99999 is out of range (1 to 65535)"},
		{"--endpoint port", []string{"--endpoint", "ws://127.0.0.1:0/ws", "-o", out}, "port 0 is out of range"},
		{"header with CR LF", []string{"http://127.0.0.1:1", "-o", out, "--header", "X-Token: a\r\nInjected: b"}, "--header X-Token: the value holds a line break"},
		{"header with LF", []string{"http://127.0.0.1:1", "-o", out, "--header", "X-Token: a\nb"}, "line break"},
		{"metrics port", []string{"http://127.0.0.1:1", "-o", out, "--metrics", "127.0.0.1:70000"}, `--metrics "127.0.0.1:70000": port 70000 is out of range`},
		{"bucket name", []string{"http://127.0.0.1:1", "-o", "s3://Bad_Bucket!/x.aaep", "--s3-endpoint", "http://127.0.0.1:1", "--spool", filepath.Join(dir, "spool")}, `"Bad_Bucket!" is not a valid bucket name`},
		{"short bucket name", []string{"http://127.0.0.1:1", "-o", "s3://ab/x.aaep", "--s3-endpoint", "http://127.0.0.1:1", "--spool", filepath.Join(dir, "spool")}, `"ab" is not a valid bucket name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var stdout, stderr bytes.Buffer
			code := run(ctx, cli.Streams{In: strings.NewReader(""), Out: &stdout, Err: &stderr}, tc.args)
			if code != cli.ExitUsage || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr.String(), tc.want)
			}
			if strings.Contains(stderr.String(), "Injected: b") {
				t.Errorf("the header's value reached the message: %q", stderr.String())
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was written", out)
			}
		})
	}
}

// TestCaptureSmallUsageErrors: an empty -o and completion tcsh are usage errors.
func TestCaptureSmallUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"http://127.0.0.1:1", "-o", ""}, "--output '': an empty name names no file"},
		{[]string{"completion", "tcsh"}, `completion "tcsh": not a shell completion is written for`},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), cli.Streams{In: strings.NewReader(""), Out: &stdout, Err: &stderr}, tc.args)
		if code != cli.ExitUsage || stdout.Len() != 0 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%q: exit %d, stdout %d bytes, stderr %q; want 2 and %q", tc.args, code, stdout.Len(), stderr.String(), tc.want)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), cli.Streams{In: strings.NewReader(""), Out: &stdout, Err: &stderr}, []string{"completion", "zsh"}); code != 0 || stdout.Len() == 0 {
		t.Errorf("completion zsh: exit %d, %d bytes", code, stdout.Len())
	}
}
