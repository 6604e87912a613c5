package recording

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/internal/sample"
	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/protocol"
)

type got struct {
	raw    string
	dir    protocol.Direction
	offset time.Duration
	index  int64
}

func collect(t *testing.T, path string) ([]got, Summary, error) {
	t.Helper()
	var out []got
	sum, err := Each(context.Background(), path, func(m *protocol.Message) error {
		out = append(out, got{string(m.Raw), m.Dir, m.Offset, m.Index})
		return nil
	})
	return out, sum, err
}

func TestCaptureMessagesAndDirections(t *testing.T) {
	msgs := sample.Stream(sample.Options{Sessions: 3, Seed: 4})
	for _, tool := range []string{"aaep-capture/test", "aaep-replay/test"} {
		t.Run(tool, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.aaep")
			if err := sample.WriteCapture(path, msgs, time.Unix(1700000000, 0), tool); err != nil {
				t.Fatal(err)
			}
			out, sum, err := collect(t, path)
			if err != nil {
				t.Fatal(err)
			}
			if sum.Format != FormatCapture || sum.Torn != nil || len(out) != len(msgs) {
				t.Fatalf("format %s torn %v messages %d, want capture, nil, %d", sum.Format, sum.Torn, len(out), len(msgs))
			}
			for i, m := range msgs {
				if out[i].raw != string(m.JSON) || out[i].offset != m.Offset || out[i].index != int64(i) {
					t.Fatalf("message %d differs: %+v", i, out[i])
				}
				// Captures are written from the subscriber's side, by a
				// recorder and by a replayer's --record alike.
				wantDir := protocol.FromProducer
				if m.FromSubscriber {
					wantDir = protocol.ToProducer
				}
				if out[i].dir != wantDir {
					t.Fatalf("message %d direction %v, want %v", i, out[i].dir, wantDir)
				}
			}
		})
	}
}

func TestJSONLOffsetsFromTimestamps(t *testing.T) {
	lines := strings.Join([]string{
		`{"type":"aaep:agent.session.started","session_id":"sess_a","timestamp":"2026-01-01T00:00:00.000Z"}`,
		``,
		`{"type":"aaep:agent.state.changed","session_id":"sess_a","timestamp":"2026-01-01T00:00:01.500Z"}`,
		`not json at all`,
		`{"type":"confirmation.reply","reply_token":"rpl_1","timestamp":"2026-01-01T00:00:01.000Z"}`,
		`{"ts":"2026-01-01T00:00:03Z","run_id":"r","event":"agent_run_start"}`,
	}, "\n")
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	out, sum, err := collect(t, path)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Format != FormatJSONL || sum.Messages != 5 || sum.Skipped != 1 {
		t.Fatalf("summary %+v, want jsonl with 5 messages and 1 blank line", sum)
	}
	want := []struct {
		index  int64
		offset time.Duration
		dir    protocol.Direction
	}{
		{0, 0, protocol.FromProducer},
		{2, 1500 * time.Millisecond, protocol.FromProducer},
		{3, 1500 * time.Millisecond, protocol.FromProducer}, // no timestamp: keeps the previous offset
		{4, 1500 * time.Millisecond, protocol.ToProducer},   // earlier timestamp: offsets never go back
		{5, 3 * time.Second, protocol.FromProducer},         // KAHN ts
	}
	for i, w := range want {
		if out[i].index != w.index || out[i].offset != w.offset || out[i].dir != w.dir {
			t.Errorf("message %d = index %d offset %v dir %v, want %+v", i, out[i].index, out[i].offset, out[i].dir, w)
		}
	}
}

