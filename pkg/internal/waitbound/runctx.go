package waitbound

import (
	"context"
	"sync"
	"time"
)

// runContext is Work's context in RunInline: ctx's values and no deadline; cancelled when
// RunInline returns and, until the bound passes, when ctx ends. It ties itself to ctx only
// once something waits on it (Done, or a child context, through AfterFunc): a run that never
// does registers nothing with ctx, whose end Err then reads at each call.
type runContext struct {
	values context.Context // context.WithoutCancel(req): values only, Cause falls back to Err
	req    context.Context // its end cancels the run until the bound passes

	mu       sync.Mutex
	err      error              // context.Canceled once cancelled, for good
	detached bool               // the bound passed: req's end no longer cancels the run
	inner    context.Context    // once waited on: what Done and AfterFunc read
	cancel   context.CancelFunc // inner's
	unlink   func() bool        // while inner is tied to req: the tie's stop
}

func newRunContext(req context.Context) *runContext {
	return &runContext{values: context.WithoutCancel(req), req: req}
}

// Deadline reports none: the run is bounded by RunInline, not by the request's deadline.
func (c *runContext) Deadline() (time.Time, bool) { return time.Time{}, false }

// Value returns the request's value for key.
func (c *runContext) Value(key any) any { return c.values.Value(key) }

// Err returns context.Canceled once the run is cancelled: RunInline returned, or the request
// ended before the bound passed.
func (c *runContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.checkLocked()
	return c.err
}

// Done returns a channel closed when the run is cancelled.
func (c *runContext) Done() <-chan struct{} { return c.wait().Done() }

// AfterFunc arranges for f to run in its own goroutine once the run is cancelled (see
// context.AfterFunc): a child context of c waits through it, with no goroutine of its own.
func (c *runContext) AfterFunc(f func()) (stop func() bool) { return context.AfterFunc(c.wait(), f) }

// wait returns inner, made on the first call: cancelled already if the run is, else tied to
// the request's end unless the bound passed.
func (c *runContext) wait() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inner == nil {
		c.checkLocked()
		c.inner, c.cancel = context.WithCancel(c.values)
		switch {
		case c.err != nil:
			c.cancel()
		case !c.detached && c.req.Done() != nil:
			c.unlink = context.AfterFunc(c.req, c.requestEnded)
		}
	}
	return c.inner
}

// requestEnded cancels the run when the request ended before the bound passed.
func (c *runContext) requestEnded() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil && !c.detached {
		c.cancelLocked()
	}
}

// checkLocked cancels the run if the request ended while the bound had not passed.
func (c *runContext) checkLocked() {
	if c.err == nil && !c.detached && c.req.Err() != nil {
		c.cancelLocked()
	}
}

// cancelLocked cancels the run and unties it from the request.
func (c *runContext) cancelLocked() {
	c.err = context.Canceled
	if c.cancel != nil {
		c.cancel()
	}
	c.untieLocked()
}

func (c *runContext) untieLocked() {
	if c.unlink != nil {
		c.unlink()
		c.unlink = nil
	}
}

// detach unties the run from the request as the bound passes: a request that ended before
// cancelled it, one that ends from now on does not.
func (c *runContext) detach() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.checkLocked()
	c.detached = true
	c.untieLocked()
}

// end cancels the run as RunInline returns.
func (c *runContext) end() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.cancelLocked()
	}
}
