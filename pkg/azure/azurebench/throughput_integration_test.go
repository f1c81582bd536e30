//go:build integration

package azurebench_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
)

// BenchmarkIntegrationConcurrent64 runs 64 loop runs at once on an engine with 64
// dispatcher workers and compares its node steps per second with Azurite's raw batch-commit
// rate: 64 goroutines each committing the same batch shape into its own partition, from the
// same process to the same table, in the same iteration. Target: ≥ 0.95×.
//
// The 64 runs are started before the dispatcher (a fresh engine on the same storage per
// iteration), so starting them is not timed and they all step at once. steps/s counts the
// node steps from Start to the moment the first run takes its last step (all 64 runs
// active); e2e-steps/s counts all steps from Start to the last run's last step.
func BenchmarkIntegrationConcurrent64(b *testing.B) {
	const runs, steps = 64, 40
	st := newStamps()
	env := storageEnv(b)
	reg := registry(b, loopGraph(b, st))
	opts := engine.Options{Registry: reg, Concurrency: runs}
	first := newAzureRig(b, env, st, opts, true)
	shape := shapeOf(b, first)
	_ = first.e.Close() // its dispatcher would take work items of the runs below
	var steady, e2e, raw float64
	var emptyReceives int64
	for b.Loop() {
		r := newAzureRig(b, env, st, opts, false)
		s, e := engine64(b, r, st, runs, steps)
		_ = r.e.Close()
		emptyReceives += r.counts.EmptyReceives.Load()
		steady += s
		e2e += e
		raw += raw64(b, newAzureRig(b, env, st, opts, false), shape, runs, steps)
	}
	n := float64(b.N)
	b.ReportMetric(steady/n, "steps/s")
	b.ReportMetric(e2e/n, "e2e-steps/s")
	b.ReportMetric(raw/n, "raw-commits/s")
	b.ReportMetric(steady/raw, "steps/raw")
	b.ReportMetric(e2e/raw, "e2e/raw")
	// Receives that found the queue empty: the dispatcher's one receiver makes them only
	// once the queue is drained, backing off to PollInterval (when each of the 64 workers
	// polled, Azurite handed some of them nothing and their runs started up to 2 s late).
	b.ReportMetric(float64(emptyReceives)/n, "empty-receives")
	b.ReportMetric(0, "ns/op")
}

// engine64 starts runs loop runs of steps steps on r's engine, then its dispatcher, waits
// for them, and returns the steady and the end-to-end step rates.
func engine64(b *testing.B, r *azureRig, st *stamps, runs, steps int) (steady, e2e float64) {
	b.Helper()
	st.reset()
	ids := make([]string, runs)
	input := fmt.Sprintf(`{"limit":%d,"pad":%q}`, steps, benchPad)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run, err := r.e.StartRun(context.Background(), engine.StartRunRequest{GraphName: "loop", Input: []byte(input)})
			if err != nil {
				b.Errorf("start: %v", err)
				return
			}
			ids[i] = run.InstanceID
		}()
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
	t0 := time.Now()
	if err := r.e.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	for _, id := range ids {
		select {
		case <-st.doneOf(id):
		case <-time.After(5 * time.Minute):
			b.Fatalf("run %s did not finish", id)
		}
	}
	r.settle(b)
	for _, id := range ids {
		r.check(b, id)
	}
	var first, last time.Time
	var all [][]time.Time
	for _, id := range ids {
		ts := st.of(id)
		if len(ts) < steps {
			b.Fatalf("run %s: %d node calls, want %d", id, len(ts), steps)
		}
		all = append(all, ts)
		end := ts[len(ts)-1]
		if first.IsZero() || end.Before(first) {
			first = end
		}
		if end.After(last) {
			last = end
		}
	}
	if testing.Verbose() {
		var spans []string
		for _, ts := range all {
			spans = append(spans, fmt.Sprintf("%d-%d", ts[0].Sub(t0).Milliseconds(), ts[len(ts)-1].Sub(t0).Milliseconds()))
		}
		b.Logf("run spans (ms after Start): %v", spans)
	}
	inWindow := 0
	for _, ts := range all {
		for _, t := range ts {
			if !t.After(first) {
				inWindow++
			}
		}
	}
	return float64(inWindow) / first.Sub(t0).Seconds(), float64(runs*steps) / last.Sub(t0).Seconds()
}

// raw64 runs committers goroutines each sending commits raw batches of shape into its own
// partition and returns the aggregate commit rate.
func raw64(b *testing.B, r *azureRig, shape rawShape, committers, commits int) float64 {
	b.Helper()
	ctx := context.Background()
	pks := make([]string, committers)
	for i := range pks {
		pks[i] = azuritetest.UniqueName("raw")
		if err := shape.seed(ctx, r.table, pks[i]); err != nil {
			b.Fatal(err)
		}
	}
	t0 := time.Now()
	var wg sync.WaitGroup
	for _, pk := range pks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range commits {
				if err := shape.commit(ctx, r.table, pk, i); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
	return float64(committers*commits) / time.Since(t0).Seconds()
}
