//go:build integration

package azurebench_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// opsRun is the storage operations of one whole run.
type opsRun struct {
	batches, reads, queue, payload int64
}

func (o opsRun) minus(p opsRun) opsRun {
	return opsRun{o.batches - p.batches, o.reads - p.reads, o.queue - p.queue, o.payload - p.payload}
}

func opsOf(c *enginetest.OpCounts) opsRun {
	return opsRun{
		batches: c.Submits.Load(), reads: c.Gets.Load() + c.Queries.Load(),
		queue: c.Queue(), payload: c.Payload(),
	}
}

// BenchmarkIntegrationOpsPerStep counts the table and queue operations of a steady node step
// of a chain run on the Azure backends: a 23-step chain run minus a 3-step one, per extra
// step. Target: 1 table batch and at most 1 queue operation per step. The peer is the same
// pair of runs on the in-memory backends in the same process, whose counts show what the
// engine itself asks for: an Azure count above it would be a backend adding operations (such
// as re-reading a head whose ETag a batch reply did not give).
func BenchmarkIntegrationOpsPerStep(b *testing.B) {
	const short, long = 3, 23
	st := newStamps()
	reg := registry(b, chainGraph(b, st, short), chainGraph(b, st, long))
	az := newAzureRig(b, storageEnv(b), st, engine.Options{Registry: reg}, true)
	memCounts := &enginetest.OpCounts{}
	mem, err := engine.New(engine.Options{
		Registry: reg, SweepInterval: -1,
		Store:    enginetest.CountingStore{Store: memory.NewStore(), Counts: memCounts},
		Queue:    enginetest.CountingQueue{WorkQueue: memory.NewQueue(), Counts: memCounts},
		Payloads: enginetest.CountingPayloads{PayloadStore: memory.NewPayloadStore(), Counts: memCounts},
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := mem.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = mem.Close() })
	memRig := &azureRig{e: mem, st: st, counts: memCounts}

	measure := func(r *azureRig, k int) opsRun {
		r.settle(b)
		r.counts.Reset()
		_, ops := r.run(b, chainName(k), `{}`)
		return ops
	}
	var azSteady, memSteady, azWhole opsRun
	for b.Loop() {
		a3, a23 := measure(az, short), measure(az, long)
		m3, m23 := measure(memRig, short), measure(memRig, long)
		azSteady = add(azSteady, a23.minus(a3))
		memSteady = add(memSteady, m23.minus(m3))
		azWhole = add(azWhole, a3)
	}
	per := func(v int64) float64 { return float64(v) / float64(b.N*(long-short)) }
	b.ReportMetric(per(azSteady.batches), "table-batches/step")
	b.ReportMetric(per(azSteady.reads), "table-reads/step")
	b.ReportMetric(per(azSteady.queue), "queue-ops/step")
	b.ReportMetric(per(azSteady.payload), "blob-ops/step")
	b.ReportMetric(per(memSteady.batches+memSteady.reads), "mem-table-ops/step")
	b.ReportMetric(per(memSteady.queue), "mem-queue-ops/step")
	whole := func(v int64) float64 { return float64(v) / float64(b.N) }
	b.ReportMetric(whole(azWhole.batches+azWhole.reads), "table-ops/3-step-run")
	b.ReportMetric(whole(azWhole.queue), "queue-ops/3-step-run")
	b.ReportMetric(0, "ns/op")
}

func add(a, b opsRun) opsRun {
	return opsRun{a.batches + b.batches, a.reads + b.reads, a.queue + b.queue, a.payload + b.payload}
}

func chainName(k int) string { return "chain" + strconv.Itoa(k) }
