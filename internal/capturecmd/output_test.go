package capturecmd

import (
	"bytes"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/binarytest"
	"github.com/aaep-tools/aaepkit/transport/transporttest"
)

// runCapture runs the real aaep-capture in dir to completion.
func runCapture(t *testing.T, dir string, args ...string) (int, []byte, string) {
	t.Helper()
	return captureBin.Run(t, dir, args...)
}

// jsonlDir holds events.jsonl, a JSON Lines file of 50 events.
func jsonlDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var b bytes.Buffer
	for _, e := range transporttest.Events(50) {
		b.Write(e)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(dir, "events.jsonl"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func received(t *testing.T, data []byte) int {
	t.Helper()
	r, err := capfile.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("not a capture: %v", err)
	}
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

func TestCaptureOutputIsInputRefused(t *testing.T) {
	dir := jsonlDir(t)
	in := filepath.Join(dir, "events.jsonl")
	before, _ := os.ReadFile(in)
	os.Symlink("events.jsonl", filepath.Join(dir, "sym.aaep"))
	os.Link(in, filepath.Join(dir, "hard.aaep"))
	for _, out := range []string{"events.jsonl", "./events.jsonl", "sym.aaep", "hard.aaep"} {
		code, _, stderr := runCapture(t, dir, "events.jsonl", "-o", out, "--force")
		if code != 2 || !strings.Contains(stderr, "same file as an input") {
			t.Errorf("-o %s: exit %d, %q; want 2 and a refusal", out, code, stderr)
		}
	}
	// --subscribe-file and --cacert are inputs too.
	os.WriteFile(filepath.Join(dir, "sub.json"), []byte("{}"), 0o644)
	code, _, stderr := runCapture(t, dir, "events.jsonl", "--subscribe-file", "sub.json", "-o", "sub.json", "--force")
	if code != 2 || !strings.Contains(stderr, "same file as an input") {
		t.Errorf("-o onto --subscribe-file: exit %d, %q", code, stderr)
	}
	if after, _ := os.ReadFile(in); !bytes.Equal(after, before) {
		t.Fatal("the input was changed")
	}
	if lst, _ := os.Lstat(filepath.Join(dir, "sym.aaep")); lst.Mode()&fs.ModeSymlink == 0 {
		t.Fatal("the link was replaced")
	}
	noTemp(t, dir)
}

func noTemp(t *testing.T, dir string) { t.Helper(); binarytest.NoLeftovers(t, dir) }

// TestCaptureKeepsEarlierRecording: a recording does not replace an
// existing non-empty file without --force, as zstd does not.
func TestCaptureKeepsEarlierRecording(t *testing.T) {
	dir := jsonlDir(t)
	earlier := filepath.Join(dir, "session.aaep")
	os.WriteFile(earlier, []byte("an earlier recording"), 0o640)
	code, _, stderr := runCapture(t, dir, "events.jsonl", "-o", "session.aaep")
	if code != 2 || !strings.Contains(stderr, "session.aaep: already exists; not overwritten") {
		t.Errorf("exit %d, %q; want 2 and zstd's refusal", code, stderr)
	}
	if got, _ := os.ReadFile(earlier); string(got) != "an earlier recording" {
		t.Fatal("the earlier recording was changed")
	}
	// An empty file is no recording: it is replaced.
	os.WriteFile(filepath.Join(dir, "empty.aaep"), nil, 0o644)
	if code, _, stderr := runCapture(t, dir, "events.jsonl", "-o", "empty.aaep"); code != 0 {
		t.Errorf("over an empty file: exit %d, %s", code, stderr)
	}
	code, _, stderr = runCapture(t, dir, "events.jsonl", "-o", "session.aaep", "--force")
	if code != 0 {
		t.Fatalf("--force: exit %d, %s", code, stderr)
	}
	data, _ := os.ReadFile(earlier)
	if n := received(t, data); n != 50 {
		t.Errorf("the replacing capture holds %d events, want 50", n)
	}
	if st, _ := os.Stat(earlier); st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want the replaced file's 0640", st.Mode().Perm())
	}
	// Rotation: the parts of an earlier rotated capture are kept too.
	os.WriteFile(filepath.Join(dir, "long-000002.aaep"), []byte("part 2"), 0o644)
	code, _, stderr = runCapture(t, dir, "events.jsonl", "-o", "long.aaep", "--rotate-every", "1h")
	if code != 2 || !strings.Contains(stderr, "long-000002.aaep: already exists") {
		t.Errorf("rotation over earlier parts: exit %d, %q", code, stderr)
	}
	noTemp(t, dir)
}

// TestCaptureFailedLeavesNoFile: an endpoint that never answers leaves no
// file behind (exit 1), not even a temporary one.
func TestCaptureFailedLeavesNoFile(t *testing.T) {
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	code, _, stderr := runCapture(t, dir, "ws://"+addr+"/aaep/v1/ws", "-o", "run.aaep", "--max-retries", "1", "--retry-max-wait", "10ms")
	if code != 1 {
		t.Errorf("exit %d, %q; want 1", code, stderr)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
	if !strings.Contains(stderr, "nothing was recorded") {
		t.Errorf("stderr %q does not say nothing was recorded", stderr)
	}
}

// TestCaptureFileEndpointMustBeJSONL: a capture, a zstd file and bytes with
// no JSON line are refused as file endpoints, before anything is written.
func TestCaptureFileEndpointMustBeJSONL(t *testing.T) {
	dir := jsonlDir(t)
	if code, _, stderr := runCapture(t, dir, "events.jsonl", "-o", "cap.aaep"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	os.WriteFile(filepath.Join(dir, "x.zst"), []byte{0x28, 0xb5, 0x2f, 0xfd, 0x24, 0x05, 0x29, 0x00, 0x00, 'h', 'e', 'l', 'l', 'o'}, 0o644)
	os.WriteFile(filepath.Join(dir, "random.bin"), bytes.Repeat([]byte("\x01\x02garbage\xff\n"), 500), 0o644)
	for _, c := range []struct{ in, want string }{
		{"cap.aaep", "already a capture"},
		{"x.zst", "zstd-compressed"},
		{"random.bin", "no line is JSON"},
	} {
		code, _, stderr := runCapture(t, dir, c.in, "-o", "out.aaep")
		if code != 2 || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, c.in) {
			t.Errorf("%s: exit %d, %q; want 2 and %q", c.in, code, stderr, c.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "out.aaep")); err == nil {
			t.Fatalf("%s: an output was written", c.in)
		}
	}
}

// TestCaptureForceNeedsAMessage: --force replaces a capture only with one
// that recorded a message: an empty JSON Lines source, or an SSE endpoint
// that sends its headers and closes (connection events only), leaves the
// earlier capture as it was (exit 1, saying so).
func TestCaptureForceNeedsAMessage(t *testing.T) {
	dir := jsonlDir(t)
	if code, _, stderr := runCapture(t, dir, "events.jsonl", "-o", "session.aaep"); code != 0 {
		t.Fatalf("first recording: exit %d, %s", code, stderr)
	}
	earlier, _ := os.ReadFile(filepath.Join(dir, "session.aaep"))
	os.WriteFile(filepath.Join(dir, "empty.jsonl"), nil, 0o644)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
	}))
	defer srv.Close()
	for _, src := range []string{"empty.jsonl", srv.URL + "/events"} {
		code, _, stderr := runCapture(t, dir, src, "-o", "session.aaep", "--force", "--max-retries", "0")
		if code != 1 || !strings.Contains(stderr, "session.aaep: no message was recorded; the existing file is kept, not replaced") {
			t.Errorf("%s --force: exit %d, %q; want 1 and the file kept", src, code, stderr)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, "session.aaep")); !bytes.Equal(got, earlier) {
			t.Fatalf("%s --force: the earlier capture was replaced", src)
		}
		noTemp(t, dir)
	}
}

