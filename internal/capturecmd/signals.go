package capturecmd

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// stopSignals turns SIGINT and SIGTERM into the two stops of a capture: the
// first cancels the returned context (an orderly stop: sources close, the
// last part is closed and uploads get --upload-wait); the second cancels
// its hard stop (nothing more is waited for: the summary says what is
// uploaded and what stays in the spool, and the process exits). A third
// signal exits at once, in case even that is stuck.
func stopSignals() (context.Context, func()) {
	soft, cancelSoft := context.WithCancel(context.Background())
	hard, cancelHard := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 3)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		for n := 1; ; n++ {
			select {
			case <-done:
				return
			case <-sigs:
			}
			switch n {
			case 1:
				cancelSoft()
			case 2:
				cancelHard()
			default:
				os.Exit(130)
			}
		}
	}()
	return withHardStop(soft, hard), func() {
		signal.Stop(sigs)
		close(done)
		cancelSoft()
		cancelHard()
	}
}

type hardStopKey struct{}

// withHardStop attaches hard, the context of the second stop, to ctx.
func withHardStop(ctx, hard context.Context) context.Context {
	return context.WithValue(ctx, hardStopKey{}, hard)
}

// hardStop returns the hard stop attached to ctx; without one, a context
// that ends with ctx's own cancellation never (only a signal handler makes
// one).
func hardStop(ctx context.Context) context.Context {
	if h, ok := ctx.Value(hardStopKey{}).(context.Context); ok {
		return h
	}
	return context.WithoutCancel(ctx)
}
