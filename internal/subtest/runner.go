package subtest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/aaep-tools/aaepkit/grpcbind/grpcserve"
	"github.com/aaep-tools/aaepkit/serve"
	"github.com/aaep-tools/aaepkit/timing"
)

type runner struct {
	sc      *Scenario
	o       Options
	events  []eventRef
	srv     *serve.Server
	ctl     *timing.Controller
	notices chan serve.Notice
	// start is when the recording's clock started; heard what the
	// subscriber announced (nil: not observed).
	start time.Time
	heard *observation

	mu      sync.Mutex
	joined  int // subscriptions started (or handshakes answered by POST)
	replied map[string]bool
}

// notify collects serve's notices (called from serve's goroutines).
func (r *runner) notify(n serve.Notice) {
	r.mu.Lock()
	switch n.Kind {
	case serve.NoticeSubscribed:
		r.joined++
	case serve.NoticeHandshake:
		// A refused subscription is all a subscriber gets to do; an
		// accepted one by POST attaches when its stream opens.
		if n.Verdict != serve.VerdictAccepted {
			r.joined++
		}
	case serve.NoticeReply:
		if r.replied == nil {
			r.replied = map[string]bool{}
		}
		// A token echoed in another case still settles the wait: the
		// expectation then fails at once instead of at its deadline.
		r.replied[strings.ToLower(strings.TrimSpace(n.Token))] = true
	}
	r.mu.Unlock()
	select {
	case r.notices <- n:
	default:
	}
}

func (r *runner) joinedCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.joined
}

func (r *runner) speed() float64 {
	if r.sc.Speed == 0 {
		return 1
	}
	return r.sc.Speed
}

func (r *runner) timing() timing.Config {
	return timing.Config{Speed: r.speed(), NoDelay: r.sc.NoDelay}
}

// play serves the scenario until it is over and the subscriber is gone.
func (r *runner) play(ctx context.Context, capture string, rec Recorder) error {
	r.ctl = timing.NewController(nil, r.timing(), true)
	r.start = time.Now() // serve's recording clock starts as it is made
	srv, err := serve.New(serve.Options{
		Open: serve.OpenFile(capture), Timing: r.timing(), Shared: true, Control: r.ctl,
		Record: rec, Notify: r.notify, Keepalive: r.sc.Keepalive, RejectRequests: r.sc.Reject,
		SSEEvent: r.o.SSEEvent, HonorMaxRate: r.sc.HonorMaxRate,
	})
	if err != nil {
		return err
	}
	r.srv = srv
	listen := r.o.Listen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", listen, err)
	}
	served := make(chan struct{})
	base := "http://" + ln.Addr().String()
	var stopServing func(ctx context.Context)
	if r.o.Transport == TransportGRPC {
		gs := grpcserve.New(ln, srv, nil)
		go func() { defer close(served); _ = gs.Serve() }()
		base = "grpc://" + ln.Addr().String()
		stopServing = func(context.Context) { gs.Stop() }
	} else {
		hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
		go func() { defer close(served); _ = hs.Serve(serve.Listener(ln)) }()
		stopServing = func(ctx context.Context) { _ = hs.Shutdown(ctx) }
	}
	var proc *process
	var pipe *heardPipe
	var pg *pageSubscriber
	// The replay ends first (its subscriptions close as shut down), then
	// the subscriber's process (or page): a subscriber is never seen
	// leaving because the run ended.
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		stopServing(sctx)
		<-served
		if proc != nil {
			proc.stop()
		}
		if pipe != nil {
			r.heard = pipe.observed(time.Second)
		}
		if pg != nil {
			pg.close(r.o.Output)
		}
	}()
	if r.o.Announce != nil {
		r.o.Announce(r.sc, base)
	}
	switch {
	case r.o.Exec != "":
		var w *os.File
		if r.o.Announcements {
			if pipe, w, err = newHeardPipe(r.start); err != nil {
				return err
			}
		}
		proc, err = startProcess(r.o.Exec, base, r.sc, r.o.Output, w)
		if w != nil {
			w.Close() // the subscriber has its own
		}
		if err != nil {
			return err
		}
	case r.o.Page != "":
		if pg, err = r.openPage(ctx, base); err != nil {
			return err
		}
	case r.o.To != "":
		if err := srv.DialWebSocket(ctx, r.o.To, serve.PushOptions{DialTimeout: r.o.AttachTimeout}); err != nil {
			return err
		}
	}
	if err := r.waitAttach(ctx, proc); err != nil {
		return err
	}
	if err := r.drive(ctx); err != nil {
		return err
	}
	if err := r.linger(ctx); err != nil {
		return err
	}
	if pg != nil {
		// Read before the replay ends: what the page says of a lost
		// connection is not about the events.
		if r.heard, err = pg.observed(ctx); err != nil {
			return err
		}
	}
	return nil
}

// waitAttach waits for the first subscription (or handshake).
func (r *runner) waitAttach(ctx context.Context, proc *process) error {
	t := time.NewTimer(r.o.AttachTimeout)
	defer t.Stop()
	var exited <-chan struct{}
	if proc != nil {
		exited = proc.done
	}
	for r.joinedCount() == 0 {
		select {
		case <-r.notices:
		case <-exited:
			if r.joinedCount() > 0 {
				return nil
			}
			return fmt.Errorf("no subscriber attached: the subscriber process ended (%v) before it subscribed", proc.err)
		case <-t.C:
			return fmt.Errorf("no subscriber attached within %s (--attach-timeout)", r.o.AttachTimeout)
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	return nil
}
