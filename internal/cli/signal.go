package cli

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// Interrupted is why a command's context ended when SIGINT (Ctrl-C) or
// SIGTERM stopped it: the cause of the context SignalContext returns. It is
// a context.Canceled (errors.Is), so every wait that ends on a cancelled
// context ends on it.
type Interrupted struct{ Signal syscall.Signal }

func (e *Interrupted) Error() string {
	if e.Signal == syscall.SIGINT {
		return "interrupted (SIGINT, Ctrl-C)"
	}
	return "interrupted (" + signalName(e.Signal) + ")"
}

// Is makes an interruption a context.Canceled.
func (e *Interrupted) Is(target error) bool { return target == context.Canceled }

// ExitCode is the status of a command the signal stopped before its work
// was done: 128 plus the signal's number, as a shell reports a process the
// signal killed (130 for SIGINT, 143 for SIGTERM).
func (e *Interrupted) ExitCode() int { return 128 + int(e.Signal) }

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	}
	return s.String()
}

// SignalContext returns a context that ends, its cause an *Interrupted,
// at the first SIGINT or SIGTERM. That first signal is the command's to
// answer (an orderly end: outputs finished or removed, what was read
// written out); the default action is restored at once, so that a second
// signal ends the process whatever it is doing. stop releases the signals.
func SignalContext(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			signal.Reset(os.Interrupt, syscall.SIGTERM)
			sig, _ := s.(syscall.Signal)
			cancel(&Interrupted{Signal: sig})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

// InterruptedCode is the exit status of a command that ended with code
// after ctx: a failure (code other than 0) of a command a signal
// interrupted is the signal's status (Interrupted.ExitCode); a command
// whose work a signal ends as asked (serve, view, show --follow) exits 0.
func InterruptedCode(ctx context.Context, code int) int {
	var in *Interrupted
	if code != ExitOK && errors.As(context.Cause(ctx), &in) {
		return in.ExitCode()
	}
	return code
}
