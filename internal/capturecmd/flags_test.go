package capturecmd

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/internal/cli"
)

func TestNewCaptureCmd(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    string
		wantErr string // substring; "" means no error
		check   func(t *testing.T, o *options)
	}{
		{name: "documented form", args: "--endpoint http://localhost:8080 --output session.aaep", check: func(t *testing.T, o *options) {
			if !slices.Equal(o.endpoints, []string{"http://localhost:8080"}) || o.output != "session.aaep" {
				t.Errorf("endpoints %q output %q", o.endpoints, o.output)
			}
			if o.flushEvery != 100*time.Millisecond || o.maxRetries != 10 || int64(o.maxMessage) != 16<<20 || o.framing != "auto" {
				t.Errorf("defaults: flush %v retries %d max message %d framing %s", o.flushEvery, o.maxRetries, o.maxMessage, o.framing)
			}
		}},
		{name: "endpoint as first argument, then repeated --endpoint", args: "ws://a/ws -o x.aaep -e http://b -e unix:///s.sock", check: func(t *testing.T, o *options) {
			if !slices.Equal(o.endpoints, []string{"ws://a/ws", "http://b", "unix:///s.sock"}) {
				t.Errorf("endpoints %q", o.endpoints)
			}
		}},
		{name: "one vocabulary: --type, --session, --urgency", args: "http://a -o x.aaep --type a --type b --session s1 --session s2 --urgency critical --urgency background", check: func(t *testing.T, o *options) {
			if !slices.Equal(o.filterTypes, []string{"a", "b"}) || !slices.Equal(o.filterSess, []string{"s1", "s2"}) || !slices.Equal(o.filterUrg, []string{"critical", "background"}) {
				t.Errorf("types %q sessions %q urgencies %q", o.filterTypes, o.filterSess, o.filterUrg)
			}
		}},
		{name: "the old spellings", args: "http://a -o x.aaep --filter-type a --filter-type b --filter-session s1 --filter-urgency background", check: func(t *testing.T, o *options) {
			if !slices.Equal(o.filterTypes, []string{"a", "b"}) || !slices.Equal(o.filterSess, []string{"s1"}) || !slices.Equal(o.filterUrg, []string{"background"}) {
				t.Errorf("types %q sessions %q urgencies %q", o.filterTypes, o.filterSess, o.filterUrg)
			}
		}},
		{name: "exec", args: "--exec -o x.aaep -- ./producer --flag value", check: func(t *testing.T, o *options) {
			if !slices.Equal(o.execArgs, []string{"./producer", "--flag", "value"}) || len(o.endpoints) != 0 {
				t.Errorf("exec %q endpoints %q", o.execArgs, o.endpoints)
			}
		}},
		{name: "every flag", args: "unix:///s.sock -o x.aaep --duration 1m --max-events 5 --max-bytes 10MiB --flush-interval 50ms " +
			"--filter-type tool.invoked --filter-type tool.completed --filter-session s1 --filter-urgency critical " +
			"--header Authorization:Bearer.t --cacert ca.pem --insecure --redact a --redact b -q --json --subscribe " +
			"--subscribe-file caps.json --framing lp --max-message-size 1KiB --max-retries -1 --retry-max-wait 5s " +
			"--rotate-size 1GiB --rotate-every 1h --ring 3", check: func(t *testing.T, o *options) {
			if o.duration != time.Minute || o.maxEvents != 5 || o.maxBytes != 10<<20 || o.flushEvery != 50*time.Millisecond ||
				len(o.filterTypes) != 2 || o.filterSess[0] != "s1" || o.filterUrg[0] != "critical" || o.headers[0] != "Authorization:Bearer.t" ||
				o.cacert != "ca.pem" || !o.insecure || len(o.redact) != 2 || !o.quiet || !o.json || !o.subscribe || o.subFile != "caps.json" ||
				o.framing != "lp" || o.maxMessage != 1024 || o.maxRetries != -1 || o.retryWait != 5*time.Second ||
				o.rotateSize != 1<<30 || o.rotateEvery != time.Hour || o.ring != 3 {
				t.Errorf("options %+v", o)
			}
		}},
		{name: "follow", args: "in.jsonl -o x.aaep --follow", check: func(t *testing.T, o *options) {
			if !o.follow {
				t.Error("follow not set")
			}
		}},
		{name: "no endpoint", args: "-o x.aaep", wantErr: "no endpoint"},
		{name: "no output", args: "http://a", wantErr: "--output is required"},
		{name: "rotated stdout", args: "http://a -o - --rotate-every 1h", wantErr: "cannot be rotated"},
		{name: "stdout and json", args: "http://a -o - --json", wantErr: "--json cannot print there too"},
		{name: "two positional endpoints", args: "http://a http://b -o x", wantErr: "one endpoint argument"},
		{name: "args after dash without exec", args: "http://a -o x -- ./p", wantErr: "need --exec"},
		{name: "exec without command", args: "--exec -o x", wantErr: "--exec needs a command"},
		{name: "bad framing", args: "unix:///s -o x --framing xml", wantErr: "unknown framing"},
		{name: "bad header", args: "http://a -o x --header NoColonHere", wantErr: `want "Name: value"`},
		{name: "bad size", args: "http://a -o x --max-bytes 12parsecs", wantErr: "unknown unit"},
		{name: "negative duration", args: "http://a -o x --duration -1s", wantErr: `invalid argument "-1s" for "--duration" flag: want 0 (no limit) or a positive duration`},
		{name: "zero flush interval", args: "http://a -o x --flush-interval 0", wantErr: `"--flush-interval" flag: want a positive duration`},
		{name: "negative max events", args: "http://a -o x --max-events -3", wantErr: `"--max-events" flag: want 0 (no limit) or a positive whole number`},
		{name: "negative ring", args: "http://a -o x --rotate-every 1h --ring -1", wantErr: `"--ring" flag`},
		{name: "ring without rotation", args: "http://a -o x --ring 2", wantErr: "--ring needs"},
		{name: "tiny rotate-every", args: "http://a -o x --rotate-every 10ms", wantErr: "one second at least"},
		// Misconfigurations that would pass silently (issue 23, item 8).
		{name: "two spellings of one flag", args: "http://a -o x --type a --filter-type b", wantErr: "--type and --filter-type are two spellings of one flag: give one of them"},
		{name: "framing without a socket", args: "events.jsonl -o x --framing lp", wantErr: "--framing lp frames Unix socket streams; no endpoint is a unix:// socket (events.jsonl)"},
		{name: "framing ndjson of a WebSocket", args: "ws://a/ws -o x --framing ndjson", wantErr: "--framing ndjson frames Unix socket streams"},
		{name: "tiny rotate-size", args: "http://a -o x --rotate-size 1KiB", wantErr: "--rotate-size 1.0 KiB: 1MiB at least"},
		{name: "unknown flag", args: "http://a -o x --bogus", wantErr: "unknown flag"},
		{name: "bad retries", args: "http://a -o x --max-retries -2", wantErr: "--max-retries"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got *options
			var errb bytes.Buffer
			cmd := newCaptureCmd(context.Background(), cli.Streams{Out: &bytes.Buffer{}, Err: &errb}, func(o *options) error {
				got = o
				return nil
			})
			cmd.SetArgs(strings.Fields(tc.args))
			cmd.SetOut(&bytes.Buffer{})
			cmd.SetErr(&errb)
			err := cmd.Execute()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				if code := cli.Code(err); code != cli.ExitUsage {
					t.Errorf("exit code %d, want 2", code)
				}
				return
			}
			if err != nil {
				t.Fatalf("error %v", err)
			}
			tc.check(t, got)
		})
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "1048576": 1 << 20, "64KiB": 64 << 10, "16MiB": 16 << 20, "2GiB": 2 << 30, "10kB": 10000, "3M": 3 << 20, "5 MB": 5 << 20} {
		got, err := parseSize(in)
		if err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "1.5MiB", "MiB", "9999999999999GiB"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q): no error", in)
		}
	}
}
