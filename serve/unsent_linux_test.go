package serve

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestListenerLimitsUnsent checks what makes a slow reader distinguishable
// from a stalled one: the kernel holds little for a subscriber that has
// stopped reading, so a writer blocked on it goes on as soon as the
// subscriber takes that little. Without the limit the kernel takes MBs
// (its send buffer grows to tcp_wmem's maximum) and wakes a blocked writer
// only once a third or so of them has drained: a subscriber reading slowly
// but steadily could read for longer than the write timeout with no byte
// accepted.
func TestListenerLimitsUnsent(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := Listener(raw)
	defer ln.Close()
	// The subscriber's receive buffer is fixed (the kernel doubles it), so
	// that its share of what is buffered is known.
	const rcvbuf = 64 << 10
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var err error
		if cerr := c.Control(func(fd uintptr) { err = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, rcvbuf) }); cerr != nil {
			return cerr
		}
		return err
	}}
	client, err := d.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	conn, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	// Write until the kernel takes nothing more for a second: the
	// subscriber reads nothing meanwhile, so once full it stays full.
	buf := make([]byte, batchLimit)
	filled := 0
	for {
		if err := conn.SetWriteDeadline(time.Now().Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		n, err := conn.Write(buf)
		filled += n
		if err != nil {
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
		}
		if filled > 64<<20 {
			t.Fatalf("the kernel took %d bytes for a subscriber that reads nothing", filled)
		}
	}
	// Its receive buffer (doubled), what may wait unsent, and what one
	// write may add past the limit.
	const most = 2*rcvbuf + unsentLimit + 2*batchLimit
	if filled > most {
		t.Fatalf("the kernel took %d bytes for a subscriber that reads nothing, want at most %d", filled, most)
	}

	// A writer blocked on it goes on once the subscriber has read them.
	wrote := make(chan error, 1)
	go func() {
		if err := conn.SetWriteDeadline(time.Now().Add(testTimeout)); err != nil {
			wrote <- err
			return
		}
		_, err := conn.Write([]byte{'!'})
		wrote <- err
	}()
	if _, err := io.ReadFull(client, make([]byte, filled)); err != nil {
		t.Fatal(err)
	}
	if err := <-wrote; err != nil {
		t.Fatalf("a write after the subscriber read all %d bytes: %v", filled, err)
	}
	t.Logf("the kernel held %d bytes for a subscriber that stopped reading", filled)
}
