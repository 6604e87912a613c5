package transport_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/transport"
	"github.com/aaep-tools/aaepkit/transport/transporttest"
)

func TestUnixFramings(t *testing.T) {
	events := transporttest.Events(30)
	badUTF8 := []byte("{\"chunk\":\"\xc3\x28\"}")
	withNUL := []byte("{\"a\":\"\x00\"}")
	empty := []byte{}
	for _, tc := range []struct {
		name, producer string
		framing        transport.Framing
		extra          [][]byte
	}{
		{"lp", "lp", transport.FramingLP, [][]byte{badUTF8, withNUL, empty}},
		{"ndjson", "ndjson", transport.FramingNDJSON, [][]byte{badUTF8, withNUL}},
		{"auto detects lp", "lp", transport.FramingAuto, [][]byte{badUTF8}},
		{"auto detects ndjson", "ndjson", transport.FramingAuto, [][]byte{badUTF8}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msgs := append(slices.Clone(events), tc.extra...)
			p := &transporttest.UnixProducer{Frames: transporttest.Frames(msgs), Framing: tc.producer}
			endpoint := p.Start(t)
			opts := testOpts()
			opts.Framing = tc.framing
			src, err := transport.New(endpoint, opts)
			if err != nil {
				t.Fatal(err)
			}
			c := &collector{}
			if err := run(t, src, c); err != nil {
				t.Fatalf("Run: %v", err)
			}
			checkPayloads(t, c, msgs)
			checkMonotonic(t, c.all())
			if got, want := c.events(), []string{"connected", "closed"}; !slices.Equal(got, want) {
				t.Errorf("events %v, want %v", got, want)
			}
		})
	}
}

func TestUnixDropAndOversized(t *testing.T) {
	events := transporttest.Events(10)
	big := bytes.Repeat([]byte("z"), 5000)
	for _, framing := range []string{"lp", "ndjson"} {
		t.Run(framing, func(t *testing.T) {
			frames := transporttest.Frames(events[:3])
			frames = append(frames, transporttest.Frame{Data: big})
			frames = append(frames, transporttest.Frames(events[3:])...)
			p := &transporttest.UnixProducer{Frames: frames, Framing: framing, DropAt: 6}
			endpoint := p.Start(t)
			opts := testOpts()
			opts.MaxMessageSize = 1000
			opts.Framing, _ = transport.ParseFraming(framing)
			src, _ := transport.New(endpoint, opts)
			c := &collector{}
			if err := run(t, src, c); err != nil {
				t.Fatalf("Run: %v", err)
			}
			checkPayloads(t, c, events)
			want := []string{"connected", "refused", "disconnected", "connected", "closed"}
			if got := c.events(); !slices.Equal(got, want) {
				t.Fatalf("events %v, want %v", got, want)
			}
			conns := c.kind(capfile.KindConn)
			if conns[1].Conn.Size != 5000 {
				t.Errorf("refused size %d", conns[1].Conn.Size)
			}
			if conns[2].Conn.Partial == 0 {
				t.Errorf("disconnect without partial bytes: %+v", conns[2].Conn)
			}
		})
	}
}

func TestUnixSubscribe(t *testing.T) {
	events := transporttest.Events(3)
	for _, framing := range []string{"lp", "ndjson"} {
		t.Run(framing, func(t *testing.T) {
			p := &transporttest.UnixProducer{Frames: transporttest.Frames(events), Framing: framing, ExpectSubscribe: true}
			endpoint := p.Start(t)
			opts := testOpts()
			opts.Subscribe = true
			opts.Framing, _ = transport.ParseFraming(framing)
			src, _ := transport.New(endpoint, opts)
			c := &collector{}
			if err := run(t, src, c); err != nil {
				t.Fatalf("Run: %v", err)
			}
			checkPayloads(t, c, events)
			sent := c.kind(capfile.KindSent)
			rcv := p.Received()
			if len(sent) != 1 || len(rcv) != 1 || !bytes.Equal(sent[0].Payload, rcv[0]) || !strings.Contains(string(rcv[0]), "subscription.request") {
				t.Fatalf("sent %d messages, producer received %q", len(sent), rcv)
			}
		})
	}
}
