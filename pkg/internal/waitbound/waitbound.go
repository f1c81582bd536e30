package waitbound

import (
	"context"
	"strconv"
	"time"
)

// Run calls work in a new goroutine and waits for it to return, at most max (no bound when
// max is 0 or less). It returns true when work returned in time: everything work wrote is
// then visible to the caller. It returns false when max passed first: the caller must not
// read what work writes, and work goes on, doing on its own whatever it does when it ends
// (release a lock, record its result).
//
// work's context carries ctx's values. Until Run returns, ctx's end cancels it (a client
// that goes away cancels its run, as before the bound existed); once Run returned false, it
// is no longer tied to ctx, so the run outlives the request whose response was sent.
func Run(ctx context.Context, max time.Duration, work func(ctx context.Context)) bool {
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer cancel()
		work(runCtx)
	}()
	if max <= 0 {
		<-done
		stop()
		return true
	}
	t := time.NewTimer(max)
	defer t.Stop()
	select {
	case <-done:
		stop()
		return true
	case <-t.C:
		stop()
		return false
	}
}

// Seconds renders d as the routes' messages write a bound: "200 s", "0.25 s".
func Seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
}
