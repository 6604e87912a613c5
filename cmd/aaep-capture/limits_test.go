package main

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/objstore"
	"github.com/aaep-tools/aaepkit/objstore/s3test"
	"github.com/aaep-tools/aaepkit/spool"
)

// spoolEnv sets the environment for a server behind a proxy refusing
// writes, and starts a producer sending an event every 20 ms.
func spoolEnv(t *testing.T) (*s3test.Server, string) {
	t.Helper()
	srv := s3test.Start(t, "caps")
	p := s3test.StartProxy(t, srv)
	for _, kv := range p.Env(srv) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	p.SetFault(s3test.ForbidWrites)
	prod := httptest.NewServer(&pacedProducer{gap: 20 * time.Millisecond})
	t.Cleanup(prod.Close)
	return srv, "ws" + strings.TrimPrefix(prod.URL, "http") + "/aaep/v1/ws"
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

// --spool-max-size: while uploads are refused, the oldest parts are dropped
// so that the spool stays within its limit; the parts dropped are named on
// stderr and in the summary, and the ones kept are the newest.
func TestSpoolMaxSizeDropsOldest(t *testing.T) {
	_, url := spoolEnv(t)
	root := t.TempDir()
	dir := spool.Dir(root, objstore.URL{Scheme: "s3", Bucket: "caps", Key: "l/run.aaep"})
	const limit = 6 << 10
	res := capture(t, false, url, "-o", "s3://caps/l/run.aaep", "--spool", root, "--rotate-every", "1s",
		"--duration", "5s", "--upload-wait", "0", "--s3-timeout", "1s", "--spool-max-size", "6KiB", "--json")
	var sum summary
	if err := json.Unmarshal([]byte(res.stdout), &sum); err != nil {
		t.Fatalf("%v: %s %s", err, res.stdout, res.stderr)
	}
	size, names := spoolSize(t, dir)
	if size > limit {
		t.Errorf("spool holds %d bytes, over the %d limit", size, limit)
	}
	up := sum.Upload
	if up == nil || len(up.Dropped) == 0 {
		t.Fatalf("nothing dropped: %+v; stderr: %s", up, res.stderr)
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
		if !strings.Contains(res.stderr, "dropped the oldest part waiting, "+d) {
			t.Errorf("stderr does not name the dropped %s: %s", d, res.stderr)
		}
	}
}

// A free-space floor no part can satisfy: the waiting parts are dropped,
// then the recording stops with an error naming the floor, exit 1.
func TestSpoolMinFreeStops(t *testing.T) {
	_, url := spoolEnv(t)
	root := t.TempDir()
	res := capture(t, false, url, "-o", "s3://caps/l/run.aaep", "--spool", root, "--rotate-every", "1s",
		"--duration", "20s", "--upload-wait", "0", "--s3-timeout", "1s", "--spool-min-free", "4000000GiB", "--json")
	if res.code != 1 {
		t.Errorf("exit %d, want 1: %s", res.code, res.stderr)
	}
	if !strings.Contains(res.stderr, "--spool-min-free") || !strings.Contains(res.stderr, "stopping the recording") {
		t.Errorf("stderr does not explain: %s", res.stderr)
	}
	var sum summary
	if err := json.Unmarshal([]byte(res.stdout), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.StopReason != stopSpoolFull {
		t.Errorf("stop reason %q, want %q", sum.StopReason, stopSpoolFull)
	}
	if sum.Seconds > 10 {
		t.Errorf("recorded for %.1f s: the floor did not stop it", sum.Seconds)
	}
}
