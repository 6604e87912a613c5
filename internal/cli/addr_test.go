package cli

import (
	"strings"
	"testing"
)

func TestCheckListen(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want string // "" for valid
	}{
		{"127.0.0.1:8765", ""},
		{"127.0.0.1:0", ""},
		{"[::1]:65535", ""},
		{":http", ""},
		{"127.0.0.1:99999", "port 99999 is out of range (0 to 65535)"},
		{"127.0.0.1", "want HOST:PORT"},
		{"127.0.0.1:", "no port"},
		{"127.0.0.1:nosuchservice", "neither a number nor a known service"},
	} {
		err := CheckListen("--listen", tc.addr)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v, want nil", tc.addr, err)
		case tc.want != "" && (err == nil || KindOf(err) != KindUsage || Code(err) != ExitUsage || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--listen")):
			t.Errorf("%q: %v, want a usage error naming --listen and saying %q", tc.addr, err, tc.want)
		}
	}
}

func TestCheckURLPort(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want string
	}{
		{"http://h:8080/x", ""},
		{"http://h/x", ""},
		{"unix:///run/a.sock", ""},
		{"session.jsonl", ""},
		{"http://h:99999", "port 99999 is out of range (1 to 65535)"},
		{"ws://user:secret@h:0/ws", "port 0 is out of range"},
	} {
		err := CheckURLPort("endpoint", tc.url)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v, want nil", tc.url, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: %v, want %q", tc.url, err, tc.want)
		case err != nil && strings.Contains(err.Error(), "secret"):
			t.Errorf("%q: the error %q shows the password", tc.url, err)
		}
	}
}
