package exampleapp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/exampleapp"
	"github.com/funcgraph/funcgraph/pkg/launch"
	"github.com/funcgraph/funcgraph/pkg/membudget"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// BenchmarkEmbeddedDefault_BytesPerItem measures what the embedded default holds per run and
// per thread of a few shapes, on the stores launch builds without storage (a budget of
// 1 GiB, so nothing is refused): the bytes its memory budget accounts per item, the live
// heap per item (runtime.MemStats.HeapAlloc after a collection, above the empty app's), their
// ratio, and how many such items the default budget (128 MiB) admits as new work (7/8 of
// it). docs/limits.md#memory-budget quotes its figures.
func BenchmarkEmbeddedDefault_BytesPerItem(b *testing.B) {
	big := strings.Repeat("x", 1<<20-200)
	shapes := []struct {
		name string
		n    int
		add  func(ctx context.Context, app *exampleapp.App, s launch.Settings, i int) error
	}{
		{"waiting-run-1MiB-input", 20, func(ctx context.Context, app *exampleapp.App, _ launch.Settings, i int) error {
			return startSettled(ctx, app, "support_agent", fmt.Sprint("w", i), `{"user_message":"refund `+big+`"}`)
		}},
		{"finished-run-1MiB-input", 20, func(ctx context.Context, app *exampleapp.App, _ launch.Settings, i int) error {
			return startSettled(ctx, app, "data_pipeline", fmt.Sprint("f", i), `{"source_url":"`+big+`"}`)
		}},
		{"waiting-run-small", 2000, func(ctx context.Context, app *exampleapp.App, _ launch.Settings, i int) error {
			return startSettled(ctx, app, "support_agent", fmt.Sprint("ws", i), `{"user_message":"I want a refund"}`)
		}},
		{"finished-run-small", 2000, func(ctx context.Context, app *exampleapp.App, _ launch.Settings, i int) error {
			return startSettled(ctx, app, "data_pipeline", fmt.Sprint("fs", i), `{"source_url":"https://example.com/data"}`)
		}},
		{"thread-250KiB-metadata", 100, func(ctx context.Context, _ *exampleapp.App, s launch.Settings, i int) error {
			now := time.Now()
			return s.Threads.Create(ctx, threads.Thread{ThreadID: fmt.Sprint("tm", i), CreatedAt: now, UpdatedAt: now,
				Status: threads.StatusIdle, Metadata: map[string]any{"pad": strings.Repeat("p", 250<<10)}})
		}},
		{"thread-small", 5000, func(ctx context.Context, _ *exampleapp.App, s launch.Settings, i int) error {
			now := time.Now()
			return s.Threads.Create(ctx, threads.Thread{ThreadID: fmt.Sprint("ts", i), CreatedAt: now, UpdatedAt: now,
				Status: threads.StatusIdle, Metadata: map[string]any{"owner": "alice", "topic": "refund"}})
		}},
	}
	for _, sh := range shapes {
		b.Run(sh.name, func(b *testing.B) {
			var accounted, heap float64
			for range b.N {
				env := map[string]string{"FUNCGRAPH_MEMORY_BUDGET": "1GiB", "FUNCGRAPH_MEMORY_MAX_RUNS": "0"}
				logger := slog.New(slog.DiscardHandler)
				s, err := launch.FromEnv(b.Context(), func(k string) string { return env[k] }, launch.ModeServe, logger)
				if err != nil {
					b.Fatal(err)
				}
				app, err := exampleapp.Build(exampleapp.Config{Logger: logger, Durable: s.Durable, PlatformThreads: s.Threads, Checkpointer: s.Checkpoints,
					MemoryBudget: s.MemoryBudget})
				if err != nil {
					b.Fatal(err)
				}
				if err := app.Start(b.Context()); err != nil {
					b.Fatal(err)
				}
				ctx := membudget.NewWork(b.Context(), "")
				heap0, used0 := liveHeap(), s.MemoryBudget.Used()
				for i := range sh.n {
					if err := sh.add(ctx, app, s, i); err != nil {
						b.Fatal(err)
					}
				}
				heap += float64(liveHeap()-heap0) / float64(sh.n)
				accounted += float64(s.MemoryBudget.Used()-used0) / float64(sh.n)
				_ = app.Close()
			}
			n := float64(b.N)
			b.ReportMetric(accounted/n, "accounted-B/item")
			b.ReportMetric(heap/n, "heap-B/item")
			b.ReportMetric(heap/accounted, "heap/accounted")
			b.ReportMetric(float64(128<<20-128<<20/8)/(accounted/n), "items/default-budget")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// startSettled starts a run and waits until it finishes or waits for an event.
func startSettled(ctx context.Context, app *exampleapp.App, graph, id, input string) error {
	if _, err := app.Engine.StartRun(ctx, engine.StartRunRequest{GraphName: graph, InstanceID: id, Input: json.RawMessage(input)}); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	_, err := app.Engine.WaitRun(wctx, id, engine.RunSettled)
	return err
}

// liveHeap returns the live heap after two collections.
func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