// TestCaptureFramingLooksWrong: --framing lp against a producer that sends
// NDJSON says that the framing looks wrong and stops (exit 1) instead of
// waiting in silence for a 2 GB frame.
func TestCaptureFramingLooksWrong(t *testing.T) {
	dir := t.TempDir()
	unix := &transporttest.UnixProducer{Frames: transporttest.Frames(transporttest.Events(3)), Framing: "ndjson"}
	sock := unix.Start(t)
	code, _, stderr := runCapture(t, dir, sock, "-o", "x.aaep", "--framing", "lp", "--duration", "20s")
	if code != 1 || !strings.Contains(stderr, "the framing looks wrong") || !strings.Contains(stderr, "--framing ndjson") {
		t.Errorf("exit %d, %q; want 1 and the framing named", code, stderr)
	}
}

// TestCaptureWebSocketAnsweredWithAPage: a ws:// URL whose server answers
// 200 with a page is not a WebSocket endpoint: said so, and not retried
// (exit 1), instead of a bare "HTTP 200 OK".
func TestCaptureWebSocketAnsweredWithAPage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html></html>"))
	}))
	defer srv.Close()
	ws := "ws" + strings.TrimPrefix(srv.URL, "http") + "/aaep/v1/ws"
	code, _, stderr := runCapture(t, t.TempDir(), ws, "-o", "x.aaep", "--duration", "20s")
	if code != 1 || !strings.Contains(stderr, "the server answered HTTP 200 OK (content type text/html) instead of switching to the WebSocket protocol (101): not a WebSocket endpoint") {
		t.Errorf("exit %d, %q", code, stderr)
	}
}

// TestCaptureInterruptedWhileWaiting: Ctrl-C while --wait waits for a
// producer that never came recorded nothing: no file, exit 1 (as the README
// says of a capture whose endpoint never answered), not 0.
func TestCaptureInterruptedWhileWaiting(t *testing.T) {
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there
	cmd := exec.Command(captureBin.Path(t), "ws://"+addr+"/aaep/v1/ws", "-o", "w.aaep", "--wait")
	cmd.Dir = dir
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt once it has failed an attempt and is waiting to retry.
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(stderr.String(), "retrying in") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(os.Interrupt)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "nothing was recorded") {
		t.Errorf("wait: %v, stderr %q; want exit 1 and nothing recorded", err, stderr.String())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
}

// lockedBuffer is a bytes.Buffer safe to write from a process's copier
// while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
