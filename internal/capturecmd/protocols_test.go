package capturecmd

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/aaep-tools/aaepkit/capfile"
)

// TestFileSourceCarriesOtherProtocols: KAHN and ASP streams are usually
// JSONL files; the file endpoint records every line byte for byte, with its
// session key (run_id, sessionId) in the index.
func TestFileSourceCarriesOtherProtocols(t *testing.T) {
	for _, tc := range []struct{ fixture, session string }{
		{"../../protocol/kahn/testdata/coder.jsonl", "agent-coder-1"},
		{"../../protocol/asp/testdata/negotiation.jsonl", "019cc8a0-0000-7a00-8000-00000000a001"},
	} {
		t.Run(filepath.Base(tc.fixture), func(t *testing.T) {
			data, err := os.ReadFile(tc.fixture)
			if err != nil {
				t.Fatal(err)
			}
			lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
			out := filepath.Join(t.TempDir(), "p.aaep")
			if res := capture(t, false, tc.fixture, "-o", out, "--quiet"); res.code != 0 {
				t.Fatalf("exit %d: %s", res.code, res.stderr)
			}
			_, recs := readCapture(t, out)
			got := kinds(recs, capfile.KindReceived)
			if len(got) != len(lines) {
				t.Fatalf("%d received records, want %d lines", len(got), len(lines))
			}
			withSession := 0
			for i, rec := range got {
				if !bytes.Equal(rec.Payload, lines[i]) {
					t.Fatalf("record %d differs from line %d", i, i+1)
				}
				if rec.Session == tc.session {
					withSession++
				}
			}
			if withSession == 0 {
				t.Errorf("no record indexed under session %q", tc.session)
			}
		})
	}
}
