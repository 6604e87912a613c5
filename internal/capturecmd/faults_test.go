package capturecmd

import (
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/objstore"
	"github.com/aaep-tools/aaepkit/objstore/s3test"
	"github.com/aaep-tools/aaepkit/spool"
	"github.com/aaep-tools/aaepkit/transport/transporttest"
)

// faultRun records 1.5 s of a held stream into rotated parts of
// s3://caps/f/run.aaep through a fault-injecting proxy, with a one-second
// stall timeout and a two-second --upload-wait.
type faultRun struct {
	res   result
	proxy *s3test.Proxy
	sum   summary
	spool string   // the destination's spool directory
	files []string // the parts recorded, by base name
	keys  []string // the objects stored, by base name
}

// Bound on a run under a fault: the start-up check (one stall timeout),
// --duration, --upload-wait and the 10 s the issue allows on top.
const faultBound = 1*time.Second + 1500*time.Millisecond + 2*time.Second + 10*time.Second

func runUnderFault(t *testing.T, f s3test.Fault, recoverAfter time.Duration, extra ...string) faultRun {
	t.Helper()
	srv, p := proxiedS3(t)
	return runFault(t, srv, p, f, recoverAfter, extra...)
}

// runUnderOwnFault is runUnderFault for a test that runs beside others:
// its server and proxy are its own, named with --s3-endpoint instead of
// $AWS_ENDPOINT_URL_S3 (which the recorder reads the same way); the
// credentials come from the environment its parent set (setS3Credentials).
func runUnderOwnFault(t *testing.T, f s3test.Fault) faultRun {
	t.Helper()
	srv := s3test.Start(t, "caps")
	p := s3test.StartProxy(t, srv)
	return runFault(t, srv, p, f, 0, "--s3-endpoint", p.Endpoint)
}

// setS3Credentials sets the environment s3test's servers want, all but the
// endpoint, for subtests that run side by side, each with a server of its
// own named with --s3-endpoint.
func setS3Credentials(t *testing.T) {
	t.Helper()
	for _, kv := range (&s3test.Server{}).Env() {
		k, v, _ := strings.Cut(kv, "=")
		if k == "AWS_ENDPOINT_URL_S3" {
			v = ""
		}
		t.Setenv(k, v)
	}
}

func runFault(t *testing.T, srv *s3test.Server, p *s3test.Proxy, f s3test.Fault, recoverAfter time.Duration, extra ...string) faultRun {
	t.Helper()
	p.SetFault(f)
	if recoverAfter > 0 {
		back := time.AfterFunc(recoverAfter, func() { p.SetFault(s3test.Pass) })
		t.Cleanup(func() { back.Stop() })
	}
	prod := &transporttest.WSProducer{Frames: transporttest.Frames(transporttest.Events(20)), Hold: true}
	url := prod.Start(t)
	root := t.TempDir()
	args := append([]string{url, "-o", "s3://caps/f/run.aaep", "--spool", root, "--rotate-every", "1s",
		"--duration", "1500ms", "--upload-wait", "2s", "--s3-timeout", "1s", "--json"}, extra...)
	fr := faultRun{proxy: p, spool: spool.Dir(root, objstore.URL{Scheme: "s3", Bucket: "caps", Key: "f/run.aaep"})}
	fr.res = captureWithin(t, faultBound, false, args...)
	if err := json.Unmarshal([]byte(fr.res.stdout), &fr.sum); err != nil {
		t.Fatalf("summary: %v\n%s\nstderr: %s", err, fr.res.stdout, fr.res.stderr)
	}
	for _, u := range fr.sum.Files {
		if !strings.HasPrefix(u, "s3://caps/f/run-") {
			t.Errorf("part %s is not under s3://caps/f/", u)
		}
		fr.files = append(fr.files, path.Base(u))
	}
	if len(fr.files) == 0 {
		t.Fatalf("nothing recorded: %s", fr.res.stderr)
	}
	keys, err := srv.Objects("caps", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, "f/") {
			t.Errorf("object %s outside the prefix", k)
		}
		fr.keys = append(fr.keys, path.Base(k))
	}
	if p.Faulted(f) == 0 {
		t.Errorf("no request met the fault %v", f)
	}
	if !strings.Contains(fr.res.stderr, "aaep-capture: uploaded ") {
		t.Errorf("no upload summary on stderr: %s", fr.res.stderr)
	}
	return fr
}

// spooled returns the base names of the parts in the spool, each a
// readable, cleanly closed capture.
func (fr faultRun) spooled(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, f := range spooled(t, fr.spool) {
		r, err := capfile.Open(f)
		if err != nil {
			t.Errorf("spooled %s: %v", f, err)
			continue
		}
		if !r.Clean() {
			t.Errorf("spooled %s is not cleanly closed", f)
		}
		r.Close()
		names = append(names, filepath.Base(f))
	}
	return names
}

