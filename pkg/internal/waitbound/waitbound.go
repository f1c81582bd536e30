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
	return RunWork(ctx, max, workFunc(work))
}

// Work is work for RunWork.
type Work interface {
	// Work does the work: see Run.
	Work(ctx context.Context)
}

// workFunc is a func as a Work.
type workFunc func(ctx context.Context)

func (f workFunc) Work(ctx context.Context) { f(ctx) }

// RunWork is Run of w.Work: a caller whose work is a pointer's method needs no closure.
func RunWork(ctx context.Context, max time.Duration, work Work) bool {
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c := calls.Get().(*call)
	c.work, c.ctx, c.cancel = work, runCtx, cancel
	done := c.done
	if max > 0 {
		c.timer.Reset(max)
	}
	spawn(c)
	ended := ctx.Done()
	for {
		var finished bool
		if ended == nil {
			finished = <-done
		} else {
			select {
			case finished = <-done:
			case <-ended:
				cancel() // a request that ends cancels its run while Run waits
				ended = nil
				continue
			}
		}
		if !finished {
			return false // the bound passed: c stays with the run, whose send done still takes
		}
		if max <= 0 || c.timer.Stop() {
			calls.Put(c) // no send of the timer's can come: ready for the next call
		}
		return true
	}
}

// call is one Run, kept between calls when it ended in time: the work the worker runs, and
// done, on which the worker sends true when work returned and the timer of the bound (an
// AfterFunc timer, so the wait is a plain receive, not a select on a timer's channel) sends
// false. done holds both sends, so neither blocks whoever comes second.
type call struct {
	done   chan bool
	timer  *time.Timer
	work   Work
	ctx    context.Context
	cancel context.CancelFunc
}

var calls = sync.Pool{New: func() any {
	c := &call{done: make(chan bool, 2)}
	c.timer = time.AfterFunc(time.Hour, func() { c.done <- false })
	c.timer.Stop()
	return c
}}

// run runs the call's work. Once done is sent, c belongs to Run (and its pool) again: run
// reads all it needs before, and the worker is idle again before Run can give it more.
func (c *call) run(w *worker) {
	work, ctx, cancel, done := c.work, c.ctx, c.cancel, c.done
	c.work, c.ctx, c.cancel = nil, nil, nil
	work.Work(ctx)
	cancel()
	w.idle()
	done <- true // never blocks: one send per call, and the timer's at most one more
}

// Seconds renders d as the routes' messages write a bound: "200 s", "0.25 s".
func Seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
}

// Work runs on goroutines kept between runs: a run starts on a goroutine whose stack an
// earlier run already grew (a fresh goroutine would grow and copy its stack again on every
// request), and no goroutine is created while one is idle. Idle workers wait on their own
// channel, the most recently idle one first; a worker idle for workerIdle is ended by
// reapIdle, whose one timer replaces a timer per worker reset after every run.
var workers struct {
	mu      sync.Mutex
	idle    []*worker // the most recently idle last
	reaping bool      // a reapIdle is scheduled
}

// worker is one goroutine that runs calls: next hands it the next one (nil ends it).
type worker struct {
	next      chan *call
	idleSince time.Time
}

// workerIdle is how long a goroutine waits for the next run before it ends.
const workerIdle = 10 * time.Second

// spawn runs c on an idle worker goroutine, or on a new one when none is idle.
func spawn(c *call) {
	workers.mu.Lock()
	var w *worker
	if n := len(workers.idle); n > 0 {
		w = workers.idle[n-1]
		workers.idle[n-1] = nil
		workers.idle = workers.idle[:n-1]
	}
	workers.mu.Unlock()
	if w != nil {
		w.next <- c // never blocks: an idle worker's channel is empty
		return
	}
	w = &worker{next: make(chan *call, 1)}
	go w.loop(c)
}

// loop runs c, then the calls handed to it, until it is handed nil.
func (w *worker) loop(c *call) {
	for c != nil {
		c.run(w)
		c = <-w.next
	}
}

// idle puts w on the idle list, scheduling the reaping of idle workers if none is.
func (w *worker) idle() {
	now := time.Now()
	workers.mu.Lock()
	w.idleSince = now
	workers.idle = append(workers.idle, w)
	if !workers.reaping {
		workers.reaping = true
		time.AfterFunc(workerIdle, reapIdle)
	}
	workers.mu.Unlock()
}

// reapIdle ends the workers idle for workerIdle or more, and runs again when the next one
// is due, as long as some worker is idle.
func reapIdle() {
	workers.mu.Lock()
	defer workers.mu.Unlock()
	if next, ok := reapDue(time.Now()); ok {
		time.AfterFunc(next, reapIdle)
		return
	}
	workers.reaping = false
}

// reapDue ends the workers idle for workerIdle or more at now (the first of the list) and
// returns when the next one is due, if any worker is still idle. workers.mu must be held.
func reapDue(now time.Time) (time.Duration, bool) {
	n := 0
	for n < len(workers.idle) && now.Sub(workers.idle[n].idleSince) >= workerIdle {
		workers.idle[n].next <- nil // never blocks: an idle worker's channel is empty
		n++
	}
	rest := copy(workers.idle, workers.idle[n:])
	clear(workers.idle[rest:])
	workers.idle = workers.idle[:rest]
	if rest == 0 {
		return 0, false
	}
	return workers.idle[0].idleSince.Add(workerIdle).Sub(now), true
}
