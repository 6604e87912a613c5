package grpcsource

import (
	"bytes"
	"strings"
	"testing"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/aaep-tools/aaepkit/grpcbind/aaepv1"
)

// TestRecvCodec: the Subscribe stream's codec reads what the generated
// type's decoding reads (json, message_type; unknown fields skipped; the
// last of a repeated field; a message in several buffers), refuses what
// it refuses, and keeps no message's bytes in the next one's.
func TestRecvCodec(t *testing.T) {
	wire := func(m *aaepv1.AaepMessage) []byte {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	big := []byte(`{"type":"aaep:agent.output.streaming","chunk":"` + strings.Repeat("x", 3<<20) + `"}`)
	unknown := protowire.AppendTag(nil, 7, protowire.VarintType)
	unknown = protowire.AppendVarint(unknown, 300)
	unknown = protowire.AppendTag(unknown, 9, protowire.BytesType)
	unknown = protowire.AppendString(unknown, "later field")
	wrongType := protowire.AppendTag(nil, 1, protowire.VarintType) // json as a varint: not json
	wrongType = protowire.AppendVarint(wrongType, 5)
	twice := append(wire(&aaepv1.AaepMessage{Json: []byte(`{"first":1}`)}), wire(&aaepv1.AaepMessage{Json: []byte(`{"second":2}`)})...)
	cases := []struct {
		name string
		data []byte
	}{
		{"an event", wire(&aaepv1.AaepMessage{Json: []byte(`{"type":"aaep:agent.session.started"}`), MessageType: "aaep:agent.session.started"})},
		{"the same type again", wire(&aaepv1.AaepMessage{Json: []byte(`{"type":"aaep:agent.session.started","n":2}`), MessageType: "aaep:agent.session.started"})},
		{"no type", wire(&aaepv1.AaepMessage{Json: []byte(`{}`)})},
		{"empty", nil},
		{"large", wire(&aaepv1.AaepMessage{Json: big, MessageType: "aaep:agent.output.streaming"})},
		{"small after large", wire(&aaepv1.AaepMessage{Json: []byte(`{"a":1}`)})},
		{"unknown fields", append(unknown, wire(&aaepv1.AaepMessage{Json: []byte(`{"b":2}`), MessageType: "x"})...)},
		{"json with another wire type", append(wrongType, wire(&aaepv1.AaepMessage{MessageType: "y"})...)},
		{"json twice", twice},
	}
	c := newRecvCodec()
	var r received
	for _, tc := range cases {
		if tc.name == "small after large" && cap(r.buf) > maxKeptBuffer {
			t.Errorf("storage of %d bytes kept after the large message", cap(r.buf))
		}
		for _, pieces := range []int{1, 3} {
			var want aaepv1.AaepMessage
			if err := proto.Unmarshal(tc.data, &want); err != nil {
				t.Fatal(err)
			}
			var data mem.BufferSlice
			rest := tc.data
			for i := range pieces {
				n := len(rest)
				if i < pieces-1 {
					n = len(rest) / 2
				}
				data = append(data, mem.SliceBuffer(rest[:n]))
				rest = rest[n:]
			}
			if err := c.Unmarshal(data, &r); err != nil {
				t.Fatalf("%s in %d pieces: %v", tc.name, pieces, err)
			}
			if !bytes.Equal(r.json, want.GetJson()) || r.messageType != want.GetMessageType() {
				t.Errorf("%s in %d pieces: json %.60q type %q, want %.60q %q", tc.name, pieces, r.json, r.messageType, want.GetJson(), want.GetMessageType())
			}
		}
	}
	for _, bad := range []struct {
		name string
		data []byte
	}{
		{"truncated", wire(&aaepv1.AaepMessage{Json: []byte(`{"type":"x"}`)})[:5]},
		{"bad tag", []byte{0x80}},
		{"type not UTF-8", protowire.AppendString(protowire.AppendTag(nil, 2, protowire.BytesType), "\xff")},
	} {
		if proto.Unmarshal(bad.data, &aaepv1.AaepMessage{}) == nil {
			t.Fatalf("%s: protobuf reads it", bad.name)
		}
		if err := c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(bad.data)}, &r); err == nil {
			t.Errorf("%s: read", bad.name)
		}
	}
	// Other messages (the requests the source sends) are protobuf's.
	req := &aaepv1.AaepMessage{Json: []byte(`{"type":"subscription.request"}`), MessageType: "subscription.request"}
	out, err := c.Marshal(req)
	if err != nil || !bytes.Equal(out.Materialize(), wire(req)) {
		t.Errorf("Marshal: %v", err)
	}
	var back aaepv1.AaepMessage
	if err := c.Unmarshal(out, &back); err != nil || !proto.Equal(&back, req) {
		t.Errorf("Unmarshal of a generated message: %v", err)
	}
}
