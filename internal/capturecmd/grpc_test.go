package capturecmd

import (
	"bufio"
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/grpcbind/aaepv1"
	"github.com/aaep-tools/aaepkit/grpcbind/grpctest"
)

// startPython starts the grpcio producer of grpctest with events (a line
// "END" ends the stream) and returns its address and the file where it
// writes the subscription requests it got.
func startPython(t *testing.T, events [][]byte) (addr, requests string) {
	t.Helper()
	pb := grpctest.PythonModules(t)
	dir := t.TempDir()
	evFile, manFile := filepath.Join(dir, "events"), filepath.Join(dir, "manifest")
	requests = filepath.Join(dir, "requests")
	if err := os.WriteFile(evFile, bytes.Join(events, []byte("\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(manFile, grpctest.Manifest, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(grpctest.Python, grpctest.Peer("producer.py"), pb, evFile, manFile, requests)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	port, ok := strings.CutPrefix(strings.TrimSpace(line), "PORT ")
	if err != nil || !ok {
		t.Fatalf("python producer: %q %v", line, err)
	}
	return "127.0.0.1:" + port, requests
}

// TestCaptureGRPCPythonProducer records a producer written with Python's
// grpcio: its manifest, the request sent, and every message byte for
// byte, a 5 MiB one included; the stream's OK end ends the capture (exit 0).
func TestCaptureGRPCPythonProducer(t *testing.T) {
	t.Parallel()
	big := bytes.Repeat([]byte("z"), 5<<20)
	copy(big, `{"@context":"https://aaep-protocol.org/context/v1","type":"aaep:agent.output.streaming","session_id":"s","chunk":"`)
	copy(big[len(big)-2:], `"}`)
	events := [][]byte{grpctest.Event("py", 0), []byte(`{ "type":"aaep:agent.output.streaming" ,"session_id":"py","chunk":"caf\u00e9 é"}`), big, grpctest.Event("py", 1), []byte("END")}
	addr, requests := startPython(t, events)
	out := filepath.Join(t.TempDir(), "py.aaep")
	res := capture(t, false, "grpc://"+addr, "-o", out, "--header", "Authorization: Bearer py-secret")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	h, recs := readCapture(t, out)
	if len(h.Origins) != 1 || h.Origins[0].Transport != "grpc" || h.Origins[0].Endpoint != "grpc://"+addr {
		t.Errorf("origins %+v", h.Origins)
	}
	recv := kinds(recs, capfile.KindReceived)
	if len(recv) != 6 || !bytes.Equal(recv[0].Payload, grpctest.Manifest) || recv[0].Attr("grpc_method") != "GetManifest" {
		t.Fatalf("%d received; first %q", len(recv), recv[0].Payload)
	}
	if recv[1].Attr("message_type") != "subscription.accepted" {
		t.Errorf("accepted's message_type %q", recv[1].Attr("message_type"))
	}
	for i := 1; i < len(recs); i++ {
		if recs[i].Time < recs[i-1].Time {
			t.Errorf("record %d: time goes backwards", i)
		}
	}
	for i, want := range events[:4] {
		if !bytes.Equal(recv[i+2].Payload, want) {
			t.Errorf("event %d differs (%d bytes, want %d)", i, len(recv[i+2].Payload), len(want))
		}
	}
	sent := kinds(recs, capfile.KindSent)
	got, err := os.ReadFile(requests)
	if err != nil || len(sent) != 1 || !bytes.Equal(append(bytes.Clone(sent[0].Payload), '\n'), got) {
		t.Errorf("producer got %q; %d sent records", got, len(sent))
	}
	raw, _ := os.ReadFile(out)
	if bytes.Contains(raw, []byte("py-secret")) || strings.Contains(res.stderr, "py-secret") {
		t.Error("the token was recorded or printed")
	}
}

// Each failure of a gRPC endpoint: a clear message and exit 1; a flag
// mistake exit 2.
func TestCaptureGRPCFailures(t *testing.T) {
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("a web page")) }))
	defer web.Close()
	bare := grpctest.Listen(t, "")
	grpctest.Serve(t, nil, bare)
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"not gRPC", []string{"grpc://" + strings.TrimPrefix(web.URL, "http://")}, 1, "is not a gRPC server"},
		{"UNIMPLEMENTED", []string{"grpc://" + bare.Addr().String()}, 1, "does not implement aaep.v1.AaepService/Subscribe"},
		{"refused", []string{"grpc://" + freePort(t)}, 1, "connection refused"},
		{"no port", []string{"grpc://127.0.0.1"}, 2, "no port"},
		{"cert without key", []string{"grpcs://127.0.0.1:1", "--cert", "c.pem"}, 2, "--cert and --key go together"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := capture(t, false, append(tc.args, "-o", filepath.Join(dir, tc.name+".aaep"))...)
			if res.code != tc.code || !strings.Contains(res.stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", res.code, res.stderr, tc.code, tc.want)
			}
		})
	}
}

