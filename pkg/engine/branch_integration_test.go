//go:build integration

package engine_test

import (
	"context"
	"log/slog"
	"os"
	"sync"
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
	if err := reg.Register(fanGraph(t, "fan", nil)); err != nil {
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
	opts := d.EngineOptions(engine.Options{Registry: reg, Logger: logger, SweepInterval: -1, PollInterval: 20 * time.Millisecond, Concurrency: concurrency})
	if r.e, err = engine.New(opts); err != nil {
		t.Fatal(err)
	}
	if err := r.e.Start(context.Background()); err != nil {
		t.Fatal(err)
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
	t.Logf("Azure, per branch: %.1f batches, %.1f head reads, %.1f queries, %.1f enqueues (a whole fan-out of 10: %+v)",
		per(a.batches, b.batches), per(a.gets, b.gets), per(a.queries, b.queries), per(a.enqueues, b.enqueues), a)
	// The check that finds every branch settled reads windows that double: one query more for
	// the fan-out twice as wide.
	if per(a.batches, b.batches) != 1 || per(a.gets, b.gets) != 1 || b.queries-a.queries != 10+1 || per(a.enqueues, b.enqueues) != 1 {
		t.Errorf("a branch costs %.1f batches, %.1f reads, %.1f queries and %.1f enqueues on Azure, want 1 each (and 1 query more for the last check)",
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