// Every fault that stops uploads: the run ends within its bound (the
// helper fails otherwise), exit 1, nothing is stored, every part recorded
// stays in the spool and the summary names each one. What happens does
// not depend on how fast it happens (no upload ever succeeds): the faults
// run side by side, each with its own server.
func TestS3FaultsKeepPartsInSpool(t *testing.T) {
	setS3Credentials(t)
	for _, f := range []s3test.Fault{s3test.BlackHole, s3test.Reset, s3test.Error500, s3test.ForbidWrites} {
		t.Run(f.String(), func(t *testing.T) {
			t.Parallel()
			fr := runUnderOwnFault(t, f)
			if fr.res.code != 1 {
				t.Errorf("exit %d, want 1; stderr: %s", fr.res.code, fr.res.stderr)
			}
			if len(fr.keys) != 0 {
				t.Errorf("objects stored under %v: %v", f, fr.keys)
			}
			if got := fr.spooled(t); !slices.Equal(got, fr.files) {
				t.Errorf("spool holds %v, want every part recorded %v", got, fr.files)
			}
			if fr.sum.Upload == nil || !slices.Equal(fr.sum.Upload.Waiting, fr.files) || fr.sum.Upload.Uploaded != 0 {
				t.Errorf("upload summary %+v, want every part waiting", fr.sum.Upload)
			}
			for _, name := range fr.files {
				if !strings.Contains(fr.res.stderr, name) {
					t.Errorf("stderr does not name %s: %s", name, fr.res.stderr)
				}
			}
			if strings.Contains(fr.res.stderr, s3test.SecretKey) {
				t.Error("the secret key was printed")
			}
		})
	}
}

// Faults that slow uploads or end: every part is stored, the spool is
// empty. A black hole that ends while the recorder runs proves that
// uploads go on after a hung server recovers.
func TestS3FaultsThenAllUploaded(t *testing.T) {
	for _, tc := range []struct {
		fault   s3test.Fault
		recover time.Duration
		extra   []string
	}{
		{s3test.Slow, 0, nil},
		{s3test.BlackHole, 1500 * time.Millisecond, []string{"--upload-wait", "8s"}},
		{s3test.Error500, 1500 * time.Millisecond, []string{"--upload-wait", "8s"}},
	} {
		t.Run(tc.fault.String(), func(t *testing.T) {
			fr := runUnderFault(t, tc.fault, tc.recover, tc.extra...)
			if fr.res.code != 0 {
				t.Errorf("exit %d, want 0; stderr: %s", fr.res.code, fr.res.stderr)
			}
			if !slices.Equal(fr.keys, fr.files) {
				t.Errorf("objects %v, want every part recorded %v", fr.keys, fr.files)
			}
			if got := fr.spooled(t); len(got) != 0 {
				t.Errorf("spool still holds %v", got)
			}
			if fr.sum.Upload == nil || len(fr.sum.Upload.Waiting) != 0 || fr.sum.Upload.Uploaded != int64(len(fr.files)) {
				t.Errorf("upload summary %+v", fr.sum.Upload)
			}
		})
	}
}

// Under a black hole with a long --upload-wait, the first SIGTERM starts
// an orderly stop (the recorder waits for its uploads), the second ends
// the wait at once: the process exits with its summary naming the parts
// left in the spool, and -q keeps that summary.
func TestBinarySecondSignalExitsWithSummary(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t, "caps")
	p := s3test.StartProxy(t, srv)
	p.SetFault(s3test.BlackHole)
	// Events all along, so that parts close every second (recording
	// starts at once, before the start-up check has an answer).
	url := pacedURL(t, 50*time.Millisecond)
	root := t.TempDir()
	dir := spool.Dir(root, objstore.URL{Scheme: "s3", Bucket: "caps", Key: "g/run.aaep"})
	cmd := exec.Command(binary(t), url, "-o", "s3://caps/g/run.aaep", "--spool", root, "--rotate-every", "1s",
		"--upload-wait", "1h", "--s3-timeout", "1s", "-q")
	cmd.Env = append(os.Environ(), p.Env(srv)...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	// Wait for a closed part waiting in the spool.
	deadline := time.Now().Add(20 * time.Second)
	for len(spooled(t, dir)) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("no parts in the spool: %s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		t.Fatalf("exited on the first signal (%v) despite --upload-wait 1h and parts waiting: %s", err, stderr.String())
	case <-time.After(1500 * time.Millisecond):
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(15 * time.Second):
		t.Fatalf("the second signal did not end the process: %s", stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	out := stderr.String()
	if !strings.Contains(out, "stay in the spool "+dir) {
		t.Errorf("no summary of the spool: %s", out)
	}
	for _, f := range spooled(t, dir) {
		if !strings.Contains(out, filepath.Base(f)) {
			t.Errorf("summary does not name %s: %s", filepath.Base(f), out)
		}
	}
	if keys, _ := srv.Objects("caps", ""); len(keys) != 0 {
		t.Errorf("objects stored: %v", keys)
	}
	if strings.Contains(out, "events from") {
		t.Errorf("-q printed the capture summary line: %s", out)
	}
}

// A key that may only PutObject (every read refused with AccessDenied):
// the start-up check is skipped with a warning, and every part is
// uploaded, confirmed by the PUT's answer alone.
func TestS3PutOnlyKey(t *testing.T) {
	fr := runUnderFault(t, s3test.ForbidReads, 0)
	if fr.res.code != 0 {
		t.Errorf("exit %d, want 0: %s", fr.res.code, fr.res.stderr)
	}
	if !strings.Contains(fr.res.stderr, "the start-up check is skipped") {
		t.Errorf("no warning about the skipped check: %s", fr.res.stderr)
	}
	if !slices.Equal(fr.keys, fr.files) {
		t.Errorf("objects %v, want every part %v", fr.keys, fr.files)
	}
	if got := fr.spooled(t); len(got) != 0 {
		t.Errorf("spool still holds %v", got)
	}
}
