package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/aaep-tools/aaepkit/grpcbind/aaepv1"
)

// grpcBench is the gRPC throughput producer: after the subscriber's first
// message it sends N events (Events cycled) as fast as the stream takes
// them, then ends the stream with status OK. Each event is encoded once
// (grpc.PreparedMsg) and sent as often as the cycle comes back to it, as
// the SSE producer writes frames it made once: the producer's own cost,
// which shares the machine with the recorder, is the transport's, not
// that of encoding the same message again.
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
	prepared := make([]grpc.PreparedMsg, min(len(g.events), g.n))
	for i := range prepared {
		if err := prepared[i].Encode(s, &aaepv1.AaepMessage{Json: g.events[i]}); err != nil {
			return err
		}
	}
	for i := range g.n {
		if err := s.SendMsg(&prepared[i%len(prepared)]); err != nil {
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

// GRPCSubscriber is a gRPC subscriber of a replay server (serve --grpc),
// read as Subscriber reads a WebSocket one.
type GRPCSubscriber struct {
	cc     *grpc.ClientConn
	stream grpc.BidiStreamingClient[aaepv1.AaepMessage, aaepv1.AaepMessage]
	cancel context.CancelFunc
}

// SubscribeGRPC opens Subscribe at addr (host:port) and sends the
// subscription request; the replay starts when the server answers it.
func SubscribeGRPC(ctx context.Context, addr string) (*GRPCSubscriber, error) {
	cc, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("subscribe to grpc://%s: %w", addr, err)
	}
	sctx, cancel := context.WithCancel(ctx)
	st, err := aaepv1.NewAaepServiceClient(cc).Subscribe(sctx)
	if err == nil {
		err = st.Send(&aaepv1.AaepMessage{Json: []byte(subscriptionRequest), MessageType: "subscription.request"})
	}
	if err != nil {
		cancel()
		cc.Close()
		return nil, fmt.Errorf("subscribe to grpc://%s: %w", addr, err)
	}
	return &GRPCSubscriber{cc: cc, stream: st, cancel: cancel}, nil
}

// Close ends the stream and the connection.
func (s *GRPCSubscriber) Close() error {
	s.cancel()
	return s.cc.Close()
}

// Read reads the stream until the server ends it (status OK: CloseCode
// 0) or Max events, discarding the payloads; the first message, the
// answer to the request, is not counted. Another status is an error.
func (s *GRPCSubscriber) Read(o ReadOptions) (ReadStats, error) {
	var st ReadStats
	if !o.Deadline.IsZero() {
		t := time.AfterFunc(time.Until(o.Deadline), s.cancel)
		defer t.Stop()
	}
	var m aaepv1.AaepMessage
	for {
		m.Reset()
		if err := s.stream.RecvMsg(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return st, nil
			}
			return st, fmt.Errorf("after %d events: %w", st.Events, err)
		}
		if st.heard(time.Now(), o) {
			return st, nil
		}
	}
}