// Mutual TLS with a CA made now: --cacert, --cert and --key.
func TestCaptureGRPCMutualTLS(t *testing.T) {
	ca := grpctest.NewCA(t)
	p := &grpctest.Producer{Manifest: grpctest.Manifest, Handle: func(s grpctest.Stream, _ int, _ *aaepv1.AaepMessage) error {
		if err := s.Send(&aaepv1.AaepMessage{Json: grpctest.Accepted("sub_tls")}); err != nil {
			return err
		}
		return s.Send(&aaepv1.AaepMessage{Json: grpctest.Event("tls", 0)})
	}}
	ln := grpctest.Listen(t, "")
	grpctest.Serve(t, p, ln, grpc.Creds(credentials.NewTLS(ca.ServerTLS(true))))
	dir := t.TempDir()
	out := filepath.Join(dir, "tls.aaep")
	res := capture(t, false, "grpcs://"+ln.Addr().String(), "-o", out, "--cacert", ca.CertFile, "--cert", ca.ClientCert, "--key", ca.ClientKey)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	_, recs := readCapture(t, out)
	if r := kinds(recs, capfile.KindReceived); len(r) != 3 || !bytes.Equal(r[2].Payload, grpctest.Event("tls", 0)) {
		t.Errorf("received %d", len(r))
	}
	res = capture(t, false, "grpcs://"+ln.Addr().String(), "-o", filepath.Join(dir, "nocert.aaep"), "--cacert", ca.CertFile, "--max-retries", "0")
	if res.code != 1 {
		t.Errorf("without a client certificate: exit %d: %s", res.code, res.stderr)
	}
}

// The manifest, like the handshake, is no event: --max-events counts the
// events after it.
func TestCaptureGRPCMaxEvents(t *testing.T) {
	t.Parallel()
	p := &grpctest.Producer{Manifest: grpctest.Manifest, Handle: func(s grpctest.Stream, _ int, _ *aaepv1.AaepMessage) error {
		if err := s.Send(&aaepv1.AaepMessage{Json: grpctest.Accepted("sub_max")}); err != nil {
			return err
		}
		for i := range 5 {
			if err := s.Send(&aaepv1.AaepMessage{Json: grpctest.Event("max", i)}); err != nil {
				return err
			}
		}
		<-s.Context().Done()
		return nil
	}}
	ln := grpctest.Listen(t, "")
	grpctest.Serve(t, p, ln)
	out := filepath.Join(t.TempDir(), "max.aaep")
	res := capture(t, false, "grpc://"+ln.Addr().String(), "-o", out, "--max-events", "2")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	_, recs := readCapture(t, out)
	r := kinds(recs, capfile.KindReceived)
	if len(r) != 4 || !bytes.Equal(r[0].Payload, grpctest.Manifest) || !bytes.Equal(r[3].Payload, grpctest.Event("max", 1)) {
		t.Errorf("%d received records", len(r))
	}
}
