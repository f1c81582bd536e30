//go:build integration

package azurebench_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/internal/procmem"
	"github.com/funcgraph/funcgraph/pkg/launch"
)

// BenchmarkIntegrationWorkerRSS_WaitingRuns measures the memory of a standalone worker
// process (`funcgraph serve` on Azurite, the binary `make bench-azure` builds, its embedded
// dispatcher running) that has taken 10 000 support_agent refund runs to their wait for the
// "approval" event. Target: ≤ 100 MB RSS. The peer is the same process idle, before any run.
//
// The runs are started from this process by an engine on the same storage that runs no
// dispatcher, so the worker's memory holds only what serving the runs costs it. The worker
// runs with GODEBUG=gctrace=1; its live heap after its last GC is read from that trace.
// FUNCGRAPH_BENCH_WAITING_RUNS overrides the number of runs: Azurite takes runs to their
// wait ever more slowly as its table grows (about 6 runs/s past 5 000 on two cores, Azurite's
// CPU saturated and the worker's idle), so `make bench-azure` asks for fewer by default.
// The worker's RSS is sampled every 10 s while it works and logged, to show its course.
func BenchmarkIntegrationWorkerRSS_WaitingRuns(b *testing.B) {
	runs, bin, err := procmem.BenchSettings(10000, "bench-azure")
	if err != nil {
		b.Fatal(err)
	}
	var idle, waiting, settled, peak, heap float64
	for range b.N {
		env := storageEnv(b)
		w := startWorker(b, bin, env)
		time.Sleep(2 * time.Second)
		idle += w.rssMB("VmRSS")
		starter := newAzureRig(b, env, newStamps(), engine.Options{Registry: registry(b, exampleGraphs(b)...)}, false)
		t0 := time.Now()
		ids := startWaitingRuns(b, starter, w, runs)
		b.Logf("%d runs started in %s", runs, time.Since(t0).Round(time.Millisecond))
		drainQueue(b, starter, w, runs)
		b.Logf("worker took them to their wait in %s", time.Since(t0).Round(time.Millisecond))
		waiting += w.rssMB("VmRSS")
		peak += w.rssMB("VmHWM")
		heap += w.lastHeapMB(b)
		checkWaiting(b, starter, ids)
		time.Sleep(5 * time.Second)
		settled += w.rssMB("VmRSS")
		w.stop()
	}
	n := float64(b.N)
	b.ReportMetric(idle/n, "idle-RSS-MB")
	b.ReportMetric(waiting/n, "RSS-MB")
	b.ReportMetric(settled/n, "RSS-MB-5s-later")
	b.ReportMetric(peak/n, "peak-RSS-MB")
	b.ReportMetric(heap/n, "live-heap-MB")
	b.ReportMetric(waiting/idle, "RSS/idle")
	b.ReportMetric(float64(runs), "runs")
	b.ReportMetric(0, "ns/op")
}

func exampleGraphs(b *testing.B) []durable.Graph {
	b.Helper()
	gs, err := examples.All()
	if err != nil {
		b.Fatal(err)
	}
	return gs
}

// startWaitingRuns starts n support_agent refund runs (32 at a time) and returns their ids.
func startWaitingRuns(b *testing.B, r *azureRig, w *worker, n int) []string {
	b.Helper()
	ids := make([]string, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || b.Failed() {
					return
				}
				if i%1000 == 0 && i > 0 {
					b.Logf("%d runs started; worker RSS %.1f MB", i, w.rssMB("VmRSS"))
				}
				run, err := r.e.StartRun(context.Background(), engine.StartRunRequest{GraphName: "support_agent",
					Input: []byte(fmt.Sprintf(`{"user_message":"I want a refund for order %d"}`, i))})
				if err != nil {
					b.Errorf("start run %d: %v", i, err)
					return
				}
				ids[i] = run.InstanceID
			}
		}()
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
	return ids
}

// drainQueue waits until the work queue is empty: every work item received and deleted, so
// every run has taken its first step.
func drainQueue(b *testing.B, r *azureRig, w *worker, n int) {
	b.Helper()
	q := r.queue
	deadline := time.Now().Add(10 * time.Minute)
	if d := time.Duration(n) * 200 * time.Millisecond; d > 10*time.Minute {
		deadline = time.Now().Add(d)
	}
	lastLog := time.Now()
	for {
		props, err := q.GetProperties(context.Background(), nil)
		if err != nil {
			b.Fatal(err)
		}
		if props.ApproximateMessagesCount != nil && *props.ApproximateMessagesCount == 0 {
			return
		}
		if time.Now().After(deadline) || w.Exited() {
			b.Fatalf("work queue not drained (%d left); worker log:\n%s", *props.ApproximateMessagesCount, w.tail())
		}
		if time.Since(lastLog) >= 10*time.Second {
			lastLog = time.Now()
			b.Logf("%d work items left; worker RSS %.1f MB", *props.ApproximateMessagesCount, w.rssMB("VmRSS"))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// checkWaiting fails unless every run waits for its approval event.
func checkWaiting(b *testing.B, r *azureRig, ids []string) {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(ids) || b.Failed() {
					return
				}
				run, err := r.e.GetRun(context.Background(), ids[i])
				if err != nil || run.RuntimeStatus.Finished() || !engine.RunSettled(run) {
					b.Errorf("run %s is not waiting: %s %s %v", ids[i], run.RuntimeStatus, run.CustomStatus, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
}

// worker is the `funcgraph serve` process under measure.
type worker struct{ *procmem.Server }

func startWorker(b *testing.B, bin string, env map[string]string) *worker {
	b.Helper()
	s, err := procmem.StartServer(bin, "FUNCGRAPH_FUNCTION_KEY=bench-key", "FUNCGRAPH_LOG_LEVEL=warn", "FUNCTIONS_CUSTOMHANDLER_PORT=",
		launch.EnvStorage+"="+env[launch.EnvStorage], launch.EnvStoragePrefix+"="+env[launch.EnvStoragePrefix])
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Stop)
	return &worker{s}
}

func (w *worker) stop() { w.Stop() }

func (w *worker) tail() string { return w.Tail() }

// rssMB reads a memory field (VmRSS, VmHWM) of the worker from /proc, in MB (10^6 bytes).
func (w *worker) rssMB(field string) float64 { return w.MB(field) }

// lastHeapMB returns the live heap after the worker's last GC, in MB.
func (w *worker) lastHeapMB(b *testing.B) float64 {
	mb, line, ok := w.LiveHeapMB()
	if !ok {
		b.Log("no gctrace line in the worker's output")
		return -1
	}
	b.Logf("worker's last GC: %s", line)
	return mb
}
