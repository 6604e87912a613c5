package transport_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/transport"
	"github.com/aaep-tools/aaepkit/transport/transporttest"
)

// pythonJSONL is how the reference Python aaep-capture writes events:
// json.dumps with its default separators and ensure_ascii=False.
var pythonJSONL = [][]byte{
	[]byte(`{"@context": "https://aaep-protocol.org/context/v1", "type": "aaep:agent.session.started", "event_id": "evt_1", "session_id": "sess_1", "timestamp": "2026-05-24T14:22:11.342Z", "producer": {"agent_id": "retirement-planner"}, "summary_normal": "Sesión iniciada."}`),
	[]byte(`{"@context": "https://aaep-protocol.org/context/v1", "type": "aaep:agent.state.changed", "event_id": "evt_2", "session_id": "sess_1", "timestamp": "2026-05-24T14:22:11.421Z", "producer": {"agent_id": "retirement-planner"}, "from_state": "idle", "to_state": "thinking"}`),
}

func TestFileNDJSON(t *testing.T) {
	events := transporttest.Events(5)
	join := func(sep string, msgs [][]byte, final string) []byte {
		var b bytes.Buffer
		for i, m := range msgs {
			b.Write(m)
			if i < len(msgs)-1 {
				b.WriteString(sep)
			}
		}
		b.WriteString(final)
		return b.Bytes()
	}
	for _, tc := range []struct {
		name    string
		content []byte
		want    [][]byte
	}{
		{"lf", join("\n", events, "\n"), events},
		{"crlf", join("\r\n", events, "\r\n"), events},
		{"no final newline", join("\n", events, ""), events},
		{"blank lines skipped", join("\n\n", events, "\n\n"), events},
		{"python jsonl", join("\n", pythonJSONL, "\n"), pythonJSONL},
		{"garbage kept", []byte("not json\n\xff\xfe\n"), [][]byte{[]byte("not json"), []byte("\xff\xfe")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "in.jsonl")
			if err := os.WriteFile(path, tc.content, 0o600); err != nil {
				t.Fatal(err)
			}
			src, err := transport.New(path, testOpts())
			if err != nil {
				t.Fatal(err)
			}
			if info := src.Info(); info.Transport != "file" || info.Endpoint != path {
				t.Fatalf("info %+v", info)
			}
			c := &collector{}
			if err := run(t, src, c); err != nil {
				t.Fatalf("Run: %v", err)
			}
			checkPayloads(t, c, tc.want)
			checkMonotonic(t, c.all())
			if got := c.events(); !slices.Equal(got, []string{"connected", "closed"}) {
				t.Errorf("events %v", got)
			}
		})
	}
}

func TestFileStdinAndOversized(t *testing.T) {
	events := transporttest.Events(3)
	var in bytes.Buffer
	in.Write(events[0])
	in.WriteByte('\n')
	in.Write(bytes.Repeat([]byte("x"), 3000))
	in.WriteByte('\n')
	in.Write(events[1])
	in.WriteByte('\n')
	in.Write(events[2])
	opts := testOpts()
	opts.Stdin = &in
	opts.MaxMessageSize = 1000
	src, _ := transport.New("-", opts)
	if src.Info().Endpoint != "stdin" {
		t.Errorf("endpoint %q", src.Info().Endpoint)
	}
	c := &collector{}
	if err := run(t, src, c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkPayloads(t, c, events)
	if got := c.events(); !slices.Equal(got, []string{"connected", "refused", "closed"}) {
		t.Errorf("events %v", got)
	}
}

func TestFileFollow(t *testing.T) {
	events := transporttest.Events(6)
	path := filepath.Join(t.TempDir(), "grow.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	write := func(b []byte) {
		if _, err := f.Write(b); err != nil {
			t.Error(err)
		}
	}
	write(append(events[0], '\n'))
	opts := testOpts()
	opts.Follow = true
	src, _ := transport.New(path, opts)
	c := &collector{}
	// Each received event makes the writer append the next one. The third
	// comes in two pieces, the second piece after the reader has seen the
	// end of the file: it must wait for the rest of the line.
	next := 1
	var wg sync.WaitGroup
	err = runUntil(t, src, c, func(c *collector) bool {
		n := c.countKind(capfile.KindReceived)
		if n == next && next < len(events) {
			ev := events[next]
			if next == 2 {
				write(ev[:100])
				wg.Add(1)
				go func() {
					defer wg.Done()
					time.Sleep(3 * 50 * time.Millisecond) // a few polls of the follower
					write(append(ev[100:], '\n'))
				}()
			} else {
				write(append(ev, '\n'))
			}
			next++
		}
		return n == len(events)
	})
	wg.Wait()
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkPayloads(t, c, events)
	if got := c.events(); !slices.Equal(got, []string{"connected", "closed"}) {
		t.Errorf("events %v", got)
	}
}

func TestFileMissing(t *testing.T) {
	src, _ := transport.New(filepath.Join(t.TempDir(), "nope.jsonl"), testOpts())
	err := run(t, src, &collector{})
	if err == nil || errors.Is(err, transport.ErrFailed) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Run error %v, want a file error (not ErrFailed)", err)
	}
}

func TestFileTornPipe(t *testing.T) {
	pr, pw := io.Pipe()
	go func() {
		pw.Write([]byte("{\"a\":1}\n{\"b\":"))
		pw.CloseWithError(errors.New("writer died"))
	}()
	opts := testOpts()
	opts.Stdin = pr
	src, _ := transport.New("-", opts)
	c := &collector{}
	err := run(t, src, c)
	if err == nil {
		t.Fatal("Run: no error for a torn pipe")
	}
	checkPayloads(t, c, [][]byte{[]byte(`{"a":1}`)})
	if got := c.events(); !slices.Equal(got, []string{"connected", "disconnected"}) {
		t.Errorf("events %v", got)
	}
}
