package engine

import (
	"context"
	"errors"
	"time"
)

// worker is one embedded dispatcher worker: it receives one work item at a time and runs it
// with HandleWorkItem, deleting the message when done. Idle, it sleeps until a local enqueue
// wakes it or PollInterval passes (for items enqueued elsewhere or made visible by a delay).
func (e *Engine) worker(ctx context.Context, id int) {
	defer e.wg.Done()
	idle := time.NewTimer(e.opts.PollInterval)
	defer idle.Stop()
	for ctx.Err() == nil {
		msgs, err := e.queue.Receive(ctx, 1, e.opts.VisibilityTimeout)
		if err != nil && ctx.Err() == nil {
			e.log.Warn("receive work items", "worker", id, "error", err.Error())
		}
		if len(msgs) == 0 {
			idle.Reset(e.opts.PollInterval)
			select {
			case <-ctx.Done():
			case <-e.kick:
			case <-idle.C:
			}
			continue
		}
		for _, m := range msgs {
			e.handleMessage(ctx, m)
		}
	}
}

func (e *Engine) handleMessage(ctx context.Context, m Message) {
	if err := e.HandleWorkItem(ctx, m.Body, m.DequeueCount); err != nil {
		if ctx.Err() == nil {
			e.log.Warn("work item failed; left for redelivery", "message_id", m.ID, "dequeue_count", m.DequeueCount, "error", err.Error())
		}
		return
	}
	if err := e.queue.Delete(context.WithoutCancel(ctx), m); err != nil && !errors.Is(err, ErrNotFound) {
		e.log.Warn("delete work item", "message_id", m.ID, "error", err.Error())
	}
}
