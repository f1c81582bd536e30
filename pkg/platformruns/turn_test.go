package platformruns_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/platform"
	"github.com/funcgraph/funcgraph/pkg/platformruns"
)

// counted is a backend on an engine whose storage operations are counted.
type counted struct {
	rb     platform.RunBackend
	b      *platformruns.Backend
	eng    *engine.Engine
	counts *enginetest.OpCounts
	// queries counts the queries per partition key, gets the reads per partition key.
	mu      sync.Mutex
	queries map[string]int
	gets    map[string]int
}

// reads returns the rows read, except those of the run watched (the execute node of a
// running run watches its head for a cancel, a read every 100 ms).
func (c *counted) reads(watched string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for pk, k := range c.gets {
		if pk != watched {
			n += k
		}
	}
	return n
}

func (c *counted) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts.Reset()
	c.queries, c.gets = map[string]int{}, map[string]int{}
}

// countedInstance starts an engine on counted memory storage, with the backend bound to exec.
func countedInstance(t *testing.T, exec platform.RunExecutor) *counted {
	t.Helper()
	return countedOn(t, memory.NewStore(), memory.NewQueue(), exec)
}

// countedOn starts an engine on store and queue, its table operations counted, with the
// backend bound to exec.
func countedOn(t *testing.T, store engine.Store, queue engine.WorkQueue, exec platform.RunExecutor) *counted {
	t.Helper()
	reg := durable.NewRegistry()
	b, err := platformruns.Register(reg)
	if err != nil {
		t.Fatal(err)
	}
	c := &counted{b: b, counts: &enginetest.OpCounts{}, queries: map[string]int{}, gets: map[string]int{}}
	fs := &enginetest.FaultStore{Store: enginetest.CountingStore{Store: store, Counts: c.counts}}
	fs.BeforeQuery = func(q engine.Query) error {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.queries[q.PartitionKey]++
		return nil
	}
	fs.BeforeGet = func(pk, _ string) error {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.gets[pk]++
		return nil
	}
	c.eng, err = engine.New(engine.Options{Registry: reg, Store: fs, Queue: queue, Payloads: memory.NewPayloadStore(),
		PollInterval: 2 * time.Millisecond, Policies: map[string]engine.GraphPolicy{platformruns.GraphName: platformruns.Policy}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.eng.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.eng.Close() })
	if c.rb, err = b.Bind(c.eng)(exec); err != nil {
		t.Fatal(err)
	}
	return c
}

// waitingForTurn waits until the run waits for its turn.
func waitingForTurn(t *testing.T, c *counted, runID string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if _, err := c.eng.WaitRun(ctx, runID, func(r engine.Run) bool { ev, ok := r.WaitingFor(); return ok && ev == "turn" }); err != nil {
		t.Fatalf("run %s never waited for its turn: %v", runID, err)
	}
}

// blocker is an executor whose runs of thread "busy" block until released.
type blocker struct {
	release chan struct{}
	mu      sync.Mutex
	order   []string
}

func (b *blocker) ExecuteRun(ctx context.Context, run platform.Run) (platform.RunStatus, error) {
	if run.ThreadID == "busy" {
		select {
		case <-b.release:
		case <-ctx.Done():
			return platform.RunInterrupted, nil
		}
	}
	b.mu.Lock()
	b.order = append(b.order, run.RunID)
	b.mu.Unlock()
	return platform.RunSuccess, nil
}

