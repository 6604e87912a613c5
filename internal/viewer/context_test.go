package viewer_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/internal/viewer"
	"github.com/aaep-tools/aaepkit/objstore"
	"github.com/aaep-tools/aaepkit/objstore/s3test"
	"github.com/aaep-tools/aaepkit/recording"
)

// The viewer reads an object's index with the caller's context: when the
// server stops answering (a black hole), cancelling the context (Ctrl-C)
// ends New at once instead of after the stall timeout.
func TestNewCancelledOnHungServer(t *testing.T) {
	srv := s3test.Start(t, "caps")
	data, err := os.ReadFile(goldenV1)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Put("caps", "run.aaep", data); err != nil {
		t.Fatal(err)
	}
	proxy := s3test.StartProxy(t, srv)
	srv.SetEnv(t)
	t.Setenv("AWS_ENDPOINT_URL_S3", proxy.Endpoint)
	recs, err := recording.Open(context.Background(), []string{"s3://caps/run.aaep"}, recording.Options{Storage: objstore.Options{Retries: -1}})
	if err != nil {
		t.Fatal(err)
	}
	proxy.SetFault(s3test.BlackHole)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	done := make(chan error, 1)
	go func() {
		v, err := viewer.New(viewer.Options{Recording: recording.Join(recs), Context: ctx})
		if v != nil {
			v.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("New with a cancelled context on a hung server = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("New went on reading after its context was cancelled")
	}
	if proxy.Faulted(s3test.BlackHole) == 0 {
		t.Error("no request reached the black hole: New read nothing from the server")
	}
}
