package engine_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// counterState is the state of the engine's test graphs.
type counterState struct {
	N     int    `json:"n"`
	Limit int    `json:"limit"`
	Pad   string `json:"pad"`
}

// chainGraph builds name: n0 → n1 → … → n<k-1> (terminal); every node adds 1 to n. Its
// event "noise" changes nothing: tests raise it to change the head under a step.
func chainGraph(t testing.TB, name string, k int, handler durable.NodeFunc[counterState]) durable.GraphRegistration[counterState] {
	t.Helper()
	if handler == nil {
		handler = incr
	}
	b := durable.NewManifestBuilder[counterState](name)
	b.SetEntrypoint("n0")
	for i := range k {
		opts := []durable.NodeOption{durable.WithHandlerName(fmt.Sprintf("test.%s.n%d", name, i))}
		if i == k-1 {
			opts = append(opts, durable.Terminal())
		} else {
			opts = append(opts, durable.WithNext(fmt.Sprintf("n%d", i+1)))
		}
		if err := b.AddNode(fmt.Sprintf("n%d", i), handler, opts...); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.AddEventHandler("noise", func(context.Context, counterState, json.RawMessage) (any, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func incr(_ context.Context, s counterState) (any, error) {
	return durable.Update{"n": s.N + 1}, nil
}

// loopGraph builds name: a self-loop on "loop" until n reaches limit, then "done".
func loopGraph(t testing.TB, name string) durable.GraphRegistration[counterState] {
	t.Helper()
	b := durable.NewManifestBuilder[counterState](name)
	b.SetEntrypoint("loop")
	route := func(_ context.Context, s counterState) (any, error) {
		if s.Limit > 0 && s.N >= s.Limit {
			return "done", nil
		}
		return "loop", nil
	}
	if err := b.AddNode("loop", incr, durable.WithHandlerName("test.loop"), durable.WithRoute(route), durable.WithRouteName("test.loop.route")); err != nil {
		t.Fatal(err)
	}
	if err := b.AddNode("done", func(context.Context, counterState) (any, error) { return nil, nil },
		durable.WithHandlerName("test.done"), durable.Terminal()); err != nil {
		t.Fatal(err)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// noETags makes newRig's store return no ETags from Submit; TestMain runs every test a
// second time with it set.
var noETags bool

// TestMain runs the package's tests twice: on the memory store, then on a memory store that
// returns no ETags from Submit (as the Store contract allows), skipping the second pass for
// fuzzing, benchmarks and listings.
func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if code != 0 || os.Getenv("FUNCGRAPH_ENGINE_ONE_PASS") != "" {
		os.Exit(code)
	}
	if f := flag.Lookup("test.fuzz"); f != nil && f.Value.String() != "" {
		os.Exit(code)
	}
	if f := flag.Lookup("test.list"); f != nil && f.Value.String() != "" {
		os.Exit(code)
	}
	if f := flag.Lookup("test.run"); f != nil && f.Value.String() == "^$" {
		os.Exit(code)
	}
	fmt.Println("engine tests, second pass: a store that returns no ETags from Submit")
	noETags = true
	os.Exit(m.Run())
}

// quiet discards the logs of engines built outside a rig in benchmarks and fuzzing.
var quiet = slog.New(slog.DiscardHandler)

// fakeClock is a settable clock for tests that must step over timeouts.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *fakeClock) now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *fakeClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// rig is an engine on counted, fault-injectable memory storage.
type rig struct {
	e        *engine.Engine
	reg      *durable.Registry
	store    *memory.Store
	queue    *memory.Queue
	payloads *memory.PayloadStore
	counts   *enginetest.OpCounts
	fstore   *enginetest.FaultStore
	fqueue   *enginetest.FaultQueue
	outage   *enginetest.Outage // between the fault wrappers and the memory twins
}

// newRig builds an engine over the example graphs plus extra; opts may set anything but the
// storage. start runs the embedded dispatcher.
func newRig(t testing.TB, opts engine.Options, start bool, extra ...durable.Graph) *rig {
	t.Helper()
	return newRigETags(t, !noETags, opts, start, extra...)
}

// newRigETags is newRig with the store's ETag behaviour chosen by the test.
func newRigETags(t testing.TB, etags bool, opts engine.Options, start bool, extra ...durable.Graph) *rig {
	t.Helper()
	var storeOpts, queueOpts []memory.Option
	if !etags {
		storeOpts = append(storeOpts, memory.WithoutETags())
	}
	if opts.Clock != nil {
		storeOpts = append(storeOpts, memory.WithClock(opts.Clock))
		queueOpts = append(queueOpts, memory.WithClock(opts.Clock))
	}
	r := &rig{reg: opts.Registry, store: memory.NewStore(storeOpts...), queue: memory.NewQueue(queueOpts...), payloads: memory.NewPayloadStore(), counts: &enginetest.OpCounts{}}
	if r.reg == nil {
		r.reg = durable.NewRegistry()
		gs, err := examples.All()
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range append(gs, extra...) {
			if err := r.reg.Register(g); err != nil {
				t.Fatal(err)
			}
		}
	}
	r.outage = &enginetest.Outage{}
	r.fstore = &enginetest.FaultStore{Store: enginetest.CountingStore{Store: r.outage.Store(r.store), Counts: r.counts}}
	r.fqueue = &enginetest.FaultQueue{WorkQueue: enginetest.CountingQueue{WorkQueue: r.outage.Queue(r.queue), Counts: r.counts}}
	opts.Registry = r.reg
	opts.Store = r.fstore
	opts.Queue = r.fqueue
	opts.Payloads = enginetest.CountingPayloads{PayloadStore: r.outage.Payloads(r.payloads), Counts: r.counts}
	if opts.Logger == nil {
		opts.Logger = testLogger(t)
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = 5 * time.Millisecond
	}
	e, err := engine.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	r.e = e
	if start {
		if err := e.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = e.Close() })
	return r
}

type testWriter struct{ t testing.TB }

// testLogger logs warnings and errors through t.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func (r *rig) start(t testing.TB, graph, id, input string) string {
	t.Helper()
	run, err := r.e.StartRun(context.Background(), engine.StartRunRequest{GraphName: graph, InstanceID: id, Input: json.RawMessage(input)})
	if err != nil {
		t.Fatalf("StartRun(%s): %v", graph, err)
	}
	return run.InstanceID
}

// wait waits until the run is settled (finished or waiting) and returns it.
func (r *rig) wait(t testing.TB, id string) engine.Run {
	t.Helper()
	return r.waitFor(t, id, engine.RunSettled)
}

func (r *rig) waitFor(t testing.TB, id string, done func(engine.Run) bool) engine.Run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	run, err := r.e.WaitRun(ctx, id, done)
	if err != nil {
		t.Fatalf("WaitRun(%s): %v (last status %s, custom %s)", id, err, run.RuntimeStatus, run.CustomStatus)
	}
	return run
}

// drive runs the queue by hand (no dispatcher) until it is empty: each received item is
// handled and deleted when HandleWorkItem succeeds. It returns the number of handled items.
func (r *rig) drive(t testing.TB) int {
	t.Helper()
	n := 0
	for range 10000 {
		msgs, err := r.fqueue.Receive(context.Background(), 1, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			return n
		}
		n++
		if err := r.e.HandleWorkItem(context.Background(), msgs[0].Body, msgs[0].DequeueCount); err == nil {
			if err := r.fqueue.Delete(context.Background(), msgs[0]); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Fatal("queue never drained")
	return n
}

func (r *rig) history(t testing.TB, id string) []engine.HistoryEvent {
	t.Helper()
	var out []engine.HistoryEvent
	tok := ""
	for {
		page, err := r.e.History(context.Background(), id, tok, 7)
		if err != nil {
			t.Fatalf("History(%s): %v", id, err)
		}
		out = append(out, page.Events...)
		if tok = page.ContinuationToken; tok == "" {
			return out
		}
	}
}

// checkHistory asserts contiguous sequences from 1 and returns "type:node" per row.
func checkHistory(t testing.TB, events []engine.HistoryEvent) []string {
	t.Helper()
	var out []string
	for i, ev := range events {
		if ev.Sequence != int64(i+1) {
			t.Fatalf("history row %d has sequence %d", i+1, ev.Sequence)
		}
		out = append(out, ev.Type+":"+ev.Node)
	}
	return out
}

// stateOf decodes the final state of a completed run.
func stateOf(t testing.TB, run engine.Run) map[string]any {
	t.Helper()
	var out struct {
		State map[string]any `json:"state"`
	}
	if err := json.Unmarshal(run.Output, &out); err != nil {
		t.Fatalf("decode output %s: %v", run.Output, err)
	}
	return out.State
}

func outputString(t testing.TB, run engine.Run) string {
	t.Helper()
	var s string
	if err := json.Unmarshal(run.Output, &s); err != nil {
		t.Fatalf("output %s is not a string: %v", run.Output, err)
	}
	return s
}

func base64Std(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
