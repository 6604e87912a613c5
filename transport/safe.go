package transport

import (
	"errors"
	"net/url"
	"strings"
)

// Redacted replaces a credential in URLs, command lines and error texts.
const Redacted = "REDACTED"

// SafeURL returns raw without credentials: user info is removed and the
// values of query parameters whose names look like credentials (token, key,
// secret, password, auth, signature, ...) are replaced by REDACTED. A string
// that does not parse as a URL with a scheme is returned unchanged (a file
// path).
func SafeURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Opaque != "" {
		if err != nil && strings.Contains(raw, "@") {
			return Redacted
		}
		return raw
	}
	return safeURL(u)
}

func safeURL(u *url.URL) string {
	c := *u
	c.User = nil
	if c.RawQuery != "" {
		q := c.Query()
		changed := false
		for k, vs := range q {
			if IsCredentialName(k) {
				for i := range vs {
					vs[i] = Redacted
				}
				changed = true
			}
		}
		if changed {
			c.RawQuery = q.Encode()
		}
	}
	return c.String()
}

// IsCredentialName reports whether a parameter, header or flag name looks
// like it carries a credential.
func IsCredentialName(name string) bool {
	n := strings.ToLower(strings.TrimLeft(name, "-"))
	for _, w := range []string{"token", "key", "secret", "pass", "auth", "sig", "credential", "cookie", "session_token", "jwt", "bearer"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// safeArgs masks credential-like values in a command line: the value after
// a flag such as --token, and the value of name=value arguments whose name
// looks like a credential.
func safeArgs(args []string) []string {
	out := make([]string, len(args))
	maskNext := false
	for i, a := range args {
		switch {
		case maskNext:
			out[i] = Redacted
			maskNext = false
		case strings.HasPrefix(a, "-") && strings.Contains(a, "="):
			name, _, _ := strings.Cut(a, "=")
			if IsCredentialName(name) {
				out[i] = name + "=" + Redacted
			} else {
				out[i] = a
			}
		case strings.HasPrefix(a, "-") && IsCredentialName(a):
			out[i] = a
			maskNext = true
		case strings.Contains(a, "="):
			name, _, _ := strings.Cut(a, "=")
			if IsCredentialName(name) {
				out[i] = name + "=" + Redacted
			} else {
				out[i] = a
			}
		default:
			if strings.Contains(a, "://") {
				a = SafeURL(a)
			}
			out[i] = a
		}
	}
	return out
}

// errText renders an error for a connection event without the request URL
// that net/http puts in its errors (which may hold user info); the event
// carries the safe URL separately.
func errText(err error) string {
	if err == nil {
		return ""
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		if ue.Timeout() {
			return strings.ToLower(ue.Op) + ": timeout: " + ue.Err.Error()
		}
		return strings.ToLower(ue.Op) + ": " + ue.Err.Error()
	}
	return err.Error()
}
