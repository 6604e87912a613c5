package capturecmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/objstore"
	"github.com/aaep-tools/aaepkit/objstore/s3test"
	"github.com/aaep-tools/aaepkit/spool"
)

// Parts left under another prefix by a recorder whose uploads were refused
// are named by the next recorder (another prefix, same spool root), then
// --drain-spool uploads them where their directory says and empties it.
func TestS3LeftoversNamedThenDrained(t *testing.T) {
	srv, p := proxiedS3(t)
	url := pacedURL(t, 50*time.Millisecond)
	root := t.TempDir()
	oldDir := spool.Dir(root, objstore.URL{Scheme: "s3", Bucket: "caps", Key: "old/agent.aaep"})

	p.SetFault(s3test.ForbidWrites)
	res := capture(t, false, url, "-o", "s3://caps/old/agent.aaep", "--spool", root, "--rotate-every", "1s",
		"--duration", "1500ms", "--upload-wait", "0", "--s3-timeout", "1s")
	left := spooled(t, oldDir)
	if res.code != 1 || len(left) == 0 {
		t.Fatalf("first run: exit %d, spool %v: %s", res.code, left, res.stderr)
	}

	// The writes are allowed again by going to the server itself, not by
	// lifting the proxy's fault: a request the first recorder sent and
	// abandoned when it stopped (--upload-wait 0) may reach the proxy's
	// handler only now, and must still be refused.
	srv.SetEnv(t)
	res = capture(t, false, url, "-o", "s3://caps/new/agent.aaep", "--spool", root, "--rotate-every", "1h", "--duration", "300ms")
	if res.code != 0 {
		t.Fatalf("second run: exit %d: %s", res.code, res.stderr)
	}
	if want := "part(s) of s3://caps/old/agent.aaep"; !strings.Contains(res.stderr, want) || !strings.Contains(res.stderr, "--drain-spool "+root) {
		t.Errorf("the leftovers are not named (%q): %s", want, res.stderr)
	}
	if keys, _ := srv.Objects("caps", "old/"); len(keys) != 0 {
		t.Errorf("the second recorder uploaded another destination's parts: %v", keys)
	}

	res = capture(t, false, "--drain-spool", root)
	if res.code != 0 {
		t.Fatalf("--drain-spool: exit %d: %s", res.code, res.stderr)
	}
	keys, _ := srv.Objects("caps", "old/")
	if len(keys) != len(left) {
		t.Errorf("drained objects %v, want the %d parts %v", keys, len(left), left)
	}
	for i, k := range keys {
		if i < len(left) && filepath.Base(k) != filepath.Base(left[i]) {
			t.Errorf("object %s, want %s", k, filepath.Base(left[i]))
		}
	}
	if got := spooled(t, oldDir); len(got) != 0 {
		t.Errorf("spool still holds %v", got)
	}
	if res = capture(t, false, "--drain-spool", root); res.code != 0 || !strings.Contains(res.stderr, "nothing to drain") {
		t.Errorf("second drain: exit %d: %s", res.code, res.stderr)
	}
	if res = capture(t, false, "--drain-spool", root, "-o", "x.aaep"); res.code != 2 {
		t.Errorf("--drain-spool with --output: exit %d", res.code)
	}
}

