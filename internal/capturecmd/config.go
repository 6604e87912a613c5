package capturecmd

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/aaep-tools/aaepkit/internal/cli"
	meter "github.com/aaep-tools/aaepkit/internal/progress"
	"github.com/aaep-tools/aaepkit/transport"
)

// parseHeaders parses "Name: value" flags.
func parseHeaders(flags []string) (http.Header, error) {
	h := http.Header{}
	for _, f := range flags {
		name, value, ok := strings.Cut(f, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") {
			return nil, cli.Usagef(`--header %q: want "Name: value"`, redactHeaderFlag(f))
		}
		if strings.ContainsAny(value, "\r\n\x00") {
			// HTTP forbids them in a field value (RFC 9110 §5.5); the
			// value is not shown: it may be a credential.
			return nil, cli.Usagef("--header %s: the value holds a line break or NUL (CR, LF or NUL), which a header cannot carry", name)
		}
		h.Add(textproto.CanonicalMIMEHeaderKey(name), strings.TrimSpace(value))
	}
	return h, nil
}

// redactHeaderFlag keeps a malformed --header flag out of error messages
// beyond its first characters: it may hold a credential.
func redactHeaderFlag(f string) string {
	if len(f) > 12 {
		return f[:12] + "..."
	}
	return f
}

// secrets lists the strings that must never reach the capture: header
// values (and the credential after an auth scheme), user info in endpoint
// URLs, and credential-like query values.
func secrets(h http.Header, endpoints []string) []string {
	var out []string
	for _, vs := range h {
		for _, v := range vs {
			out = append(out, v)
			if _, cred, ok := strings.Cut(v, " "); ok {
				out = append(out, strings.TrimSpace(cred))
			}
		}
	}
	for _, e := range endpoints {
		u, err := url.Parse(e)
		if err != nil || u.Scheme == "" {
			continue
		}
		if u.User != nil {
			pw, _ := u.User.Password()
			out = append(out, pw, u.User.String(),
				base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pw)))
		}
		for k, vs := range u.Query() {
			if transport.IsCredentialName(k) {
				out = append(out, vs...)
			}
		}
	}
	var keep []string
	for _, s := range out {
		if len(s) >= 3 {
			keep = append(keep, s)
		}
	}
	return keep
}

// tlsConfig builds the TLS configuration of --cacert, --insecure and the
// client certificate of --cert and --key.
func tlsConfig(cacert string, insecure bool, cert, key string) (*tls.Config, error) {
	if cacert == "" && !insecure && cert == "" {
		return nil, nil
	}
	c := &tls.Config{InsecureSkipVerify: insecure} //nolint:gosec // asked for with --insecure, with a warning
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("--cert %s --key %s: %w", cert, key, err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	if cacert != "" {
		pem, err := os.ReadFile(cacert)
		if err != nil {
			return nil, fmt.Errorf("--cacert: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--cacert %s: no PEM certificate found", cacert)
		}
		c.RootCAs = pool
	}
	return c, nil
}

// sizeFlag is a byte count given as 1048576, 64KiB, 16MiB, 2GiB (powers of
// 1024; K, M, G and KB, MB, GB too) or 10kB (1000).
type sizeFlag int64

func (s *sizeFlag) String() string {
	if *s == 0 {
		return "0"
	}
	return meter.Size(int64(*s))
}

func (s *sizeFlag) Type() string { return "size" }

func (s *sizeFlag) Set(v string) error {
	n, err := parseSize(v)
	if err != nil {
		return err
	}
	*s = sizeFlag(n)
	return nil
}

func parseSize(v string) (int64, error) {
	t := strings.TrimSpace(v)
	i := len(t)
	for i > 0 && (t[i-1] < '0' || t[i-1] > '9') {
		i--
	}
	num, unit := t[:i], strings.TrimSpace(t[i:])
	mult := int64(1)
	switch strings.ToLower(unit) {
	case "", "b":
	case "k", "kib", "kb":
		mult = 1 << 10
	case "m", "mib", "mb":
		mult = 1 << 20
	case "g", "gib", "gb":
		mult = 1 << 30
	default:
		return 0, fmt.Errorf("size %q: unknown unit %q (use B, KiB, MiB or GiB)", v, unit)
	}
	if unit == "kB" {
		mult = 1000
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("size %q: want a non-negative number of bytes such as 1048576 or 64MiB", v)
	}
	if n > (1<<62)/mult {
		return 0, fmt.Errorf("size %q: too large", v)
	}
	return n * mult, nil
}
