package capturecmd

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/objstore"
	"github.com/aaep-tools/aaepkit/objstore/s3test"
	"github.com/aaep-tools/aaepkit/spool"
)

// spoolEnv sets the environment for a server behind a proxy refusing
// writes, and starts a producer sending an event every 20 ms.
func spoolEnv(t *testing.T) (*s3test.Server, string) {
	t.Helper()
	srv, p := proxiedS3(t)
	p.SetFault(s3test.ForbidWrites)
	return srv, pacedURL(t, 20*time.Millisecond)
}

func spoolSize(t *testing.T, dir string) (n int64, names []string) {
	t.Helper()
	for _, f := range spooled(t, dir) {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		n += st.Size()
		names = append(names, filepath.Base(f))
	}
	return n, names
}

// --spool-max-size: while uploads are refused, the oldest parts whose
// upload failed are dropped, each only after an attempt to upload it
// failed; the parts dropped are named on stderr and in the summary, and the
// ones kept are the newest.
func TestSpoolMaxSizeDropsOldest(t *testing.T) {
	_, url := spoolEnv(t)
	root := t.TempDir()
	dir := spool.Dir(root, objstore.URL{Scheme: "s3", Bucket: "caps", Key: "l/run.aaep"})
	res := capture(t, false, url, "-o", "s3://caps/l/run.aaep", "--spool", root, "--rotate-every", "1s",
		"--duration", "5s", "--upload-wait", "0", "--s3-timeout", "1s", "--spool-max-size", "6KiB", "--json")
	var sum summary
	if err := json.Unmarshal([]byte(res.stdout), &sum); err != nil {
		t.Fatalf("%v: %s %s", err, res.stdout, res.stderr)
	}
	_, names := spoolSize(t, dir)
	up := sum.Upload
	if up == nil || len(up.Dropped) == 0 {
		t.Fatalf("nothing dropped: %+v; stderr: %s", up, res.stderr)
	}
	if res.code != 1 {
		t.Errorf("exit %d with parts dropped, want 1", res.code)
	}
	if !slices.Equal(up.Waiting, names) {
		t.Errorf("summary says %v wait, the spool holds %v", up.Waiting, names)
	}
	// Every part recorded is either dropped or waiting; the dropped ones
	// are the oldest.
	var parts []string
	for _, f := range sum.Files {
		parts = append(parts, filepath.Base(f))
	}
	if want := append(slices.Clone(up.Dropped), up.Waiting...); !slices.Equal(want, parts) {
		t.Errorf("dropped %v then waiting %v, want the parts recorded in order %v", up.Dropped, up.Waiting, parts)
	}
	for _, d := range up.Dropped {
		failed := strings.Index(res.stderr, "upload of "+d+" failed")
		dropped := strings.Index(res.stderr, "dropped the oldest part whose upload failed, "+d)
		if failed < 0 || dropped < failed {
			t.Errorf("%s: dropped at %d of stderr, its failed upload at %d: %s", d, dropped, failed, res.stderr)
		}
	}
}

