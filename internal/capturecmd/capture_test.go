package capturecmd

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/capfile/capfiletest"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/transport"
	"github.com/aaep-tools/aaepkit/transport/transporttest"
)

func TestMain(m *testing.M) {
	transporttest.RunChild()
	os.Setenv("GORACE", "atexit_sleep_ms=0") // children are test binaries
	flag.Parse()
	// The parallel tests mostly wait (signals, processes of their own, a
	// producer's pace): 4 side by side, unless -parallel says otherwise.
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", "4")
	}
	if selected("TestCaptureWaitsForResponseHeaders") {
		startHeaderWait() // 32 s of a producer's silence, sat out beside the other tests
	}
	code := m.Run()
	stopHeaderWait()
	captureBin.Remove()
	removeAloneBinary()
	os.Exit(code)
}

// selected reports whether the top-level test name may run, as far as
// -test.run, -test.skip and -test.list tell; when in doubt, it may.
func selected(name string) bool {
	if f := flag.Lookup("test.list"); f != nil && f.Value.String() != "" {
		return false
	}
	match := func(flagName string) (matched, set bool) {
		f := flag.Lookup(flagName)
		if f == nil || f.Value.String() == "" {
			return false, false
		}
		top, _, _ := strings.Cut(f.Value.String(), "/")
		re, err := regexp.Compile(top)
		if err != nil {
			return true, true
		}
		return re.MatchString(name), true
	}
	if m, set := match("test.run"); set && !m {
		return false
	}
	if f := flag.Lookup("test.skip"); f != nil && f.Value.String() != "" && !strings.Contains(f.Value.String(), "/") {
		if re, err := regexp.Compile(f.Value.String()); err == nil && re.MatchString(name) {
			return false
		}
	}
	return true
}

// syncBuffer is a buffer the progress goroutine and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type result struct {
	code           int
	stdout, stderr string
}

// capture runs aaep-capture in process, bounded by a timeout that fails
// the test when it is what ended the run.
func capture(t *testing.T, tty bool, args ...string) result {
	t.Helper()
	return captureWithin(t, 30*time.Second, tty, args...)
}

// captureWithin is capture with another timeout.
func captureWithin(t *testing.T, timeout time.Duration, tty bool, args ...string) result {
	t.Helper()
	var errb syncBuffer
	return captureStreams(t, timeout, tty, &errb, args...)
}

// captureTo is capture writing its standard error to errb, which the
// test may watch while the recorder runs.
func captureTo(t *testing.T, timeout time.Duration, errb *syncBuffer, args ...string) result {
	t.Helper()
	return captureStreams(t, timeout, false, errb, args...)
}

func captureStreams(t *testing.T, timeout time.Duration, tty bool, errb *syncBuffer, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var out syncBuffer
	code := run(ctx, cli.Streams{In: strings.NewReader(""), Out: &out, Err: errb, ErrIsTTY: tty}, args)
	if ctx.Err() != nil {
		t.Fatalf("aaep-capture %q did not stop by itself; stderr:\n%s", args, errb.String())
	}
	return result{code, out.String(), errb.String()}
}

// readCapture reads every record; the capture must end cleanly.
func readCapture(t *testing.T, path string) (capfile.Header, []capfile.Record) {
	t.Helper()
	return capfiletest.ReadAll(t, path)
}

func kinds(recs []capfile.Record, k capfile.Kind) []capfile.Record {
	var out []capfile.Record
	for _, r := range recs {
		if r.Kind == k {
			out = append(out, r)
		}
	}
	return out
}

func connEvents(recs []capfile.Record) []string {
	var out []string
	for _, r := range kinds(recs, capfile.KindConn) {
		var ev transport.ConnEvent
		if err := json.Unmarshal(r.Payload, &ev); err != nil {
			panic(err)
		}
		out = append(out, ev.Event)
	}
	return out
}

