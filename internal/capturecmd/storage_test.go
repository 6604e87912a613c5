package capturecmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/objstore"
	"github.com/aaep-tools/aaepkit/objstore/s3test"
	"github.com/aaep-tools/aaepkit/spool"
	"github.com/aaep-tools/aaepkit/transport/transporttest"
)

// remoteCapture reads an object as a capture; it must be cleanly closed.
func remoteCapture(t *testing.T, srv *s3test.Server, bucket, key string) (capfile.Header, []capfile.Record) {
	t.Helper()
	data, err := srv.Get(bucket, key)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	r, err := capfile.NewReaderAt(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	defer r.Close()
	if !r.Clean() {
		t.Errorf("%s is not a cleanly closed capture", key)
	}
	var recs []capfile.Record
	for {
		rec, err := r.Next()
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("%s: %v", key, err)
			}
			break
		}
		recs = append(recs, rec.Clone())
	}
	return r.Header(), recs
}

// spooled lists the capture files left in a spool directory.
func spooled(t *testing.T, dir string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.aaep"))
	return files
}

// Rotation: each part becomes one object, named so that the names sort in
// time order; the spool is emptied; the summary names the objects.
func TestS3RotationUploads(t *testing.T) {
	srv := s3test.Start(t, "caps")
	srv.SetEnv(t)
	events := transporttest.Events(20)
	p := &transporttest.WSProducer{Frames: transporttest.Frames(events), Hold: true}
	url := p.Start(t)
	root := t.TempDir()
	res := capture(t, false, url, "-o", "s3://caps/fleet/agent.aaep", "--spool", root,
		"--rotate-every", "1s", "--duration", "2300ms", "--json")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	keys, err := srv.Objects("caps", "fleet/")
	// The first part holds the stream, the third the goodbye at the stop;
	// no record fell in the second second, so it has no part.
	if err != nil || len(keys) != 2 {
		t.Fatalf("objects %v, %v; want 2 parts", keys, err)
	}
	var received int
	var last time.Time
	for i, k := range keys {
		if !strings.HasPrefix(k, "fleet/agent-") || !strings.HasSuffix(k, ".aaep") {
			t.Errorf("part name %q", k)
		}
		h, recs := remoteCapture(t, srv, "caps", k)
		if !h.Start.After(last) {
			t.Errorf("part %d (%s) starts at %v, not after the previous part (%v)", i+1, k, h.Start, last)
		}
		last = h.Start
		received += len(kinds(recs, capfile.KindReceived))
	}
	if received != len(events)+1 { // the events and the subscription answer
		t.Errorf("%d received records in the parts, want %d", received, len(events)+1)
	}
	if left := spooled(t, spool.Dir(root, objstore.URL{Scheme: "s3", Bucket: "caps", Key: "fleet/agent.aaep"})); len(left) != 0 {
		t.Errorf("spool still holds %v", left)
	}
	var sum summary
	if err := json.Unmarshal([]byte(res.stdout), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Upload == nil || sum.Upload.Uploaded != 2 || len(sum.Files) != 2 || sum.Files[0] != "s3://caps/"+keys[0] {
		t.Errorf("summary files %v upload %+v", sum.Files, sum.Upload)
	}
	if strings.Contains(res.stderr+res.stdout, s3test.SecretKey) {
		t.Error("the secret key was printed")
	}
	for _, k := range keys {
		data, _ := srv.Get("caps", k)
		if bytes.Contains(data, []byte(s3test.SecretKey)) || bytes.Contains(data, []byte(s3test.AccessKey)) {
			t.Errorf("%s holds a credential", k)
		}
	}
}

// Without rotation the object is the one named; an existing object of that
// name is never replaced.
func TestS3SingleObjectNotReplaced(t *testing.T) {
	srv := s3test.Start(t, "caps")
	srv.SetEnv(t)
	p := &transporttest.WSProducer{Frames: transporttest.Frames(transporttest.Events(5))}
	url := p.Start(t)
	root := t.TempDir()
	res := capture(t, false, url, "-o", "s3://caps/one.aaep", "--spool", root, "--max-retries", "0")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	_, recs := remoteCapture(t, srv, "caps", "one.aaep")
	if n := len(kinds(recs, capfile.KindReceived)); n != 6 {
		t.Errorf("%d received records, want 6", n)
	}
	before, _ := srv.Get("caps", "one.aaep")
	res = capture(t, false, url, "-o", "s3://caps/one.aaep", "--spool", root, "--max-retries", "0")
	if res.code != 2 || !strings.Contains(res.stderr, "already exists") {
		t.Errorf("second recording to the same object: exit %d, %s; want 2 and 'already exists'", res.code, res.stderr)
	}
	if after, _ := srv.Get("caps", "one.aaep"); !bytes.Equal(before, after) {
		t.Error("the existing object was changed")
	}
}

// Wrong credentials: a clear error, exit 1, nothing uploaded, the secret
// never printed; what was recorded while the start-up check ran stays in
// the spool, and the error names it there (issue 33, item 6: the recorder
// records from its first moment).
func TestS3WrongCredentials(t *testing.T) {
	srv := s3test.Start(t, "caps")
	srv.SetEnv(t)
	const wrong = "wrong-secret-key-wrong-secret-key-wrong00"
	t.Setenv("AWS_SECRET_ACCESS_KEY", wrong)
	p := &transporttest.WSProducer{Frames: transporttest.Frames(transporttest.Events(5)), Hold: true}
	url := p.Start(t)
	root := t.TempDir()
	res := capture(t, false, url, "-o", "s3://caps/x/run.aaep", "--spool", root, "--rotate-every", "1s", "--duration", "5s")
	if res.code != 1 {
		t.Errorf("exit %d, want 1; stderr: %s", res.code, res.stderr)
	}
	if !strings.Contains(res.stderr, "refused the credentials") || !strings.Contains(res.stderr, "SignatureDoesNotMatch") {
		t.Errorf("stderr does not explain: %s", res.stderr)
	}
	if strings.Contains(res.stderr, wrong) {
		t.Error("the secret key was printed")
	}
	if keys, _ := srv.Objects("caps", ""); len(keys) != 0 {
		t.Errorf("objects stored: %v", keys)
	}
	left, _ := filepath.Glob(filepath.Join(root, "*", "*", "*", "*.aaep"))
	for _, f := range left {
		if !strings.Contains(res.stderr, filepath.Base(f)) {
			t.Errorf("the spool keeps %s, but stderr does not name it: %s", f, res.stderr)
		}
	}
}

// The server is down when recording starts and for a while after: parts
// wait in the spool, uploads are retried (and say so), and once the server
// is back every part is stored.
func TestS3ServerUnavailable(t *testing.T) {
	srv := s3test.Start(t, "caps")
	srv.SetEnv(t)
	srv.Stop()
	events := transporttest.Events(30)
	p := &transporttest.WSProducer{Frames: transporttest.Frames(events), Hold: true}
	url := p.Start(t)
	root := t.TempDir()
	// The server comes back once the recorder has said it retries (not
	// after a fixed time, which a loaded machine may take to get there).
	var errb syncBuffer
	stop := make(chan struct{})
	restarted := make(chan struct{})
	go func() {
		defer close(restarted)
		for !strings.Contains(errb.String(), "retrying in") {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
		if err := srv.Restart(); err != nil {
			t.Error(err)
		}
	}()
	res := captureTo(t, 30*time.Second, &errb, url, "-o", "s3://caps/out/run.aaep", "--spool", root,
		"--rotate-every", "1s", "--duration", "2200ms", "--json", "--upload-wait", "25s")
	close(stop)
	<-restarted
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	if !strings.Contains(res.stderr, "retrying in") {
		t.Errorf("retries not visible on stderr: %s", res.stderr)
	}
	var sum summary
	if err := json.Unmarshal([]byte(res.stdout), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Upload == nil || sum.Upload.Retries == 0 || sum.Upload.Pending != 0 {
		t.Errorf("upload summary %+v, want retries and nothing pending", sum.Upload)
	}
	keys, _ := srv.Objects("caps", "out/")
	received := 0
	for _, k := range keys {
		_, recs := remoteCapture(t, srv, "caps", k)
		received += len(kinds(recs, capfile.KindReceived))
	}
	if len(keys) != 2 || received != len(events)+1 {
		t.Errorf("%d objects holding %d received records, want 2 holding %d", len(keys), received, len(events)+1)
	}
}

// kill -9 in the middle of a part: the next run with the same output
// repairs the part left in the spool and uploads it first; every record
// that was flushed before the kill is in the bucket.
func TestS3KillMidPartThenRestart(t *testing.T) {
	srv := s3test.Start(t, "caps")
	events := transporttest.Events(200)
	p := &transporttest.WSProducer{Frames: transporttest.Frames(events), Hold: true}
	url := p.Start(t)
	root := t.TempDir()
	out := "s3://caps/k/run.aaep"
	dir := spool.Dir(root, objstore.URL{Scheme: "s3", Bucket: "caps", Key: "k/run.aaep"})
	start := func(args ...string) (*exec.Cmd, *syncBuffer) {
		cmd := exec.Command(binary(t), append([]string{url, "-o", out, "--spool", root, "--rotate-every", "1h", "--flush-interval", "50ms"}, args...)...)
		cmd.Env = append(os.Environ(), srv.Env()...)
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
		return cmd, stderr
	}
	cmd, _ := start()
	var part string
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if files := spooled(t, dir); len(files) == 1 && readable(files[0]) == len(events)+1 {
			part = files[0]
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if part == "" {
		t.Fatalf("the spool never held the %d records", len(events)+1)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if keys, _ := srv.Objects("caps", ""); len(keys) != 0 {
		t.Fatalf("objects before the restart: %v", keys)
	}
	cmd, stderr := start("--duration", "500ms")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("restarted recorder: %v: %s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "from an earlier run") {
		t.Errorf("the recovery is not reported: %s", stderr.String())
	}
	keys, _ := srv.Objects("caps", "k/")
	if len(keys) != 2 {
		t.Fatalf("objects %v, want the recovered part and the new one", keys)
	}
	sort.Strings(keys)
	if filepath.Base(keys[0]) != filepath.Base(part) {
		t.Errorf("first object %s, want the killed run's part %s", keys[0], filepath.Base(part))
	}
	_, recs := remoteCapture(t, srv, "caps", keys[0])
	if n := len(kinds(recs, capfile.KindReceived)); n != len(events)+1 {
		t.Errorf("recovered part holds %d received records, want %d", n, len(events)+1)
	}
	if left := spooled(t, dir); len(left) != 0 {
		t.Errorf("spool still holds %v", left)
	}
}

// An endpoint that is not S3 (a web server answering HTML 404 pages) fails
// the start-up check, exit 1, saying what answered. Recording started at
// once, beside the check: it stops, and what it recorded stays in the
// spool, named. --s3-no-sign says that requests go unsigned.
func TestS3EndpointNotS3(t *testing.T) {
	// The web server answers once the recording is in the spool, so that
	// the check fails after recording started, however the two goroutines
	// are scheduled on a loaded machine (answered at once, the check could
	// stop the recorder before its source had connected).
	var spoolRoot atomic.Value // string: the current run's --spool
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		root, _ := spoolRoot.Load().(string)
		for end := time.Now().Add(20 * time.Second); root != "" && time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
			if left, _ := filepath.Glob(filepath.Join(root, "*", "*", "*", "*.aaep")); len(left) > 0 {
				break
			}
		}
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, "<html><head><title>Page not found</title></head><body>Sorry.</body></html>")
	}))
	defer web.Close()
	srv := s3test.Start(t, "caps")
	srv.SetEnv(t)
	p := &transporttest.WSProducer{Frames: transporttest.Frames(transporttest.Events(5)), Hold: true}
	url := p.Start(t)
	for _, args := range [][]string{nil, {"--s3-no-sign"}} {
		root := t.TempDir()
		spoolRoot.Store(root)
		res := capture(t, false, append([]string{url, "-o", "s3://caps/x/run.aaep", "--spool", root, "--rotate-every", "1s",
			"--duration", "5s", "--s3-endpoint", web.URL}, args...)...)
		if res.code != 1 {
			t.Errorf("%q: exit %d, want 1; stderr: %s", args, res.code, res.stderr)
		}
		for _, want := range []string{`/caps/x/run.aaep": not an S3 server: it answered 404 Not Found with an HTML page`, `"Page not found"`, "--s3-endpoint"} {
			if !strings.Contains(res.stderr, want) {
				t.Errorf("%q: stderr does not say %q: %s", args, want, res.stderr)
			}
		}
		unsigned := strings.Contains(res.stderr, "warning: requests to s3://caps go unsigned (anonymous), as asked")
		if unsigned != (len(args) > 0) {
			t.Errorf("%q: unsigned warning %v; stderr: %s", args, unsigned, res.stderr)
		}
		left, _ := filepath.Glob(filepath.Join(root, "*", "*", "*", "*.aaep"))
		if len(left) == 0 {
			t.Errorf("%q: the recording is not in the spool", args)
		}
		for _, f := range left {
			if !strings.Contains(res.stderr, filepath.Base(f)) {
				t.Errorf("%q: %s stays in the spool unnamed: %s", args, f, res.stderr)
			}
		}
	}
}
