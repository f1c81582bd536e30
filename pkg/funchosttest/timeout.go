package funchosttest

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// timeoutGracePeriod is how long the host waits, after an invocation exceeded functionTimeout,
// for the invocation to finish before it restarts the handler (TimeoutAttribute.GracePeriod).
// The invocation has failed either way.
const timeoutGracePeriod = 2 * time.Second

// ErrFunctionTimeout reports an invocation that exceeded functionTimeout. It comes wrapped
// together with ErrInvocationFailed.
var ErrFunctionTimeout = errors.New("funchosttest: function timeout exceeded")

// errHandlerDown reports an invocation attempted while no handler runs (a restart failed).
var errHandlerDown = errors.New("the handler is not running")

// Restarts returns how many times the handler was killed and restarted because an invocation
// exceeded functionTimeout.
func (e *Emulator) Restarts() int { return int(e.restarts.Load()) }

// current returns the running handler. It waits while a restart is under way.
func (e *Emulator) current() (*worker, error) {
	e.wmu.Lock()
	defer e.wmu.Unlock()
	if e.w == nil {
		return nil, errHandlerDown
	}
	return e.w, nil
}

// guarded runs call against the current handler under functionTimeout, as the host's
// FunctionExecutor does: when the limit passes, the invocation fails with ErrFunctionTimeout;
// if call is still running after timeoutGracePeriod, the whole handler is killed and restarted
// (every other in-flight invocation fails with it). A late result of call is passed to
// discard, if set. call does not see the caller's cancellation end the invocation early
// unless ctx says so.
func guarded[T any](e *Emulator, ctx context.Context, function string, call func(ctx context.Context, base string) (T, error), discard func(T)) (T, error) {
	var zero T
	w, err := e.current()
	if err != nil {
		return zero, fmt.Errorf("%w: %s: %v", ErrInvocationFailed, function, err)
	}
	limit := e.cfg.EffectiveFunctionTimeout()
	if limit <= 0 {
		return call(ctx, w.url)
	}
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := call(ctx, w.url)
		done <- result{v, err}
	}()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.v, r.err
	case <-timer.C:
	}
	e.logf("funchosttest: Timeout value of %s was exceeded by function: Functions.%s", formatTimeSpan(limit), function)
	grace := time.NewTimer(timeoutGracePeriod)
	defer grace.Stop()
	select {
	case r := <-done:
		if discard != nil && r.err == nil {
			discard(r.v)
		}
	case <-grace.C:
		e.restart(w, function)
		if discard != nil {
			go func() {
				if r := <-done; r.err == nil {
					discard(r.v)
				}
			}()
		}
	}
	return zero, fmt.Errorf("%w: %s: %w after %s", ErrInvocationFailed, function, ErrFunctionTimeout, formatTimeSpan(limit))
}

// restart kills the handler instance old (SIGKILL) and starts a new one on a new port,
// waiting for its readiness, unless old was already replaced or the emulator is closed.
// Invocations wait for the new instance meanwhile.
func (e *Emulator) restart(old *worker, function string) {
	e.wmu.Lock()
	defer e.wmu.Unlock()
	if e.w != old || e.closed {
		return
	}
	e.logf("funchosttest: A function timeout has occurred. Restarting worker process executing function %s.", function)
	old.kill()
	e.w = nil
	e.restarts.Add(1)
	w, err := e.startWorker(e.bg)
	if err != nil {
		e.logf("funchosttest: restart handler: %v", err)
		return
	}
	e.w = w
	if e.client != nil {
		e.client.CloseIdleConnections()
	}
	if e.proxier != nil {
		e.proxier.CloseIdleConnections()
	}
	e.logf("funchosttest: Restart of language worker process(es) completed.")
}

// formatTimeSpan formats d as .NET prints a TimeSpan (hh:mm:ss[.fffffff]).
func formatTimeSpan(d time.Duration) string {
	h, m, s := int(d/time.Hour), int(d%time.Hour/time.Minute), int(d%time.Minute/time.Second)
	out := fmt.Sprintf("%02d:%02d:%02d", h, m, s)
	if frac := d % time.Second; frac != 0 {
		out += fmt.Sprintf(".%07d", int(frac/100))
	}
	return out
}
