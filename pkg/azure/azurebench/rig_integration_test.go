//go:build integration

package azurebench_test

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
	"github.com/funcgraph/funcgraph/pkg/launch"
)

// loopState is the state of the benchmark graphs: a counter, its limit and some padding so a
// step writes a realistic state.
type loopState struct {
	N     int    `json:"n"`
	Limit int    `json:"limit"`
	Pad   string `json:"pad"`
}

// benchPad makes the state about as large as the benchmarks page's support_agent state.
const benchPad = "the quick brown fox jumps over the lazy dog; the quick brown fox jumps over the lazy dog"

// stamps records when each node handler call of each run began, and signals when a run's
// last handler has returned its final decision. The benchmarks wait on that signal rather
// than on Engine.WaitRun, which reads the run's head after every local commit: those reads
// would load Azurite during the measurement and show up in the operation counts.
type stamps struct {
	mu   sync.Mutex
	run  map[string][]time.Time
	done map[string]chan struct{}
}

func newStamps() *stamps {
	return &stamps{run: map[string][]time.Time{}, done: map[string]chan struct{}{}}
}

func (s *stamps) add(ctx context.Context) {
	now := time.Now()
	info, _ := durable.StepInfoFrom(ctx)
	s.mu.Lock()
	s.run[info.RunID] = append(s.run[info.RunID], now)
	s.mu.Unlock()
}

// finish signals that the run of ctx took its last decision (once; a re-executed handler
// does not signal again).
func (s *stamps) finish(ctx context.Context) {
	info, _ := durable.StepInfoFrom(ctx)
	ch := s.doneOf(info.RunID)
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// doneOf returns the channel closed when run id finishes.
func (s *stamps) doneOf(id string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, ok := s.done[id]
	if !ok {
		ch = make(chan struct{})
		s.done[id] = ch
	}
	return ch
}

func (s *stamps) of(runID string) []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.run[runID]...)
}

func (s *stamps) reset() {
	s.mu.Lock()
	s.run = map[string][]time.Time{}
	s.done = map[string]chan struct{}{}
	s.mu.Unlock()
}

// loopGraph is "loop": one node that adds 1 to n, routed back to itself until n reaches
// limit. Every visit is one node step (node and route commit together).
func loopGraph(b testing.TB, st *stamps) durable.GraphRegistration[loopState] {
	b.Helper()
	g := durable.NewManifestBuilder[loopState]("loop")
	g.SetEntrypoint("loop")
	node := func(ctx context.Context, s loopState) (any, error) {
		st.add(ctx)
		return durable.Update{"n": s.N + 1}, nil
	}
	route := func(ctx context.Context, s loopState) (any, error) {
		if s.N >= s.Limit {
			st.finish(ctx)
			return "__complete__", nil
		}
		return "loop", nil
	}
	if err := g.AddNode("loop", node, durable.WithHandlerName("bench.loop"), durable.WithRoute(route), durable.WithRouteName("bench.loop.route")); err != nil {
		b.Fatal(err)
	}
	reg, err := g.Build()
	if err != nil {
		b.Fatal(err)
	}
	return reg
}

// chainGraph is "chain<k>": n0 → n1 → … → n<k-1> (terminal), static edges.
func chainGraph(b testing.TB, st *stamps, k int) durable.GraphRegistration[loopState] {
	b.Helper()
	name := fmt.Sprintf("chain%d", k)
	g := durable.NewManifestBuilder[loopState](name)
	g.SetEntrypoint("n0")
	incr := func(_ context.Context, s loopState) (any, error) { return durable.Update{"n": s.N + 1}, nil }
	last := func(ctx context.Context, s loopState) (any, error) {
		st.finish(ctx)
		return durable.Update{"n": s.N + 1}, nil
	}
	for i := range k {
		handler, opts := incr, []durable.NodeOption{durable.WithHandlerName(fmt.Sprintf("bench.%s.n%d", name, i))}
		if i == k-1 {
			handler, opts = last, append(opts, durable.Terminal())
		} else {
			opts = append(opts, durable.WithNext(fmt.Sprintf("n%d", i+1)))
		}
		if err := g.AddNode(fmt.Sprintf("n%d", i), handler, opts...); err != nil {
			b.Fatal(err)
		}
	}
	reg, err := g.Build()
	if err != nil {
		b.Fatal(err)
	}
	return reg
}

// registry registers graphs.
func registry(b testing.TB, graphs ...durable.Graph) *durable.Registry {
	b.Helper()
	reg := durable.NewRegistry()
	for _, g := range graphs {
		if err := reg.Register(g); err != nil {
			b.Fatal(err)
		}
	}
	return reg
}

// azureRig is an engine on the Azure backends of a fresh storage prefix on Azurite, picked
// by launch.FromEnv as `funcgraph serve` picks them, with its storage operations counted and
// its batches recorded. table is the runs table, for the raw peers; queue the work queue.
type azureRig struct {
	e      *engine.Engine
	st     *stamps
	counts *enginetest.OpCounts
	rec    *recordingStore
	table  *aztables.Client
	queue  *azqueue.QueueClient
	prefix string
}

