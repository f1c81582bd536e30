package waitbound

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// InlineWork is work for RunInline: the work, and the answer a request gets when the bound
// passes first.
type InlineWork interface {
	Work
	// Bounded answers the request without the work's result (ReplyEarly sends it while the
	// work goes on). It runs on another goroutine than Work, at most once, and only when the
	// bound passed before Work returned.
	Bounded()
}

// RunInline is RunWork on the calling goroutine: a run that ends in time costs no hand-off
// between goroutines (two scheduler wake-ups, a quarter of a small invoke). If max passes
// first, work.Bounded runs on the timer's goroutine while Work goes on, and from then on
// Work's context is no longer tied to ctx, so the run outlives the request whose response
// Bounded sent. The caller's goroutine stays in Work until it returns: Bounded must send a
// response that is complete without the handler's return, which is what ReplyEarly does for
// the writers CanReplyEarly accepts.
//
// RunInline returns once Work returned and, if it ran, Bounded did: true when Work returned
// in time (Bounded never runs), false when Bounded answered the request. No bound when max
// is 0 or less. Until the bound passes, ctx's end cancels Work's context, as with RunWork.
func RunInline(ctx context.Context, max time.Duration, work InlineWork) bool {
	run := newRunContext(ctx)
	defer run.end()
	c := inlineCalls.Get().(*inlineCall)
	c.work, c.run = work, run
	if max > 0 {
		c.timer.Reset(max)
	}
	work.Work(run)
	if c.state.CompareAndSwap(running, inTime) {
		if max <= 0 || c.timer.Stop() { // no call of bound can come: ready for the next run
			c.reset()
			inlineCalls.Put(c)
		}
		return true
	}
	<-c.answered // the bound passed: wait for its answer to be sent, then leave c to the GC
	return false
}

// The states of an inlineCall: Work runs; it returned in time; the bound passed first.
const (
	running int32 = iota
	inTime
	bounded
)

// inlineCall is one RunInline, kept between runs that ended in time: the state both Work's
// end and the bound race to move on, the bound's AfterFunc timer, the run's context, and
// answered, closed once Bounded returned.
type inlineCall struct {
	state    atomic.Int32
	timer    *time.Timer
	work     InlineWork
	run      *runContext
	answered chan struct{}
}

var inlineCalls = sync.Pool{New: func() any {
	c := &inlineCall{answered: make(chan struct{})}
	c.timer = time.AfterFunc(time.Hour, c.bound)
	c.timer.Stop()
	return c
}}

// bound runs when max passed: unless Work returned first, it cuts the run's tie to the
// request and answers the request.
func (c *inlineCall) bound() {
	if !c.state.CompareAndSwap(running, bounded) {
		return
	}
	c.run.detach()
	c.work.Bounded()
	close(c.answered)
}

// reset readies c for the next run.
func (c *inlineCall) reset() {
	c.state.Store(running)
	c.work, c.run = nil, nil
}
