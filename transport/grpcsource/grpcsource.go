// Package grpcsource is the capture side of AAEP's gRPC binding (Appendix
// B.5): a transport.Source for grpc://HOST:PORT (plain HTTP/2) and
// grpcs://HOST:PORT (TLS) endpoints. Importing it registers both schemes
// with transport.New.
//
// Per connection the source calls GetManifest and records the manifest as
// a received message (attribute grpc_method=GetManifest; a manifest
// document, which the checker reads as such and judges by no event rule),
// then opens Subscribe, sends the subscription.request first and records
// every AaepMessage's json bytes exactly as received, with message_type as
// an attribute when the producer gives one. A lost stream is subscribed
// again with backoff, the request sent again (B.5.4), under the retry
// rules of package transport. Request headers (Authorization) travel as
// metadata and are never recorded.
package grpcsource

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/grpcbind"
	"github.com/aaep-tools/aaepkit/grpcbind/aaepv1"
	"github.com/aaep-tools/aaepkit/payload"
	"github.com/aaep-tools/aaepkit/transport"
)

func init() { transport.RegisterScheme(New, "grpc", "grpcs") }

// Names the records of a gRPC source carry (see package grpcbind).
const (
	Transport         = grpcbind.Transport
	AttrMessageType   = grpcbind.AttrMessageType
	AttrMethod        = grpcbind.AttrMethod
	MethodGetManifest = grpcbind.MethodGetManifest
)

// Envelope is the room allowed beyond the size limit for the protobuf
// wrapping of one message (tags, lengths, a short message_type): a json
// field above the limit is refused by the source itself, which keeps the
// stream; only a wrapper larger than limit+Envelope makes gRPC end it.
const Envelope = 4 << 10

// connectTimeout bounds connecting and the GetManifest call, as the
// WebSocket handshake is bounded.
const connectTimeout = 15 * time.Second

// Flow-control window and read buffer of a recorder's connection.
const (
	streamWindow = 4 << 20
	readBuffer   = 256 << 10
)

// closeWait bounds the goodbye when the capture stops.
const closeWait = time.Second

// Source records one gRPC producer.
type Source struct {
	opts   transport.Options
	target string // host:port
	url    string // safe endpoint for connection events and the header
	tls    *tls.Config
	md     metadata.MD
}

// New returns the source of a grpc:// or grpcs:// endpoint.
func New(endpoint string, opts transport.Options) (transport.Source, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("endpoint %s: %w", transport.SafeURL(endpoint), err)
	}
	scheme := strings.ToLower(u.Scheme)
	if u.Host == "" {
		return nil, fmt.Errorf("endpoint %s: no host", transport.SafeURL(endpoint))
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" {
		return nil, fmt.Errorf("endpoint %s: a gRPC endpoint is HOST:PORT only (the service is aaep.v1.AaepService)", transport.SafeURL(endpoint))
	}
	host := u.Host
	if u.Port() == "" {
		if scheme == "grpc" {
			return nil, fmt.Errorf("endpoint %s: no port (grpc://HOST:PORT)", transport.SafeURL(endpoint))
		}
		host = net.JoinHostPort(u.Hostname(), "443")
	}
	md := metadata.MD{}
	for k, vs := range opts.Header {
		md.Append(strings.ToLower(k), vs...)
	}
	if u.User != nil && md.Get("authorization") == nil {
		pw, _ := u.User.Password()
		r := http.Request{Header: http.Header{}}
		r.SetBasicAuth(u.User.Username(), pw)
		md.Set("authorization", r.Header.Get("Authorization"))
	}
	s := &Source{opts: opts, target: host, url: scheme + "://" + host, md: md}
	if scheme == "grpcs" {
		c := &tls.Config{MinVersion: tls.VersionTLS12}
		if opts.TLS != nil {
			c = opts.TLS.Clone()
			if c.MinVersion < tls.VersionTLS12 {
				c.MinVersion = tls.VersionTLS12 // B.5.3
			}
		}
		s.tls = c
	}
	return s, nil
}

// Info describes the source for a capture header.
func (s *Source) Info() transport.Info {
	return transport.Info{Transport: Transport, Endpoint: s.url}
}

// Run records until ctx ends, the producer ends the stream cleanly, or the
// source gives up.
func (s *Source) Run(ctx context.Context, emit transport.Emit) error {
	var lastManifest []byte
	return transport.RunRetrying(ctx, s.opts.Clock, emit, s.url, s.opts.Retry, func(ctx context.Context, e *transport.Emitter, n int) transport.Outcome {
		a := attempt{s: s, e: e, n: n, manifest: &lastManifest}
		return a.run(ctx)
	})
}

