package capedit

import (
	"testing"

	"github.com/aaep-tools/aaepkit/capfile"
)

// FuzzMetaRecord checks that any wrapper line Import accepts is written back
// by Export to a line that reads as the same record.
func FuzzMetaRecord(f *testing.F) {
	for _, s := range []string{
		`{"recv_ns":1500000,"kind":"received","dir":"in","source":2,"session":"s1","flags":["no_recv_time"],"attrs":[["event","message"]],"message":{"type": "x"}}`,
		`{"recv_ns":0,"kind":"conn","source":0,"message":{"event":"connected"}}`,
		`{"recv_ns":0,"kind":"kind:9","source":0,"session":{"base64":"/w=="},"attrs":[[{"base64":"/w=="},"v"]],"base64":"/w=="}`,
		`{"recv_ns":3,"kind":"sent","dir":"out","source":1,"flags":["bit:7","invalid_json"],"text":"{\n"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var rec capfile.Record
		if err := parseMetaRecord(line, &rec); err != nil {
			return
		}
		out := appendMetaRecord(nil, &rec)
		var back capfile.Record
		if err := parseMetaRecord(out[:len(out)-1], &back); err != nil {
			t.Fatalf("re-reading %q (from %q): %v", out, line, err)
		}
		sameRecords(t, []capfile.Record{back}, []capfile.Record{rec})
	})
}