// storageEnv returns the environment of a process on a fresh storage prefix.
func storageEnv(b testing.TB) map[string]string {
	b.Helper()
	return map[string]string{
		launch.EnvStorage:       azuritetest.ConnectionString(b),
		launch.EnvStoragePrefix: azuritetest.UniqueName("b"),
	}
}

// newAzureRig opens the Azure storage of env and builds an engine on it. opts may set
// anything but the storage; the sweeper is off unless opts sets it. start runs the
// embedded dispatcher.
func newAzureRig(b testing.TB, env map[string]string, st *stamps, opts engine.Options, start bool) *azureRig {
	b.Helper()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s, err := launch.FromEnv(context.Background(), func(k string) string { return env[k] }, launch.ModeServe, logger)
	if err != nil {
		b.Fatalf("FromEnv: %v", err)
	}
	if !s.Durable.Azure {
		b.Fatal("FromEnv picked the in-memory backends")
	}
	r := &azureRig{st: st, counts: &enginetest.OpCounts{}, prefix: s.Names.Prefix}
	r.table = s.Azure.Tables.NewClient(s.Names.RunsTable)
	r.queue = s.Azure.Queues.NewQueueClient(s.Names.WorkQueue)
	r.rec = &recordingStore{Store: enginetest.CountingStore{Store: s.Durable.Store, Counts: r.counts}}
	d := s.Durable
	d.Store = r.rec
	d.Queue = enginetest.CountingQueue{WorkQueue: s.Durable.Queue, Counts: r.counts}
	d.Payloads = enginetest.CountingPayloads{PayloadStore: s.Durable.Payloads, Counts: r.counts}
	opts = d.EngineOptions(opts)
	opts.Logger = logger
	if opts.SweepInterval == 0 {
		opts.SweepInterval = -1
	}
	if r.e, err = engine.New(opts); err != nil {
		b.Fatal(err)
	}
	if start {
		if err := r.e.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.Cleanup(func() {
		_ = r.e.Close()
		_ = s.Close()
		if os.Getenv("FUNCGRAPH_KEEP_TABLES") == "" {
			_, _ = r.table.Delete(context.Background(), nil)
		}
	})
	return r
}

// run starts a run, waits for its last decision, then for its work item to be deleted (so
// the operation counts are complete), and returns its id and the counts so far. Only then
// does it check, with one GetRun, that the run completed.
func (r *azureRig) run(b testing.TB, graph, input string) (string, opsRun) {
	b.Helper()
	run, err := r.e.StartRun(context.Background(), engine.StartRunRequest{GraphName: graph, Input: []byte(input)})
	if err != nil {
		b.Fatalf("start %s: %v", graph, err)
	}
	select {
	case <-r.st.doneOf(run.InstanceID):
	case <-time.After(5 * time.Minute):
		b.Fatalf("run %s did not finish", run.InstanceID)
	}
	r.settle(b)
	ops := opsOf(r.counts)
	r.check(b, run.InstanceID)
	return run.InstanceID, ops
}

// check fails unless run id has completed.
func (r *azureRig) check(b testing.TB, id string) {
	b.Helper()
	got, err := r.e.GetRun(context.Background(), id)
	if err != nil || got.RuntimeStatus != engine.StatusCompleted {
		b.Fatalf("run %s: %s %s %v", id, got.RuntimeStatus, got.Output, err)
	}
}

// settle waits until every received work item has been deleted, so the counts of a
// finished run are complete (the dispatcher deletes its item after the last commit).
func (r *azureRig) settle(b testing.TB) {
	b.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for r.counts.Received.Load() != r.counts.Deletes.Load() {
		if time.Now().After(deadline) {
			b.Fatalf("work items not deleted: %d received, %d deleted", r.counts.Received.Load(), r.counts.Deletes.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// recordingStore keeps a copy of every batch submitted, per partition.
type recordingStore struct {
	engine.Store
	mu      sync.Mutex
	batches map[string][][]engine.Op
}

// Submit records and forwards.
func (s *recordingStore) Submit(ctx context.Context, ops []engine.Op) ([]string, error) {
	cp := make([]engine.Op, len(ops))
	for i, op := range ops {
		cp[i] = op
		cp[i].Entity.Properties = maps.Clone(op.Entity.Properties)
	}
	s.mu.Lock()
	if s.batches == nil {
		s.batches = map[string][][]engine.Op{}
	}
	if len(cp) > 0 {
		pk := cp[0].Entity.PartitionKey
		s.batches[pk] = append(s.batches[pk], cp)
	}
	s.mu.Unlock()
	return s.Store.Submit(ctx, ops)
}

// of returns the batches submitted to partition pk.
func (s *recordingStore) of(pk string) [][]engine.Op {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.batches[pk]
}

// reset forgets the recorded batches.
func (s *recordingStore) reset() {
	s.mu.Lock()
	s.batches = nil
	s.mu.Unlock()
}

// meanStep returns the mean time between stamp from and stamp to.
func meanStep(ts []time.Time, from, to int) time.Duration {
	return ts[to].Sub(ts[from]) / time.Duration(to-from)
}
