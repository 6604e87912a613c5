package protocoltest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// ReadLines returns the lines of the file at path (each up to 1 MiB).
func ReadLines(t testing.TB, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return lines
}

// Fixture returns the lines of the JSONL fixture at path, which its
// generator makes as gen; t fails when the file differs from gen. With
// update set, the file is first rewritten from gen.
func Fixture(t testing.TB, path string, gen []string, update bool) []string {
	t.Helper()
	if update {
		if err := os.WriteFile(path, []byte(strings.Join(gen, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lines := ReadLines(t, path)
	if strings.Join(lines, "\n") != strings.Join(gen, "\n") {
		t.Fatalf("%s is out of date with its generator (run go test -update)", path)
	}
	return lines
}

// JSONLines encodes items as JSON, one a line.
func JSONLines[T any](t testing.TB, items []T) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, it := range items {
		line, err := json.Marshal(it)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// Golden compares got with the golden file at path and fails t at the
// first line that differs. With update set, it writes got to path instead.
func Golden(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if bytes.Equal(got, want) {
		return
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(gl) || i < len(wl); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Fatalf("%s differs at line %d:\n got: %s\nwant: %s\n(run go test -update if the change is intended)", path, i+1, g, w)
		}
	}
}

// GoldenResult compares the steps, findings and session summaries of r,
// as JSON lines, with the golden files prefix+".steps.golden",
// ".findings.golden" and ".sessions.golden" (see Golden).
func GoldenResult(t testing.TB, prefix string, r *Result, update bool) {
	t.Helper()
	Golden(t, prefix+".steps.golden", JSONLines(t, r.Steps), update)
	Golden(t, prefix+".findings.golden", JSONLines(t, r.Findings), update)
	Golden(t, prefix+".sessions.golden", JSONLines(t, r.Sessions), update)
}

// MarshalObject writes a JSON object of n members in order, member i
// being the key and value member(i) returns: the MarshalJSON of a test's
// ordered-object type.
func MarshalObject(n int, member func(i int) (key string, value any)) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		k, v := member(i)
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
