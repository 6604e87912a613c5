//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/aaep-tools/aaepkit/internal/testdeps"
	"github.com/aaep-tools/aaepkit/visualize"
)

// asUser runs commands as root or, through setpriv, as nobody.
type asUser struct {
	setpriv string
}

// newAsUser returns the runner. Only root may run a command as another
// user. Not being root, a missing setpriv, or one that cannot switch users
// here skips t, naming what is missing, and fails it under
// AAEP_REQUIRE_TESTDEPS=1 (make test), where it must run.
func newAsUser(t *testing.T) *asUser {
	t.Helper()
	if os.Geteuid() != 0 {
		testdeps.Missing(t, "root, to run a command as another user (setpriv --reuid nobody)", fmt.Errorf("running as uid %d", os.Geteuid()))
	}
	setpriv := testdeps.Command(t, "setpriv", "util-linux")
	u := &asUser{setpriv: setpriv}
	if out, err := exec.Command(setpriv, u.nobodyArgs("true")...).CombinedOutput(); err != nil {
		testdeps.Missing(t, "setpriv --reuid nobody, running a command as another user", errors.New(strings.TrimSpace(string(out))+" "+err.Error()))
	}
	return u
}

func (u *asUser) nobodyArgs(args ...string) []string {
	id := strconv.Itoa(nobody)
	return append([]string{"--reuid", id, "--regid", id, "--clear-groups", "--"}, args...)
}

// run runs args in dir with env (and nothing else of the test's own
// environment that says where temporary or cache files go), as nobody or
// as the test's user.
func (u *asUser) run(t *testing.T, asNobody bool, dir string, env []string, args ...string) (int, string) {
	t.Helper()
	code, _, stderr := u.runIn(t, asNobody, dir, env, nil, args...)
	return code, stderr
}

// runIn is run with stdin as standard input, returning standard output too.
func (u *asUser) runIn(t *testing.T, asNobody bool, dir string, env []string, stdin io.Reader, args ...string) (int, []byte, string) {
	t.Helper()
	if asNobody {
		args = append([]string{u.setpriv}, u.nobodyArgs(args...)...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "TMPDIR", "XDG_CACHE_HOME", "HOME", visualize.HelperEnv:
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, stdout.Bytes(), stderr.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), stdout.Bytes(), stderr.String()
	}
	t.Fatal(err)
	return 0, nil, ""
}

