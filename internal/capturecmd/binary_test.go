package capturecmd

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/binarytest"
	"github.com/aaep-tools/aaepkit/internal/testdeps"
	"github.com/aaep-tools/aaepkit/objstore/s3test"
	"github.com/aaep-tools/aaepkit/transport/transporttest"
)

// captureBin is the real aaep-capture with aaep-capture-grpc beside it, to
// which it hands gRPC endpoints.
var captureBin = binarytest.New(capturePkg, "aaep-capture").With(capturePkg+"-grpc", SiblingName)

const capturePkg = "github.com/aaep-tools/aaepkit/cmd/aaep-capture"

// binary builds the real aaep-capture once per test run.
func binary(t *testing.T) string { return captureBin.Path(t) }

// startBinary starts aaep-capture with args; stderr is collected.
func startBinary(t *testing.T, args ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	cmd.Stdout = io.Discard
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

// readable counts the received records that can be read from a capture
// that may still be being written (its torn tail is not an error here).
func readable(path string) int {
	r, err := capfile.Open(path)
	if err != nil {
		return 0
	}
	defer r.Close()
	n := 0
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

// waitReadable polls until n received records can be read from path.
func waitReadable(t *testing.T, path string, n int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for readable(path) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d records never became readable in %s (have %d)", n, path, readable(path))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestBinarySIGINT(t *testing.T) {
	t.Parallel()
	events := transporttest.Events(200)
	p := &transporttest.WSProducer{Frames: transporttest.Frames(events), Hold: true}
	url := p.Start(t)
	out := filepath.Join(t.TempDir(), "int.aaep")
	cmd, stderr := startBinary(t, "--endpoint", url, "--output", out, "--header", "Authorization: Bearer sigint-secret-77")
	waitReadable(t, out, len(events)+1) // the accepted message and the events
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGINT: %v; stderr %s", err, stderr.String())
	}
	if zout, err := exec.Command(testdeps.Command(t, "zstd", "zstd"), "-t", out).CombinedOutput(); err != nil {
		t.Fatalf("zstd -t: %v\n%s", err, zout)
	}
	r, err := capfile.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, recs := readCapture(t, out)
	if !r.Clean() {
		t.Error("capture not closed cleanly (no index)")
	}
	checkEvents(t, recs, append([][]byte{kinds(recs, capfile.KindReceived)[0].Payload}, events...))
	if last := recs[len(recs)-1]; !bytes.Contains(last.Payload, []byte(`"capture stopped"`)) {
		t.Errorf("last record %s", last.Payload)
	}
	if !strings.Contains(stderr.String(), "stopped: interrupted") {
		t.Errorf("summary %q", stderr.String())
	}
	if rcv := p.Received(); len(rcv) < 2 || !bytes.Contains(rcv[len(rcv)-1], []byte("subscription.close")) {
		t.Errorf("producer did not get a subscription.close: %q", rcv)
	}
	assertAbsent(t, out, "sigint-secret-77")
}

func TestBinarySIGTERMStopsExecChild(t *testing.T) {
	t.Parallel()
	child := transporttest.StdioChild{Events: 10, Wait: true}
	out := filepath.Join(t.TempDir(), "term.aaep")
	cmd, stderr := startBinary(t, append([]string{"-o", out, "--exec", "--"}, child.Args()...)...)
	waitReadable(t, out, 11)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v; stderr %s", err, stderr.String())
	}
	_, recs := readCapture(t, out)
	if n := len(kinds(recs, capfile.KindReceived)); n != 11 {
		t.Errorf("%d received", n)
	}
	if ev := connEvents(recs); ev[len(ev)-1] != "closed" {
		t.Errorf("events %v", ev)
	}
}

// pacedProducer is a WebSocket producer that sends sourcetest events every
// gap until the connection breaks, and notes when each write returned (the

// proxiedS3 starts an S3 server with a bucket "caps" behind a proxy that
// injects faults, and points the recorder's S3 environment at the proxy.
func proxiedS3(t *testing.T) (*s3test.Server, *s3test.Proxy) {
	t.Helper()
	srv := s3test.Start(t, "caps")
	p := s3test.StartProxy(t, srv)
	for _, kv := range p.Env(srv) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	return srv, p
}

