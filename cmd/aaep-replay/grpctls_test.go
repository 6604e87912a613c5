package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/aaep-tools/aaepkit/grpcbind/aaepv1"
	"github.com/aaep-tools/aaepkit/grpcbind/grpctest"
)

var grpcsRE = regexp.MustCompile(`and grpcs://([0-9.:]+) `)

// subscribeGRPC subscribes at addr with creds and returns what the stream
// carried until it ended (the answer first), or the error that ended it
// before anything came.
func subscribeGRPC(t *testing.T, addr string, creds credentials.TransportCredentials) ([][]byte, error) {
	t.Helper()
	cc, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client := aaepv1.NewAaepServiceClient(cc)
	if _, err := client.GetManifest(ctx, &aaepv1.GetManifestRequest{}); err != nil {
		return nil, err
	}
	st, err := client.Subscribe(ctx)
	if err != nil {
		return nil, err
	}
	if err := st.Send(&aaepv1.AaepMessage{Json: []byte(`{"type":"subscription.request","aaep_version":"1.0.0","subscriber_id":"tls","capabilities":{"supports_confirmation_reply":true}}`)}); err != nil {
		return nil, err
	}
	var got [][]byte
	for {
		m, err := st.Recv()
		if err != nil {
			if len(got) == 0 {
				return nil, err
			}
			return got, nil
		}
		got = append(got, m.GetJson())
	}
}

// TestServeGRPCTLS: serve --grpc-cert/--grpc-key serves gRPC over TLS
// (B.5.3) and --grpc-client-ca requires a client certificate of that CA
// (mutual TLS), with a CA made here: a verified subscriber gets the
// manifest and every event byte for byte; a plaintext one, one that does
// not trust the server, and (mutual) one without a certificate or with a
// certificate of another CA get nothing.
func TestServeGRPCTLS(t *testing.T) {
	ca, other := grpctest.NewCA(t), grpctest.NewCA(t)
	in, evs := confirmCapture(t)
	trusting := func(cert *tls.Certificate) credentials.TransportCredentials {
		c := &tls.Config{RootCAs: ca.Pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
		if cert != nil {
			c.Certificates = []tls.Certificate{*cert}
		}
		return credentials.NewTLS(c)
	}
	for _, mutual := range []bool{false, true} {
		name := "TLS"
		if mutual {
			name = "mutual TLS"
		}
		t.Run(name, func(t *testing.T) {
			args := []string{"serve", in, "--listen", "127.0.0.1:0", "--grpc", "127.0.0.1:0", "--no-delay", "--close-at-end",
				"--grpc-cert", ca.ServerCert, "--grpc-key", ca.ServerKey}
			if mutual {
				args = append(args, "--grpc-client-ca", ca.CertFile)
			}
			srv := startServe(t, args...)
			m := grpcsRE.FindStringSubmatch(srv.errb.String())
			if m == nil {
				t.Fatalf("serving line names no grpcs:// address: %q", srv.errb.String())
			}
			addr := m[1]
			got, err := subscribeGRPC(t, addr, trusting(&ca.Client))
			if err != nil || len(got) != 1+len(evs) || !bytes.Contains(got[0], []byte(`"subscription.accepted"`)) {
				t.Fatalf("verified subscriber: %v, %d messages: %q", err, len(got), got)
			}
			for i, e := range evs {
				if !bytes.Equal(got[i+1], e) {
					t.Errorf("event %d: %s", i, got[i+1])
				}
			}
			refused := map[string]credentials.TransportCredentials{
				"plaintext":                    insecure.NewCredentials(),
				"not trusting the server's CA": credentials.NewTLS(&tls.Config{RootCAs: other.Pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}),
			}
			if mutual {
				refused["without a client certificate"] = trusting(nil)
				refused["with a certificate of another CA"] = trusting(&other.Client)
			} else if _, err := subscribeGRPC(t, addr, trusting(nil)); err != nil {
				t.Errorf("TLS without a client certificate: %v", err)
			}
			for what, creds := range refused {
				if got, err := subscribeGRPC(t, addr, creds); err == nil {
					t.Errorf("subscriber %s got %d messages", what, len(got))
				}
			}
			if code := srv.stop(t); code != 0 {
				t.Errorf("exit %d: %s", code, srv.errb.String())
			}
		})
	}
	// Files that are not what the flags say: exit 2, naming the flag.
	for _, tc := range []struct{ args []string }{
		{[]string{"--grpc-cert", ca.CertFile, "--grpc-key", ca.ServerKey}},                                 // the CA's certificate: not the key's
		{[]string{"--grpc-cert", ca.ServerCert, "--grpc-key", ca.ServerKey, "--grpc-client-ca", in}},       // not PEM
		{[]string{"--grpc-cert", ca.ServerCert + ".missing", "--grpc-key", ca.ServerKey}},                  // missing
		{[]string{"--grpc-cert", ca.ServerCert, "--grpc-key", ca.ServerKey, "--grpc-client-ca", in + "x"}}, // missing
	} {
		code, _, stderr := replay(t, append([]string{"serve", in, "--listen", "127.0.0.1:0", "--grpc", "127.0.0.1:0"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, "--grpc-") {
			t.Errorf("serve %s: exit %d, %s", strings.Join(tc.args, " "), code, stderr)
		}
	}
}
