package capfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"
)

// TestAddOrigin grows a header's origin table in place while records are
// appended, and checks what a reader sees, including after the reserve is
// used up and for a destination that cannot seek.
func TestAddOrigin(t *testing.T) {
	path := filepath.Join(t.TempDir(), "grow.aaep")
	start := time.Date(2026, 5, 24, 14, 0, 0, 0, time.UTC)
	w, err := Create(path, Header{Start: start, Tool: "test", Origins: []Origin{{ID: 0, Transport: "replay", Endpoint: "http://127.0.0.1:1"}}}, &WriterOptions{HeaderReserve: 300})
	if err != nil {
		t.Fatal(err)
	}
	added := 0
	for i := 1; ; i++ {
		err := w.AddOrigin(Origin{ID: uint16(i), Transport: "sse", Endpoint: fmt.Sprintf("127.0.0.1:%d", 40000+i)})
		if errors.Is(err, ErrHeaderFixed) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		added++
		if err := w.Append(&Record{Kind: KindReceived, Origin: uint16(i), Time: int64(i), Payload: []byte(`{"n":1}`)}); err != nil {
			t.Fatal(err)
		}
		if i > 100 {
			t.Fatal("the reserve never ran out")
		}
	}
	if added < 2 {
		t.Fatalf("only %d sources fit in 300 bytes", added)
	}
	if err := w.AddOrigin(Origin{ID: 1, Transport: "sse"}); err != nil {
		t.Errorf("re-adding a listed id: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	h := r.Header()
	if len(h.Origins) != added+1 || !h.Start.Equal(start) || h.Origins[added].ID != uint16(added) {
		t.Fatalf("header %+v, want %d sources", h, added+1)
	}
	n := 0
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if int(rec.Origin) > added {
			t.Errorf("record of unlisted source %d", rec.Origin)
		}
		n++
	}
	if n != added {
		t.Errorf("%d records, want %d", n, added)
	}

	// Not seekable: the header stays as it is, the writer goes on.
	var buf bytes.Buffer
	bw, err := NewWriter(&buf, Header{Start: start}, &WriterOptions{HeaderReserve: 300})
	if err != nil {
		t.Fatal(err)
	}
	if err := bw.AddOrigin(Origin{ID: 1}); !errors.Is(err, ErrHeaderFixed) {
		t.Errorf("AddOrigin on a buffer: %v, want ErrHeaderFixed", err)
	}
	if err := bw.Append(&Record{Kind: KindReceived, Payload: []byte(`{}`)}); err != nil {
		t.Errorf("Append after a refused AddOrigin: %v", err)
	}
	bw.Close()
}