// Two recorders under one prefix with different names share the spool
// directory and each uploads its own parts; a third with a name already
// being recorded refuses to run and names the holder.
func TestS3TwoRecordersOnePrefix(t *testing.T) {
	srv := s3test.Start(t, "caps")
	srv.SetEnv(t)
	url := pacedURL(t, 50*time.Millisecond)
	root := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := spool.Dir(root, objstore.URL{Scheme: "s3", Bucket: "caps", Key: "fleet/x"})
	type out struct {
		code   int
		stderr string
	}
	// The two run until stopped (Ctrl-C), so that the third one surely
	// comes while they hold their locks, however slow the machine.
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	start := func(name string) chan out {
		ch := make(chan out, 1)
		go func() {
			var errb syncBuffer
			code := run(runCtx, cli.Streams{In: strings.NewReader(""), Out: &syncBuffer{}, Err: &errb},
				[]string{url, "-o", "s3://caps/fleet/" + name, "--spool", root, "--rotate-every", "1s"})
			ch <- out{code, errb.String()}
		}()
		return ch
	}
	a1, a2 := start("agent-1.aaep"), start("agent-2.aaep")
	// A recorder writes itself into its lock file once it holds the lock.
	holds := func(name string) bool {
		b, _ := os.ReadFile(filepath.Join(dir, "."+name+".lock"))
		return strings.Contains(string(b), "aaep-capture pid")
	}
	for !holds("agent-1.aaep") || !holds("agent-2.aaep") {
		if ctx.Err() != nil {
			t.Fatal("the two recorders did not take their locks")
		}
		time.Sleep(20 * time.Millisecond)
	}
	again := capture(t, false, url, "-o", "s3://caps/fleet/agent-1.aaep", "--spool", root, "--duration", "1s")
	if again.code != 2 || !strings.Contains(again.stderr, "agent-1.aaep is in use by aaep-capture pid") {
		t.Errorf("a second recorder of agent-1.aaep: exit %d: %s", again.code, again.stderr)
	}
	// Each uploads a rotated part while the other records, then they stop.
	for {
		keys, _ := srv.Objects("caps", "fleet/")
		var r1, r2 bool
		for _, k := range keys {
			r1 = r1 || strings.HasPrefix(k, "fleet/agent-1-")
			r2 = r2 || strings.HasPrefix(k, "fleet/agent-2-")
		}
		if r1 && r2 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("objects %v: no rotated part of each recorder", keys)
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	for name, ch := range map[string]chan out{"agent-1": a1, "agent-2": a2} {
		o := <-ch
		if o.code != 0 {
			t.Errorf("%s: exit %d: %s", name, o.code, o.stderr)
		}
		if strings.Contains(o.stderr, "in use") || strings.Contains(o.stderr, "wait in") {
			t.Errorf("%s saw the other as a conflict or a leftover: %s", name, o.stderr)
		}
	}
	keys, _ := srv.Objects("caps", "fleet/")
	var n1, n2 int
	for _, k := range keys {
		switch {
		case strings.HasPrefix(k, "fleet/agent-1-"):
			n1++
		case strings.HasPrefix(k, "fleet/agent-2-"):
			n2++
		default:
			t.Errorf("object %s", k)
		}
	}
	if n1 == 0 || n2 == 0 {
		t.Errorf("objects %v: want parts of both", keys)
	}
	if got := spooled(t, dir); len(got) != 0 {
		t.Errorf("spool still holds %v", got)
	}
}

// When run returns, nothing of the spool's uploader runs any more: not its
// uploads, nor its maintenance (the limits and the stalled-upload warning,
// which may drop parts), even when --upload-wait 0 abandons the uploads.
func TestRunLeavesNoUploaderRunning(t *testing.T) {
	_, p := proxiedS3(t)
	p.SetFault(s3test.ForbidWrites) // the part stays in the spool, retried
	url := pacedURL(t, 50*time.Millisecond)
	res := capture(t, false, url, "-o", "s3://caps/run/agent.aaep", "--spool", t.TempDir(), "--rotate-every", "1s",
		"--duration", "1200ms", "--upload-wait", "0", "--upload-warn-after", "1s", "--spool-max-size", "1GiB")
	if res.code != 1 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	buf := make([]byte, 1<<20)
	stacks := string(buf[:runtime.Stack(buf, true)])
	if strings.Contains(stacks, "aaepkit/spool.") {
		t.Errorf("the uploader still runs after run returned:\n%s", stacks)
	}
}

// --drain-spool --json prints its summary; the drain's last line names the
// parts it left (uploads refused), or says nothing is left.
func TestDrainSummaryNamesPartsLeft(t *testing.T) {
	srv, p := proxiedS3(t)
	url := pacedURL(t, 50*time.Millisecond)
	root := t.TempDir()
	dir := spool.Dir(root, objstore.URL{Scheme: "s3", Bucket: "caps", Key: "d/agent.aaep"})
	p.SetFault(s3test.ForbidWrites)
	res := capture(t, false, url, "-o", "s3://caps/d/agent.aaep", "--spool", root, "--rotate-every", "1s",
		"--duration", "1500ms", "--upload-wait", "0", "--s3-timeout", "1s")
	left := spooled(t, dir)
	if res.code != 1 || len(left) == 0 {
		t.Fatalf("recording: exit %d, spool %v: %s", res.code, left, res.stderr)
	}
	lastLine := func(s string) string {
		lines := strings.Split(strings.TrimSpace(s), "\n")
		return lines[len(lines)-1]
	}
	var sum drainSummary
	res = capture(t, false, "--drain-spool", root, "--upload-wait", "1s", "--s3-timeout", "1s", "--json")
	if err := json.Unmarshal([]byte(res.stdout), &sum); err != nil {
		t.Fatalf("--json: %v: %q", err, res.stdout)
	}
	if res.code != 1 || sum.ExitCode != 1 || len(sum.Left) != len(left) || sum.Uploaded != 0 {
		t.Errorf("refused drain: exit %d, summary %+v; want 1 and the %d parts left", res.code, sum, len(left))
	}
	last := lastLine(res.stderr)
	for _, f := range left {
		if !strings.Contains(last, filepath.Base(f)) {
			t.Errorf("the last line does not name %s: %q", filepath.Base(f), last)
		}
	}
	srv.SetEnv(t)
	res = capture(t, false, "--drain-spool", root, "--json")
	sum = drainSummary{}
	if err := json.Unmarshal([]byte(res.stdout), &sum); err != nil {
		t.Fatalf("--json: %v: %q", err, res.stdout)
	}
	if res.code != 0 || sum.Uploaded != int64(len(left)) || len(sum.Left) != 0 || !strings.Contains(lastLine(res.stderr), "nothing left") {
		t.Errorf("drain: exit %d, summary %+v, last line %q", res.code, sum, lastLine(res.stderr))
	}
}
