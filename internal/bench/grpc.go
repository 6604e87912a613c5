package bench

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/aaep-tools/aaepkit/grpcbind/aaepv1"
)

// grpcBench is the gRPC throughput producer: after the subscriber's first
// message it sends N events (Events cycled) as fast as the stream takes
// them, then ends the stream with status OK.
type grpcBench struct {
	aaepv1.UnimplementedAaepServiceServer
	events [][]byte
	n      int
}

func (g *grpcBench) GetManifest(context.Context, *aaepv1.GetManifestRequest) (*aaepv1.Manifest, error) {
	return &aaepv1.Manifest{Json: []byte(`{"type":"aaep:producer.manifest","agent_id":"bench"}`)}, nil
}

func (g *grpcBench) Subscribe(s grpc.BidiStreamingServer[aaepv1.AaepMessage, aaepv1.AaepMessage]) error {
	if _, err := s.Recv(); err != nil {
		return err
	}
	var m aaepv1.AaepMessage
	for i := range g.n {
		m.Json = g.events[i%len(g.events)]
		if err := s.SendMsg(&m); err != nil {
			return err
		}
	}
	return nil
}

// grpcProducer serves n events once on a new loopback gRPC server.
func grpcProducer(pool [][]byte, n int) (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	// A producer tuned for throughput, as a busy one would be: windows and
	// a write buffer that let it send without waiting on every update.
	srv := grpc.NewServer(grpc.InitialWindowSize(4<<20), grpc.InitialConnWindowSize(4<<20), grpc.WriteBufferSize(256<<10))
	aaepv1.RegisterAaepServiceServer(srv, &grpcBench{events: pool, n: n})
	go func() { _ = srv.Serve(ln) }()
	return "grpc://" + ln.Addr().String(), srv.Stop, nil
}

// grpcDiscard subscribes at url (grpc://HOST:PORT) and reads the stream to
// its end, counting the messages and keeping none.
func grpcDiscard(url string) (int, error) {
	cc, err := grpc.NewClient("passthrough:///"+strings.TrimPrefix(url, "grpc://"),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(16<<20)),
		// The same windows and read buffer as aaep-capture's gRPC source.
		grpc.WithInitialWindowSize(4<<20), grpc.WithInitialConnWindowSize(4<<20), grpc.WithReadBufferSize(256<<10))
	if err != nil {
		return 0, err
	}
	defer cc.Close()
	st, err := aaepv1.NewAaepServiceClient(cc).Subscribe(context.Background())
	if err != nil {
		return 0, err
	}
	if err := st.Send(&aaepv1.AaepMessage{Json: []byte(`{"type":"subscription.request","aaep_version":"1.0.0","capabilities":{}}`)}); err != nil {
		return 0, err
	}
	var m aaepv1.AaepMessage
	n := 0
	for {
		m.Reset()
		if err := st.RecvMsg(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return n, nil
			}
			return n, err
		}
		n++
	}
}
