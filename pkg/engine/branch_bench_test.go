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
func benchFanOut(b *testing.B, runs, width int) { benchWidth(b, runs, width, 0, false) }

// benchWidth runs runs runs of width units of work per iteration, each unit a node visit that
// takes work (a tool call's latency; 0: none): as the branches of one fan-out, or, with
// sequential, as a chain of width nodes (the same work in sequence, the peer a fan-out is
// measured against).
func benchWidth(b *testing.B, runs, width int, work time.Duration, sequential bool) {
	b.ReportAllocs()
	reg := durable.NewRegistry()
	graph, input := "fan", fanInput(width)
	var g durable.Graph = fanGraph(b, "fan", func(ctx context.Context, s fanState) (any, error) {
		time.Sleep(work)
		return fanWork(ctx, s)
	})
	if sequential {
		graph, input = "seq", `{}`
		g = chainGraph(b, "seq", width, func(_ context.Context, s counterState) (any, error) {
			time.Sleep(work)
			return durable.Update{"n": s.N + 1}, nil
		})
	}
	if err := reg.Register(g); err != nil {
		b.Fatal(err)
	}
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
			run, err := e.StartRun(context.Background(), engine.StartRunRequest{GraphName: graph, Input: []byte(input)})
			if err != nil {
				b.Fatal(err)
			}
			ids[i] = run.InstanceID
		}
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
	branches := total * float64(width)
	b.ReportMetric(total/elapsed.Seconds(), "runs/s")
	b.ReportMetric(branches/elapsed.Seconds(), "branches/s")
	b.ReportMetric(float64(counts.Table())/branches, "table-ops/branch")
	b.ReportMetric(float64(counts.Enqueues.Load())/branches, "enqueues/branch")
}

// The same ten units of 20 ms work (a tool call each) as a fan-out and in sequence: the
// fan-out's wall time is about one unit's, the sequence's ten; the ratio of their runs/s is
// the figure to read, both measured in the same run.
func BenchmarkEngine_Width10_20msWork_FanOut(b *testing.B) {
	benchWidth(b, 4, 10, 20*time.Millisecond, false)
}
func BenchmarkEngine_Width10_20msWork_Sequence(b *testing.B) {
	benchWidth(b, 4, 10, 20*time.Millisecond, true)
}

// The same without work: what the fan-out's bookkeeping costs over a chain's steps.
func BenchmarkEngine_Width10_NoWork_FanOut(b *testing.B)   { benchWidth(b, 20, 10, 0, false) }
func BenchmarkEngine_Width10_NoWork_Sequence(b *testing.B) { benchWidth(b, 20, 10, 0, true) }

func BenchmarkEngine_FanOut10_20Runs(b *testing.B) { benchFanOut(b, 20, 10) }
func BenchmarkEngine_FanOut100_2Runs(b *testing.B) { benchFanOut(b, 2, 100) }
