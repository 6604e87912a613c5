// Package grpcserve serves a replay (package serve) over AAEP's gRPC
// binding (Appendix B.5): aaep.v1.AaepService's Subscribe stream runs a
// subscription as a WebSocket does (handshake, pacing, replies, control,
// recording), and GetManifest answers the capture's manifest (or one made
// from its producer).
//
// gRPC has no per-stream write deadline: a subscriber that stops reading
// (stalled), falls too far behind, or is cut has its connection closed,
// which ends every stream it carries.
package grpcserve

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/aaep-tools/aaepkit/grpcbind"
	"github.com/aaep-tools/aaepkit/grpcbind/aaepv1"
	"github.com/aaep-tools/aaepkit/serve"
)

// MaxMessage is the largest message a subscriber may send, and the
// largest the server sends (a captured message larger than gRPC's default
// 4 MiB still goes out whole).
const MaxMessage = 64 << 20

// Server serves one replay over gRPC.
type Server struct {
	aaepv1.UnimplementedAaepServiceServer

	srv   *serve.Server
	gs    *grpc.Server
	ln    net.Listener
	conns sync.Map // remote address -> net.Conn, to abort a stalled subscriber
}

// Listen listens on addr for gRPC subscribers of srv (with TLS when tlsConf
// is set). Serve serves them.
func Listen(addr string, srv *serve.Server, tlsConf *tls.Config) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return New(ln, srv, tlsConf), nil
}

// New serves srv's replay on ln.
func New(ln net.Listener, srv *serve.Server, tlsConf *tls.Config) *Server {
	s := &Server{srv: srv}
	s.ln = &trackedListener{Listener: serve.Listener(ln), s: s}
	opts := []grpc.ServerOption{grpc.MaxRecvMsgSize(MaxMessage), grpc.MaxSendMsgSize(MaxMessage)}
	if tlsConf != nil {
		c := tlsConf.Clone()
		if c.MinVersion < tls.VersionTLS12 {
			c.MinVersion = tls.VersionTLS12
		}
		opts = append(opts, grpc.Creds(credentials.NewTLS(c)))
	}
	s.gs = grpc.NewServer(opts...)
	aaepv1.RegisterAaepServiceServer(s.gs, s)
	return s
}

// Addr is the address listened on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Serve serves until Stop; it returns nil once stopped.
func (s *Server) Serve() error {
	err := s.gs.Serve(s.ln)
	if errors.Is(err, grpc.ErrServerStopped) {
		return nil
	}
	return err
}

// Stop closes the listener and every connection. The replay's own
// Shutdown ends the subscriptions first, each with its status.
func (s *Server) Stop() { s.gs.Stop() }

// GetManifest answers the replay's manifest.
func (s *Server) GetManifest(context.Context, *aaepv1.GetManifestRequest) (*aaepv1.Manifest, error) {
	return &aaepv1.Manifest{Json: s.srv.Manifest()}, nil
}

// Subscribe runs one subscription on the stream.
func (s *Server) Subscribe(stream grpc.BidiStreamingServer[aaepv1.AaepMessage, aaepv1.AaepMessage]) error {
	ctx := stream.Context()
	remote := ""
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		remote = p.Addr.String()
	}
	ms := &messageStream{stream: stream, abort: func() {
		if c, ok := s.conns.Load(remote); ok {
			_ = c.(net.Conn).Close()
		}
	}}
	end, err := s.srv.ServeStream(ctx, ms, grpcbind.Transport, remote, true)
	if err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	return endStatus(end)
}

// endStatus is the gRPC status a subscription ends with.
func endStatus(end serve.StreamEnd) error {
	switch end.Code {
	case serve.CloseClean, serve.CloseSubscriber, serve.CloseNormal:
		return nil
	case serve.CloseRejected:
		return status.Error(codes.PermissionDenied, end.Reason)
	case serve.CloseViolation:
		return status.Error(codes.ResourceExhausted, end.Reason)
	case serve.CloseGoingAway, serve.CloseAbnormal:
		return status.Error(codes.Unavailable, end.Reason)
	case serve.CloseInternal:
		return status.Error(codes.Internal, end.Reason)
	}
	return status.Error(codes.Unknown, fmt.Sprintf("%d %s", end.Code, end.Reason))
}

// messageStream is a Subscribe stream as a serve.MessageStream.
type messageStream struct {
	stream grpc.BidiStreamingServer[aaepv1.AaepMessage, aaepv1.AaepMessage]
	abort  func()
	in     aaepv1.AaepMessage
	out    aaepv1.AaepMessage
}

func (m *messageStream) Recv() ([]byte, error) {
	m.in.Reset()
	if err := m.stream.RecvMsg(&m.in); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		if status.Code(err) == codes.Canceled {
			return nil, context.Canceled
		}
		return nil, err
	}
	return m.in.GetJson(), nil
}

func (m *messageStream) Send(msg []byte, typ string) error {
	m.out.Json, m.out.MessageType = msg, typ
	err := m.stream.SendMsg(&m.out)
	m.out.Json = nil
	return err
}

func (m *messageStream) Abort() { m.abort() }

// trackedListener keeps each accepted connection by its remote address.
type trackedListener struct {
	net.Listener
	s *Server
}

func (l *trackedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: c, l: l}
	l.s.conns.Store(c.RemoteAddr().String(), tc)
	return tc, nil
}

type trackedConn struct {
	net.Conn
	l    *trackedListener
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() { c.l.s.conns.Delete(c.RemoteAddr().String()) })
	return c.Conn.Close()
}
