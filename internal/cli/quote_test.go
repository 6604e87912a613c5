package cli

import (
	"bytes"
	"testing"
)

func TestQuote(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"run.aaep", "run.aaep"},
		{"my run.aaep", "my run.aaep"},
		{"café/λ.aaep", "café/λ.aaep"},
		{`a\b"c.aaep`, `a\b"c.aaep`}, // printable: left as it is
		{"run\x1b[2J.aaep", `"run\x1b[2J.aaep"`},
		{"a\nb.aaep", `"a\nb.aaep"`},
		{"a\tb", `"a\tb"`},
		{"a\rb", `"a\rb"`},
		{"bad\xffutf8", `"bad\xffutf8"`},
		{"rtl\u202eevil", `"rtl\u202eevil"`},
	} {
		if got := Quote(tc.name); got != tc.want {
			t.Errorf("Quote(%q) = %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestEscape(t *testing.T) {
	for _, tc := range []struct{ msg, want string }{
		{"plain: §4.3.3 → ok\n\tindented\n", "plain: §4.3.3 → ok\n\tindented\n"},
		{"a\x1b[2Jb\rc\n", `a\x1b[2Jb\rc` + "\n"},
		{"bad \xff byte", `bad \xff byte`},
	} {
		if got := Escape(tc.msg); got != tc.want {
			t.Errorf("Escape(%q) = %q, want %q", tc.msg, got, tc.want)
		}
	}
}

// TestMessageWriter: a name of the command line with control characters
// is quoted whole wherever a message holds it, whoever formatted the
// message; other control characters are escaped; messages without any
// pass byte for byte; Raw is the writer underneath.
func TestMessageWriter(t *testing.T) {
	var buf bytes.Buffer
	w := MessageWriter(&buf, []string{"check", "a\nb.aaep", "--output=x\x1by.aaep", "-o", "plain.aaep"})
	for _, tc := range []struct{ msg, want string }{
		{"prog: stat a\nb.aaep: no such file or directory\n", "prog: stat \"a\\nb.aaep\": no such file or directory\n"},
		{"wrote 3 records to x\x1by.aaep\n", "wrote 3 records to \"x\\x1by.aaep\"\n"},
		{"found dir/c\x1b[2Jd.aaep\n", "found dir/c\\x1b[2Jd.aaep\n"}, // not on the command line: escaped
		{"plain.aaep: §6.1 → 3 findings\n", "plain.aaep: §6.1 → 3 findings\n"},
	} {
		buf.Reset()
		n, err := w.Write([]byte(tc.msg))
		if err != nil || n != len(tc.msg) {
			t.Errorf("Write(%q) = %d, %v; want %d, nil", tc.msg, n, err, len(tc.msg))
		}
		if buf.String() != tc.want {
			t.Errorf("Write(%q) wrote %q, want %q", tc.msg, buf.String(), tc.want)
		}
	}
	if Raw(w) != &buf {
		t.Error("Raw(w) is not the writer underneath")
	}
	if Raw(&buf) != &buf {
		t.Error("Raw of a plain writer is not itself")
	}
}