// TestRenderAsTwoUsers: two users draw, one after the other, sharing one
// system temp directory, as root and nobody would on one machine. Each
// user's aaep-render keeps go-graphviz's compiled WebAssembly in a private
// directory of its own (the user's cache directory, mode 0700), nothing in
// the shared temp directory, so the second user draws too (it used to get
// "panic: open $TMPDIR/go-graphviz/wazero-…: permission denied"). A
// directory planted there by another user, or one others may write to, is
// refused with a clear error (exit 2, no panic), never used.
func TestRenderAsTwoUsers(t *testing.T) {
	t.Parallel()
	u := newAsUser(t)
	root, err := os.MkdirTemp("", "aaep-render-users-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	mkdir := func(name string, mode os.FileMode, uid int) string {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(p, uid, uid); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := mkdir("bin", 0o755, 0)
	shared := mkdir("tmp", 0o777|os.ModeSticky, 0) // the system temp directory
	work := mkdir("work", 0o777, 0)
	cache := map[bool]string{false: mkdir("cache-root", 0o700, 0), true: mkdir("cache-nobody", 0o700, nobody)}

	// The programs, where nobody may run them.
	replayPath := filepath.Join(bin, "aaep-replay")
	copyFile(t, replayBin.Path(t), replayPath, 0o755)
	renderPath := filepath.Join(bin, visualize.HelperName)
	copyFile(t, renderBin.Path(t), renderPath, 0o755)
	copyFile(t, demoCapture, filepath.Join(work, "demo.aaep"), 0o644)

	draw := func(asNobody bool, cacheHome, out string) (int, string) {
		t.Helper()
		env := []string{"TMPDIR=" + shared, "XDG_CACHE_HOME=" + cacheHome, "HOME=" + cacheHome, visualize.HelperEnv + "=" + renderPath}
		return u.run(t, asNobody, work, env, replayPath, "visualize", "demo.aaep", "-o", out)
	}
	for _, asNobody := range []bool{false, true} {
		who := map[bool]string{false: "root", true: "nobody"}[asNobody]
		out := who + ".svg"
		code, stderr := draw(asNobody, cache[asNobody], out)
		if code != 0 {
			t.Fatalf("%s draws after %s: exit %d, %s", who, map[bool]string{false: "nobody else", true: "root"}[asNobody], code, stderr)
		}
		if svg, err := os.ReadFile(filepath.Join(work, out)); err != nil || !bytes.Contains(svg, []byte("</svg>")) {
			t.Fatalf("%s: no drawing: %v", who, err)
		}
		private := filepath.Join(cache[asNobody], "aaep-render")
		st, err := os.Lstat(private)
		if err != nil {
			t.Errorf("%s: no private directory: %v", who, err)
			continue
		}
		uid := int(st.Sys().(*syscall.Stat_t).Uid)
		if want := map[bool]int{false: 0, true: nobody}[asNobody]; !st.IsDir() || st.Mode().Perm() != 0o700 || uid != want {
			t.Errorf("%s's directory %s: %v, uid %d; want a directory 0700 of uid %d", who, private, st.Mode(), uid, want)
		}
		if ents, _ := os.ReadDir(filepath.Join(private, "go-graphviz")); len(ents) == 0 {
			t.Errorf("%s: no compiled Graphviz kept in %s", who, private)
		}
	}
	if ents, _ := os.ReadDir(shared); len(ents) != 0 {
		t.Errorf("the shared temp directory holds %v", ents)
	}

	// Directories that must not be used.
	planted := mkdir("planted", 0o755, 0)
	mkdir("planted/aaep-render", 0o700, nobody) // made by nobody in root's cache
	theirs := mkdir("theirs", 0o700, nobody)
	mkdir("theirs/aaep-render", 0o700, 0) // made by root in nobody's cache
	loose := mkdir("loose", 0o700, 0)
	mkdir("loose/aaep-render", 0o777, 0)
	linked := mkdir("linked", 0o700, 0)
	if err := os.Symlink(shared, filepath.Join(linked, "aaep-render")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		asNobody  bool
		cacheHome string
		want      string
	}{
		{"planted by nobody, drawn by root", false, planted, "belongs to uid 65534, not to you (uid 0)"},
		{"planted by root, drawn by nobody", true, theirs, "belongs to uid 0, not to you (uid 65534)"},
		{"writable by others", false, loose, "has mode 0777"},
		{"a link", false, linked, "is a symbolic link"},
	} {
		code, stderr := draw(c.asNobody, c.cacheHome, "refused.svg")
		if code != 2 || !strings.Contains(stderr, "refused the helper's temporary directory "+filepath.Join(c.cacheHome, "aaep-render")) || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, %q; want 2 and %q", c.name, code, stderr, c.want)
		}
		if strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine") {
			t.Errorf("%s: a panic: %s", c.name, stderr)
		}
		if _, err := os.Stat(filepath.Join(work, "refused.svg")); err == nil {
			t.Fatalf("%s: drawn all the same", c.name)
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(planted, "aaep-render")); len(ents) != 0 {
		t.Errorf("the planted directory was used: %v", ents)
	}
	if ents, _ := os.ReadDir(shared); len(ents) != 0 {
		t.Errorf("the shared temp directory holds %v", ents)
	}

	// aaep-render run on its own, with the shared temp directory as
	// TMPDIR, where an earlier version left root's go-graphviz cache: it
	// keeps its code in the user's private directory all the same (its
	// TMPDIR is set before go-graphviz's init runs), and refuses a planted
	// one without a panic.
	mkdir("tmp/go-graphviz", 0o755, 0)
	mkdir("tmp/go-graphviz/wazero-v1.9.0-amd64-linux", 0o700, 0)
	dot := "digraph g { a -> b }"
	helperEnv := func(cacheHome string) []string {
		return []string{"TMPDIR=" + shared, "XDG_CACHE_HOME=" + cacheHome, "HOME=" + cacheHome}
	}
	code, svg, stderr := u.runIn(t, true, work, helperEnv(cache[true]), strings.NewReader(dot), renderPath)
	if code != 0 || !bytes.Contains(svg, []byte("</svg>")) {
		t.Errorf("aaep-render as nobody beside root's cache in the shared temp directory: exit %d, %q", code, stderr)
	}
	code, _, stderr = u.runIn(t, false, work, helperEnv(planted), strings.NewReader(dot), renderPath)
	if code != 2 || !strings.Contains(stderr, "aaep-render: refused the helper's temporary directory "+filepath.Join(planted, "aaep-render")) ||
		strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine") {
		t.Errorf("aaep-render as root with nobody's directory planted: exit %d, %q; want 2, refused, no panic", code, stderr)
	}
	if ents, _ := os.ReadDir(filepath.Join(planted, "aaep-render")); len(ents) != 0 {
		t.Errorf("the planted directory was used: %v", ents)
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(to, mode); err != nil {
		t.Fatal(err)
	}
}
