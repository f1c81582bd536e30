package engine_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
)

// An idle engine polls the queue through its one receiver, backing off to PollInterval: its
// workers do not each poll (issue #23: 64 workers made 128 empty receives per benchmark run).
func TestEngine_IdleDispatcher_OneReceiverBacksOff(t *testing.T) {
	t.Parallel()
	const poll = 40 * time.Millisecond
	r := newRig(t, engine.Options{Concurrency: 32, PollInterval: poll, SweepInterval: -1}, true)
	time.Sleep(25 * poll)
	// One receiver: 1 at start, then back-offs of poll/32 doubling to poll: about 6 receives
	// in the first poll, then one per poll. 32 polling workers would make 25 × 32.
	if got := r.counts.Receives.Load(); got < 2 || got > 40 {
		t.Fatalf("%d receives in %v by an idle engine of 32 workers, want 2 to 40", got, 25*poll)
	}
}

// Work queued before Start reaches every free worker at once, fetched in batches.
func TestEngine_Dispatcher_BatchReachesEveryFreeWorker(t *testing.T) {
	t.Parallel()
	const runs = 8
	var (
		mu      sync.Mutex
		entered int
		all     = make(chan struct{})
	)
	barrier := func(ctx context.Context, s counterState) (any, error) {
		mu.Lock()
		if entered++; entered == runs {
			close(all)
		}
		mu.Unlock()
		select { // every run's step must be running at once for any to go on
		case <-all:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return durable.Update{"n": s.N + 1}, nil
	}
	r := newRig(t, engine.Options{Concurrency: runs, PollInterval: time.Hour, SweepInterval: -1}, false,
		chainGraph(t, "barrier", 1, barrier))
	ids := make([]string, runs)
	for i := range ids {
		ids[i] = r.start(t, "barrier", "", `{}`)
	}
	if err := r.e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if run := r.waitFor(t, id, nil); run.RuntimeStatus != engine.StatusCompleted {
			t.Fatalf("run %s: status %s output %s", id, run.RuntimeStatus, run.Output)
		}
	}
	if got := r.counts.Received.Load(); got != runs {
		t.Fatalf("%d messages received for %d runs", got, runs)
	}
	if got := r.counts.Receives.Load() - r.counts.EmptyReceives.Load(); got > 2 {
		t.Fatalf("%d receives returned work for %d queued runs, want one batch (two at most)", got, runs)
	}
}
