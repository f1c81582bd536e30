//go:build integration

package engine_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
	"github.com/funcgraph/funcgraph/pkg/launch"
)

// azureFanRig is an engine running the fan-out graph on the Azure backends of a fresh storage
// prefix on Azurite (picked by launch.FromEnv as `funcgraph serve` picks them), counted, with
// the fault wrappers between the counters and the engine.
type azureFanRig struct {
	e      *engine.Engine
	raw    engine.Store // uncounted, to wait for a run without adding to its counts
	counts *enginetest.OpCounts
	fqueue *enginetest.FaultQueue
	fstore *enginetest.FaultStore
	queue  engine.WorkQueue // the engine's queue, for a manual rig's test to deliver from
	other  *engine.Engine   // a second instance on the same storage (azureFanConfig.skew), or nil

	mu   sync.Mutex
	runs map[string]*runOps // by partition: the run's own operations; guarded by mu
}

// runOps counts the table operations on one run's partition.
type runOps struct{ batches, gets, queries int64 }

func (r *azureFanRig) count(pk string, f func(*runOps)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.runs[pk] == nil {
		r.runs[pk] = &runOps{}
	}
	f(r.runs[pk])
}

func (r *azureFanRig) opsOf(pk string) runOps {
	r.mu.Lock()
	defer r.mu.Unlock()
	if o := r.runs[pk]; o != nil {
		return *o
	}
	return runOps{}
}

func newAzureFanRig(t *testing.T, concurrency int) *azureFanRig {
	t.Helper()
	return newAzureFanRigWith(t, azureFanConfig{concurrency: concurrency})
}

// azureFanConfig shapes an azureFanRig: its fan graph's branch handler (nil: fanWork), its
// engine's extra options, and whether its embedded dispatcher runs (manual: the test hands
// each message to HandleWorkItem itself, through queue).
type azureFanConfig struct {
	concurrency int
	work        durable.NodeFunc[fanState]
	opts        engine.Options
	manual      bool
	// skew, when set, adds a second instance (other) on the same storage whose clock is off
	// by skew; it runs no dispatcher.
	skew time.Duration
}

func newAzureFanRigWith(t *testing.T, c azureFanConfig) *azureFanRig {
	t.Helper()
	concurrency := c.concurrency
	env := map[string]string{launch.EnvStorage: azuritetest.ConnectionString(t), launch.EnvStoragePrefix: azuritetest.UniqueName("fan")}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s, err := launch.FromEnv(context.Background(), func(k string) string { return env[k] }, launch.ModeServe, logger)
	if err != nil {
		t.Fatalf("FromEnv: %v", err)
	}
	if !s.Durable.Azure {
		t.Fatal("FromEnv picked the in-memory backends")
	}
	reg := durable.NewRegistry()
	if err := reg.Register(fanGraph(t, "fan", c.work)); err != nil {
		t.Fatal(err)
	}
	r := &azureFanRig{counts: &enginetest.OpCounts{}, raw: s.Durable.Store, runs: map[string]*runOps{}}
	d := s.Durable
	r.fstore = &enginetest.FaultStore{Store: enginetest.CountingStore{Store: s.Durable.Store, Counts: r.counts}}
	r.fqueue = &enginetest.FaultQueue{WorkQueue: enginetest.CountingQueue{WorkQueue: s.Durable.Queue, Counts: r.counts}}
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		r.count(ops[0].Entity.PartitionKey, func(o *runOps) { o.batches++ })
		return nil
	}
	r.fstore.BeforeGet = func(pk, _ string) error {
		r.count(pk, func(o *runOps) { o.gets++ })
		return nil
	}
	r.fstore.BeforeQuery = func(q engine.Query) error {
		r.count(q.PartitionKey, func(o *runOps) { o.queries++ })
		return nil
	}
	d.Store, d.Queue = r.fstore, r.fqueue
	d.Payloads = enginetest.CountingPayloads{PayloadStore: s.Durable.Payloads, Counts: r.counts}
	o := c.opts
	o.Registry, o.Logger, o.SweepInterval, o.PollInterval, o.Concurrency = reg, logger, -1, 20*time.Millisecond, concurrency
	opts := d.EngineOptions(o)
	if r.e, err = engine.New(opts); err != nil {
		t.Fatal(err)
	}
	r.queue = r.fqueue
	if c.skew != 0 {
		o2 := opts
		o2.Clock = func() time.Time { return time.Now().Add(c.skew) }
		if r.other, err = engine.New(o2); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.other.Close() })
	}
	if !c.manual {
		if err := r.e.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_ = r.e.Close()
		_ = s.Close()
		if os.Getenv("FUNCGRAPH_KEEP_TABLES") == "" {
			_, _ = s.Azure.Tables.NewClient(s.Names.RunsTable).Delete(context.Background(), nil)
		}
	})
	return r
}