func TestTornCaptureReadsWhatIsIntact(t *testing.T) {
	msgs := sample.Stream(sample.Options{Sessions: 2, Seed: 9})
	dir := t.TempDir()
	path := filepath.Join(dir, "c.aaep")
	if err := sample.WriteCapture(path, msgs, time.Unix(0, 0), "aaep-capture/test"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Cut the file in the middle of its data: the index and the end of the
	// records are gone, as after a crash.
	cut := filepath.Join(dir, "cut.aaep")
	if err := os.WriteFile(cut, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	out, sum, err := collect(t, cut)
	if err != nil {
		t.Fatalf("torn capture gave error %v; want the intact part and Summary.Torn", err)
	}
	if sum.Torn == nil {
		t.Fatal("Summary.Torn not set for a cut capture")
	}
	for i, g := range out {
		if g.raw != string(msgs[i].JSON) {
			t.Fatalf("message %d differs", i)
		}
	}
}

func TestNotACapture(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.bin")
	if err := os.WriteFile(path, []byte("\x89PNG\r\n\x1a\nrest"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := collect(t, path)
	if err == nil || !strings.Contains(err.Error(), "x.bin") || !strings.Contains(err.Error(), "neither a capture file nor JSON lines") {
		t.Fatalf("error = %v, want one naming the file and saying what it is not", err)
	}
}

func TestLongLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "long.jsonl")
	long := append([]byte(`{"type":"aaep:x","pad":"`), bytes.Repeat([]byte("a"), MaxLine)...)
	if err := os.WriteFile(path, append([]byte("{}\n"), long...), 0o644); err != nil {
		t.Fatal(err)
	}
	long = append(long, "\"}\n{\"after\":1}\n"...)
	if err := os.WriteFile(path, append([]byte("{}\n"), long...), 0o644); err != nil {
		t.Fatal(err)
	}
	out, sum, err := collect(t, path)
	if err != nil {
		t.Fatal(err)
	}
	// The over-long line is skipped and named; the lines around it are read.
	if len(out) != 2 || out[0].raw != "{}" || out[1].raw != `{"after":1}` || out[1].index != 2 {
		t.Fatalf("messages %+v, want {} and the line after the long one", out)
	}
	if gaps := sum.Gaps(); len(gaps) != 1 || !strings.Contains(gaps[0], "line 2 is longer than") {
		t.Fatalf("gaps %q, want one naming line 2", gaps)
	}
}

func TestEmptyInput(t *testing.T) {
	for name, content := range map[string]string{"empty": "", "blank lines": "\n  \n\r\n"} {
		path := filepath.Join(t.TempDir(), "e.jsonl")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		out, sum, err := collect(t, path)
		if err != nil || len(out) != 0 || !sum.Empty || len(sum.Gaps()) != 1 {
			t.Errorf("%s: err %v, %d messages, summary %+v; want no error, no messages, Empty", name, err, len(out), sum)
		}
	}
}

// TestJSONLOffsetsOutOfRange: a timestamp no capture can hold (year 9999,
// year 1), or one too far from the first for a duration, times nothing: the
// message keeps the previous offset, never one clamped to the largest
// duration (+9223372036.855s, issue 34).
func TestJSONLOffsetsOutOfRange(t *testing.T) {
	lines := strings.Join([]string{
		`{"type":"aaep:agent.session.started","session_id":"sess_a","timestamp":"2026-01-01T00:00:00.000Z"}`,
		`{"type":"aaep:agent.state.changed","session_id":"sess_a","timestamp":"9999-01-01T00:00:01.500Z"}`,
		`{"type":"aaep:agent.state.changed","session_id":"sess_a","timestamp":"0001-01-01T00:00:00Z"}`,
		`{"type":"aaep:agent.state.changed","session_id":"sess_a","timestamp":"2026-01-01T00:00:02.000Z"}`,
	}, "\n")
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := collect(t, path)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []time.Duration{0, 0, 0, 2 * time.Second} {
		if out[i].offset != want {
			t.Errorf("message %d: offset %v, want %v", i, out[i].offset, want)
		}
	}
	// The first timestamp far in the past: a later one beyond a duration's
	// reach from it times nothing either.
	lines = strings.Join([]string{
		`{"type":"aaep:agent.session.started","session_id":"sess_a","timestamp":"1700-01-01T00:00:00Z"}`,
		`{"type":"aaep:agent.state.changed","session_id":"sess_a","timestamp":"2200-01-01T00:00:00Z"}`,
	}, "\n")
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, _, err = collect(t, path); err != nil {
		t.Fatal(err)
	}
	if out[1].offset != 0 {
		t.Errorf("500 years on: offset %v, want 0 (the previous)", out[1].offset)
	}
}

// TestJSONLStdioFraming: a JSON Lines file written with the stdio binding's
// JSON-RPC 2.0 framing (§8.2.2, B.6) is read as the AAEP messages it
// carries: each B.6.3 method's params (its method kept), the result that
// carries the accepted; pings and their answers are transport, no message.
func TestJSONLStdioFraming(t *testing.T) {
	lines := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"aaep.subscribe","params":{"type":"subscription.request","aaep_version":"1.0.0"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"type":"subscription.accepted","subscription_id":"sub_1"}}`,
		`{"jsonrpc":"2.0","method":"aaep.event","params":{"type":"aaep:agent.session.started","session_id":"sess_a","timestamp":"2026-01-01T00:00:00Z"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"aaep.ping","params":{}}`,
		`{"jsonrpc":"2.0","id":2,"result":{}}`,
		`{"jsonrpc":"2.0","method":"aaep.reply","params":{"type":"confirmation.reply","reply_token":"rpl_1"}}`,
		`{"jsonrpc":"2.0","method":"aaep.close","params":{"type":"subscription.close","subscription_id":"sub_1"}}`,
	}, "\n")
	path := filepath.Join(t.TempDir(), "stdio.jsonl")
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	var types, methods []string
	var dirs []protocol.Direction
	sum, err := Each(context.Background(), path, func(m *protocol.Message) error {
		types = append(types, payload.Decode(m.Raw).Routing.Type)
		methods = append(methods, m.Attrs["method"])
		dirs = append(dirs, m.Dir)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wantTypes := []string{"subscription.request", "subscription.accepted", "aaep:agent.session.started", "confirmation.reply", "subscription.close"}
	wantMethods := []string{"aaep.subscribe", "", "aaep.event", "aaep.reply", "aaep.close"}
	if !slices.Equal(types, wantTypes) || !slices.Equal(methods, wantMethods) {
		t.Errorf("types %q methods %q, want %q %q", types, methods, wantTypes, wantMethods)
	}
	if len(dirs) == 5 && (dirs[0] != protocol.ToProducer || dirs[3] != protocol.ToProducer || dirs[2] == protocol.ToProducer) {
		t.Errorf("directions %v: the request and reply go to the producer, the event not", dirs)
	}
	if sum.Messages != 5 {
		t.Errorf("summary %+v, want 5 messages (pings are transport)", sum)
	}
}
