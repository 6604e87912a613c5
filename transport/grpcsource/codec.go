package grpcsource

import (
	"errors"
	"unicode/utf8"

	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
)

// received is one AaepMessage as the recording loop reads it: json points
// into a buffer reused from one message to the next (the recorder copies
// what it keeps before the next is read), and messageType is kept while
// the producer repeats it, so that a message costs no allocation of its
// own.
type received struct {
	json        []byte
	messageType string
	buf         []byte // json's storage
	scratch     []byte // a message that came in several pieces, joined
}

// recvCodec is the codec of the Subscribe stream: it decodes the
// producer's messages into a *received by reading the two fields of
// AaepMessage (json = 1, message_type = 2) straight off the wire, where
// the generated type's decoding allocates the json bytes of every message
// anew; everything else (the requests the source sends) goes through
// gRPC's protobuf codec. Its name is the protobuf codec's, so that the
// stream's content type is application/grpc+proto as before.
type recvCodec struct{ proto encoding.CodecV2 }

func newRecvCodec() recvCodec { return recvCodec{proto: encoding.GetCodecV2(grpcproto.Name)} }

func (c recvCodec) Name() string { return grpcproto.Name }

func (c recvCodec) Marshal(v any) (mem.BufferSlice, error) { return c.proto.Marshal(v) }

func (c recvCodec) Unmarshal(data mem.BufferSlice, v any) error {
	r, ok := v.(*received)
	if !ok {
		return c.proto.Unmarshal(data, v)
	}
	var b []byte
	if len(data) == 1 {
		b = data[0].ReadOnlyData()
	} else {
		r.scratch = r.scratch[:0]
		for _, d := range data {
			r.scratch = append(r.scratch, d.ReadOnlyData()...)
		}
		b = r.scratch
	}
	return r.decode(b)
}

// maxKeptBuffer is the largest json storage kept for the next message.
const maxKeptBuffer = 1 << 20

var errWire = errors.New("proto: cannot parse invalid wire-format data")

// decode reads an AaepMessage as protobuf's decoding reads it: the last
// occurrence of a field wins, fields of other numbers or wire types are
// skipped, a message_type that is not UTF-8 is an error.
func (r *received) decode(b []byte) error {
	r.json = r.buf[:0]
	typ := ""
	for len(b) > 0 {
		num, wt, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errWire
		}
		b = b[n:]
		if wt == protowire.BytesType && (num == 1 || num == 2) {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return errWire
			}
			b = b[n:]
			if num == 1 {
				r.json = append(r.json[:0], v...)
				continue
			}
			if !utf8.Valid(v) {
				return errors.New("proto: field aaep.v1.AaepMessage.message_type contains invalid UTF-8")
			}
			if string(v) != r.messageType {
				typ = string(v)
			} else {
				typ = r.messageType
			}
			continue
		}
		n = protowire.ConsumeFieldValue(num, wt, b)
		if n < 0 {
			return errWire
		}
		b = b[n:]
	}
	r.buf = r.json
	if cap(r.buf) > maxKeptBuffer {
		r.buf = nil // a large message's storage is not kept for the small ones
	}
	if r.json == nil {
		r.json = []byte{}
	}
	r.messageType = typ
	return nil
}
