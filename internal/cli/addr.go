package cli

import (
	"net"
	"net/url"
	"strconv"
	"strings"
)

// CheckListen refuses (a usage error, exit 2) a listen address flag's
// value that no listener could take: no port, or a port that is not a
// number from 0 to 65535 nor a service name. Whether the address is free
// is the listener's to find (a failure, exit 1).
func CheckListen(flag, addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return Usagef("%s %q: want HOST:PORT (%v)", flag, addr, err)
	}
	if err := checkPort(port, true); err != nil {
		return Usagef("%s %q: %v", flag, addr, err)
	}
	return nil
}

// CheckURLPort refuses (a usage error) a URL whose port is not a number
// from 1 to 65535: no connection could be made to it, and retrying would
// only repeat the same error.
func CheckURLPort(what, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil // not a host URL: its own parser judges it
	}
	if _, port, err := net.SplitHostPort(u.Host); err == nil {
		if err := checkPort(port, false); err != nil {
			return Usagef("%s %s: %v", what, u.Redacted(), err)
		}
	}
	return nil
}

// checkPort checks a port: a number in range (0 allowed when listening:
// any free port), or a service name the system knows.
func checkPort(port string, listen bool) error {
	if port == "" {
		return errPort("no port")
	}
	if strings.Trim(port, "0123456789") == "" {
		n, err := strconv.Atoi(port)
		lo := 1
		if listen {
			lo = 0
		}
		if err != nil || n < lo || n > 65535 {
			return errPort("port " + port + " is out of range (" + strconv.Itoa(lo) + " to 65535)")
		}
		return nil
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return errPort("port " + strconv.Quote(port) + " is neither a number nor a known service")
	}
	return nil
}

type errPort string

func (e errPort) Error() string { return string(e) }