// run starts a fan-out of width items, waits for it to finish and for its work items to be
// deleted, and returns its id.
func (r *azureFanRig) run(t *testing.T, width int) string {
	t.Helper()
	run, err := r.e.StartRun(context.Background(), engine.StartRunRequest{GraphName: "fan", Input: []byte(fanInput(width))})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		// The head as stored, read around the counters.
		ent, err := r.raw.Get(context.Background(), run.InstanceID, "r")
		if err != nil {
			t.Fatal(err)
		}
		if engine.RunStatus(ent.Properties["Status"].(string)).Finished() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s did not finish", run.InstanceID)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for r.counts.Received.Load() != r.counts.Deletes.Load() {
		if time.Now().After(deadline) {
			t.Fatalf("work items not deleted: %d received, %d deleted", r.counts.Received.Load(), r.counts.Deletes.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	return run.InstanceID
}

// TestIntegrationFanOut_Azure runs fan-outs of 10 and 20 branches on the Azure backends:
// each joins to the state a sequential run makes, every branch committed once at its slot,
// and one more branch costs one table batch, one head read, one query and one queue message
// (and the fan-out twice as wide one query more, for the check that finds every branch settled).
// One worker runs them, so that the counts are exact: with several, the last branches to
// finish may each see the fan-out complete and enqueue the join, and the joins but one are
// dropped (a few operations more, whatever the width).
func TestIntegrationFanOut_Azure(t *testing.T) {
	t.Parallel()
	r := newAzureFanRig(t, 1)
	type ops struct {
		runOps
		enqueues int64
	}
	measure := func(width int) ops {
		r.counts.Reset()
		id := r.run(t, width)
		o := ops{r.opsOf(id), r.counts.Enqueues.Load()}
		assertFanDoneOn(t, r.e, id, width)
		return o
	}
	a, b := measure(10), measure(20)
	per := func(x, y int64) float64 { return float64(y-x) / 10 }
	t.Logf("Azure, per branch: %.1f batches, %.1f reads (head and progress), %.1f queries, %.1f enqueues (a whole fan-out of 10: %+v)",
		per(a.batches, b.batches), per(a.gets, b.gets), per(a.queries, b.queries), per(a.enqueues, b.enqueues), a)
	// The check that finds every branch settled reads windows that double: one query more for
	// the fan-out twice as wide.
	if per(a.batches, b.batches) != 1 || per(a.gets, b.gets) != 2 || b.queries-a.queries != 10+1 || per(a.enqueues, b.enqueues) != 1 {
		t.Errorf("a branch costs %.1f batches, %.1f reads, %.1f queries and %.1f enqueues on Azure, want 2 reads, 1 of each other (and 1 query more for the last check)",
			per(a.batches, b.batches), per(a.gets, b.gets), per(a.queries, b.queries), per(a.enqueues, b.enqueues))
	}
}

// TestIntegrationFanOut_Azure_DuplicatesAndLostReplies: on the Azure backends, with every work
// item enqueued twice and every branch commit's reply lost (the batch lands, the retry meets
// its own row), each branch still commits once and the join is the sequential run's.
func TestIntegrationFanOut_Azure_DuplicatesAndLostReplies(t *testing.T) {
	t.Parallel()
	r := newAzureFanRig(t, 8)
	r.fqueue.OnEnqueue = func([]byte) (int, error) { return 2, nil }
	r.fstore.LoseReply = commitsBranch
	id := r.run(t, 10)
	assertFanDoneOn(t, r.e, id, 10)
}

// TestIntegrationFanOut_Azure_RetriedBranchRedeliveredAndPutBack: on the Azure backends, a
// branch whose handler fails twice under MaxAttempts 3, whose every message comes back once
// after it was handled (a lost delete), and whose fan-out's own item comes back too (putting
// the branches back), runs as attempts [1 2 3], each after its back-off: its attempt and
// back-off are in its progress row, not in its messages.
func TestIntegrationFanOut_Azure_RetriedBranchRedeliveredAndPutBack(t *testing.T) {
	t.Parallel()
	const backoff = time.Second
	var mu sync.Mutex
	var attempts []int
	var ranAt []time.Time
	r := newAzureFanRigWith(t, azureFanConfig{concurrency: 1, manual: true,
		opts: engine.Options{Policies: map[string]engine.GraphPolicy{"fan": {Retry: engine.RetryPolicy{MaxAttempts: 3, InitialBackoff: backoff, MaxBackoff: backoff}}}},
		work: func(ctx context.Context, s fanState) (any, error) {
			if b, _ := durable.BranchFrom(ctx); b.Index == 0 {
				info, _ := durable.StepInfoFrom(ctx)
				mu.Lock()
				attempts = append(attempts, info.Attempt)
				ranAt = append(ranAt, time.Now())
				n := len(attempts)
				mu.Unlock()
				if n <= 2 {
					return nil, errors.New("flaky source")
				}
			}
			return fanWork(ctx, s)
		}})
	ctx := context.Background()
	run, err := r.e.StartRun(ctx, engine.StartRunRequest{GraphName: "fan", Input: []byte(fanInput(3))})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	deadline := time.Now().Add(time.Minute)
	for {
		got, err := r.e.GetRun(ctx, run.InstanceID)
		if err != nil {
			t.Fatal(err)
		}
		if got.RuntimeStatus.Finished() {
			if got.RuntimeStatus != engine.StatusCompleted {
				t.Fatalf("status %s output %s", got.RuntimeStatus, got.Output)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run not finished: %s", got.RuntimeStatus)
		}
		msgs, err := r.queue.Receive(ctx, 1, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		m := msgs[0]
		if err := r.e.HandleWorkItem(ctx, m.Body, m.DequeueCount); err != nil {
			continue // back after its visibility timeout
		}
		if key := string(m.Body); !seen[key] && (strings.Contains(key, `"br":0,`) || !strings.Contains(key, `"br":`)) {
			seen[key] = true // its delete is lost: it comes back once, after a second
			continue
		}
		_ = r.queue.Delete(ctx, m)
	}
	assertFanDoneOn(t, r.e, run.InstanceID, 3)
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(attempts, []int{1, 2, 3}) {
		t.Fatalf("branch 0 ran as attempts %v, want [1 2 3]", attempts)
	}
	for i := 1; i < len(ranAt); i++ {
		if d := ranAt[i].Sub(ranAt[i-1]); d < backoff-100*time.Millisecond {
			t.Errorf("attempt %d ran %v after attempt %d, within its back-off of %v", i+1, d, i, backoff)
		}
	}
}

// takeAzureBranchMessage hands the rig's messages to its engine until branch index's is at the
// front, and takes that one off the queue.
func takeAzureBranchMessage(t *testing.T, r *azureFanRig, index int) []byte {
	t.Helper()
	ctx := context.Background()
	mark := `"br":` + strconv.Itoa(index) + `,`
	for range 100 {
		msgs, err := r.queue.Receive(ctx, 1, time.Minute)
		if err != nil || len(msgs) == 0 {
			t.Fatalf("no message of branch %d (%v)", index, err)
		}
		_ = r.queue.Delete(ctx, msgs[0])
		if strings.Contains(string(msgs[0].Body), mark) {
			return msgs[0].Body
		}
		if err := r.e.HandleWorkItem(ctx, msgs[0].Body, msgs[0].DequeueCount); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatalf("no message of branch %d", index)
	return nil
}

// TestIntegrationFanOut_Azure_SkewedInstances: on the Azure backends, two instances whose
// clocks are 2 min apart judge a branch's holds by the table service's time (its Timestamps):
// nine deliveries whose commit and release fail on storage errors alone, alternating between
// them, never fail the branch as poison; a branch whose worker dies at every start still fails
// at the kill limit.
func TestIntegrationFanOut_Azure_SkewedInstances(t *testing.T) {
	t.Parallel()
	for _, skew := range []time.Duration{2 * time.Minute, -2 * time.Minute} {
		t.Run("storage errors "+skew.String(), func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int32
			r := newAzureFanRigWith(t, azureFanConfig{concurrency: 1, manual: true, skew: skew,
				opts: engine.Options{StepLease: 20 * time.Second, MaxStepStarts: 2},
				work: func(ctx context.Context, s fanState) (any, error) {
					if b, _ := durable.BranchFrom(ctx); b.Index == 1 {
						calls.Add(1)
					}
					return fanWork(ctx, s)
				}})
			ctx := context.Background()
			run, err := r.e.StartRun(ctx, engine.StartRunRequest{GraphName: "fan", Input: []byte(fanInput(2))})
			if err != nil {
				t.Fatal(err)
			}
			body := takeAzureBranchMessage(t, r, 1)
			var faulty atomic.Bool
			faulty.Store(true)
			r.fstore.BeforeSubmit = func(ops []engine.Op) error {
				r.count(ops[0].Entity.PartitionKey, func(o *runOps) { o.batches++ })
				if faulty.Load() && (commitsBranch(ops) || releasesBranchHold(ops)) {
					return enginetest.ErrInjected
				}
				return nil
			}
			engines := []*engine.Engine{r.e, r.other}
			for count := int64(1); count <= 9; count++ {
				if err := engines[count%2].HandleWorkItem(ctx, body, count); err == nil {
					t.Fatalf("delivery %d succeeded despite the faults", count)
				}
			}
			faulty.Store(false)
			if err := r.e.HandleWorkItem(ctx, body, 10); err != nil {
				t.Fatal(err)
			}
			for range 20 {
				msgs, _ := r.queue.Receive(ctx, 1, time.Minute)
				if len(msgs) == 0 {
					break
				}
				if err := r.e.HandleWorkItem(ctx, msgs[0].Body, msgs[0].DequeueCount); err == nil {
					_ = r.queue.Delete(ctx, msgs[0])
				}
			}
			got, _ := r.e.GetRun(ctx, run.InstanceID)
			if got.RuntimeStatus != engine.StatusCompleted || calls.Load() != 10 {
				t.Fatalf("status %s output %s after %d calls: failed handlings were counted as deaths", got.RuntimeStatus, got.Output, calls.Load())
			}
		})
		t.Run("deaths "+skew.String(), func(t *testing.T) {
			t.Parallel()
			const lease = time.Second
			var starts atomic.Int32
			r := newAzureFanRigWith(t, azureFanConfig{concurrency: 1, manual: true, skew: skew,
				opts: engine.Options{StepLease: lease, MaxStepStarts: 3},
				work: func(ctx context.Context, s fanState) (any, error) {
					if b, _ := durable.BranchFrom(ctx); b.Index == 1 {
						starts.Add(1)
						runtime.Goexit() // the worker is killed mid-node
					}
					return fanWork(ctx, s)
				}})
			ctx := context.Background()
			run, err := r.e.StartRun(ctx, engine.StartRunRequest{GraphName: "fan", Input: []byte(fanInput(2))})
			if err != nil {
				t.Fatal(err)
			}
			body := takeAzureBranchMessage(t, r, 1)
			engines := []*engine.Engine{r.e, r.other}
			deliver := func(count int64) (died bool) {
				exited := make(chan struct{})
				ok := make(chan struct{}, 1)
				go func() {
					defer close(exited)
					_ = engines[count%2].HandleWorkItem(ctx, body, count)
					ok <- struct{}{}
				}()
				<-exited
				return len(ok) == 0
			}
			for count := int64(1); count <= 3; count++ {
				if !deliver(count) {
					t.Fatalf("delivery %d returned instead of dying in the node", count)
				}
				time.Sleep(lease + 200*time.Millisecond) // past the lease by the service's time too
			}
			if deliver(4) {
				t.Fatal("the fourth delivery started the branch again: deaths went uncounted")
			}
			for range 20 {
				msgs, _ := r.queue.Receive(ctx, 1, time.Minute)
				if len(msgs) == 0 {
					break
				}
				if err := r.e.HandleWorkItem(ctx, msgs[0].Body, msgs[0].DequeueCount); err == nil {
					_ = r.queue.Delete(ctx, msgs[0])
				}
			}
			got, _ := r.e.GetRun(ctx, run.InstanceID)
			if got.RuntimeStatus != engine.StatusFailed || !strings.Contains(string(got.Output), "started 3 times without completing") || starts.Load() != 3 {
				t.Fatalf("%d starts, status %s output %s", starts.Load(), got.RuntimeStatus, got.Output)
			}
		})
	}
}
