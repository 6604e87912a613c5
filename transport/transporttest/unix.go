package transporttest

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// UnixProducer serves Frames on a Unix domain socket in a temporary
// directory, length-prefixed (Framing "lp", the default) or as NDJSON
// ("ndjson"). Frames continue across connections where the last one
// stopped. After the last frame it closes the connection (a clean end) or,
// with Hold, waits for the client to leave.
type UnixProducer struct {
	Frames  []Frame
	Framing string
	// DropAt > 0: on the first connection, after DropAt frames, write half
	// of the next frame and close the connection.
	DropAt int
	// ExpectSubscribe reads one frame (the subscription.request) from each
	// new connection before sending.
	ExpectSubscribe bool
	Hold            bool

	path     string
	ln       net.Listener
	mu       sync.Mutex
	next     int
	dropped  bool
	received [][]byte
	wg       sync.WaitGroup
}

// Start listens and returns the endpoint "unix://<path>".
func (p *UnixProducer) Start(tb testing.TB) string {
	tb.Helper()
	dir, err := os.MkdirTemp("", "aaep")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	p.path = filepath.Join(dir, "p.sock") // short: socket paths are limited to ~100 bytes
	p.ln, err = net.Listen("unix", p.path)
	if err != nil {
		tb.Fatal(err)
	}
	stop := make(chan struct{})
	tb.Cleanup(func() {
		close(stop)
		p.ln.Close()
		p.wg.Wait()
	})
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := p.ln.Accept()
			if err != nil {
				return
			}
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				defer c.Close()
				go func() { <-stop; c.Close() }()
				p.serve(c)
			}()
		}
	}()
	return "unix://" + p.path
}

// Path is the socket's path.
func (p *UnixProducer) Path() string { return p.path }

// Received returns the frames clients sent.
func (p *UnixProducer) Received() [][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([][]byte(nil), p.received...)
}

func (p *UnixProducer) encode(dst, msg []byte) []byte {
	if p.Framing == "ndjson" {
		return append(append(dst, msg...), '\n')
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(msg)))
	return append(dst, msg...)
}

func (p *UnixProducer) serve(c net.Conn) {
	br := bufio.NewReader(c)
	if p.ExpectSubscribe {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		var msg []byte
		if p.Framing == "ndjson" {
			line, err := br.ReadBytes('\n')
			if err != nil {
				return
			}
			msg = line[:len(line)-1]
		} else {
			var hdr [4]byte
			if _, err := io.ReadFull(br, hdr[:]); err != nil {
				return
			}
			msg = make([]byte, binary.BigEndian.Uint32(hdr[:]))
			if _, err := io.ReadFull(br, msg); err != nil {
				return
			}
		}
		p.mu.Lock()
		p.received = append(p.received, msg)
		p.mu.Unlock()
		_ = c.SetReadDeadline(time.Time{})
	}
	p.mu.Lock()
	drop := p.DropAt > 0 && !p.dropped
	p.dropped = p.dropped || drop
	p.mu.Unlock()
	bw := bufio.NewWriter(c)
	sent := 0
	for {
		p.mu.Lock()
		i := p.next
		p.mu.Unlock()
		if i >= len(p.Frames) {
			break
		}
		raw := p.encode(nil, p.Frames[i].Data)
		if drop && sent == p.DropAt {
			_, _ = bw.Write(raw[:len(raw)/2])
			_ = bw.Flush()
			return
		}
		if _, err := bw.Write(raw); err != nil {
			return
		}
		if err := bw.Flush(); err != nil {
			return
		}
		sent++
		p.mu.Lock()
		p.next = i + 1
		p.mu.Unlock()
	}
	if p.Hold {
		_, _ = io.Copy(io.Discard, br)
	}
}
