package capturecmd

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/grpcbind/aaepv1"
	"github.com/aaep-tools/aaepkit/grpcbind/grpctest"
	"github.com/aaep-tools/aaepkit/internal/binarytest"
)

// deps lists the packages pkg links (go list -deps).
func deps(t *testing.T, pkg string) map[string]bool {
	t.Helper()
	out, err := exec.Command(binarytest.GoTool(), "list", "-deps", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	m := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		m[p] = true
	}
	return m
}

// aloneBin is aaep-capture with no aaep-capture-grpc beside it: a copy
// of captureBin's aaep-capture (the same package, built the same way),
// made once per test binary.
var aloneBin struct {
	once      sync.Once
	dir, path string
	err       error
}

// aloneBinary returns the path of aloneBin; no test may change its
// directory.
func aloneBinary(t *testing.T) string {
	t.Helper()
	src := binary(t)
	aloneBin.once.Do(func() {
		exe, err := os.ReadFile(src)
		if err != nil {
			aloneBin.err = err
			return
		}
		if aloneBin.dir, aloneBin.err = os.MkdirTemp("", "aaep-capture-alone"); aloneBin.err != nil {
			return
		}
		aloneBin.path = filepath.Join(aloneBin.dir, "aaep-capture")
		aloneBin.err = os.WriteFile(aloneBin.path, exe, 0o755)
	})
	if aloneBin.err != nil {
		t.Fatalf("aaep-capture without its sibling: %v", aloneBin.err)
	}
	return aloneBin.path
}

// removeAloneBinary deletes aloneBin (TestMain calls it after the tests).
func removeAloneBinary() {
	if aloneBin.dir != "" {
		os.RemoveAll(aloneBin.dir)
	}
}

// aaep-capture does not link gRPC (what costs every recorder ~5 MiB
// resident); aaep-capture-grpc does.
func TestCaptureLinksNoGRPC(t *testing.T) {
	t.Parallel()
	const grpcPkg, source = "google.golang.org/grpc", "github.com/aaep-tools/aaepkit/transport/grpcsource"
	for _, tc := range []struct {
		pkg  string
		want bool
	}{{capturePkg, false}, {capturePkg + "-grpc", true}} {
		d := deps(t, tc.pkg)
		if d[grpcPkg] != tc.want || d[source] != tc.want {
			t.Errorf("%s links %s: %v, %s: %v; want %v", tc.pkg, grpcPkg, d[grpcPkg], source, d[source], tc.want)
		}
	}
}

// An aaep-capture with no aaep-capture-grpc beside it or on PATH says what
// to install, exits 1 (unavailable) and writes nothing.
func TestBinaryGRPCWithoutSibling(t *testing.T) {
	alone := aloneBinary(t)
	dir := t.TempDir()
	for _, ep := range []string{"grpc://127.0.0.1:1", "GRPCS://127.0.0.1:1"} {
		cmd := exec.Command(alone, ep, "-o", "out.aaep")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+dir)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Fatalf("%s: %v, want exit 1; stderr %s", ep, err, stderr.String())
		}
		for _, want := range []string{"endpoint " + ep, "aaep-capture-grpc", "not installed", "go install ./cmd/...", "make build"} {
			if !strings.Contains(strings.ToLower(stderr.String()), strings.ToLower(want)) {
				t.Errorf("%s: stderr %q lacks %q", ep, stderr.String(), want)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "out.aaep")); !os.IsNotExist(err) {
			t.Errorf("%s: the output exists (%v)", ep, err)
		}
	}
}

// aaep-capture hands a gRPC endpoint over to aaep-capture-grpc in its place
// (same process): it records, and SIGINT stops it cleanly with the summary.
func TestBinaryGRPCHandsOver(t *testing.T) {
	t.Parallel()
	p := &grpctest.Producer{Manifest: grpctest.Manifest, Handle: func(s grpctest.Stream, _ int, _ *aaepv1.AaepMessage) error {
		if err := s.Send(&aaepv1.AaepMessage{Json: grpctest.Accepted("sub_bin")}); err != nil {
			return err
		}
		for i := range 3 {
			if err := s.Send(&aaepv1.AaepMessage{Json: grpctest.Event("bin", i)}); err != nil {
				return err
			}
		}
		<-s.Context().Done()
		return nil
	}}
	ln := grpctest.Listen(t, "")
	grpctest.Serve(t, p, ln)
	out := filepath.Join(t.TempDir(), "bin.aaep")
	cmd, stderr := startBinary(t, "grpc://"+ln.Addr().String(), "-o", out)
	waitReadable(t, out, 5) // the manifest, the accepted message, 3 events
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGINT: %v; stderr %s", err, stderr.String())
	}
	h, recs := readCapture(t, out)
	if len(h.Origins) != 1 || h.Origins[0].Transport != "grpc" {
		t.Errorf("origins %+v", h.Origins)
	}
	r := kinds(recs, capfile.KindReceived)
	if len(r) != 5 || !bytes.Equal(r[4].Payload, grpctest.Event("bin", 2)) {
		t.Errorf("%d received records", len(r))
	}
	if !strings.Contains(stderr.String(), "stopped: interrupted") {
		t.Errorf("summary %q", stderr.String())
	}
}

// A sibling that cannot record gRPC either (here aaep-capture itself under
// the sibling's name) does not hand over again: exit 1, saying so.
func TestBinaryGRPCSiblingWithoutGRPC(t *testing.T) {
	alone := aloneBinary(t)
	dir := t.TempDir()
	exe, err := os.ReadFile(alone)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, SiblingName), exe, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(alone, "grpc://127.0.0.1:1", "-o", "out.aaep")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), filepath.Join(dir, SiblingName)+" does not record it either") {
		t.Errorf("%v, stderr %q; want exit 1 and the sibling named", err, stderr.String())
	}
}