// A free-space floor no part can satisfy: the parts whose upload failed
// are dropped (named, exit 1), and then, with none left that may be
// dropped, the recording goes on past the floor with a warning until it
// is stopped (here by --duration): only a full disk stops a recording.
func TestSpoolOverLimitGoesOn(t *testing.T) {
	_, url := spoolEnv(t)
	root := t.TempDir()
	res := capture(t, false, url, "-o", "s3://caps/l/run.aaep", "--spool", root, "--rotate-every", "1s",
		"--duration", "4s", "--upload-wait", "0", "--s3-timeout", "1s", "--spool-min-free", "4000000GiB", "--json")
	if res.code != 1 {
		t.Errorf("exit %d, want 1 (parts were dropped): %s", res.code, res.stderr)
	}
	if !strings.Contains(res.stderr, "--spool-min-free") || !strings.Contains(res.stderr, "recording goes on past the limit") {
		t.Errorf("stderr does not say the recording goes on past the floor: %s", res.stderr)
	}
	var sum summary
	if err := json.Unmarshal([]byte(res.stdout), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.StopReason != stopDuration {
		t.Errorf("stop reason %q, want %q: only a full disk stops a recording", sum.StopReason, stopDuration)
	}
	if sum.Upload == nil || len(sum.Upload.Dropped) == 0 || !strings.Contains(sum.Upload.Error, sum.Upload.Dropped[0]) {
		t.Errorf("the summary does not name the parts dropped: %+v", sum.Upload)
	}
}

// A spool shared by two recorders of one prefix, S3 refusing uploads: each
// answers for its own parts. The fast one (500 events/s) breaks its limit
// and drops its own parts whose upload failed; the slow one (20 events/s)
// keeps every part it recorded, however much the fast one holds.
func TestSpoolSharedByTwoRecorders(t *testing.T) {
	_, slowURL := spoolEnv(t)
	fast := httptest.NewServer(&pacedProducer{gap: 2 * time.Millisecond})
	t.Cleanup(fast.Close)
	fastURL := "ws" + strings.TrimPrefix(fast.URL, "http") + "/aaep/v1/ws"
	root := t.TempDir()
	args := func(url, name string) []string {
		return []string{url, "-o", "s3://caps/l/" + name, "--spool", root, "--rotate-every", "1s", "--duration", "5s",
			"--upload-wait", "0", "--s3-timeout", "1s", "--spool-max-size", "24KiB", "--json"}
	}
	results := make(chan result, 1)
	go func() { results <- capture(t, false, args(fastURL, "fast.aaep")...) }()
	slowRes := capture(t, false, args(slowURL, "slow.aaep")...)
	fastRes := <-results
	var slowSum, fastSum summary
	if err := json.Unmarshal([]byte(slowRes.stdout), &slowSum); err != nil {
		t.Fatalf("slow: %v: %s", err, slowRes.stderr)
	}
	if err := json.Unmarshal([]byte(fastRes.stdout), &fastSum); err != nil {
		t.Fatalf("fast: %v: %s", err, fastRes.stderr)
	}
	if fastSum.Upload == nil || len(fastSum.Upload.Dropped) == 0 {
		t.Fatalf("the fast recorder dropped nothing (the test's limit is too large): %+v; stderr: %s", fastSum.Upload, fastRes.stderr)
	}
	if fastRes.code != 1 || !strings.Contains(fastSum.Upload.Error, "dropped") {
		t.Errorf("fast recorder: exit %d, error %q; want 1, naming the parts dropped", fastRes.code, fastSum.Upload.Error)
	}
	if slowSum.Upload == nil || len(slowSum.Upload.Dropped) != 0 {
		t.Fatalf("the slow recorder dropped %v, for the fast one's parts; stderr: %s", slowSum.Upload, slowRes.stderr)
	}
	// Every event the slow one recorded is in its parts in the spool.
	dir := spool.Dir(root, objstore.URL{Scheme: "s3", Bucket: "caps", Key: "l/slow.aaep"})
	var events int64
	for _, name := range slowSum.Upload.Waiting {
		events += countReceived(t, filepath.Join(dir, name))
	}
	if events != slowSum.Events || events == 0 {
		t.Errorf("the slow recorder's parts hold %d events, it recorded %d", events, slowSum.Events)
	}
}

// countReceived counts the received records of a capture file.
func countReceived(t *testing.T, path string) int64 {
	t.Helper()
	r, err := capfile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var n int64
	for {
		rec, err := r.Next()
		if err != nil {
			return n
		}
		if rec.Kind == capfile.KindReceived {
			n++
		}
	}
}

// With S3 up, a limit smaller than what a part grows to drops nothing: no
// part is dropped before its upload was tried and failed; the recording
// goes on past the limit, and every part reaches the bucket.
func TestSpoolLimitNeverDropsUntried(t *testing.T) {
	srv, url := spoolEnv(t)
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v) // straight to the server: uploads succeed
	}
	root := t.TempDir()
	res := capture(t, false, url, "-o", "s3://caps/l/run.aaep", "--spool", root, "--rotate-every", "1s",
		"--duration", "3s", "--upload-wait", "10s", "--spool-max-size", "1KiB", "--json")
	var sum summary
	if err := json.Unmarshal([]byte(res.stdout), &sum); err != nil {
		t.Fatalf("%v: %s", err, res.stderr)
	}
	if res.code != 0 || sum.Upload == nil || len(sum.Upload.Dropped) != 0 || sum.Upload.Pending != 0 {
		t.Fatalf("exit %d, upload %+v; want 0, nothing dropped, nothing left: %s", res.code, sum.Upload, res.stderr)
	}
	if sum.StopReason != stopDuration || sum.Events == 0 {
		t.Errorf("stopped for %q after %d events, want %q", sum.StopReason, sum.Events, stopDuration)
	}
}