// attempt is one connection: a client connection, GetManifest, one stream.
type attempt struct {
	s        *Source
	e        *transport.Emitter
	n        int
	manifest *[]byte // the last manifest recorded by this source

	dialMu  sync.Mutex
	dialErr error // the last dial's error, to tell a refused connection

	closeMu   sync.Mutex
	closeSent []byte // subscription.close sent when the capture stopped
	closeTime int64
}

func (a *attempt) dial(ctx context.Context, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	a.dialMu.Lock()
	a.dialErr = err
	a.dialMu.Unlock()
	return c, err
}

func (a *attempt) lastDialErr() error {
	a.dialMu.Lock()
	defer a.dialMu.Unlock()
	return a.dialErr
}

func (a *attempt) run(ctx context.Context) transport.Outcome {
	s := a.s
	limit := s.opts.MaxMessage()
	creds := insecure.NewCredentials()
	if s.tls != nil {
		creds = credentials.NewTLS(s.tls)
	}
	cc, err := grpc.NewClient("passthrough:///"+s.target,
		grpc.WithTransportCredentials(creds),
		grpc.WithContextDialer(a.dial),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(int(min(limit+Envelope, 1<<31-1)))),
		// A recorder reads as fast as it can: windows large enough that
		// the producer is not held back waiting for window updates, and a
		// read buffer that takes many small messages per system call.
		grpc.WithInitialWindowSize(streamWindow),
		grpc.WithInitialConnWindowSize(streamWindow),
		grpc.WithReadBufferSize(readBuffer),
	)
	if err != nil {
		return transport.Outcome{Err: fmt.Errorf("grpc client: %w", err), Permanent: true}
	}
	defer cc.Close()
	client := aaepv1.NewAaepServiceClient(cc)
	ctx = metadata.NewOutgoingContext(ctx, a.s.md)

	// GetManifest proves a gRPC server is there (and which): a failure
	// other than UNIMPLEMENTED ends the attempt before any stream.
	mctx, cancel := context.WithTimeout(ctx, connectTimeout)
	man, merr := client.GetManifest(mctx, &aaepv1.GetManifestRequest{})
	cancel()
	reason := ""
	if merr != nil {
		st, _ := status.FromError(merr)
		switch {
		case ctx.Err() != nil:
			return transport.Outcome{}
		case notGRPC(st):
			return a.failed(merr, "GetManifest")
		case st.Code() == codes.Unavailable || st.Code() == codes.DeadlineExceeded || st.Code() == codes.Unauthenticated || st.Code() == codes.PermissionDenied:
			return a.failed(merr, "GetManifest")
		default:
			// A producer without a manifest can still stream events.
			reason = fmt.Sprintf("no manifest: GetManifest failed (%s: %s)", CodeName(st.Code()), st.Message())
		}
	}
	if err := a.e.Conn(transport.ConnEvent{Event: capfile.ConnConnected, Attempt: a.n, Reason: reason}); err != nil {
		return transport.Outcome{Err: err}
	}
	o := transport.Outcome{Connected: true}
	if merr == nil {
		if err := a.recordManifest(man.GetJson(), limit); err != nil {
			return transport.Outcome{Err: err}
		}
	}

	deadline := s.opts.StreamDeadline
	if deadline <= 0 {
		deadline = transport.DefaultStreamDeadline
	}
	// The stream outlives the capture's context by the goodbye: stopping
	// sends subscription.close, half-closes, and cancels after closeWait.
	sctx, cancelDeadline := context.WithTimeout(context.WithoutCancel(ctx), deadline)
	defer cancelDeadline()
	stream, err := client.Subscribe(sctx, grpc.ForceCodecV2(newRecvCodec()))
	if err != nil {
		o.Err = a.explain(err, "Subscribe")
		o.Permanent = permanent(err)
		return o
	}
	req := s.opts.SubscriptionBytes()
	if err := stream.Send(&aaepv1.AaepMessage{Json: req, MessageType: "subscription.request"}); err != nil {
		// The real status comes with the stream's end.
		_, rerr := stream.Recv()
		if rerr == nil || rerr == io.EOF {
			rerr = err
		}
		o.Err = a.explain(rerr, "Subscribe")
		o.Permanent = permanent(rerr)
		return o
	}
	if err := a.e.Message(capfile.KindSent, a.e.Now(), req, sentAttrs); err != nil {
		return transport.Outcome{Err: err}
	}

	var (
		handshake    = true
		subscription string
		rejected     bool
		subMu        sync.Mutex
	)
	stop := context.AfterFunc(ctx, func() {
		subMu.Lock()
		id := subscription
		subMu.Unlock()
		a.goodbye(stream, id)
		time.AfterFunc(closeWait, cancelDeadline)
	})
	defer stop()

	msg := new(received)
	for {
		err := stream.RecvMsg(msg)
		t := a.e.Now()
		if err != nil {
			if perr := a.flushClose(t); perr != nil {
				return transport.Outcome{Err: perr}
			}
			return a.ended(ctx, o, err, rejected)
		}
		if perr := a.flushClose(t); perr != nil {
			return transport.Outcome{Err: perr}
		}
		body := msg.json
		if int64(len(body)) > limit {
			if err := a.e.Conn(transport.ConnEvent{Event: capfile.ConnRefused, Size: int64(len(body)), Limit: limit, Reason: "message too large"}); err != nil {
				return transport.Outcome{Err: err}
			}
			continue
		}
		var attrs []capfile.Attr
		if mt := msg.messageType; mt != "" {
			attrs = []capfile.Attr{{Key: AttrMessageType, Value: mt}}
		}
		if err := a.e.Message(capfile.KindReceived, t, body, attrs); err != nil {
			return transport.Outcome{Err: err}
		}
		o.Delivered = o.Delivered || !handshake
		if handshake {
			handshake = false
			switch d := payload.Decode(body); d.Routing.Type {
			default:
				o.Delivered = true
			case "subscription.accepted":
				if d.IsObject() {
					id, _ := d.Get("subscription_id").Str()
					subMu.Lock()
					subscription = id
					subMu.Unlock()
				}
			case "subscription.rejected":
				// The producer should end the stream now; do not wait long.
				rejected = true
				time.AfterFunc(closeWait, cancelDeadline)
			}
		}
	}
}