// assertAbsent fails when s occurs in the raw capture or in its
// decompressed content.
func assertAbsent(t *testing.T, path string, secrets ...string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := zstd.NewReader(nil)
	defer d.Close()
	plain, err := d.DecodeAll(raw, nil)
	if err != nil {
		t.Fatalf("decompress %s: %v", path, err)
	}
	for _, s := range secrets {
		if bytes.Contains(raw, []byte(s)) || bytes.Contains(plain, []byte(s)) {
			t.Errorf("%q appears in %s", s, path)
		}
	}
}

func checkEvents(t *testing.T, recs []capfile.Record, want [][]byte) {
	t.Helper()
	got := kinds(recs, capfile.KindReceived)
	if len(got) != len(want) {
		t.Fatalf("%d received records, want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i].Payload, want[i]) {
			t.Fatalf("record %d:\n got %q\nwant %q", i, got[i].Payload, want[i])
		}
	}
	for i := 1; i < len(recs); i++ {
		if recs[i].Time < recs[i-1].Time {
			t.Fatalf("record %d goes back in time", i)
		}
	}
}

func TestCaptureSSEDocumentedForms(t *testing.T) {
	events := transporttest.Events(20)
	for _, form := range []string{"--endpoint", "first argument"} {
		t.Run(form, func(t *testing.T) {
			p := &transporttest.SSEProducer{Frames: transporttest.Frames(events)}
			origin := p.Start(t)
			out := filepath.Join(t.TempDir(), "session.aaep")
			args := []string{"--endpoint", origin, "--output", out}
			if form != "--endpoint" {
				args = []string{origin, "--output", out}
			}
			res := capture(t, false, args...)
			if res.code != 0 {
				t.Fatalf("exit %d: %s", res.code, res.stderr)
			}
			h, recs := readCapture(t, out)
			checkEvents(t, recs, events)
			if !strings.HasPrefix(h.Tool, "aaep-capture/") || len(h.Origins) != 1 || h.Origins[0].Transport != "sse" {
				t.Errorf("header %+v", h)
			}
			if kinds(recs, capfile.KindReceived)[0].Session != "sess_test01" {
				t.Error("records carry no session key")
			}
			// The producer ends its stream after the events (the reconnect
			// then gets 204): that is said, then the summary.
			lines := strings.Split(strings.TrimSuffix(res.stderr, "\n"), "\n")
			if len(lines) != 2 || !strings.Contains(lines[0], "connection lost: end of stream; retrying in") ||
				!strings.Contains(lines[1], "aaep-capture: 20 events") || !strings.Contains(lines[1], "stopped: sources ended") {
				t.Errorf("stderr %q: want the lost connection, then the summary", res.stderr)
			}
			if res.stdout != "" {
				t.Errorf("stdout %q", res.stdout)
			}
		})
	}
}

func TestCaptureWebSocketHeadersNeverRecorded(t *testing.T) {
	const token = "Bearer tok-9f8e7d6c5b4a"
	events := transporttest.Events(10)
	p := &transporttest.WSProducer{Frames: transporttest.Frames(events), CloseCode: 4000, CloseReason: "session over", RequireHeader: [2]string{"Authorization", token}}
	url := p.Start(t)
	out := filepath.Join(t.TempDir(), "ws.aaep")
	res := capture(t, false, url+"?access_token=qs-secret-1234", "-o", out, "--header", "Authorization: "+token, "--header", "X-Api-Key: key-abcdef123", "--json")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	_, recs := readCapture(t, out)
	accepted := []byte(`{"type":"subscription.accepted","subscription_id":"sub_test","aaep_version":"1.0.0","producer":{"agent_id":"retirement-planner"},"honored_capabilities":{}}`)
	checkEvents(t, recs, append([][]byte{accepted}, events...))
	if sent := kinds(recs, capfile.KindSent); len(sent) != 1 || !bytes.Contains(sent[0].Payload, []byte(`"subscription.request"`)) {
		t.Errorf("sent records %d", len(sent))
	}
	assertAbsent(t, out, "tok-9f8e7d6c5b4a", "key-abcdef123", "qs-secret-1234")

	var sum summary
	if err := json.Unmarshal([]byte(res.stdout), &sum); err != nil {
		t.Fatalf("--json output %q: %v", res.stdout, err)
	}
	// 10 events: the producer's subscription.accepted is recorded, not counted as one (issue 34).
	if sum.Events != 10 || sum.Sent != 1 || sum.ExitCode != 0 || len(sum.CloseCodes) != 1 || sum.CloseCodes[0].Code != 4000 || sum.CloseCodes[0].Name != "subscription closed" {
		t.Errorf("summary %+v", sum)
	}
	if sum.FileBytes == 0 || sum.Ratio <= 1 || len(sum.Files) != 1 || sum.Sources[0].Transport != "websocket" {
		t.Errorf("summary %+v", sum)
	}
	if strings.Contains(res.stdout+res.stderr, "tok-9f8e7d6c5b4a") {
		t.Error("the token is printed")
	}
}

