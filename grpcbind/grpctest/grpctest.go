// Package grpctest serves AAEP over gRPC for tests: a producer on
// 127.0.0.1 whose behaviour each test scripts, and a certificate authority
// made at test time for TLS and mutual TLS (no key is ever committed).
package grpctest

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/aaep-tools/aaepkit/grpcbind/aaepv1"
)

// Stream is the producer's side of one Subscribe stream.
type Stream = grpc.BidiStreamingServer[aaepv1.AaepMessage, aaepv1.AaepMessage]

// Producer is an AaepService whose Subscribe runs Handle after it has
// read the subscriber's first message (kept in Requests).
type Producer struct {
	aaepv1.UnimplementedAaepServiceServer

	// Manifest is GetManifest's answer; nil answers UNIMPLEMENTED.
	Manifest []byte
	// Handle runs a stream after its first message (n counts streams from
	// 1); its error ends the stream with that status.
	Handle func(s Stream, n int, first *aaepv1.AaepMessage) error

	mu       sync.Mutex
	streams  int
	requests [][]byte
	received [][]byte
	md       []metadata.MD
}

// GetManifest answers the manifest.
func (p *Producer) GetManifest(ctx context.Context, _ *aaepv1.GetManifestRequest) (*aaepv1.Manifest, error) {
	if p.Manifest == nil {
		return nil, status.Error(codes.Unimplemented, "no manifest here")
	}
	md, _ := metadata.FromIncomingContext(ctx)
	p.mu.Lock()
	p.md = append(p.md, md)
	p.mu.Unlock()
	return &aaepv1.Manifest{Json: p.Manifest}, nil
}

// Subscribe reads the first message and hands the stream to Handle.
func (p *Producer) Subscribe(s Stream) error {
	first, err := s.Recv()
	if err != nil {
		return err
	}
	md, _ := metadata.FromIncomingContext(s.Context())
	p.mu.Lock()
	p.streams++
	n := p.streams
	p.requests = append(p.requests, bytes.Clone(first.GetJson()))
	p.md = append(p.md, md)
	p.mu.Unlock()
	if p.Handle == nil {
		<-s.Context().Done()
		return nil
	}
	return p.Handle(s, n, first)
}

// Requests returns the first message of every stream so far.
func (p *Producer) Requests() [][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([][]byte(nil), p.requests...)
}

// Metadata returns the metadata of every call so far.
func (p *Producer) Metadata() []metadata.MD {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]metadata.MD(nil), p.md...)
}

// Keep records a message a handler read after the first.
func (p *Producer) Keep(b []byte) {
	p.mu.Lock()
	p.received = append(p.received, bytes.Clone(b))
	p.mu.Unlock()
}

// Received returns what handlers kept.
func (p *Producer) Received() [][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([][]byte(nil), p.received...)
}

// Serve serves p on ln until the test ends (or Stop).
func Serve(t testing.TB, p aaepv1.AaepServiceServer, ln net.Listener, opts ...grpc.ServerOption) *grpc.Server {
	t.Helper()
	srv := grpc.NewServer(opts...)
	if p != nil {
		aaepv1.RegisterAaepServiceServer(srv, p)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return srv
}

// Listen listens on a free port of 127.0.0.1 (or addr, to restart a
// server where it was).
func Listen(t testing.TB, addr string) net.Listener {
	t.Helper()
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	var ln net.Listener
	var err error
	for range 50 { // the old server's port may take a moment to free
		if ln, err = net.Listen("tcp", addr); err == nil {
			return ln
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("listen %s: %v", addr, err)
	return nil
}

// Accepted is a subscription.accepted for subscription id.
func Accepted(id string) []byte {
	return fmt.Appendf(nil, `{"type":"subscription.accepted","subscription_id":%q,"aaep_version":"1.0.0","producer":{"agent_id":"grpctest"},"honored_capabilities":{}}`, id)
}

// Event returns event i of session sess, a valid AAEP event.
func Event(sess string, i int) []byte {
	return fmt.Appendf(nil, `{"@context":"https://aaep-protocol.org/context/v1","type":"aaep:agent.output.streaming","event_id":"evt_%s_%d","session_id":%q,"timestamp":"2026-05-24T14:22:11.342Z","producer":{"agent_id":"grpctest"},"summary_normal":"chunk %d","chunk":"x","sequence":%d}`, sess, i, sess, i, i)
}

// Manifest is a small producer manifest.
var Manifest = []byte(`{"type":"aaep:producer.manifest","agent_id":"grpctest","aaep_versions_supported":["1.0.0"]}`)

// CA is a certificate authority made at test time, with a server
// certificate for 127.0.0.1 and a client certificate, their PEM files in
// a test directory.
type CA struct {
	// CertFile is the CA's certificate (--cacert).
	CertFile string
	// ServerCert, ServerKey and ClientCert, ClientKey are PEM files.
	ServerCert, ServerKey string
	ClientCert, ClientKey string
	// Pool trusts the CA.
	Pool *x509.CertPool
	// Server is the server's key pair.
	Server tls.Certificate
	// Client is the client's key pair.
	Client tls.Certificate
}

// NewCA makes a CA and its two certificates in t.TempDir().
func NewCA(t testing.TB) *CA {
	t.Helper()
	dir := t.TempDir()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "aaep test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	ca := &CA{CertFile: filepath.Join(dir, "ca.pem"), Pool: x509.NewCertPool()}
	ca.Pool.AddCert(caCert)
	writePEM(t, ca.CertFile, "CERTIFICATE", caDER)
	leaf := func(name string, serial int64, usage x509.ExtKeyUsage) (string, string, tls.Certificate) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		cf, kf := filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
		writePEM(t, cf, "CERTIFICATE", der)
		writePEM(t, kf, "EC PRIVATE KEY", kder)
		pair, err := tls.LoadX509KeyPair(cf, kf)
		if err != nil {
			t.Fatal(err)
		}
		return cf, kf, pair
	}
	ca.ServerCert, ca.ServerKey, ca.Server = leaf("server", 2, x509.ExtKeyUsageServerAuth)
	ca.ClientCert, ca.ClientKey, ca.Client = leaf("client", 3, x509.ExtKeyUsageClientAuth)
	return ca
}

// ServerTLS is a server configuration that requires a client certificate
// of the CA when mutual is set.
func (ca *CA) ServerTLS(mutual bool) *tls.Config {
	c := &tls.Config{Certificates: []tls.Certificate{ca.Server}, MinVersion: tls.VersionTLS12}
	if mutual {
		c.ClientAuth = tls.RequireAndVerifyClientCert
		c.ClientCAs = ca.Pool
	}
	return c
}

func writePEM(t testing.TB, path, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
