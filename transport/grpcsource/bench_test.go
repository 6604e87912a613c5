package grpcsource_test

import (
	"context"
	"testing"

	"google.golang.org/grpc"

	"github.com/aaep-tools/aaepkit/grpcbind/aaepv1"
	"github.com/aaep-tools/aaepkit/grpcbind/grpctest"
	"github.com/aaep-tools/aaepkit/internal/sample"
	"github.com/aaep-tools/aaepkit/transport"
)

// BenchmarkReceive measures the gRPC source receiving b.N realistic events
// (~470 bytes) from a producer on loopback, delivered to an emit that
// keeps nothing: the source's own cost per message, with gRPC's.
func BenchmarkReceive(b *testing.B) {
	pool := sample.Events(1024, 3)
	n := b.N
	p := &grpctest.Producer{Manifest: grpctest.Manifest, Handle: func(s grpctest.Stream, _ int, _ *aaepv1.AaepMessage) error {
		var m aaepv1.AaepMessage
		for i := range n {
			m.Json = pool[i%len(pool)]
			if err := s.SendMsg(&m); err != nil {
				return err
			}
		}
		return nil
	}}
	ln := grpctest.Listen(b, "")
	grpctest.Serve(b, p, ln, grpc.InitialWindowSize(4<<20), grpc.InitialConnWindowSize(4<<20), grpc.WriteBufferSize(256<<10))
	src, err := transport.New("grpc://"+ln.Addr().String(), transport.Options{Clock: transport.NewClock()})
	if err != nil {
		b.Fatal(err)
	}
	got := 0
	b.ReportAllocs()
	b.ResetTimer()
	if err := src.Run(context.Background(), func(m *transport.Message) error {
		got++
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if got < n {
		b.Fatalf("%d messages, want %d", got, n)
	}
}