func TestCaptureFiltersAndRedaction(t *testing.T) {
	var msgs [][]byte
	for i := 0; i < 40; i++ {
		msgs = append(msgs, transporttest.Event(i))
	}
	p := &transporttest.SSEProducer{Frames: transporttest.Frames(msgs)}
	origin := p.Start(t)
	out := filepath.Join(t.TempDir(), "f.aaep")
	res := capture(t, false, origin, "-o", out, "--filter-type", "tool.invoked", "--filter-type", "agent.session.started",
		"--filter-session", "sess_test01", "--redact", "summary_detailed", "--json")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	h, recs := readCapture(t, out)
	var want [][]byte
	for _, m := range msgs {
		typ := ""
		if bytes.Contains(m, []byte(`"aaep:agent.tool.invoked"`)) {
			typ = "tool"
		}
		if bytes.Contains(m, []byte(`"aaep:agent.session.started"`)) {
			typ = "start"
		}
		if typ == "" {
			continue
		}
		i := bytes.Index(m, []byte(`"summary_detailed":"`)) + len(`"summary_detailed":`)
		want = append(want, append(append(bytes.Clone(m[:i]), `"[REDACTED]"`...), '}'))
	}
	checkEvents(t, recs, want)
	for _, r := range kinds(recs, capfile.KindReceived) {
		if r.Flags != capfile.FlagRedacted {
			t.Fatalf("flags %b", r.Flags)
		}
	}
	if !slices.Equal(h.Redacted, []string{"summary_detailed"}) || h.Meta["filter-type"] != "tool.invoked,agent.session.started" {
		t.Errorf("header redacted %v meta %v", h.Redacted, h.Meta)
	}
	var sum summary
	_ = json.Unmarshal([]byte(res.stdout), &sum)
	if sum.Filtered != int64(len(msgs)-len(want)) || sum.Redacted != int64(len(want)) {
		t.Errorf("summary filtered %d redacted %d", sum.Filtered, sum.Redacted)
	}
}

func TestCaptureStopConditions(t *testing.T) {
	events := transporttest.Events(50)
	for _, tc := range []struct {
		name   string
		args   []string
		reason string
		events int
	}{
		// subscription.accepted is recorded but is not an event: it counts
		// towards neither limit.
		{"max events", []string{"--max-events", "7"}, "max-events", 1 + 7},
		{"max bytes", []string{"--max-bytes", "2000"}, "max-bytes", 1 + 5}, // 430 bytes each: the fifth crosses 2000
		{"duration", []string{"--duration", "300ms"}, "duration", 51},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &transporttest.WSProducer{Frames: transporttest.Frames(events), Hold: true}
			url := p.Start(t)
			out := filepath.Join(t.TempDir(), "s.aaep")
			res := capture(t, false, append([]string{url, "-o", out, "--json"}, tc.args...)...)
			if res.code != 0 {
				t.Fatalf("exit %d: %s", res.code, res.stderr)
			}
			_, recs := readCapture(t, out)
			if n := len(kinds(recs, capfile.KindReceived)); n != tc.events {
				t.Errorf("%d received records, want %d", n, tc.events)
			}
			var sum summary
			_ = json.Unmarshal([]byte(res.stdout), &sum)
			if sum.StopReason != tc.reason {
				t.Errorf("stop reason %q", sum.StopReason)
			}
			// The goodbye is recorded after the stop.
			last := recs[len(recs)-1]
			if last.Kind != capfile.KindConn || !bytes.Contains(last.Payload, []byte(`"capture stopped"`)) {
				t.Errorf("last record %d %s", last.Kind, last.Payload)
			}
			if sent := kinds(recs, capfile.KindSent); len(sent) != 2 || !bytes.Contains(sent[1].Payload, []byte("subscription.close")) {
				t.Errorf("%d sent records, want request and close", len(sent))
			}
		})
	}
}

