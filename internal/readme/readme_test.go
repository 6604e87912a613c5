package readme

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/internal/binarytest"
)

// command is one command of a runnable block: its text (continuation
// lines joined), the README line it starts on and the exit status it
// should have.
type command struct {
	line int
	text string
	exit int
}

var exitComment = regexp.MustCompile(`\(exit (\d+)\)`)

// runnable returns the commands of the README's runnable blocks, in order.
func runnable(t *testing.T, readme []byte) []command {
	t.Helper()
	var (
		cmds    []command
		in      bool
		pending *command
	)
	sc := bufio.NewScanner(bytes.NewReader(readme))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case !in && strings.TrimSpace(line) == "```sh runnable":
			in = true
			continue
		case in && strings.TrimSpace(line) == "```":
			if pending != nil {
				t.Fatalf("README line %d: a runnable block ends inside a continued command", pending.line)
			}
			in = false
			continue
		case !in:
			continue
		}
		if pending == nil {
			if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
				continue
			}
			pending = &command{line: n}
		}
		if cont, ok := strings.CutSuffix(strings.TrimRight(line, " "), `\`); ok {
			pending.text += cont + " "
			continue
		}
		pending.text += line
		if m := exitComment.FindStringSubmatch(line); m != nil {
			pending.exit, _ = strconv.Atoi(m[1])
		}
		cmds = append(cmds, *pending)
		pending = nil
	}
	if in {
		t.Fatal("README: a runnable block is not closed")
	}
	return cmds
}

// TestReadmeRunnableBlocks runs every runnable block of the README top to
// bottom in one scratch directory, as a new user would copy them: each
// command in bash (so that pipes, redirections and globs work as in the
// README), in the directory the earlier ones left, with aaep-capture,
// aaep-replay and aaep-render built from this tree first in PATH and the
// repository's testdata/demo.aaep where the README expects it.
func TestReadmeRunnableBlocks(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	cmds := runnable(t, readme)
	if len(cmds) < 20 {
		t.Fatalf("the README has %d runnable commands; the blocks marked runnable were not found", len(cmds))
	}
	bin := t.TempDir()
	gotool := binarytest.GoTool()
	build := exec.Command(gotool, "build", "-o", bin+string(os.PathSeparator), "./cmd/...")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/...: %v\n%s", err, out)
	}
	scratch := t.TempDir()
	if err := os.Mkdir(filepath.Join(scratch, "testdata"), 0o755); err != nil {
		t.Fatal(err)
	}
	demo, err := os.ReadFile(filepath.Join(root, "testdata", "demo.aaep"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(scratch, "testdata", "demo.aaep"), demo, 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "HOME="+scratch)
	for _, c := range cmds {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, "bash", "-o", "pipefail", "-c", c.text)
		cmd.Dir, cmd.Env = scratch, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		cancel()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("README line %d: %s: %v", c.line, c.text, err)
		}
		if code != c.exit {
			t.Errorf("README line %d: exit %d, want %d: %s\n%s", c.line, code, c.exit, c.text, tail(out.String(), 2000))
		} else {
			t.Logf("README line %d: exit %d: %s", c.line, code, strings.Fields(c.text)[0:min(3, len(strings.Fields(c.text)))])
		}
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
