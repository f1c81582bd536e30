package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// benchFanOut runs runs fan-out runs of width branches per iteration on a fresh embedded
// engine (memory backend, counted, dispatcher started) and reports runs/s and branches/s,
// start to last completion, and the storage operations per branch: all of a run's (start,
// fan-out, join and the join node included) divided by its width.
func benchFanOut(b *testing.B, runs, width int) {
	b.ReportAllocs()
	reg := durable.NewRegistry()
	if err := reg.Register(fanGraph(b, "fan", nil)); err != nil {
		b.Fatal(err)
	}
	input := fanInput(width)
	var elapsed time.Duration
	counts := &enginetest.OpCounts{}
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		e, err := engine.New(engine.Options{Registry: reg, Logger: quiet,
			Store:    enginetest.CountingStore{Store: memory.NewStore(), Counts: counts},
			Queue:    enginetest.CountingQueue{WorkQueue: memory.NewQueue(), Counts: counts},
			Payloads: enginetest.CountingPayloads{PayloadStore: memory.NewPayloadStore(), Counts: counts}})
		if err != nil {
			b.Fatal(err)
		}
		if err := e.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		ids := make([]string, runs)
		b.StartTimer()
		t0 := time.Now()
		for i := range ids {
			run, err := e.StartRun(context.Background(), engine.StartRunRequest{GraphName: "fan", Input: []byte(input)})
			if err != nil {
				b.Fatal(err)
			}
			ids[i] = run.InstanceID
		}
		for _, id := range ids {
			if run, err := e.WaitRun(context.Background(), id, func(r engine.Run) bool { return r.Status.Finished() }); err != nil || run.Status != engine.StatusCompleted {
				b.Fatalf("run %s: %s %v", id, run.Status, err)
			}
		}
		elapsed += time.Since(t0)
		b.StopTimer()
		_ = e.Close()
		b.StartTimer()
	}
	total := float64(runs * b.N)
	branches := total * float64(width)
	b.ReportMetric(total/elapsed.Seconds(), "runs/s")
	b.ReportMetric(branches/elapsed.Seconds(), "branches/s")
	b.ReportMetric(float64(counts.Table())/branches, "table-ops/branch")
	b.ReportMetric(float64(counts.Enqueues.Load())/branches, "enqueues/branch")
}

func BenchmarkEngine_FanOut10_20Runs(b *testing.B) { benchFanOut(b, 20, 10) }
func BenchmarkEngine_FanOut100_2Runs(b *testing.B) { benchFanOut(b, 2, 100) }