func TestCaptureExitCodes(t *testing.T) {
	dir := t.TempDir()
	rejecting := &transporttest.WSProducer{Frames: transporttest.Frames(transporttest.Events(2)), CloseCode: 4003, CloseReason: "denied"}
	rejectURL := rejecting.Start(t)
	for _, tc := range []struct {
		name    string
		args    []string
		code    int
		stderr  string
		records bool
	}{
		{"unreachable", []string{"http://127.0.0.1:1/aaep/v1/events", "-o", filepath.Join(dir, "a.aaep"), "--max-retries", "0"}, 1, "source failed", false},
		{"authorization denied", []string{rejectURL, "-o", filepath.Join(dir, "b.aaep")}, 1, "4003 authorization denied", true},
		{"output directory missing", []string{rejectURL, "-o", filepath.Join(dir, "nope", "c.aaep")}, 2, "create", false},
		{"input file missing", []string{filepath.Join(dir, "missing.jsonl"), "-o", filepath.Join(dir, "d.aaep")}, 2, "open input", false},
		{"bad cacert", []string{rejectURL, "-o", filepath.Join(dir, "e.aaep"), "--cacert", filepath.Join(dir, "none.pem")}, 2, "--cacert", false},
		{"unsupported scheme", []string{"ftp://x", "-o", filepath.Join(dir, "f.aaep")}, 2, "unsupported scheme", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := capture(t, false, tc.args...)
			if res.code != tc.code || !strings.Contains(res.stderr, tc.stderr) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", res.code, res.stderr, tc.code, tc.stderr)
			}
			if tc.records {
				readCapture(t, tc.args[2]) // a complete capture even so
			} else if _, err := os.Stat(tc.args[2]); !os.IsNotExist(err) {
				t.Errorf("a capture that recorded nothing left %s (%v)", tc.args[2], err)
			}
		})
	}
}

func TestCaptureSeveralSources(t *testing.T) {
	sse := &transporttest.SSEProducer{Frames: transporttest.Frames(transporttest.Events(5))}
	ws := &transporttest.WSProducer{Frames: transporttest.Frames(transporttest.Events(7))}
	unix := &transporttest.UnixProducer{Frames: transporttest.Frames(transporttest.Events(3)), Framing: "ndjson"}
	dir := t.TempDir()
	file := filepath.Join(dir, "in.jsonl")
	var content []byte
	for _, e := range transporttest.Events(4) {
		content = append(append(content, e...), '\n')
	}
	if err := os.WriteFile(file, content, 0o600); err != nil {
		t.Fatal(err)
	}
	child := transporttest.StdioChild{Events: 6, Stderr: "child says hi"}
	out := filepath.Join(dir, "multi.aaep")
	args := []string{"-e", sse.Start(t), "-e", ws.Start(t), "-e", unix.Start(t), "-e", file, "-o", out, "--exec", "--"}
	res := capture(t, false, append(args, child.Args()...)...)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	if !strings.Contains(res.stderr, "child says hi") {
		t.Errorf("child stderr not passed through: %q", res.stderr)
	}
	h, recs := readCapture(t, out)
	var transports []string
	for _, s := range h.Origins {
		transports = append(transports, s.Transport)
	}
	if !slices.Equal(transports, []string{"sse", "websocket", "unix", "file", "stdio"}) {
		t.Fatalf("sources %v", transports)
	}
	perSource := map[uint16]int{}
	for _, r := range kinds(recs, capfile.KindReceived) {
		perSource[r.Origin]++
	}
	// WebSocket and stdio add the subscription.accepted.
	if want := map[uint16]int{0: 5, 1: 8, 2: 3, 3: 4, 4: 7}; fmt.Sprint(perSource) != fmt.Sprint(want) {
		t.Errorf("records per source %v, want %v", perSource, want)
	}
}

