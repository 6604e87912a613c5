package grpctest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/aaep-tools/aaepkit/internal/testdeps"
)

// The independent peers: Python's grpcio (Debian python3-grpcio, run by
// /usr/bin/python3, whatever python3 comes first on PATH) and Node's
// @grpc/grpc-js (npm, in AAEP_NPM_DIR). scripts/testdeps.sh installs both.

// Python is the interpreter that has Debian's grpcio.
const Python = "/usr/bin/python3"

// Peer returns the path of a peer script of this package (peers/name).
func Peer(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "peers", name)
}

// ProtoDir is the directory of aaep/v1/aaep.proto.
func ProtoDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "proto")
}

// PythonModules generates aaep_pb2.py from the .proto with protoc into a
// test directory, checks that /usr/bin/python3 imports grpc, and returns
// the directory to put on Python's path. What is missing skips the test,
// or fails it under make test (internal/testdeps).
func PythonModules(t testing.TB) string {
	t.Helper()
	if err := exec.Command(Python, "-c", "import grpc").Run(); err != nil {
		testdeps.Missing(t, Python+" with grpc (Debian package python3-grpcio)", err)
	}
	protoc := testdeps.Command(t, "protoc", "protobuf-compiler")
	dir := t.TempDir()
	out, err := exec.Command(protoc, "-I", ProtoDir(), "--python_out="+dir, "aaep/v1/aaep.proto").CombinedOutput()
	if err != nil {
		t.Fatalf("protoc --python_out: %v: %s", err, out)
	}
	return filepath.Join(dir, "aaep", "v1")
}

// NodeModules returns the npm directory holding @grpc/grpc-js and
// @grpc/proto-loader (AAEP_NPM_DIR, else the repository's .cache/npm).
func NodeModules(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("AAEP_NPM_DIR")
	if dir == "" {
		dir = filepath.Join(ProtoDir(), "..", ".cache", "npm")
	}
	for _, m := range []string{"@grpc/grpc-js", "@grpc/proto-loader"} {
		testdeps.File(t, filepath.Join(dir, "node_modules", m), "the npm package "+m+" in "+dir)
	}
	testdeps.Command(t, "node", "nodejs")
	return dir
}
