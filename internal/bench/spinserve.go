package bench

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/timing"
	"github.com/gorilla/websocket"
)

// ErrUsage marks a SpinServe error in how it was called.
var ErrUsage = errors.New("usage")

// SpinServe is the pacing measurement's floor: a WebSocket server that
// replays a capture's received records as exactly as a writer can, to
// compare aaep-replay's pacing with. It is started as
//
//	SELF spin-serve FILE --listen 127.0.0.1:0 [--speed N] [other serve flags, ignored]
//
// so that it takes aaep-replay serve's place in Pacing, prints the same
// "listening on ws://ADDR/aaep/v1/ws" line on stderr and, for each
// subscriber in turn, the same "closed" notice (lateness, write times and
// schedule start) on stdout. Per subscriber it answers the subscription
// request, then holds its thread and spins on the clock until each
// deadline (no sleep, no timer, no other goroutine in the way), writes the
// event and nothing else: what is left of the lateness at the subscriber
// is the write and the subscriber's own wake-up. It runs until SIGTERM.
func SpinServe(args []string, stdout, stderr io.Writer) error {
	if len(args) < 1 {
		return fmt.Errorf("%w: spin-serve FILE [--speed N]", ErrUsage)
	}
	fs := flag.NewFlagSet("spin-serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	listen := fs.String("listen", "127.0.0.1:0", "")
	speed := fs.Float64("speed", 1, "")
	fs.Bool("json", true, "")
	fs.Bool("close-at-end", true, "")
	fs.Bool("precise", false, "")
	if err := fs.Parse(args[1:]); err != nil {
		return fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if *speed <= 0 {
		return fmt.Errorf("%w: --speed %g: want a positive factor", ErrUsage, *speed)
	}
	offs, payloads, err := readReceived(args[0])
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	defer signal.Stop(sig)
	go func() { <-sig; ln.Close() }()

	up := websocket.Upgrader{Subprotocols: []string{"aaep.v1"}, WriteBufferSize: 64 << 10}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer conn.Close()
		notice, err := spinReplay(conn, offs, payloads, *speed)
		if err != nil {
			fmt.Fprintln(stderr, "spin-serve:", err)
			return
		}
		b, _ := json.Marshal(notice)
		fmt.Fprintf(stdout, "%s\n", b)
	})}
	fmt.Fprintf(stderr, "spin-serve: listening on ws://%s/aaep/v1/ws\n", ln.Addr())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}

// readReceived reads the offsets and payloads of a capture's received
// records.
func readReceived(path string) ([]time.Duration, [][]byte, error) {
	r, err := capfile.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	var offs []time.Duration
	var payloads [][]byte
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		if rec.Kind != capfile.KindReceived {
			continue
		}
		offs = append(offs, time.Duration(rec.Time))
		payloads = append(payloads, append([]byte(nil), rec.Payload...))
	}
	if len(offs) == 0 {
		return nil, nil, fmt.Errorf("%s: no received records", path)
	}
	return offs, payloads, nil
}

// spinReplay answers the subscription request on conn, then writes each
// payload at its deadline, spinning on its own thread until then.
func spinReplay(conn *websocket.Conn, offs []time.Duration, payloads [][]byte, speed float64) (closedNotice, error) {
	var n closedNotice // the zero notice, with an error
	if _, _, err := conn.ReadMessage(); err != nil {
		return n, fmt.Errorf("reading the subscription request: %w", err)
	}
	if err := conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"subscription.accepted","aaep_version":"1.0.0"}`)); err != nil {
		return n, err
	}
	// Drain what the subscriber sends (its close frame at the end).
	go func() {
		for {
			if _, _, err := conn.ReadMessage(); err != nil {
				return
			}
		}
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var late, write timing.Lateness
	start := time.Now()
	sched := timing.NewSchedule(start, timing.Config{Speed: speed})
	for i, p := range payloads {
		due := sched.Deadline(offs[i])
		for time.Now().Before(due) {
		}
		before := time.Now()
		if err := conn.WriteMessage(websocket.TextMessage, p); err != nil {
			return n, fmt.Errorf("event %d: %w", i, err)
		}
		after := time.Now()
		write.Observe(after.Sub(before))
		late.Observe(after.Sub(due))
	}
	_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "replay finished"), time.Now().Add(time.Second))
	wallStart := start.Round(0)
	return closedNotice{Kind: "closed", Stats: &closedStats{
		Sent: int64(len(payloads)), Lateness: late.Summary(), Write: write.Summary(), ScheduleStart: &wallStart,
	}}, nil
}