var sentAttrs = []capfile.Attr{{Key: AttrMessageType, Value: "subscription.request"}}

// recordManifest records a manifest unless it is the one this source
// recorded last (a reconnection to the same producer).
func (a *attempt) recordManifest(body []byte, limit int64) error {
	if int64(len(body)) > limit {
		return a.e.Conn(transport.ConnEvent{Event: capfile.ConnRefused, Size: int64(len(body)), Limit: limit, Reason: "manifest too large"})
	}
	if *a.manifest != nil && string(*a.manifest) == string(body) {
		return nil
	}
	*a.manifest = append([]byte(nil), body...)
	return a.e.Message(capfile.KindReceived, a.e.Now(), body, []capfile.Attr{{Key: AttrMethod, Value: MethodGetManifest}})
}

// goodbye runs when the capture stops: subscription.close (when the
// subscription id is known), then the end of the subscriber's half of the
// stream. The record of what it sent is delivered by the reading
// goroutine (flushClose), which alone may emit.
func (a *attempt) goodbye(stream grpc.BidiStreamingClient[aaepv1.AaepMessage, aaepv1.AaepMessage], subscription string) {
	if subscription != "" {
		msg := fmt.Appendf(nil, `{"type":"subscription.close","subscription_id":%q,"reason_code":"subscriber_shutdown","reason_message":"capture stopped"}`, subscription)
		if stream.Send(&aaepv1.AaepMessage{Json: msg, MessageType: "subscription.close"}) == nil {
			a.closeMu.Lock()
			a.closeSent, a.closeTime = msg, a.e.Now()
			a.closeMu.Unlock()
		}
	}
	_ = stream.CloseSend()
}

// flushClose records the subscription.close that goodbye sent, if any and
// not yet recorded; t is the time of the message about to be recorded.
func (a *attempt) flushClose(t int64) error {
	a.closeMu.Lock()
	msg, at := a.closeSent, a.closeTime
	a.closeSent = nil
	a.closeMu.Unlock()
	if msg == nil {
		return nil
	}
	return a.e.Message(capfile.KindSent, min(at, t), msg, []capfile.Attr{{Key: AttrMessageType, Value: "subscription.close"}})
}

