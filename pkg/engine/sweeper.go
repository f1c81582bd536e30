package engine

import (
	"context"
	"fmt"
	"time"
)

// Sweep runs one sweeper pass and returns how many runs it dispatched. It repairs runs
// whose next step lost its work item — a crash after a commit and before the next dispatch,
// a failed enqueue — by dispatching every run whose head is runnable and has not been
// written for IdleThreshold, and every wait whose timeout has passed. A duplicate dispatch
// is harmless: a work item that is no longer current is dropped, and two workers on one
// step are settled by the conditional commit. The embedded engine runs it every
// SweepInterval; under Functions, call it from a timer trigger.
func (e *Engine) Sweep(ctx context.Context) (int, error) {
	now := e.clock()
	queries := []Query{
		{Where: []Cond{
			{Property: "RowKey", Op: CondEq, Value: headRowKey},
			{Property: pRunnable, Op: CondEq, Value: true},
			{Property: pUpdated, Op: CondLt, Value: now.Add(-e.opts.IdleThreshold)},
		}},
		{Where: []Cond{
			{Property: "RowKey", Op: CondEq, Value: headRowKey},
			{Property: pRunnable, Op: CondEq, Value: false},
			{Property: pWaitDeadline, Op: CondGt, Value: int64(0)},
			{Property: pWaitDeadline, Op: CondLe, Value: now.UnixNano()},
		}},
	}
	n := 0
	for _, q := range queries {
		for {
			page, err := e.store.Query(ctx, q)
			if err != nil {
				return n, fmt.Errorf("sweep runs: %w", err)
			}
			for _, ent := range page.Entities {
				h, err := decodeHead(ent)
				if err != nil {
					e.log.Warn("sweep: skip undecodable head", "run_id", ent.PartitionKey, "error", err.Error())
					continue
				}
				if !h.active() {
					continue
				}
				delay := time.Duration(0)
				if h.notBefore > now.UnixNano() {
					delay = time.Duration(h.notBefore - now.UnixNano())
				}
				if err := e.dispatch(ctx, h, delay); err != nil {
					return n, fmt.Errorf("sweep: %w", err)
				}
				e.log.Info("sweeper dispatched idle run", "run_id", h.runID, "graph", h.graph, "step", h.step)
				n++
			}
			if page.Continuation == "" {
				break
			}
			q.Continuation = page.Continuation
		}
	}
	return n, nil
}

func (e *Engine) sweepLoop(ctx context.Context) {
	defer e.wg.Done()
	t := time.NewTicker(e.opts.SweepInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := e.Sweep(ctx); err != nil && ctx.Err() == nil {
				e.log.Warn("sweep", "error", err.Error())
			}
		}
	}
}
