package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/aaep-tools/aaepkit/internal/cli"
)

// grpcTLSFlags are the TLS flags of the gRPC listener (serve --grpc, view
// --grpc): its certificate and key (B.5.3's TLS), and the CA whose client
// certificates it requires (mutual TLS).
type grpcTLSFlags struct {
	Cert     string
	Key      string
	ClientCA string
}

func (g *grpcTLSFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&g.Cert, "grpc-cert", "", "with --grpc: serve gRPC over TLS with this certificate (PEM, the chain after the leaf); subscribers dial grpcs://")
	fs.StringVar(&g.Key, "grpc-key", "", "with --grpc-cert: the certificate's private key (PEM)")
	fs.StringVar(&g.ClientCA, "grpc-client-ca", "", "with --grpc-cert: require a client certificate issued by this CA (PEM; mutual TLS)")
}

// check refuses flags that cannot be used together (exit 2), before
// anything is read: TLS flags without --grpc, a certificate without its
// key or a key without its certificate, a client CA without TLS.
func (g *grpcTLSFlags) check(grpcAddr string) error {
	switch {
	case grpcAddr == "" && (g.Cert != "" || g.Key != "" || g.ClientCA != ""):
		return cli.Usagef("--grpc-cert, --grpc-key and --grpc-client-ca configure the gRPC listener: give --grpc ADDR too")
	case g.Cert != "" && g.Key == "":
		return cli.Usagef("--grpc-cert needs --grpc-key, its private key")
	case g.Key != "" && g.Cert == "":
		return cli.Usagef("--grpc-key needs --grpc-cert, its certificate")
	case g.ClientCA != "" && g.Cert == "":
		return cli.Usagef("--grpc-client-ca asks for mutual TLS: give the server's --grpc-cert and --grpc-key too")
	}
	return nil
}

// config loads the certificate, key and client CA: nil for plain HTTP/2
// (no --grpc-cert). A file that cannot be read or is not what it should
// be is an input error (exit 2) naming the flag and the file.
func (g *grpcTLSFlags) config() (*tls.Config, error) {
	if g.Cert == "" {
		return nil, nil
	}
	pair, err := tls.LoadX509KeyPair(g.Cert, g.Key)
	if err != nil {
		return nil, cli.Input(fmt.Errorf("--grpc-cert %s, --grpc-key %s: %w", g.Cert, g.Key, err))
	}
	c := &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	if g.ClientCA != "" {
		pem, err := os.ReadFile(g.ClientCA)
		if err != nil {
			return nil, cli.Input(fmt.Errorf("--grpc-client-ca: %w", err))
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, cli.Input(fmt.Errorf("--grpc-client-ca %s: no PEM certificate in it", g.ClientCA))
		}
		c.ClientCAs, c.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return c, nil
}
