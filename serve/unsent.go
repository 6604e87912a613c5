package serve

import "net"

// unsentLimit is how many bytes written to a subscriber's socket the kernel
// may hold unsent (TCP_NOTSENT_LOWAT, where the system has it). Without a
// limit the kernel takes bytes in bursts: once its send buffer (several MB,
// grown by the kernel) is full, a write waits until a third or so of it has
// drained, so a subscriber that reads slowly but steadily can read for
// longer than the write timeout while no byte is accepted, and be cut off
// as stalled. With the limit, a write makes progress each time the
// subscriber has taken some tens of kilobytes: the write timeout measures
// whether the subscriber reads, not how much the kernel buffers.
const unsentLimit = 128 << 10

// Listener returns ln with each connection it accepts set up for
// subscribers (see unsentLimit): what a stalled subscriber is judged by is
// then whether it reads. A Server works behind any listener; the host's
// http.Server should serve it on one of these, which SSE subscribers need
// (a WebSocket subscriber's connection is set up when it is upgraded).
func Listener(ln net.Listener) net.Listener {
	return tunedListener{ln}
}

type tunedListener struct{ net.Listener }

func (l tunedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		limitUnsent(c)
	}
	return c, err
}