// With --rotate-size, a --spool-max-size smaller than two parts (the one
// being written and the one uploading) is refused at start, exit 2.
func TestSpoolLimitSmallerThanTwoParts(t *testing.T) {
	_, url := spoolEnv(t)
	res := capture(t, false, url, "-o", "s3://caps/l/run.aaep", "--spool", t.TempDir(), "--rotate-size", "1MiB",
		"--spool-max-size", "1536KiB", "--duration", "1s")
	if res.code != 2 || !strings.Contains(res.stderr, "--spool-max-size") || !strings.Contains(res.stderr, "two parts") {
		t.Errorf("exit %d, %q; want 2, naming the limit and the parts", res.code, res.stderr)
	}
}

// After the first signal the recorder says what it waits for and how long:
// with an s3:// output, the uploads, for --upload-wait at most.
func TestFirstSignalSaysWhatItWaitsFor(t *testing.T) {
	_, url := spoolEnv(t) // uploads refused: there is something to wait for
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, cli.Streams{In: strings.NewReader(""), Out: &syncBuffer{}, Err: &errb},
			[]string{url, "-o", "s3://caps/l/sig.aaep", "--spool", t.TempDir(), "--rotate-every", "1s", "--upload-wait", "1500ms", "--s3-timeout", "1s"})
	}()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(errb.String(), "upload of ") { // a part closed and its upload failed
		if time.Now().After(deadline) {
			t.Fatalf("no upload tried: %s", errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel() // the first signal
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the recorder did not stop")
	}
	if !strings.Contains(errb.String(), "stopping: closing the sources and the last part, then waiting up to 1.5s (--upload-wait)") {
		t.Errorf("the first signal is not answered with what is waited for: %s", errb.String())
	}
}

// The recorder records from its first moment: while S3 hangs (a server
// that accepts connections and never answers, and a stall timeout longer
// than the test), the start-up check runs beside the recording, which
// records all the same; what it recorded stays in the spool.
func TestRecordsWhileS3Hangs(t *testing.T) {
	_, p := proxiedS3(t)
	p.SetFault(s3test.BlackHole)
	url := pacedURL(t, 20*time.Millisecond)
	res := capture(t, false, url, "-o", "s3://caps/h/run.aaep", "--spool", t.TempDir(), "--rotate-every", "1s",
		"--duration", "2s", "--upload-wait", "0", "--s3-timeout", "1h", "--json")
	var sum summary
	if err := json.Unmarshal([]byte(res.stdout), &sum); err != nil {
		t.Fatalf("%v: %s", err, res.stderr)
	}
	if sum.Events == 0 || sum.Upload == nil || len(sum.Upload.Waiting) == 0 {
		t.Errorf("%d events recorded, upload %+v; want the events recorded into the spool while S3 hangs", sum.Events, sum.Upload)
	}
}

// A start-up check that fails for good (no such bucket) stops the
// recording, which started at once: what it recorded stays in the spool,
// named, and the exit status is 1.
func TestFailedCheckKeepsTheRecording(t *testing.T) {
	srv := s3test.Start(t, "caps")
	srv.SetEnv(t)
	url := pacedURL(t, 20*time.Millisecond)
	root := t.TempDir()
	res := capture(t, false, url, "-o", "s3://nope/x/run.aaep", "--spool", root, "--rotate-every", "1s", "--duration", "5s", "--json")
	if res.code != 1 || !strings.Contains(res.stderr, "nope") || !strings.Contains(res.stderr, "stays in the spool") {
		t.Errorf("exit %d, want 1 saying the bucket is missing and the recording stays in the spool: %s", res.code, res.stderr)
	}
	var sum summary
	if err := json.Unmarshal([]byte(res.stdout), &sum); err != nil {
		t.Fatalf("%v: %s", err, res.stderr)
	}
	if sum.Upload == nil || sum.Upload.Error == "" {
		t.Errorf("the summary says no error: %+v", sum.Upload)
	}
	dir := spool.Dir(root, objstore.URL{Scheme: "s3", Bucket: "nope", Key: "x/run.aaep"})
	for _, f := range spooled(t, dir) {
		if !strings.Contains(res.stderr, filepath.Base(f)) {
			t.Errorf("%s stays in the spool unnamed: %s", f, res.stderr)
		}
	}
}
