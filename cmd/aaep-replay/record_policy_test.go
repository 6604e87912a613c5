package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/aaep-tools/aaepkit/capfile"
)

// TestRecordRefusals: --record never writes over the capture being replayed
// (by name, symbolic or hard link), nor over an earlier recording without
// --force, and is never standard output; push shares the checks. Each is
// refused with exit 2 before anything listens or connects.
func TestRecordRefusals(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "run.aaep")
	data, err := os.ReadFile(demoCapture)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(in, data, 0o644)
	os.Symlink("run.aaep", filepath.Join(dir, "sym.aaep"))
	os.Link(in, filepath.Join(dir, "hard.aaep"))
	earlier := filepath.Join(dir, "earlier.aaep")
	os.WriteFile(earlier, []byte("an earlier recording"), 0o644)
	cases := []struct {
		record, want string
	}{
		{in, "same file as an input"},
		{filepath.Join(dir, "sym.aaep"), "same file as an input"},
		{filepath.Join(dir, "hard.aaep"), "same file as an input"},
		{filepath.Join(dir, ".", "sub", "..", "run.aaep"), "same file as an input"},
		{earlier, "already exists; not overwritten"},
		{"-", "cannot be standard output"},
		{"/dev/stdout", "cannot be standard output"},
	}
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	for _, verb := range [][]string{{"serve", in, "--listen", "127.0.0.1:0"}, {"push", in, "--to", "ws://127.0.0.1:1/"}} {
		for _, c := range cases {
			args := append(append([]string(nil), verb...), "--record", c.record)
			if c.record == in {
				args = append(args, "--force") // --force never allows writing over an input
			}
			code, stdout, stderr := replay(t, args...)
			if code != 2 || !strings.Contains(stderr, c.want) {
				t.Errorf("%s --record %s: exit %d, %q; want 2 and %q", verb[0], c.record, code, stderr, c.want)
			}
			if strings.Contains(stderr, "serving") || strings.Contains(stderr, "connect") || stdout != "" {
				t.Errorf("%s --record %s: started anyway: %q %q", verb[0], c.record, stdout, stderr)
			}
		}
	}
	// Several captures replayed as one: --record is none of them.
	other := filepath.Join(dir, "other.aaep")
	os.WriteFile(other, data, 0o644)
	code, _, stderr := replay(t, "serve", other, in, "--listen", "127.0.0.1:0", "--record", filepath.Join(dir, "hard.aaep"), "--force")
	if code != 2 || !strings.Contains(stderr, "same file as an input") {
		t.Errorf("serve of two captures --record a link to the second: exit %d, %q", code, stderr)
	}
	os.Remove(other)
	if got, _ := os.ReadFile(in); string(got) != string(data) {
		t.Fatal("the capture being replayed was changed")
	}
	if got, _ := os.ReadFile(earlier); string(got) != "an earlier recording" {
		t.Fatal("the earlier recording was changed")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 5 {
		t.Errorf("directory holds %d entries, want the 5 made by the test", len(ents))
	}
}

// TestRecordForceAndNothingRecorded: with --force an earlier recording is
// replaced once the replay records a message; a run that records nothing
// leaves no file (and so keeps the earlier one).
func TestRecordForceAndNothingRecorded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	earlier := filepath.Join(dir, "wire.aaep")
	os.WriteFile(earlier, []byte("an earlier recording"), 0o600)

	srv := startServe(t, "serve", demoCapture, "--listen", "127.0.0.1:0", "--record", earlier, "--force")
	if code := srv.stop(t); code != 0 {
		t.Fatalf("exit %d: %s", code, srv.errb.String())
	}
	if got, _ := os.ReadFile(earlier); string(got) != "an earlier recording" {
		t.Errorf("a run that recorded nothing replaced the earlier recording")
	}
	if !strings.Contains(srv.errb.String(), "no file written") {
		t.Errorf("stderr does not say nothing was written: %q", srv.errb.String())
	}
	fresh := filepath.Join(dir, "fresh.aaep")
	srv = startServe(t, "serve", demoCapture, "--listen", "127.0.0.1:0", "--record", fresh)
	srv.stop(t)
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("a run that recorded nothing left a file: %v", err)
	}

	// --close-at-end: the subscriber reads to the replay's end, not to its
	// read deadline.
	srv = startServe(t, "serve", demoCapture, "--listen", "127.0.0.1:0", "--no-delay", "--close-at-end", "--record", earlier, "--force")
	d := websocket.Dialer{Subprotocols: []string{"aaep.v1"}, HandshakeTimeout: 10 * time.Second}
	c, _, err := d.Dial("ws://"+srv.addr+"/aaep/v1/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	n := 0
	for {
		_, _, err := c.ReadMessage()
		if err != nil {
			if !websocket.IsCloseError(err, 4000) {
				t.Errorf("read: %v; want the replay's end (4000 replay finished)", err)
			}
			break
		}
		n++
	}
	c.Close()
	if code := srv.stop(t); code != 0 {
		t.Fatalf("exit %d: %s", code, srv.errb.String())
	}
	recs := fileopsRecords(t, earlier)
	received := 0
	for _, r := range recs {
		if r.Kind == capfile.KindReceived {
			received++
		}
	}
	if n == 0 || received != n {
		t.Errorf("recording holds %d received records, the subscriber read %d", received, n)
	}
	if st, _ := os.Stat(earlier); st.Mode().Perm() != 0o600 {
		t.Errorf("the replaced recording's mode became %v", st.Mode().Perm())
	}
}

// TestEmptySelectionRefused: serve and push refuse a range or session that
// selects nothing, saying what the capture holds.
func TestEmptySelectionRefused(t *testing.T) {
	for _, verb := range [][]string{{"serve", demoCapture, "--listen", "127.0.0.1:0"}, {"push", demoCapture, "--to", "ws://127.0.0.1:1/"}} {
		to := "--to"
		if verb[0] == "push" {
			to = "--until"
		}
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"--from", "#50", to, "#10"}, "ends before it starts"},
			{[]string{"--from", "10m"}, "past the last record"},
			{[]string{"--from", "#5000"}, "past the last record"},
			{[]string{"--session", "sess_nope"}, "--session sess_nope"},
		} {
			args := append(append([]string(nil), verb...), c.args...)
			code, _, stderr := replay(t, args...)
			if code != 2 || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "the capture holds 108 records") || !strings.Contains(stderr, "8 sessions") {
				t.Errorf("%q: exit %d, %q; want 2, %q and what the capture holds", args, code, stderr, c.want)
			}
		}
	}
}
