package capturecmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/objstore"
	"github.com/aaep-tools/aaepkit/objstore/s3test"
	"github.com/aaep-tools/aaepkit/spool"
	"github.com/aaep-tools/aaepkit/transport/transporttest"
)

// Uploads never replace an object. Two parts are left in the spool as by a
// run stopped after uploading them and before removing them: one whose
// object holds the same bytes counts as uploaded; one whose name another
// object holds stays in the spool, is named, and the exit status is 1;
// that object is untouched.
func TestS3ConditionalUploads(t *testing.T) {
	srv := s3test.Start(t, "caps")
	srv.SetEnv(t)
	prod := &transporttest.WSProducer{Frames: transporttest.Frames(transporttest.Events(5))}
	url := prod.Start(t)
	local := filepath.Join(t.TempDir(), "local.aaep")
	if res := capture(t, false, url, "-o", local, "--max-retries", "0"); res.code != 0 {
		t.Fatalf("local capture: %s", res.stderr)
	}
	part, err := os.ReadFile(local)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	dir := spool.Dir(root, objstore.URL{Scheme: "s3", Bucket: "caps", Key: "c/run.aaep"})
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	const same, other = "run-20260101T000000.000Z-000001.aaep", "run-20260101T000100.000Z-000002.aaep"
	for _, name := range []string{same, other} {
		if err := os.WriteFile(filepath.Join(dir, name), part, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := srv.Put("caps", "c/"+same, part); err != nil {
		t.Fatal(err)
	}
	foreign := []byte("someone else's object")
	if err := srv.Put("caps", "c/"+other, foreign); err != nil {
		t.Fatal(err)
	}
	res := capture(t, false, url, "-o", "s3://caps/c/run.aaep", "--spool", root, "--rotate-every", "1h", "--max-retries", "0", "--json")
	if res.code != 1 {
		t.Errorf("exit %d, want 1: %s", res.code, res.stderr)
	}
	var sum summary
	if err := json.Unmarshal([]byte(res.stdout), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Upload == nil || !slices.Equal(sum.Upload.Conflicts, []string{other}) {
		t.Errorf("conflicts %+v, want %s", sum.Upload, other)
	}
	if !strings.Contains(res.stderr, "already stored (by an earlier run)") || !strings.Contains(res.stderr, "s3://caps/c/"+other+" already exists and is not this part") {
		t.Errorf("stderr does not explain: %s", res.stderr)
	}
	if got, _ := srv.Get("caps", "c/"+other); !bytes.Equal(got, foreign) {
		t.Error("the other object was replaced")
	}
	if got := spooled(t, dir); len(got) != 1 || filepath.Base(got[0]) != other {
		t.Errorf("spool holds %v, want only %s", got, other)
	}
	keys, _ := srv.Objects("caps", "c/")
	if len(keys) != 3 { // the two and this run's part
		t.Errorf("objects %v", keys)
	}
}