// pacedURL serves a pacedProducer with gap between events for the rest
// of the test and returns its WebSocket endpoint.
func pacedURL(t *testing.T, gap time.Duration) string {
	t.Helper()
	prod := httptest.NewServer(&pacedProducer{gap: gap})
	t.Cleanup(prod.Close)
	return "ws" + strings.TrimPrefix(prod.URL, "http") + "/aaep/v1/ws"
}

// event was handed to the connection: acknowledged to the producer).
type pacedProducer struct {
	gap    time.Duration
	mu     sync.Mutex
	sentAt []time.Time
}

func (p *pacedProducer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	up := websocket.Upgrader{Subprotocols: []string{"aaep.v1"}}
	c, err := up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer c.Close()
	go func() { // the recorder's subscription.request, and the close
		for {
			if _, _, err := c.ReadMessage(); err != nil {
				return
			}
		}
	}()
	t := time.NewTicker(p.gap)
	defer t.Stop()
	for i := 0; ; i++ {
		if err := c.WriteMessage(websocket.TextMessage, transporttest.Event(i)); err != nil {
			return
		}
		p.mu.Lock()
		p.sentAt = append(p.sentAt, time.Now())
		p.mu.Unlock()
		<-t.C
	}
}

func (p *pacedProducer) sent() []time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Time(nil), p.sentAt...)
}

// TestBinarySIGKILL: the README promises that a killed recorder loses at
// most the last 100 ms (the default --flush-interval). A producer sends an
// event every 5 ms (slow enough that zstd never fills a 128 KiB block before
// the kill: only the timed flushes make events durable); aaep-capture is
// killed with SIGKILL while they flow;
// every event acknowledged to the producer more than 100 ms before the kill
// must be readable from the file, with 150 ms of slack for a loaded machine
// (the race detector, other tests on two cores).
func TestBinarySIGKILL(t *testing.T) {
	const promise, slack = 100 * time.Millisecond, 150 * time.Millisecond
	p := &pacedProducer{gap: 5 * time.Millisecond}
	srv := httptest.NewServer(p)
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "kill.aaep")
	cmd, _ := startBinary(t, "ws"+strings.TrimPrefix(srv.URL, "http")+"/aaep/v1/ws", "-o", out)
	// Let events flow for a while (several flushes, under 60 KiB), then kill.
	deadline := time.Now().Add(20 * time.Second)
	for len(p.sent()) < 120 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d events sent in 20 s", len(p.sent()))
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The running recorder's capture is being written: its end is "not
	// yet" to a reader, not torn.
	if !capfile.BeingWritten(out) {
		t.Error("BeingWritten = false for the capture of a running aaep-capture")
	}
	if live := readEnd(t, out); !capfile.IsLive(live) {
		t.Errorf("end of a capture aaep-capture is writing: %v, want it named as being written", live)
	}
	killAt := time.Now()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if capfile.BeingWritten(out) {
		t.Error("BeingWritten = true after kill -9")
	}
	sent := p.sent()
	n := readable(out)
	if n > len(sent) {
		t.Fatalf("%d events readable, only %d sent", n, len(sent))
	}
	lost := time.Duration(0)
	if n < len(sent) {
		lost = killAt.Sub(sent[n]) // the oldest event lost was acknowledged this long before the kill
	}
	t.Logf("%d of %d events readable after SIGKILL; the oldest lost one was sent %v before the kill", n, len(sent), lost)
	if lost > promise+slack {
		t.Errorf("a SIGKILL lost the events of the last %v, more than the README's %v (+%v slack)", lost, promise, slack)
	}
	if err := readEnd(t, out); !capfile.IsTorn(err) || capfile.IsLive(err) {
		t.Errorf("end of a killed capture: %v, want a torn tail", err)
	}
}

// readEnd reads the capture at path to its end and returns how it ended.
func readEnd(t *testing.T, path string) error {
	t.Helper()
	r, err := capfile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		if _, err = r.Next(); err != nil {
			return err
		}
	}
}
