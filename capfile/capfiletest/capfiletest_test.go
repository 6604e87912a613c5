package capfiletest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/aaep-tools/aaepkit/capfile"
)

func TestReadAllCopiesRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.aaep")
	w, err := capfile.Create(path, capfile.Header{Tool: "test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range []string{`{"a":1}`, `{"b":2}`} {
		if err := w.Append(&capfile.Record{Kind: capfile.KindReceived, Time: int64(i), Attrs: []capfile.Attr{{Key: "id", Value: p}}, Payload: []byte(p)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	h, recs := ReadAll(t, path)
	if h.Tool != "test" || len(recs) != 2 || string(recs[0].Payload) != `{"a":1}` || recs[0].Attr("id") != `{"a":1}` || string(recs[1].Payload) != `{"b":2}` {
		t.Fatalf("header %+v, records %+v", h, recs)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}

func TestRecordClone(t *testing.T) {
	r := capfile.Record{Payload: []byte("x"), Attrs: []capfile.Attr{{Key: "k", Value: "v"}}}
	c := r.Clone()
	r.Payload[0] = 'y'
	r.Attrs[0].Value = "w"
	if string(c.Payload) != "x" || c.Attrs[0].Value != "v" {
		t.Errorf("clone shares memory with the original: %+v", c)
	}
}