// List, Active and a queued run's turn check read the thread's own runs, a bounded number of
// them, however many runs other threads keep or queue; runs waiting for their turn do not poll.
func TestBackend_StorageOpsBoundedByTheThread(t *testing.T) {
	exec := &blocker{release: make(chan struct{})}
	c := countedInstance(t, exec)
	for i := range 60 {
		join(t, c.rb, submit(t, c.rb, fmt.Sprintf("other-%d", i%6), i))
	}
	for i := range 5 {
		join(t, c.rb, submit(t, c.rb, "mine", i))
	}
	queued := []platform.Run{submit(t, c.rb, "busy", 0)}
	for i := 1; i <= 30; i++ {
		queued = append(queued, submit(t, c.rb, "busy", i))
	}
	for _, r := range queued[1:] {
		waitingForTurn(t, c, r.RunID)
	}

	watched := queued[0].RunID // executing: its execute node watches it for a cancel
	c.reset()
	time.Sleep(300 * time.Millisecond)
	if q, s, g := c.counts.Queries.Load(), c.counts.Submits.Load(), c.reads(watched); q+s+int64(g) != 0 {
		t.Errorf("30 queued runs made %d queries, %d writes and %d reads in 300 ms of waiting: they poll", q, s, g)
	}

	check := func(name string, wantGets int, fn func() error) {
		t.Helper()
		c.reset()
		if err := fn(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		q, g, s := c.counts.Queries.Load(), c.reads(watched), c.counts.Submits.Load()
		if q != 1 || g > wantGets || s != 0 {
			c.mu.Lock()
			t.Errorf("%s: %d queries (%v), %d reads, %d writes; want 1, ≤ %d, 0", name, q, c.queries, g, s, wantGets)
			c.mu.Unlock()
		}
	}
	check("List(mine, limit 2, offset 1)", 3, func() error {
		list, err := c.rb.List(t.Context(), "mine", "", 2, 1)
		if err == nil && (len(list) != 2 || list[0].RunID != "run-mine-3" || list[1].RunID != "run-mine-2") {
			err = fmt.Errorf("listed %+v, want run-mine-3, run-mine-2", list)
		}
		return err
	})
	check("Active(mine)", 4, func() error {
		if active, err := c.rb.Active(t.Context(), "mine"); err != nil || active {
			return fmt.Errorf("active %v, %v; want false", active, err)
		}
		return nil
	})
	check("Active(busy)", 2, func() error {
		if active, err := c.rb.Active(t.Context(), "busy"); err != nil || !active {
			return fmt.Errorf("active %v, %v; want true", active, err)
		}
		return nil
	})

	// One more queued run: its start and turn check cost the same with 30 runs ahead as with 1.
	c.reset()
	last := submit(t, c.rb, "busy", 99)
	waitingForTurn(t, c, last.RunID)
	n := c.counts.Queries.Load() + c.counts.Submits.Load() + int64(c.reads(watched))
	t.Logf("a run queued behind 31: %d table operations to start and check its turn", n)
	if n > 30 {
		t.Errorf("a run queued behind 31 made %d table operations to start and check its turn, want ≤ 30", n)
	}
	c.mu.Lock()
	for pk := range c.queries {
		if !strings.HasPrefix(pk, "~gactive~busy") && !strings.HasPrefix(pk, "§due") {
			t.Errorf("the turn check read partition %q", pk)
		}
	}
	c.mu.Unlock()
	close(exec.release)
	for _, r := range append(queued, last) {
		if got := join(t, c.rb, r); got.Status != platform.RunSuccess {
			t.Fatalf("%s = %s", r.RunID, got.Status)
		}
	}
}

// 200 runs queued on one thread drain in order, each woken by the one before it, at a
// storage cost per run that does not grow with the queue: a quadratic turn check fails the
// bound.
func TestBackend_TwoHundredQueuedRunsDrainInLinearCost(t *testing.T) {
	const n = 200
	exec := &blocker{release: make(chan struct{})}
	c := countedInstance(t, exec)
	c.reset()
	var runs []platform.Run
	for i := range n {
		runs = append(runs, submit(t, c.rb, "busy", i))
	}
	close(exec.release)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	for _, r := range runs {
		got, err := c.rb.Join(ctx, r.ThreadID, r.RunID)
		if err != nil || got.Status != platform.RunSuccess {
			t.Fatalf("%s = %+v, %v", r.RunID, got, err)
		}
	}
	for _, r := range runs { // the last hand-offs finish
		if _, err := c.eng.WaitRun(ctx, r.RunID, nil); err != nil {
			t.Fatal(err)
		}
	}
	exec.mu.Lock()
	for i, id := range exec.order {
		if id != runs[i].RunID {
			t.Fatalf("run %d executed was %s, want %s", i, id, runs[i].RunID)
		}
	}
	exec.mu.Unlock()
	total, gets, queries := c.counts.Table(), c.counts.Gets.Load(), c.counts.Queries.Load()
	t.Logf("%d runs: %d table operations (%d reads, %d queries, %d writes), %d queue operations",
		n, total, gets, queries, c.counts.Submits.Load(), c.counts.Queue())
	if total > 100*n {
		t.Errorf("%d table operations for %d runs, want ≤ %d: the cost per run grows with the queue", total, n, 100*n)
	}
}

// A run whose predecessor finished without waking it (terminated behind the backend's back)
// re-checks when its safety net runs out, and goes.
func TestBackend_SafetyNetRechecks(t *testing.T) {
	exec := &blocker{release: make(chan struct{})}
	c := countedInstance(t, exec)
	platformruns.SetRecheck(c.b, 100*time.Millisecond, 100*time.Millisecond)
	first, second := submit(t, c.rb, "busy", 0), submit(t, c.rb, "busy", 1)
	waitingForTurn(t, c, second.RunID)
	if err := c.eng.CancelRun(t.Context(), first.RunID, "gone"); err != nil {
		t.Fatal(err)
	}
	close(exec.release)
	if got := join(t, c.rb, second); got.Status != platform.RunSuccess {
		t.Fatalf("second = %s, want success", got.Status)
	}
	if got := join(t, c.rb, first); got.Status != platform.RunInterrupted {
		t.Fatalf("first = %s, want interrupted", got.Status)
	}
}
