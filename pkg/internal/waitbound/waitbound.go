package waitbound

import (
	"context"
	"strconv"
	"sync"
	"time"
)

// Run calls work in another goroutine and waits for it to return, at most max (no bound when
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
	c := calls.Get().(*call)
	done := c.done
	spawn(func() {
		defer func() { done <- struct{}{} }() // never blocks: one send per call
		defer cancel()
		work(runCtx)
	})
	var expired <-chan time.Time
	if max > 0 {
		c.timer.Reset(max)
		expired = c.timer.C
	}
	ended := ctx.Done()
	for {
		select {
		case <-done:
			c.timer.Stop()
			calls.Put(c) // drained and stopped: ready for the next call
			return true
		case <-ended:
			cancel() // a request that ends cancels its run while Run waits
			ended = nil
		case <-expired:
			return false // c stays with the run, whose send its done channel still takes
		}
	}
}

// call is what one Run waits on, kept between calls: work's done signal and the timer of
// the bound (a stopped timer of Go 1.23 or later delivers no stale value once reset).
type call struct {
	done  chan struct{}
	timer *time.Timer
}

var calls = sync.Pool{New: func() any {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &call{done: make(chan struct{}, 1), timer: t}
}}

// Seconds renders d as the routes' messages write a bound: "200 s", "0.25 s".
func Seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
}

// Work runs on goroutines kept between runs: a run starts on a goroutine whose stack an
// earlier run already grew (a fresh goroutine would grow and copy its stack again on every
// request), and no goroutine is created while one is idle. An idle goroutine ends after
// workerIdle.
var jobs = make(chan func())

// workerIdle is how long a goroutine waits for the next run before it ends.
const workerIdle = 10 * time.Second

// spawn runs f on an idle worker goroutine, or on a new one when none is idle.
func spawn(f func()) {
	select {
	case jobs <- f:
	default:
		go worker(f)
	}
}

// worker runs f, then the runs handed to it, until it has been idle for workerIdle.
func worker(f func()) {
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		f()
		f = nil // not kept alive while idle
		idle.Reset(workerIdle)
		select {
		case f = <-jobs:
		case <-idle.C:
			return
		}
	}
}
