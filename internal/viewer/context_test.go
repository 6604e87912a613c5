package viewer_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/capfile/capfiletest"
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
	data := bigCapture(t)
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

// bigCapture is golden-v1's records followed by incompressible events, so
// that the object is larger than a remote reader fetches whole at its
// first read (objstore.WholeBelow): the viewer must go back to the server.
func bigCapture(t *testing.T) []byte {
	t.Helper()
	h, recs := capfiletest.ReadAll(t, goldenV1)
	var buf bytes.Buffer
	w, err := capfile.NewWriter(&buf, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	var last int64
	for i := range recs {
		if err := w.Append(&recs[i]); err != nil {
			t.Fatal(err)
		}
		last = recs[i].Time
	}
	pad := make([]byte, 512)
	// 1,200 events of 512 random bytes (1 KiB as hex, about half that
	// compressed): some 600 KiB. The writer's timer may be writing to buf
	// meanwhile, so its length is read only once the writer is closed.
	for i := 0; i < 1200; i++ {
		if _, err := rand.Read(pad); err != nil {
			t.Fatal(err)
		}
		last += int64(time.Millisecond)
		payload := fmt.Sprintf(`{"type":"output.progress","session_id":"sess_pad","pad":%q}`, hex.EncodeToString(pad))
		if err := w.Append(&capfile.Record{Kind: capfile.KindReceived, Time: last, Session: "sess_pad", Payload: []byte(payload)}); err != nil {
			t.Fatal(err)
		}
		if i%100 == 0 {
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if buf.Len() < 2*objstore.WholeBelow {
		t.Fatalf("capture of %d bytes, want more than %d", buf.Len(), 2*objstore.WholeBelow)
	}
	return buf.Bytes()
}
