package spool

import (
	"context"
	"testing"
	"testing/synctest"
)

// TestAfterFuncStopWaits checks the promise Close rests on: once stop has
// returned, nothing of f runs, even when ctx ended just before and f has
// been started but not yet scheduled (what a loaded machine does).
func TestAfterFuncStopWaits(t *testing.T) {
	t.Run("started", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			release := make(chan struct{})
			ran := make(chan struct{})
			stop := afterFunc(ctx, func() {
				<-release
				close(ran)
			})
			cancel()
			stopped := make(chan struct{})
			go func() {
				stop()
				close(stopped)
			}()
			synctest.Wait()
			select {
			case <-stopped:
				close(release)
				t.Fatal("stop returned while f was still to run")
			default:
			}
			close(release)
			<-stopped
			select {
			case <-ran:
			default:
				t.Fatal("stop returned before f did")
			}
			stop() // a second stop returns at once
		})
	})
	t.Run("stopped first", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			called := false
			stop := afterFunc(ctx, func() { called = true })
			stop()
			cancel()
			synctest.Wait()
			if called {
				t.Fatal("f ran after stop")
			}
			stop()
		})
	})
}
