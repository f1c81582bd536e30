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
// same process to the same table, in the same iteration. Target: ≥ 0.8×.
//
// steps/s counts the steady window, from the moment every run has taken its second step to
// the moment the first run takes its last, so run starts and completions (a few operations
// per run, not per step) do not dilute it; e2e-steps/s counts from the first StartRun to the
// last completion.
func BenchmarkIntegrationConcurrent64(b *testing.B) {
	const runs, steps = 64, 40
	st := newStamps()
	r := newAzureRig(b, storageEnv(b), st, engine.EngineOptions{Registry: registry(b, loopGraph(b, st)), Concurrency: runs}, true)
	shape := shapeOf(b, r)
	var steady, e2e, raw float64
	for b.Loop() {
		s, e := engine64(b, r, st, runs, steps)
		steady += s
		e2e += e
		raw += raw64(b, r, shape, runs, steps)
	}
	n := float64(b.N)
	b.ReportMetric(steady/n, "steps/s")
	b.ReportMetric(e2e/n, "e2e-steps/s")
	b.ReportMetric(raw/n, "raw-commits/s")
	b.ReportMetric(steady/raw, "steps/raw")
	b.ReportMetric(e2e/raw, "e2e/raw")
	b.ReportMetric(0, "ns/op")
}

// engine64 starts runs loop runs of steps steps at once, waits for them, and returns the
// steady and the end-to-end step rates.
func engine64(b *testing.B, r *azureRig, st *stamps, runs, steps int) (steady, e2e float64) {
	b.Helper()
	st.reset()
	ids := make([]string, runs)
	input := fmt.Sprintf(`{"limit":%d,"pad":%q}`, steps, benchPad)
	t0 := time.Now()
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
			select {
			case <-st.doneOf(run.InstanceID):
			case <-time.After(5 * time.Minute):
				b.Errorf("run %s did not finish", run.InstanceID)
			}
		}()
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
	elapsed := time.Since(t0)
	r.settle(b)
	for _, id := range ids {
		r.check(b, id)
	}
	var from, to time.Time
	var all [][]time.Time
	for _, id := range ids {
		ts := st.of(id)
		if len(ts) < steps {
			b.Fatalf("run %s: %d node calls, want %d", id, len(ts), steps)
		}
		all = append(all, ts)
		if ts[1].After(from) {
			from = ts[1]
		}
		if last := ts[len(ts)-1]; to.IsZero() || last.Before(to) {
			to = last
		}
	}
	e2e = float64(runs*steps) / elapsed.Seconds()
	if !to.After(from) {
		b.Logf("no steady window (runs did not overlap): reporting end to end")
		return e2e, e2e
	}
	inWindow := 0
	for _, ts := range all {
		for _, t := range ts {
			if !t.Before(from) && t.Before(to) {
				inWindow++
			}
		}
	}
	return float64(inWindow) / to.Sub(from).Seconds(), e2e
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
