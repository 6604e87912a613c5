package transport

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

type sseWant struct {
	data, event, id string
	tooLarge        int64 // size of a refused event
}

func TestSSEParser(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stream string
		max    int64
		want   []sseWant
		// after the stream ends
		lastID  string
		retry   time.Duration
		partial int64
	}{
		{name: "basic", stream: "event: aaep.event\nid: evt_1\ndata: {\"a\":1}\n\n",
			want: []sseWant{{data: `{"a":1}`, event: "aaep.event", id: "evt_1"}}, lastID: "evt_1"},
		{name: "no space after colon; only one space removed", stream: "data:x\n\ndata:  y\n\n",
			want: []sseWant{{data: "x"}, {data: " y"}}},
		{name: "multi-line data joined with LF", stream: "data: {\ndata:   \"a\": 1\ndata: }\n\n",
			want: []sseWant{{data: "{\n  \"a\": 1\n}"}}},
		{name: "CRLF line ends", stream: "id: e1\r\ndata: d1\r\n\r\ndata: d2\r\n\r\n",
			want: []sseWant{{data: "d1", id: "e1"}, {data: "d2"}}, lastID: "e1"},
		{name: "comments and unknown fields ignored", stream: ": hi\nfoo: bar\ndata: d\n\n",
			want: []sseWant{{data: "d"}}},
		{name: "BOM at start", stream: "\xEF\xBB\xBFdata: d\n\n", want: []sseWant{{data: "d"}}},
		{name: "field without colon", stream: "data\n\ndata: x\n\n", want: []sseWant{{data: ""}, {data: "x"}}},
		{name: "event without data is not dispatched but its id counts", stream: "id: 7\n\ndata: x\n\n",
			want: []sseWant{{data: "x"}}, lastID: "7"},
		{name: "id with NUL ignored", stream: "id: a\x00b\ndata: x\n\n", want: []sseWant{{data: "x"}}},
		{name: "retry", stream: "retry: 1500\n\nretry: x\n\ndata: d\n\n", want: []sseWant{{data: "d"}}, retry: 1500 * time.Millisecond},
		{name: "event type resets after dispatch", stream: "event: e\ndata: 1\n\ndata: 2\n\n",
			want: []sseWant{{data: "1", event: "e"}, {data: "2"}}},
		{name: "unfinished event at EOF is dropped", stream: "data: done\n\nid: x\ndata: {\"half",
			want: []sseWant{{data: "done"}}, partial: int64(len(`data: {"half`))},
		{name: "unfinished complete lines count as partial", stream: "data: abc\n",
			want: nil, partial: 4},
		{name: "oversized event refused, next one read", max: 10, stream: "data: 0123456789A\n\ndata: ok\n\n",
			want: []sseWant{{tooLarge: 11}, {data: "ok"}}},
		{name: "oversized over several lines", max: 10, stream: "data: 012345\ndata: 6789\n\n",
			want: []sseWant{{tooLarge: 11}}},
		{name: "exactly the limit", max: 11, stream: "data: 012345\ndata: 6789\n\n",
			want: []sseWant{{data: "012345\n6789"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			max := tc.max
			if max == 0 {
				max = 1 << 20
			}
			// One byte per read: every split point of the stream.
			p := newSSEParser(iotest.OneByteReader(strings.NewReader(tc.stream)), max)
			var got []sseWant
			var err error
			for {
				var ev sseEvent
				ev, err = p.next()
				var tl *FrameTooLargeError
				if errors.As(err, &tl) {
					got = append(got, sseWant{tooLarge: tl.Size})
					continue
				}
				if err != nil {
					break
				}
				w := sseWant{data: string(ev.data)}
				for _, a := range ev.attrs {
					switch a.Key {
					case "event":
						w.event = a.Value
					case "id":
						w.id = a.Value
					}
				}
				got = append(got, w)
			}
			if err != io.EOF {
				t.Fatalf("end error %v", err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("events %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("event %d: %+v, want %+v", i, got[i], tc.want[i])
				}
			}
			if p.lastID != tc.lastID || p.retry != tc.retry || p.partial != tc.partial {
				t.Errorf("lastID %q retry %v partial %d, want %q %v %d", p.lastID, p.retry, p.partial, tc.lastID, tc.retry, tc.partial)
			}
		})
	}
}

func TestSSEParserLongLines(t *testing.T) {
	big := strings.Repeat("a", 3*readBufferSize)
	stream := "data: " + big + "\n\n" + "data: " + big + "b\n\n" + "data: ok\n\n"
	p := newSSEParser(strings.NewReader(stream), int64(len(big)))
	ev, err := p.next()
	if err != nil || string(ev.data) != big {
		t.Fatalf("first: %v, %d bytes", err, len(ev.data))
	}
	_, err = p.next()
	var tl *FrameTooLargeError
	if !errors.As(err, &tl) || tl.Size != int64(len(big))+1 {
		t.Fatalf("second: %v", err)
	}
	ev, err = p.next()
	if err != nil || string(ev.data) != "ok" {
		t.Fatalf("third: %v %q", err, ev.data)
	}
}

func lp(msgs ...string) []byte {
	var b []byte
	for _, m := range msgs {
		b = binary.BigEndian.AppendUint32(b, uint32(len(m)))
		b = append(b, m...)
	}
	return b
}

func TestFrameReader(t *testing.T) {
	long := strings.Repeat("L", readBufferSize+100)
	for _, tc := range []struct {
		name      string
		framing   Framing
		input     []byte
		max       int64
		lastLine  bool
		want      []string // "!N" = refused with size N
		wantErr   error
		partial   int64
		detectsAs Framing
	}{
		{name: "lp", framing: FramingLP, input: lp("a", "", "{}"), want: []string{"a", "", "{}"}, wantErr: io.EOF},
		{name: "lp torn header", framing: FramingLP, input: append(lp("a"), 0, 0), want: []string{"a"}, wantErr: io.ErrUnexpectedEOF, partial: 2},
		{name: "lp torn body", framing: FramingLP, input: lp("abcdef")[:7], wantErr: io.ErrUnexpectedEOF, partial: 7},
		{name: "lp oversized skipped", framing: FramingLP, max: 3, input: lp("abcd", "abc"), want: []string{"!4", "abc"}, wantErr: io.EOF},
		{name: "lp long", framing: FramingLP, input: lp(long, "x"), want: []string{long, "x"}, wantErr: io.EOF},
		{name: "ndjson", framing: FramingNDJSON, input: []byte("a\n\nb\r\n"), want: []string{"a", "b"}, wantErr: io.EOF},
		{name: "ndjson torn", framing: FramingNDJSON, input: []byte("a\nbc"), want: []string{"a"}, wantErr: io.ErrUnexpectedEOF, partial: 2},
		{name: "ndjson file last line", framing: FramingNDJSON, lastLine: true, input: []byte("a\nbc"), want: []string{"a", "bc"}, wantErr: io.EOF},
		{name: "ndjson oversized", framing: FramingNDJSON, max: 2, input: []byte("abc\nab\n"), want: []string{"!3", "ab"}, wantErr: io.EOF},
		{name: "ndjson long line", framing: FramingNDJSON, input: []byte(long + "\r\nx\n"), want: []string{long, "x"}, wantErr: io.EOF},
		{name: "ndjson long oversized", framing: FramingNDJSON, max: readBufferSize, input: []byte(long + "\r\nx\n"), want: []string{"!" + strconv.Itoa(len(long)), "x"}, wantErr: io.EOF},
		{name: "auto lp", framing: FramingAuto, input: lp("{}"), want: []string{"{}"}, wantErr: io.EOF, detectsAs: FramingLP},
		{name: "auto ndjson", framing: FramingAuto, input: []byte("{}\n"), want: []string{"{}"}, wantErr: io.EOF, detectsAs: FramingNDJSON},
		{name: "auto ndjson whitespace", framing: FramingAuto, input: []byte("\n{}\n"), want: []string{"{}"}, wantErr: io.EOF, detectsAs: FramingNDJSON},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fr := newFrameReader(iotest.HalfReader(bytes.NewReader(tc.input)), tc.framing, tc.max)
			fr.lastLineIsMessage = tc.lastLine
			var got []string
			var err error
			for {
				var b []byte
				b, err = fr.next()
				var tl *FrameTooLargeError
				if errors.As(err, &tl) {
					got = append(got, "!"+strconv.Itoa(int(tl.Size)))
					continue
				}
				if err != nil {
					break
				}
				got = append(got, string(b))
			}
			if err != tc.wantErr {
				t.Fatalf("end error %v, want %v", err, tc.wantErr)
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("frames %.200q, want %.200q", got, tc.want)
			}
			if fr.partial != tc.partial {
				t.Errorf("partial %d, want %d", fr.partial, tc.partial)
			}
			if tc.detectsAs != FramingAuto && fr.framing != tc.detectsAs {
				t.Errorf("detected %v, want %v", fr.framing, tc.detectsAs)
			}
		})
	}
}

func TestSafeURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://user:pw@example.com/aaep/v1/events", "https://example.com/aaep/v1/events"},
		{"wss://example.com/ws?access_token=abc&mode=x", "wss://example.com/ws?access_token=REDACTED&mode=x"},
		{"http://example.com/events?subscription_id=sub_1", "http://example.com/events?subscription_id=sub_1"},
		{"http://example.com/e?api_key=k1&sig=s", "http://example.com/e?api_key=REDACTED&sig=REDACTED"},
		{"/var/tmp/session.jsonl", "/var/tmp/session.jsonl"},
		{"unix:///run/aaep.sock", "unix:///run/aaep.sock"},
	} {
		if got := SafeURL(tc.in); got != tc.want {
			t.Errorf("SafeURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRetryDelay(t *testing.T) {
	r := Retry{Initial: 100 * time.Millisecond, Max: time.Second}
	for n, base := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 4: 800 * time.Millisecond, 5: time.Second, 30: time.Second} {
		for i := 0; i < 50; i++ {
			d := r.Delay(n)
			if d < base/2 || d > base {
				t.Fatalf("Delay(%d) = %v, want within [%v, %v]", n, d, base/2, base)
			}
		}
	}
}

// FuzzSSEParser: any byte stream parses without panic; no delivered event
// is larger than the limit; the stream ends with a read error (io.EOF).
func FuzzSSEParser(f *testing.F) {
	f.Add([]byte("event: aaep.event\nid: e1\ndata: {\"a\":1}\n\n"), int64(100))
	f.Add([]byte("\xEF\xBB\xBFdata:x\r\ndata: y\r\n\r\nretry: 10\n\n: c\nid\n"), int64(3))
	f.Fuzz(func(t *testing.T, stream []byte, max int64) {
		if max <= 0 || max > 1<<20 {
			max = 64
		}
		p := newSSEParser(bytes.NewReader(stream), max)
		for i := 0; i <= len(stream); i++ {
			ev, err := p.next()
			var tl *FrameTooLargeError
			if errors.As(err, &tl) {
				if tl.Size <= max {
					t.Fatalf("refused %d bytes under the limit %d", tl.Size, max)
				}
				continue
			}
			if err != nil {
				if err != io.EOF {
					t.Fatalf("error %v", err)
				}
				return
			}
			if int64(len(ev.data)) > max {
				t.Fatalf("event of %d bytes over the limit %d", len(ev.data), max)
			}
		}
		t.Fatal("more events than bytes")
	})
}

// FuzzFrameReader: any byte stream splits without panic, in every framing;
// no frame exceeds the limit.
func FuzzFrameReader(f *testing.F) {
	f.Add([]byte("{}\n{\"a\":1}\r\n"), uint8(0))
	f.Add(lp("abc", "", "{}"), uint8(1))
	f.Fuzz(func(t *testing.T, stream []byte, framing uint8) {
		const max = 50
		fr := newFrameReader(bytes.NewReader(stream), Framing(framing%3), max)
		fr.lastLineIsMessage = framing&4 != 0
		for i := 0; i <= len(stream)+1; i++ {
			b, err := fr.next()
			var tl *FrameTooLargeError
			switch {
			case errors.As(err, &tl):
				continue
			case err == io.EOF || err == io.ErrUnexpectedEOF:
				return
			case err != nil:
				t.Fatalf("error %v", err)
			}
			if len(b) > max {
				t.Fatalf("frame of %d bytes", len(b))
			}
		}
		t.Fatal("more frames than bytes")
	})
}

// TestFramingLooksWrong: length-prefixed framing of an NDJSON stream reads
// '{"ty' as a length of some 2 GB; it is reported at once as a wrong
// framing instead of waiting for 2 GB that will never come.
func TestFramingLooksWrong(t *testing.T) {
	fr := newFrameReader(bytes.NewReader([]byte(`{"type":"aaep:agent.session.started"}`+"\n")), FramingLP, 0)
	_, err := fr.next()
	var fe *FramingError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), `the framing looks wrong: a length prefix reads as the text "{\"ty"`) {
		t.Fatalf("err = %v, want a FramingError", err)
	}
	// A real length prefix past the limit is still a message too large.
	fr = newFrameReader(bytes.NewReader(lp("abcd")), FramingLP, 3)
	if _, err := fr.next(); !errors.As(err, new(*FrameTooLargeError)) {
		t.Fatalf("err = %v, want FrameTooLargeError", err)
	}
}
