package engine_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// benchChain runs runs 3-step chain runs per iteration on a fresh embedded engine (memory
// backend, dispatcher started) and reports runs/s and steps/s, start to last completion.
func benchChain(b *testing.B, runs int) {
	b.ReportAllocs()
	var done atomic.Int64
	var finished chan struct{}
	last := func(_ context.Context, s counterState) (any, error) {
		if done.Add(1) == int64(runs) {
			close(finished)
		}
		return durable.Update{"n": s.N + 1}, nil
	}
	b3 := durable.NewManifestBuilder[counterState]("chain3")
	b3.SetEntrypoint("a")
	_ = b3.AddNode("a", incr, durable.WithHandlerName("bench.a"), durable.WithNext("b"))
	_ = b3.AddNode("b", incr, durable.WithHandlerName("bench.b"), durable.WithNext("c"))
	_ = b3.AddNode("c", last, durable.WithHandlerName("bench.c"), durable.Terminal())
	g, err := b3.Build()
	if err != nil {
		b.Fatal(err)
	}
	reg := durable.NewRegistry()
	if err := reg.Register(g); err != nil {
		b.Fatal(err)
	}
	var elapsed time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		e, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore(), Logger: quiet})
		if err != nil {
			b.Fatal(err)
		}
		if err := e.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		done.Store(0)
		finished = make(chan struct{})
		ids := make([]string, runs)
		b.StartTimer()
		t0 := time.Now()
		for i := range ids {
			run, err := e.StartRun(context.Background(), engine.StartRunRequest{GraphName: "chain3"})
			if err != nil {
				b.Fatal(err)
			}
			ids[i] = run.InstanceID
		}
		<-finished
		for _, id := range ids {
			if run, err := e.WaitRun(context.Background(), id, func(r engine.Run) bool { return r.RuntimeStatus.Finished() }); err != nil || run.RuntimeStatus != engine.StatusCompleted {
				b.Fatalf("run %s: %s %v", id, run.RuntimeStatus, err)
			}
		}
		elapsed += time.Since(t0)
		b.StopTimer()
		_ = e.Close()
		b.StartTimer()
	}
	total := float64(runs * b.N)
	b.ReportMetric(total/elapsed.Seconds(), "runs/s")
	b.ReportMetric(3*total/elapsed.Seconds(), "steps/s")
}

func BenchmarkEngine_Chain3_200Runs(b *testing.B)  { benchChain(b, 200) }
func BenchmarkEngine_Chain3_1000Runs(b *testing.B) { benchChain(b, 1000) }

// BenchmarkEngine_StepCost_At10_vs_At1000 runs one 1 100-step run per iteration and
// compares the mean step time of steps 10–110 with steps 1 000–1 100 (from one node
// handler call to the next: commit, route, execute). Flat means the engine never re-reads
// history.
func BenchmarkEngine_StepCost_At10_vs_At1000(b *testing.B) {
	b.ReportAllocs()
	const steps = 1100
	stamps := make([]time.Time, 0, steps+1)
	stamp := func(_ context.Context, s counterState) (any, error) {
		stamps = append(stamps, time.Now())
		return durable.Update{"n": s.N + 1}, nil
	}
	bl := durable.NewManifestBuilder[counterState]("long")
	bl.SetEntrypoint("loop")
	route := func(_ context.Context, s counterState) (any, error) {
		if s.N >= s.Limit {
			return "__complete__", nil
		}
		return "loop", nil
	}
	_ = bl.AddNode("loop", stamp, durable.WithHandlerName("bench.loop"), durable.WithRoute(route), durable.WithRouteName("bench.route"))
	g, err := bl.Build()
	if err != nil {
		b.Fatal(err)
	}
	reg := durable.NewRegistry()
	_ = reg.Register(g)
	var early, late time.Duration
	for range b.N {
		stamps = stamps[:0]
		e, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore(), MaxSteps: 2 * steps, Concurrency: 1, Logger: quiet})
		if err != nil {
			b.Fatal(err)
		}
		_ = e.Start(context.Background())
		run, err := e.StartRun(context.Background(), engine.StartRunRequest{GraphName: "long", Input: []byte(fmt.Sprintf(`{"limit":%d}`, steps+1))})
		if err != nil {
			b.Fatal(err)
		}
		if r, err := e.WaitRun(context.Background(), run.InstanceID, func(r engine.Run) bool { return r.RuntimeStatus.Finished() }); err != nil || r.RuntimeStatus != engine.StatusCompleted {
			b.Fatalf("long run: %s %s %v", r.RuntimeStatus, r.Output, err)
		}
		_ = e.Close()
		early += stamps[110].Sub(stamps[10])
		late += stamps[1100].Sub(stamps[1000])
	}
	perEarly := float64(early.Nanoseconds()) / float64(100*b.N)
	perLate := float64(late.Nanoseconds()) / float64(100*b.N)
	b.ReportMetric(perEarly, "ns/step@10")
	b.ReportMetric(perLate, "ns/step@1000")
	b.ReportMetric(perLate/perEarly, "ratio")
}

// BenchmarkEngine_StorageOpsPerStep reports storage operations per step of a 3-step run
// and of the steady state (per extra step of a 20-step run), counted by the instrumented
// store and queue.
func BenchmarkEngine_StorageOpsPerStep(b *testing.B) {
	b.ReportAllocs()
	var perRun, steady float64
	for range b.N {
		r3 := opsOf(b, 3)
		r20 := opsOf(b, 20)
		perRun += float64(r3) / 3
		steady += float64(r20-r3) / 17
	}
	b.ReportMetric(perRun/float64(b.N), "ops/step(3-step-run)")
	b.ReportMetric(steady/float64(b.N), "ops/steady-step")
}

func opsOf(b *testing.B, steps int) int64 {
	r := newRig(b, engine.Options{}, false, chainGraph(b, fmt.Sprintf("ops%d", steps), steps, nil))
	r.start(b, fmt.Sprintf("ops%d", steps), "", `{}`)
	r.drive(b)
	return r.counts.Total()
}