func TestCaptureTLS(t *testing.T) {
	events := transporttest.Events(3)
	p := &transporttest.SSEProducer{Frames: transporttest.Frames(events)}
	origin, ca := p.StartTLS(t)
	for _, tc := range []struct {
		name, flag, value string
		warns             bool
	}{{"cacert", "--cacert", ca, false}, {"insecure", "--insecure", "", true}} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "tls.aaep")
			args := []string{origin, "-o", out, tc.flag}
			if tc.value != "" {
				args = append(args, tc.value)
			}
			res := capture(t, false, args...)
			if res.code != 0 {
				t.Fatalf("exit %d: %s", res.code, res.stderr)
			}
			if got := strings.Contains(res.stderr, "warning: --insecure"); got != tc.warns {
				t.Errorf("warning printed: %v; stderr %q", got, res.stderr)
			}
			_, recs := readCapture(t, out)
			checkEvents(t, recs, events)
		})
	}
}

func TestCaptureSubscribeFile(t *testing.T) {
	dir := t.TempDir()
	caps := filepath.Join(dir, "caps.json")
	if err := os.WriteFile(caps, []byte(`{"max_events_per_second":100,"languages":["en-US"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &transporttest.WSProducer{Frames: transporttest.Frames(transporttest.Events(1))}
	url := p.Start(t)
	out := filepath.Join(dir, "sub.aaep")
	res := capture(t, false, url, "-o", out, "--subscribe-file", caps)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	got := p.Received()
	if len(got) == 0 || !bytes.Contains(got[0], []byte(`"capabilities":{"max_events_per_second":100,"languages":["en-US"]}`)) {
		t.Fatalf("producer received %q", got)
	}
	bad := filepath.Join(dir, "bad.json")
	_ = os.WriteFile(bad, []byte(`[1,2`), 0o600)
	if res := capture(t, false, url, "-o", out, "--subscribe-file", bad); res.code != 2 {
		t.Errorf("bad subscribe file: exit %d", res.code)
	}
}

func TestCaptureRotation(t *testing.T) {
	p := &transporttest.WSProducer{Frames: transporttest.Frames(transporttest.Events(20)), Hold: true}
	url := p.Start(t)
	dir := t.TempDir()
	res := capture(t, false, url, "-o", filepath.Join(dir, "rot.aaep"), "--rotate-every", "1s", "--duration", "1200ms", "--json")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "rot-*.aaep"))
	if len(files) != 2 {
		t.Fatalf("files %v", files)
	}
	// Each part is a complete capture: the first holds the stream, the
	// second the goodbye recorded at the stop.
	_, first := readCapture(t, files[0])
	h2, second := readCapture(t, files[1])
	if n := len(kinds(first, capfile.KindReceived)); n != 21 {
		t.Errorf("first part: %d received", n)
	}
	if ev := connEvents(second); len(ev) == 0 || ev[len(ev)-1] != "closed" || h2.Meta["part"] != "2" {
		t.Errorf("second part events %v meta %v", ev, h2.Meta)
	}
}

func TestCaptureProgressOnlyOnTTY(t *testing.T) {
	for _, tty := range []bool{true, false} {
		t.Run(fmt.Sprint("tty=", tty), func(t *testing.T) {
			p := &transporttest.WSProducer{Frames: transporttest.Frames(transporttest.Events(5)), Hold: true}
			url := p.Start(t)
			res := capture(t, tty, url, "-o", filepath.Join(t.TempDir(), "p.aaep"), "--duration", "1300ms")
			if res.code != 0 {
				t.Fatalf("exit %d: %s", res.code, res.stderr)
			}
			// 5 events: the producer's subscription.accepted is not one (issue 34).
			drawn := strings.Contains(res.stderr, "\r\x1b[K5 events")
			if drawn != tty {
				t.Errorf("progress drawn %v; stderr %q", drawn, res.stderr)
			}
			if !strings.Contains(res.stderr, "aaep-capture: 5 events") {
				t.Errorf("no summary: %q", res.stderr)
			}
			quiet := capture(t, tty, url, "-o", filepath.Join(t.TempDir(), "q.aaep"), "--duration", "600ms", "-q")
			if quiet.stderr != "" {
				t.Errorf("--quiet printed %q", quiet.stderr)
			}
		})
	}
}

func TestCaptureExecEndpointForm(t *testing.T) {
	child := transporttest.StdioChild{Events: 4, Ping: true}
	out := filepath.Join(t.TempDir(), "exec.aaep")
	res := capture(t, false, "exec:"+strings.Join(child.Args(), " "), "-o", out)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	h, recs := readCapture(t, out)
	if h.Origins[0].Transport != "stdio" {
		t.Errorf("source %+v", h.Origins[0])
	}
	rec := kinds(recs, capfile.KindReceived)
	// accepted, the ping request, then the unwrapped events
	if len(rec) != 6 || rec[0].Attr("method") != "aaep.subscribe" || rec[1].Attr("method") != "aaep.ping" {
		t.Fatalf("%d received records", len(rec))
	}
	checkEvents(t, append(rec[:0:0], rec[2:]...), transporttest.Events(4))
	if sent := kinds(recs, capfile.KindSent); len(sent) != 2 || sent[0].Attr("method") != "aaep.subscribe" {
		t.Errorf("%d sent records", len(sent))
	}
}

func TestCaptureChildFailureIsExit1(t *testing.T) {
	child := transporttest.StdioChild{Events: 1, Exit: 4}
	out := filepath.Join(t.TempDir(), "fail.aaep")
	res := capture(t, false, append([]string{"-o", out, "--exec", "--"}, child.Args()...)...)
	if res.code != 1 || !strings.Contains(res.stderr, "exit status 4") {
		t.Fatalf("exit %d, stderr %q", res.code, res.stderr)
	}
	readCapture(t, out)
}

func TestCaptureFlagsInvalidMessages(t *testing.T) {
	good := transporttest.Event(1)
	badJSON := []byte(`{"type":"aaep:agent.tool.invoked","event_id":"evt_x","args":tru}`)
	badUTF8 := []byte("{\"type\":\"aaep:agent.output.streaming\",\"chunk\":\"\xff\"}")
	huge := []byte(`{"chunk":"` + strings.Repeat("h", 3000) + `"}`)
	frames := []transporttest.Frame{{Data: good}, {Data: badJSON, ID: "evt_x"}, {Data: huge, ID: "evt_h"}, {Data: badUTF8, ID: "evt_u"}}
	p := &transporttest.WSProducer{Frames: frames}
	url := p.Start(t)
	out := filepath.Join(t.TempDir(), "bad.aaep")
	res := capture(t, false, url, "-o", out, "--max-message-size", "2KiB", "--json")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	_, recs := readCapture(t, out)
	rec := kinds(recs, capfile.KindReceived)[1:] // after the accepted message
	want := []struct {
		payload []byte
		flags   capfile.Flags
	}{{good, 0}, {badJSON, capfile.FlagInvalidJSON}, {badUTF8, capfile.FlagInvalidUTF8}}
	if len(rec) != len(want) {
		t.Fatalf("%d events", len(rec))
	}
	for i, w := range want {
		if !bytes.Equal(rec[i].Payload, w.payload) || rec[i].Flags != w.flags {
			t.Errorf("record %d: flags %b payload %q", i, rec[i].Flags, rec[i].Payload)
		}
	}
	if ev := connEvents(recs); !slices.Contains(ev, "refused") {
		t.Errorf("no refused event: %v", ev)
	}
	var sum summary
	_ = json.Unmarshal([]byte(res.stdout), &sum)
	if sum.InvalidJSON != 1 || sum.InvalidUTF8 != 1 || sum.Refused != 1 {
		t.Errorf("summary invalid JSON %d, UTF-8 %d, refused %d", sum.InvalidJSON, sum.InvalidUTF8, sum.Refused)
	}
	if !strings.Contains(res.stderr, "1 invalid JSON, 1 invalid UTF-8, 1 refused as too large") {
		t.Errorf("summary line %q", res.stderr)
	}
}