// ended turns the end of a stream into the attempt's outcome.
func (a *attempt) ended(ctx context.Context, o transport.Outcome, err error, rejected bool) transport.Outcome {
	st, _ := status.FromError(err)
	switch {
	case ctx.Err() != nil:
		o.Event = transport.ConnEvent{Event: capfile.ConnClosed, Reason: "capture stopped"}
		return o
	case err == io.EOF && rejected:
		o.Event = transport.ConnEvent{Event: capfile.ConnClosed, Reason: "subscription rejected"}
		o.Err = fmt.Errorf("%w: subscription.rejected", transport.ErrRejected)
		o.Permanent = true
		return o
	case err == io.EOF:
		// The producer ended the stream with status OK: like a WebSocket
		// normal closure, the end of the stream.
		o.Event = transport.ConnEvent{Event: capfile.ConnClosed, Reason: "the producer ended the stream (status OK)"}
		o.Stop = true
		return o
	case rejected:
		o.Err = fmt.Errorf("%w: subscription.rejected", transport.ErrRejected)
		o.Permanent = true
		return o
	case st.Code() == codes.DeadlineExceeded:
		o.Err = fmt.Errorf("the stream's deadline passed (DEADLINE_EXCEEDED); subscribing again")
		return o
	case isOversized(st):
		// gRPC ended the stream: record the refusal, then subscribe again.
		size, max := oversize(st.Message())
		limit := a.s.opts.MaxMessage()
		if size == 0 {
			size = max + 1
		}
		if err := a.e.Conn(transport.ConnEvent{Event: capfile.ConnRefused, Size: size, Limit: limit, Reason: "message too large"}); err != nil {
			return transport.Outcome{Err: err}
		}
		o.Err = fmt.Errorf("a message of %d bytes exceeds the limit of %d bytes (--max-message-size); gRPC ends the stream on it", size, limit)
		return o
	default:
		o.Err = a.explain(err, "Subscribe")
		o.Permanent = permanent(err)
		return o
	}
}

// failed is the outcome of an attempt whose first call (GetManifest)
// failed: a refused dial keeps its *net.OpError so that the retry loop
// recognises it; a peer that is not gRPC fails for good.
func (a *attempt) failed(err error, call string) transport.Outcome {
	if dial := a.lastDialErr(); dial != nil && status.Code(err) == codes.Unavailable {
		return transport.Outcome{Err: dial}
	}
	return transport.Outcome{Err: a.explain(err, call), Permanent: permanent(err)}
}

// explain words a gRPC error for the user: the status code as gRPC names
// it, what it means here, and the server's message.
func (a *attempt) explain(err error, call string) error {
	st, ok := status.FromError(err)
	if !ok {
		return fmt.Errorf("%s: %w", call, err)
	}
	name := CodeName(st.Code())
	msg := st.Message()
	switch {
	case notGRPC(st):
		return fmt.Errorf("%s is not a gRPC server (%s: %s)", a.s.url, name, msg)
	case st.Code() == codes.Unimplemented:
		return fmt.Errorf("the server speaks gRPC but does not implement aaep.v1.AaepService/%s (UNIMPLEMENTED: %s)", call, msg)
	case st.Code() == codes.Unauthenticated || st.Code() == codes.PermissionDenied:
		return fmt.Errorf("%w: %s: %s", transport.ErrRejected, name, msg)
	case st.Code() == codes.ResourceExhausted:
		return fmt.Errorf("the producer is out of resources (RESOURCE_EXHAUSTED: %s)", msg)
	case st.Code() == codes.Unavailable:
		return fmt.Errorf("the producer is unavailable (UNAVAILABLE: %s)", msg)
	}
	return fmt.Errorf("%s: %s: %s", call, name, msg)
}

// permanent reports a gRPC failure that asking again will not fix.
func permanent(err error) bool {
	st, ok := status.FromError(err)
	if !ok {
		return false
	}
	if notGRPC(st) {
		return true
	}
	switch st.Code() {
	case codes.Unimplemented, codes.Unauthenticated, codes.PermissionDenied, codes.InvalidArgument, codes.FailedPrecondition:
		return true
	}
	return false
}

// notGRPC recognises the errors grpc-go reports when the peer is not a
// gRPC server: an HTTP/1 answer to the HTTP/2 preface, a TLS server that
// does not offer h2, an HTTP/2 server answering without gRPC's content type.
func notGRPC(st *status.Status) bool {
	m := st.Message()
	for _, s := range []string{"looked like an HTTP/1.1 header", "missing selected ALPN property", "unexpected content-type", "malformed header: missing HTTP content-type", "first record does not look like a TLS handshake"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// isOversized recognises grpc-go's own refusal of a received message above
// the receive limit.
func isOversized(st *status.Status) bool {
	return st.Code() == codes.ResourceExhausted && strings.Contains(st.Message(), "received message larger than max")
}

// oversize reads "(SIZE vs. MAX)" from grpc-go's refusal; zeros when absent.
func oversize(msg string) (size, max int64) {
	i := strings.LastIndexByte(msg, '(')
	if i < 0 {
		return 0, 0
	}
	if _, err := fmt.Sscanf(msg[i:], "(%d vs. %d)", &size, &max); err != nil {
		return 0, 0
	}
	return size, max
}

// CodeName is a status code as gRPC's specification spells it
// (RESOURCE_EXHAUSTED).
func CodeName(c codes.Code) string {
	s := c.String()
	var b strings.Builder
	for i, r := range s {
		if i > 0 && r >= 'A' && r <= 'Z' && s[i-1] >= 'a' && s[i-1] <= 'z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return strings.ToUpper(b.String())
}
