package serve

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"
	"testing/synctest"
	"time"
)

// pipeResponse is an http.ResponseWriter over one end of a net.Pipe, with
// the write deadline http.ResponseController sets.
type pipeResponse struct{ c net.Conn }

func (p pipeResponse) Header() http.Header                { return http.Header{} }
func (p pipeResponse) WriteHeader(int)                    {}
func (p pipeResponse) Write(b []byte) (int, error)        { return p.c.Write(b) }
func (p pipeResponse) SetWriteDeadline(t time.Time) error { return p.c.SetWriteDeadline(t) }
func (p pipeResponse) FlushError() error                  { return nil }

// TestWriteJudgedByProgress checks that a subscriber's write is judged by
// whether the subscriber takes what is written, not by how long the write
// takes: one that reads slowly but steadily gets a batch that takes many
// write timeouts to go out, one that stops reading is cut off once nothing
// has been taken for the write timeout. The wire is a pipe that takes
// bytes only as fast as the subscriber reads them, on the fake clock of a
// synctest bubble.
func TestWriteJudgedByProgress(t *testing.T) {
	const (
		timeout = 10 * time.Second
		size    = 256 << 10 // a batch: 4 batchLimits, 32 SSE pieces
	)
	// flushers write size bytes in one batch, the way each transport does.
	flushers := []struct {
		name  string
		piece int // what the subscriber takes at each step (an SSE piece must go out whole within a write timeout; any byte renews a WebSocket's)
		flush func(c net.Conn, p []byte) error
	}{
		{"websocket", 64, func(c net.Conn, p []byte) error {
			bc := &batchConn{Conn: c}
			bc.begin(timeout)
			for len(p) > 0 {
				n := min(len(p), 1000)
				if _, err := bc.Write(p[:n]); err != nil {
					return err
				}
				p = p[n:]
			}
			return bc.end()
		}},
		{"sse", sseWritePiece, func(c net.Conn, p []byte) error {
			w := pipeResponse{c}
			dw := &deadlineWriter{w: w, rc: http.NewResponseController(w), timeout: timeout}
			bw := bufio.NewWriterSize(dw, batchLimit)
			if _, err := bw.Write(p); err != nil {
				return err
			}
			return bw.Flush()
		}},
	}
	for _, f := range flushers {
		// The subscriber takes a piece each step, steps just under the
		// write timeout apart.
		step := timeout - time.Second
		t.Run(f.name+"/slow but steady", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				server, client := net.Pipe()
				read := make(chan int, 1)
				go func() {
					defer client.Close()
					got := 0
					buf := make([]byte, f.piece)
					for got < size {
						time.Sleep(step)
						n, err := io.ReadFull(client, buf[:min(len(buf), size-got)])
						got += n
						if err != nil {
							break
						}
					}
					read <- got
				}()
				start := time.Now()
				err := f.flush(server, make([]byte, size))
				el := time.Since(start)
				server.Close()
				got := <-read
				if err != nil {
					t.Fatalf("a subscriber that reads %d bytes every %v was cut off after %v: %v", f.piece, step, el, err)
				}
				if got != size {
					t.Fatalf("the subscriber read %d bytes, want %d", got, size)
				}
				if el < 2*timeout {
					t.Fatalf("the batch went out in %v: the subscriber was not slow", el)
				}
			})
		})
		t.Run(f.name+"/stops reading", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				server, client := net.Pipe()
				defer client.Close()
				last := make(chan time.Time, 1)
				go func() {
					buf := make([]byte, f.piece)
					for range 5 {
						time.Sleep(step)
						if _, err := io.ReadFull(client, buf); err != nil {
							break
						}
					}
					last <- time.Now()
				}()
				err := f.flush(server, make([]byte, size))
				cut := time.Now()
				server.Close()
				lastRead := <-last
				if !isTimeout(err) {
					t.Fatalf("a subscriber that stopped reading: flush returned %v, want a timeout", err)
				}
				if quiet := cut.Sub(lastRead); quiet < timeout || quiet > 2*timeout {
					t.Fatalf("cut off %v after it last read, want between the write timeout (%v) and twice it", quiet, timeout)
				}
			})
		})
	}
}
