package show

import (
	"context"
	"os"

	"golang.org/x/term"
)

// TerminalKeys puts the terminal f into raw mode and returns its key
// presses, for Options.Keys, and a function that restores the terminal (call
// it before exiting, also on error paths). Ctrl-C still stops the program:
// in raw mode the terminal sends it as a byte, which is turned into a
// cancellation through interrupt. It returns a nil channel when f is not a
// terminal.
func TerminalKeys(ctx context.Context, f *os.File, interrupt func()) (<-chan byte, func(), error) {
	fd := int(f.Fd())
	if !term.IsTerminal(fd) {
		return nil, func() {}, nil
	}
	old, err := term.MakeRaw(fd)
	if err != nil {
		return nil, func() {}, err
	}
	keys := make(chan byte, 16)
	go func() {
		defer close(keys)
		buf := make([]byte, 1)
		for {
			n, err := f.Read(buf)
			if err != nil || n == 0 {
				return
			}
			if buf[0] == 3 || buf[0] == 4 || buf[0] == 'q' { // Ctrl-C, Ctrl-D, q
				interrupt()
				return
			}
			select {
			case keys <- buf[0]:
			case <-ctx.Done():
				return
			}
		}
	}()
	return keys, func() { _ = term.Restore(fd, old) }, nil
}
