//go:build unix

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
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/internal/binarytest"
	"github.com/aaep-tools/aaepkit/internal/testdeps"
)

// command is one command of a runnable block: its text (continuation
// lines joined), the line it starts on, the exit status it should have,
// and whether it runs in the background (it ends in "&").
type command struct {
	line       int
	text       string
	exit       int
	background bool
}

var (
	exitComment = regexp.MustCompile(`\(exit (\d+)\)`)
	// trailingAmp is a command that ends in a single "&", before an
	// optional comment.
	trailingAmp = regexp.MustCompile(`^(.*[^&])&\s*(#.*)?$`)
)

// runnable returns the commands of a page's runnable blocks, in order.
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
		if m := trailingAmp.FindStringSubmatch(pending.text); m != nil {
			pending.text, pending.background = strings.TrimSpace(m[1]), true
		}
		cmds = append(cmds, *pending)
		pending = nil
	}
	if in {
		t.Fatal("README: a runnable block is not closed")
	}
	return cmds
}

// TestReadmeRunnableBlocks runs every runnable block of the README and of
// each page in docs/, top to bottom, as a new user would copy them: each
// page in a scratch directory of its own, each command in bash (so that
// pipes, redirections and globs work as written), in the directory the
// earlier ones left, with aaep-capture, aaep-replay and aaep-render built
// from this tree first in PATH and the repository's testdata/demo.aaep where
// the pages expect it. Commands that end in "&" run in the background and
// are ended (their process group) when the page's blocks are done.
func TestReadmeRunnableBlocks(t *testing.T) {
	testdeps.Command(t, "bash", "bash")
	testdeps.Command(t, "curl", "curl") // the quick start's subscriber
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages := map[string][]command{}
	names := append([]string{"README.md"}, docs...)
	total := 0
	for i, name := range names {
		if !filepath.IsAbs(name) {
			name = filepath.Join(root, name)
		}
		text, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, name)
		names[i] = rel
		pages[rel] = runnable(t, text)
		total += len(pages[rel])
	}
	if len(pages["README.md"]) < 4 {
		t.Fatalf("the README has %d runnable commands; its quick start is not marked runnable", len(pages["README.md"]))
	}
	if total < 30 {
		t.Fatalf("README.md and docs/*.md have %d runnable commands; the blocks marked runnable were not found", total)
	}
	bin := t.TempDir()
	gotool := binarytest.GoTool()
	build := exec.Command(gotool, "build", "-o", bin+string(os.PathSeparator), "./cmd/...")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/...: %v\n%s", err, out)
	}
	demo, err := os.ReadFile(filepath.Join(root, "testdata", "demo.aaep"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		cmds := pages[name]
		if len(cmds) == 0 {
			continue
		}
		t.Run(name, func(t *testing.T) {
			scratch := t.TempDir()
			if err := os.Mkdir(filepath.Join(scratch, "testdata"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(scratch, "testdata", "demo.aaep"), demo, 0o644); err != nil {
				t.Fatal(err)
			}
			env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "HOME="+scratch)
			runPage(t, name, scratch, env, cmds)
		})
	}
}

// runPage runs one page's commands in dir, then ends those it started in
// the background.
func runPage(t *testing.T, name, dir string, env []string, cmds []command) {
	var background []*exec.Cmd
	var backgroundOut []*syncBuffer
	defer func() {
		for _, b := range background {
			_ = syscall.Kill(-b.Process.Pid, syscall.SIGTERM)
			done := make(chan struct{})
			go func() { _ = b.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = syscall.Kill(-b.Process.Pid, syscall.SIGKILL)
				<-done
			}
		}
	}()
	for _, c := range cmds {
		if c.background {
			cmd := exec.Command("bash", "-c", c.text)
			cmd.Dir, cmd.Env = dir, env
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			out := &syncBuffer{}
			cmd.Stdout, cmd.Stderr = out, out
			if err := cmd.Start(); err != nil {
				t.Fatalf("%s line %d: %s: %v", name, c.line, c.text, err)
			}
			background = append(background, cmd)
			backgroundOut = append(backgroundOut, out)
			t.Logf("%s line %d: started in the background: %s", name, c.line, c.text)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, "bash", "-o", "pipefail", "-c", c.text)
		cmd.Dir, cmd.Env = dir, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		cancel()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s line %d: %s: %v", name, c.line, c.text, err)
		}
		if code != c.exit {
			t.Errorf("%s line %d: exit %d, want %d: %s\n%s", name, c.line, code, c.exit, c.text, tail(out.String(), 2000))
			// What the page started in the background says is often why.
			for i, b := range background {
				t.Logf("%s: output so far of %s:\n%s", name, b.Args[len(b.Args)-1], tail(backgroundOut[i].String(), 2000))
			}
		} else {
			t.Logf("%s line %d: exit %d: %s", name, c.line, code, strings.Fields(c.text)[0:min(3, len(strings.Fields(c.text)))])
		}
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// TestRunnableParse: how the lines of a runnable block become commands.
func TestRunnableParse(t *testing.T) {
	page := "text\n```sh\nnot run\n```\n```sh runnable\n# a comment\na --flag \\\n  b   # (exit 1)\nserve x &   # in the background\nc && d\ne & f\n```\n"
	got := runnable(t, []byte(page))
	want := []command{
		{line: 7, text: "a --flag    b   # (exit 1)", exit: 1},
		{line: 9, text: "serve x", background: true},
		{line: 10, text: "c && d"},
		{line: 11, text: "e & f"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d commands %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("command %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

// syncBuffer collects a background command's output while the page goes on.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
