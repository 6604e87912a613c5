package capfile_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
)

// writeExample writes a small capture with two sessions to path.
func writeExample(path string) {
	w, err := capfile.Create(path, capfile.Header{
		Start: time.Date(2026, 5, 24, 14, 22, 11, 0, time.UTC),
		Tool:  "example/1.0",
		Origins: []capfile.Origin{
			// The password is removed before the header is written.
			{ID: 0, Transport: "sse", Endpoint: "https://user:secret@agent.example/events"},
		},
	}, nil)
	if err != nil {
		log.Fatal(err)
	}
	for i, session := range []string{"sess_a", "sess_b", "sess_a", "sess_b"} {
		err := w.Append(&capfile.Record{
			Kind:    capfile.KindReceived,
			Time:    int64(i) * int64(250*time.Millisecond),
			Session: session,
			Attrs:   []capfile.Attr{{Key: "event", Value: "aaep"}},
			Payload: []byte(fmt.Sprintf(`{"type":"aaep:agent.state.changed","n":%d}`, i)),
		})
		if err != nil {
			log.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
}

func Example() {
	dir, _ := os.MkdirTemp("", "capfile-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "run.aaep")
	writeExample(path)

	r, err := capfile.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	fmt.Println("endpoint:", r.Header().Origins[0].Endpoint)
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%d %v %s %s\n", r.Index(), rec.Offset(), rec.Session, rec.Payload)
	}
	fmt.Println("clean:", r.Clean())
	// Output:
	// endpoint: https://agent.example/events
	// 0 0s sess_a {"type":"aaep:agent.state.changed","n":0}
	// 1 250ms sess_b {"type":"aaep:agent.state.changed","n":1}
	// 2 500ms sess_a {"type":"aaep:agent.state.changed","n":2}
	// 3 750ms sess_b {"type":"aaep:agent.state.changed","n":3}
	// clean: true
}

func ExampleReader_SeekTime() {
	dir, _ := os.MkdirTemp("", "capfile-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "run.aaep")
	writeExample(path)

	r, err := capfile.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	if err := r.SeekTime(int64(400 * time.Millisecond)); err != nil {
		log.Fatal(err)
	}
	rec, err := r.Next()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Index(), rec.Offset())
	// Output: 2 500ms
}

func ExampleReader_FileIndex() {
	dir, _ := os.MkdirTemp("", "capfile-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "run.aaep")
	writeExample(path)

	r, err := capfile.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	x, err := r.FileIndex()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("records:", x.Records, "frames:", len(x.Frames))
	for _, s := range x.Sessions {
		fmt.Printf("%s: %d records, %v..%v\n", s.ID, s.Records, time.Duration(s.FirstTime), time.Duration(s.LastTime))
	}
	// Output:
	// records: 4 frames: 1
	// sess_a: 2 records, 0s..500ms
	// sess_b: 2 records, 250ms..750ms
}

// A capture cut short (here: by dropping its last bytes, as a crash would)
// reads up to the torn tail; Repair writes a clean copy.
func ExampleRepair() {
	dir, _ := os.MkdirTemp("", "capfile-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "run.aaep")
	writeExample(path)
	data, _ := os.ReadFile(path)
	cut := filepath.Join(dir, "crashed.aaep")
	os.WriteFile(cut, data[:len(data)-100], 0o644) // lose the trailer and index

	r, _ := capfile.Open(cut)
	n := 0
	var err error
	for ; err == nil; n++ {
		_, err = r.Next()
	}
	r.Close()
	fmt.Println("records before the error:", n-1, "torn:", capfile.IsTorn(err), "clean:", r.Clean())

	out, err := os.Create(filepath.Join(dir, "repaired.aaep"))
	if err != nil {
		log.Fatal(err)
	}
	defer out.Close()
	rep, err := capfile.RepairTo(cut, out)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("kept:", rep.Kept, "dropped ranges:", len(rep.Dropped))
	// Output:
	// records before the error: 4 torn: true clean: false
	// kept: 4 dropped ranges: 1
}

func ExampleNewReader() {
	var buf bytes.Buffer // stands for standard input
	w, _ := capfile.NewWriter(&buf, capfile.Header{Tool: "example/1.0"}, nil)
	w.Append(&capfile.Record{Kind: capfile.KindMarker, Time: 42, Payload: []byte("checkpoint")})
	w.Close()

	r, err := capfile.NewReader(&buf)
	if err != nil {
		log.Fatal(err)
	}
	rec, _ := r.Next()
	fmt.Println(rec.Kind == capfile.KindMarker, rec.Time, string(rec.Payload))
	_, err = r.Next()
	fmt.Println(err == io.EOF)

	_, err = capfile.NewReader(bytes.NewReader([]byte(`{"type":"aaep:agent.session.started"}`)))
	fmt.Println(errors.Is(err, capfile.ErrNotCapture))
	// Output:
	// true 42 checkpoint
	// true
	// true
}
