//go:build integration

package azurebench_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
)

// shapeOf runs a short loop run on r and returns its steady step batch.
func shapeOf(b *testing.B, r *azureRig) rawShape {
	b.Helper()
	id, _ := r.run(b, "loop", fmt.Sprintf(`{"limit":12,"pad":%q}`, benchPad))
	shape := steadyShape(b, r.rec, id)
	r.rec.reset()
	return shape
}

// rawSequence seeds a fresh partition and sends n raw commits of shape one after another,
// returning the time each commit began (and a final stamp after the last one).
func rawSequence(b *testing.B, r *azureRig, shape rawShape, n int) []time.Time {
	b.Helper()
	ctx := context.Background()
	pk := azuritetest.UniqueName("raw")
	if err := shape.seed(ctx, r.table, pk); err != nil {
		b.Fatal(err)
	}
	ts := make([]time.Time, 0, n+1)
	for i := range n {
		ts = append(ts, time.Now())
		if err := shape.commit(ctx, r.table, pk, i); err != nil {
			b.Fatal(err)
		}
	}
	return append(ts, time.Now())
}

// storeSequence is rawSequence through the engine's Store (pkg/azure/tablestore), the head's
// If-Match chained from each reply's ETag as the engine does.
func storeSequence(b *testing.B, r *azureRig, shape rawShape, n int) []time.Time {
	b.Helper()
	ctx := context.Background()
	pk := azuritetest.UniqueName("store")
	var head engine.Op
	for _, op := range shape.ops {
		if op.Kind != engine.OpInsert {
			head = engine.Op{Kind: engine.OpInsert, Entity: engine.Entity{PartitionKey: pk, RowKey: op.Entity.RowKey, Properties: op.Entity.Properties}}
		}
	}
	etags, err := r.rec.Store.Submit(ctx, []engine.Op{head})
	if err != nil {
		b.Fatal(err)
	}
	etag := etags[0]
	ts := make([]time.Time, 0, n+1)
	for i := range n {
		ts = append(ts, time.Now())
		if etag, err = shape.storeCommit(ctx, r.rec.Store, pk, i, etag); err != nil {
			b.Fatal(err)
		}
	}
	return append(ts, time.Now())
}

// cpuTime returns the user + system CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkIntegrationStepLatency compares the mean time of a sequential node step (from one
// node handler call to the next: commit of node + route, then the next handler, all on one
// worker) with one raw aztables batch commit of the same shape sent from the same process
// to the same table (target: step ≤ 1.2× raw). A third series sends the same batch through
// pkg/azure/tablestore with the head's ETag chained, which splits the gap between the engine and
// the backend. The three series take turns within each iteration, in rotating order. The
// process's CPU time per step/commit is reported too: on two shared cores, Go CPU spent per
// step is latency Azurite waits for.
func BenchmarkIntegrationStepLatency(b *testing.B) {
	const steps, from, to = 130, 20, 120
	st := newStamps()
	r := newAzureRig(b, storageEnv(b), st, engine.Options{Registry: registry(b, loopGraph(b, st)), Concurrency: 1}, true)
	shape := shapeOf(b, r)
	b.Logf("step batch: %s", shape.describe())
	var step, raw, store, stepCPU, rawCPU, storeCPU time.Duration
	phases := []func(){
		func() {
			st.reset()
			c0 := cpuTime()
			id, _ := r.run(b, "loop", fmt.Sprintf(`{"limit":%d,"pad":%q}`, steps, benchPad))
			stepCPU += (cpuTime() - c0) / steps
			ts := st.of(id)
			if len(ts) < to+1 {
				b.Fatalf("run %s: %d node calls, want %d", id, len(ts), steps)
			}
			step += meanStep(ts, from, to)
		},
		func() {
			c0 := cpuTime()
			raw += meanStep(rawSequence(b, r, shape, steps), from, to)
			rawCPU += (cpuTime() - c0) / steps
		},
		func() {
			c0 := cpuTime()
			store += meanStep(storeSequence(b, r, shape, steps), from, to)
			storeCPU += (cpuTime() - c0) / steps
		},
	}
	i := 0
	for b.Loop() {
		for j := range phases {
			phases[(i+j)%len(phases)]()
		}
		i++
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) / 1000 }
	b.ReportMetric(ms(step), "ms/step")
	b.ReportMetric(ms(raw), "ms/raw-commit")
	b.ReportMetric(ms(store), "ms/store-commit")
	b.ReportMetric(float64(step)/float64(raw), "step/raw")
	b.ReportMetric(float64(store)/float64(raw), "store/raw")
	b.ReportMetric(ms(stepCPU), "cpu-ms/step")
	b.ReportMetric(ms(rawCPU), "cpu-ms/raw-commit")
	b.ReportMetric(ms(storeCPU), "cpu-ms/store-commit")
	b.ReportMetric(float64(len(shape.ops)), "ops/batch")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkIntegrationStepAt10VsAt1000 runs one 1 100-step run and compares the mean step
// time of steps 10–110 with steps 1 000–1 100 (target ≤ 1.2×). The peer is 1 100 raw batch
// commits of the same shape into one partition, over the same windows: it shows how much of
// any growth is Azurite's own (a partition and a table that grow) rather than the engine's.
func BenchmarkIntegrationStepAt10VsAt1000(b *testing.B) {
	const steps = 1100
	st := newStamps()
	r := newAzureRig(b, storageEnv(b), st, engine.Options{Registry: registry(b, loopGraph(b, st)), Concurrency: 1, MaxSteps: 2 * steps}, true)
	shape := shapeOf(b, r)
	var early, late, rawEarly, rawLate time.Duration
	// The step time along the run, for the benchmarks page's chart: 100-step windows from these steps.
	windows := []int{10, 100, 250, 500, 750, 1000}
	along, rawAlong := make([]time.Duration, len(windows)), make([]time.Duration, len(windows))
	for b.Loop() {
		st.reset()
		id, _ := r.run(b, "loop", fmt.Sprintf(`{"limit":%d,"pad":%q}`, steps+1, benchPad))
		ts := st.of(id)
		if len(ts) < steps+1 {
			b.Fatalf("run %s: %d node calls, want %d", id, len(ts), steps+1)
		}
		early += meanStep(ts, 10, 110)
		late += meanStep(ts, 1000, 1100)
		raw := rawSequence(b, r, shape, steps)
		rawEarly += meanStep(raw, 10, 110)
		rawLate += meanStep(raw, 1000, 1100)
		for i, w := range windows {
			along[i] += meanStep(ts, w, w+100)
			rawAlong[i] += meanStep(raw, w, w+100)
		}
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) / 1000 }
	b.ReportMetric(ms(early), "ms/step@10")
	b.ReportMetric(ms(late), "ms/step@1000")
	b.ReportMetric(float64(late)/float64(early), "step@1000/step@10")
	b.ReportMetric(float64(rawLate)/float64(rawEarly), "raw@1000/raw@10")
	for i, w := range windows {
		b.ReportMetric(ms(along[i]), fmt.Sprintf("ms/step-window@%d", w))
		b.ReportMetric(ms(rawAlong[i]), fmt.Sprintf("ms/raw-window@%d", w))
	}
	b.ReportMetric(0, "ns/op")
}
