package ctxio

import (
	"context"
	"errors"
	"io"
	"os"
	"testing"
	"time"
)

// TestReaderEndsWithContext: a read blocked on a silent writer ends when
// the context ends, with its cause, for a pollable file (os.Pipe) and for
// any other reader (io.Pipe); what was written before is read first.
func TestReaderEndsWithContext(t *testing.T) {
	cause := errors.New("interrupted")
	for _, tc := range []struct {
		name string
		pipe func(t *testing.T) (io.Reader, io.Writer)
	}{
		{"os.Pipe", func(t *testing.T) (io.Reader, io.Writer) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close(); w.Close() })
			return r, w
		}},
		{"io.Pipe", func(t *testing.T) (io.Reader, io.Writer) {
			r, w := io.Pipe()
			t.Cleanup(func() { r.Close(); w.Close() })
			return r, w
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pr, pw := tc.pipe(t)
			ctx, cancel := context.WithCancelCause(context.Background())
			r := Reader(ctx, pr)
			go pw.Write([]byte("hello"))
			buf := make([]byte, 16)
			n, err := io.ReadAtLeast(r, buf, 5)
			if err != nil || string(buf[:n]) != "hello" {
				t.Fatalf("read %q, %v; want hello", buf[:n], err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := r.Read(buf)
				done <- err
			}()
			time.Sleep(50 * time.Millisecond) // let the read block (it ends either way)
			cancel(cause)
			select {
			case err := <-done:
				if !errors.Is(err, cause) {
					t.Errorf("read ended with %v, want the context's cause", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the read did not end with the context")
			}
			if _, err := r.Read(buf); !errors.Is(err, cause) {
				t.Errorf("a read after the end: %v, want the cause", err)
			}
		})
	}
}

// TestReaderRegularFile: a regular file, which never blocks, is read as it is.
func TestReaderRegularFile(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "f")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if r := Reader(ctx, f); r != io.Reader(f) {
		t.Errorf("a regular file wrapped as %T", r)
	}
}
