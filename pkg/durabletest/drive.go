package durabletest

import (
	"context"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// Advance moves the fake clock forward by d, firing in order every timer (wait timeout, retry
// back-off, durable sleep) that falls due within d, including timers scheduled while advancing: the clock
// stops at each one and the runs are driven, then it ends at the start time plus d. A step
// that fails twice under a one-second back-off that doubles completes within Advance(3s).
func (k *Kit[S]) Advance(d time.Duration) {
	k.t.Helper()
	end := k.clock.Now().Add(d)
	for range maxItems {
		k.settle()
		next, ok := k.queue.NextVisible()
		if !ok || next.After(end) {
			break
		}
		k.clock.set(next)
	}
	k.clock.set(end)
	k.settle()
}

// Drive hands every visible work item to the engine, as a queue trigger would, until none is
// left, in the order they were enqueued (or Options.ShuffleSeed's): a fan-out's branches run
// one after the other, in branch order, and the join after the last. Items delayed into the
// future (timers) wait for Advance.
//
// Drive moves the fake clock in one case only: when a worker died (CrashAfterHandler,
// Restart from a handler), the work items it held come back after their visibility timeout
// (engine.Options.VisibilityTimeout, 2 min by default), and Drive moves the clock on to then,
// firing in order the timers that fall due before, as Advance does.
func (k *Kit[S]) Drive() {
	k.t.Helper()
	k.settle()
}

// settle drives until no item is visible and none a dead worker held is still to come back.
func (k *Kit[S]) settle() {
	k.t.Helper()
	for range maxItems {
		k.driveVisible()
		if k.backAt.IsZero() {
			return
		}
		back := k.backAt
		k.backAt = time.Time{}
		for range maxItems { // the clock on to back, stopping at each timer due before it
			next, ok := k.queue.NextVisible()
			if !ok || next.After(back) {
				break
			}
			k.clock.set(next)
			k.driveVisible()
		}
		k.clock.set(back)
	}
	k.t.Fatalf("durabletest: workers keep dying; does a fault never run out?")
}

// driveVisible hands every visible item to the live worker until none is visible. When the
// worker dies handling one, the rest of its batch stays received (hidden) and comes back
// after its visibility timeout (backAt).
func (k *Kit[S]) driveVisible() {
	k.t.Helper()
	ctx := context.Background()
	for n := 0; n < maxItems; {
		received := k.clock.Now()
		msgs, err := k.queue.Receive(ctx, engine.MaxReceive, k.vis)
		if err != nil {
			k.t.Fatalf("durabletest: receive: %v", err)
		}
		if len(msgs) == 0 {
			return
		}
		if k.rng != nil {
			k.rng.Shuffle(len(msgs), func(i, j int) { msgs[i], msgs[j] = msgs[j], msgs[i] })
		}
		for _, m := range msgs {
			n++
			w := k.current()
			err := k.deliver(w, m)
			k.reap()
			if ferr := k.takeFaultErr(); ferr != nil {
				k.t.Fatalf("durabletest: %v", ferr)
			}
			if w.dead.Load() {
				// The worker died holding this item and the rest of the batch.
				if back := received.Add(k.vis); back.After(k.backAt) {
					k.backAt = back
				}
				break
			}
			if err != nil {
				k.t.Fatalf("durabletest: handle work item: %v", err)
			}
			if err := k.queue.Delete(ctx, m); err != nil {
				k.t.Fatalf("durabletest: delete work item: %v", err)
			}
		}
	}
	k.t.Fatalf("durabletest: more than %d work items without settling; does the graph loop?", maxItems)
}

// takeFaultErr returns and clears the error a worker fault met.
func (k *Kit[S]) takeFaultErr() error {
	k.wmu.Lock()
	defer k.wmu.Unlock()
	err := k.faultErr
	k.faultErr = nil
	return err
}
