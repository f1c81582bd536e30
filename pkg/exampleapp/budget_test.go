package exampleapp_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/exampleapp"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/isolation"
	"github.com/funcgraph/funcgraph/pkg/launch"
	"github.com/funcgraph/funcgraph/pkg/membudget"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// embedded is the example app on the embedded default as `make run` builds it (launch.FromEnv
// without AzureWebJobsStorage), served on one transport.
type embedded struct {
	app      *exampleapp.App
	settings launch.Settings
	tr       funchosttest.Transport
}

// embeddedApps returns, for each transport, a fresh example app on the embedded default with
// env's settings (isolation: on, believing X-MS-CLIENT-PRINCIPAL-ID from loopback).
func embeddedApps(t *testing.T, env map[string]string, isolated bool) []embedded {
	t.Helper()
	var out []embedded
	for i := range 2 {
		e := map[string]string{}
		for k, v := range env {
			e[k] = v
		}
		if isolated {
			e["FUNCGRAPH_USER_ISOLATION"] = "on"
			e["FUNCGRAPH_IDENTITY_HEADER"] = isolation.PrincipalIDHeader
			e["FUNCGRAPH_TRUSTED_PROXIES"] = "127.0.0.1/32"
		}
		logger := slog.New(slog.DiscardHandler)
		s, err := launch.FromEnv(t.Context(), func(k string) string { return e[k] }, launch.ModeServe, logger)
		if err != nil {
			t.Fatal(err)
		}
		if s.MemoryBudget == nil {
			t.Fatal("the embedded default has no memory budget")
		}
		app, err := exampleapp.Build(exampleapp.Config{Logger: logger, Durable: s.Durable, PlatformThreads: s.Threads,
			Checkpointer: s.Checkpoints, Isolation: s.Isolation, MemoryBudget: s.MemoryBudget})
		if err != nil {
			t.Fatal(err)
		}
		if err := app.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = app.Close() })
		out = append(out, embedded{app: app, settings: s, tr: funchosttest.Transports(t, app.FunctionApp)[i]})
	}
	return out
}

// parallel calls fn(i) for i in [0, n) on 8 goroutines.
func parallel(n int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				fn(i)
			}
		})
	}
	wg.Wait()
}

// support_agent runs with 1 MiB inputs, each waiting forever for its approval, started 8 at a
// time until the default budget refuses them: past the budget the starts answer 507 in the runs
// API's shape, the accounted bytes never pass the budget, and every run admitted is kept,
// waiting.
//
// Under the race detector the budget is 32 MiB instead of the default 128 MiB: the same starts
// on the same goroutines, refused the same way, at a quarter of the bytes. `make test` also runs
// this test without the race detector, at the default budget.
func TestEmbeddedDefault_WaitingRunsWithLargeInputs_RefusedPastTheBudget(t *testing.T) {
	var env map[string]string
	if raceEnabled {
		env = map[string]string{"FUNCGRAPH_MEMORY_BUDGET": "32MiB"}
	}
	for _, e := range embeddedApps(t, env, false) {
		t.Run(e.tr.Name, func(t *testing.T) {
			b := e.settings.MemoryBudget
			total := b.Limits().Total
			msg := strings.Repeat("r", 1<<20-200)
			// A run holds at least its input, so no more than total/len(msg) runs fit: within
			// maxStarts the budget must have refused wantRefused starts, after which no more
			// are sent (each refusal proves the same; the first runs admitted prove the rest).
			const wantRefused = 16
			maxStarts := int(total/int64(len(msg))) + wantRefused
			var mu sync.Mutex
			var admitted []string
			var started, refused atomic.Int64
			var peak atomic.Int64
			parallel(maxStarts, func(i int) {
				if refused.Load() >= wantRefused {
					return
				}
				started.Add(1)
				id := fmt.Sprint("big-", i)
				code, body := do(t, e.tr, "POST", "/api/graphs/support_agent/runs",
					`{"instance_id":"`+id+`","input":{"user_message":"refund `+msg+`"}}`)
				switch {
				case code == 202:
					mu.Lock()
					admitted = append(admitted, id)
					mu.Unlock()
				case code == 507 && body == `{"error": "`+apierror.StorageFullMessage+`"}`:
					refused.Add(1)
				default:
					t.Errorf("start %s: %d %.200s", id, code, body)
				}
				if used := b.Used(); used > peak.Load() {
					peak.Store(used)
				}
			})
			for _, id := range admitted {
				run, err := e.app.Engine.WaitRun(t.Context(), id, engine.RunSettled)
				if err != nil || run.RuntimeStatus != engine.StatusRunning || run.CustomStatus == nil {
					t.Fatalf("admitted run %s: %v %s %s, want waiting", id, err, run.RuntimeStatus, run.CustomStatus)
				}
			}
			if used := b.Used(); used > peak.Load() {
				peak.Store(used)
			}
			if len(admitted) == 0 || refused.Load() < wantRefused || int64(len(admitted))+refused.Load() != started.Load() {
				t.Fatalf("%d admitted, %d refused of %d starts, want some admitted, at least %d refused, none lost",
					len(admitted), refused.Load(), started.Load(), wantRefused)
			}
			if peak.Load() > total {
				t.Fatalf("accounted bytes reached %d, past the budget of %d", peak.Load(), total)
			}
			t.Logf("%d runs admitted, %d refused 507; accounted %d of %d bytes (%.0f%%), %d bytes a run",
				len(admitted), refused.Load(), b.Used(), total, 100*float64(b.Used())/float64(total), b.Used()/int64(len(admitted)))
		})
	}
}

// Under isolation, eve's 10 050 threads never drop alice's: alice's thread answers her
// invoke, and bob cannot re-claim its id.
func TestEmbeddedDefault_Isolation_OneIdentitysThreadsKeepAnothers(t *testing.T) {
	for _, e := range embeddedApps(t, nil, true) {
		t.Run(e.tr.Name, func(t *testing.T) {
			key := e.tr.FunctionKey
			if code, body := doAs(t, e.tr, "alice", key, "POST", "/api/threads", `{"thread_id":"alice-thread"}`); code != 200 {
				t.Fatalf("alice create thread: %d %s", code, body)
			}
			// eve's first threads go to the store directly, as her creates write them (owner
			// eve, counted against her); the 50 after them go through the route. Past her
			// share of the bound (a quarter) each drops one of her own.
			ctx, now := membudget.NewWork(t.Context(), "eve"), time.Now()
			for i := range threads.DefaultMemoryMaxThreads - 1 {
				if err := e.settings.Threads.Create(ctx, threads.Thread{ThreadID: fmt.Sprint("eve-", i), CreatedAt: now, UpdatedAt: now,
					Status: threads.StatusIdle, Metadata: map[string]any{isolation.OwnerKey: "eve"}}); err != nil {
					t.Fatalf("eve's thread %d: %v", i, err)
				}
			}
			parallel(50, func(i int) {
				i += threads.DefaultMemoryMaxThreads
				if code, body := doAs(t, e.tr, "eve", key, "POST", "/api/threads", fmt.Sprintf(`{"thread_id":"eve-%d"}`, i)); code != 200 {
					t.Errorf("eve create thread %d: %d %s", i, code, body)
				}
			})
			if n, err := e.settings.Threads.Count(t.Context(), threads.Query{}); err != nil || n != 1+threads.DefaultMemoryMaxThreads/4 {
				t.Fatalf("the store holds %d threads (%v), want alice's and eve's share %d", n, err, threads.DefaultMemoryMaxThreads/4)
			}
			if code, body := doAs(t, e.tr, "alice", key, "GET", "/api/threads/alice-thread", ""); code != 200 {
				t.Fatalf("alice's thread after eve's load: %d %s", code, body)
			}
			if code, body := doAs(t, e.tr, "alice", key, "POST", "/api/graphs/echo_agent/invoke",
				`{"input":{"messages":[{"role":"user","content":"still here"}]},"config":{"configurable":{"thread_id":"alice-thread"}}}`); code != 200 {
				t.Fatalf("alice's invoke after eve's load: %d %s", code, body)
			}
			if code, body := doAs(t, e.tr, "bob", key, "POST", "/api/threads", `{"thread_id":"alice-thread"}`); code != 409 {
				t.Fatalf("bob re-claims alice's thread id: %d %s", code, body)
			}
		})
	}
}

// Under isolation, eve's finished runs past FUNCGRAPH_MEMORY_MAX_RUNS (a count per identity;
// 200 here, 1 000 by default) never make retention purge alice's run; eve keeps her newest 200.
func TestEmbeddedDefault_Isolation_OneIdentitysRunsKeepAnothers(t *testing.T) {
	const maxRuns, eveRuns = 200, 220
	for _, e := range embeddedApps(t, map[string]string{"FUNCGRAPH_MEMORY_MAX_RUNS": fmt.Sprint(maxRuns)}, true) {
		t.Run(e.tr.Name, func(t *testing.T) {
			key := e.tr.FunctionKey
			start := func(owner, id string) {
				if code, body := doAs(t, e.tr, owner, key, "POST", "/api/graphs/data_pipeline/runs",
					`{"instance_id":"`+id+`","input":{"source_url":"s"}}`); code != 202 {
					t.Errorf("%s start %s: %d %s", owner, id, code, body)
				}
			}
			start("alice", "alice-run")
			waitFinished(t, e.app, "alice-run")
			parallel(eveRuns, func(i int) { start("eve", fmt.Sprint("eve-", i)) })
			parallel(eveRuns, func(i int) { waitFinished(t, e.app, fmt.Sprint("eve-", i)) })
			if _, err := e.app.Engine.Sweep(t.Context()); err != nil {
				t.Fatal(err)
			}
			if code, body := doAs(t, e.tr, "alice", key, "GET", "/api/runs/alice-run", ""); code != 200 {
				t.Fatalf("alice's run after eve's load and a sweep: %d %s", code, body)
			}
			kept := 0
			for i := range eveRuns {
				if _, err := e.app.Engine.GetRun(t.Context(), fmt.Sprint("eve-", i)); err == nil {
					kept++
				}
			}
			if kept > maxRuns || kept < maxRuns*9/10 {
				t.Fatalf("eve keeps %d of her %d runs, want about %d", kept, eveRuns, maxRuns)
			}
		})
	}
}

// Under isolation one identity past its share is refused 507 on every surface (a run, a
// thread, a hosted graph's checkpoint) while another identity is admitted.
func TestEmbeddedDefault_Isolation_ShareFull_Refused507WhileOthersAdmitted(t *testing.T) {
	env := map[string]string{"FUNCGRAPH_MEMORY_BUDGET": "64MiB", "FUNCGRAPH_MEMORY_BUDGET_PER_IDENTITY": "4MiB"}
	for _, e := range embeddedApps(t, env, true) {
		t.Run(e.tr.Name, func(t *testing.T) {
			key := e.tr.FunctionKey
			msg := strings.Repeat("m", 200<<10)
			if code, body := doAs(t, e.tr, "eve", key, "POST", "/api/threads", `{"thread_id":"eve-platform"}`); code != 200 {
				t.Fatalf("eve create thread: %d %s", code, body)
			}
			if code, body := doAs(t, e.tr, "eve", key, "POST", "/api/threads/eve-platform/runs/wait",
				`{"assistant_id":"data_pipeline","input":{"source_url":"s"}}`); code != 200 {
				t.Fatalf("eve's first platform run: %d %.300s", code, body)
			}
			full := 0
			for i := 0; full == 0 && i < 100; i++ {
				code, body := doAs(t, e.tr, "eve", key, "POST", "/api/graphs/support_agent/runs",
					fmt.Sprintf(`{"instance_id":"eve-%d","input":{"user_message":"refund %s"}}`, i, msg))
				switch code {
				case 202:
				case 507:
					if body != `{"error": "`+apierror.IdentityStorageFullMessage+`"}` {
						t.Fatalf("runs API 507 body: %s", body)
					}
					full = i
				default:
					t.Fatalf("eve start %d: %d %.200s", i, code, body)
				}
			}
			if full == 0 {
				t.Fatal("eve never refused")
			}
			if code, body := doAs(t, e.tr, "eve", key, "POST", "/api/threads/eve-platform/runs/wait",
				`{"assistant_id":"data_pipeline","input":{"source_url":"`+msg+`"}}`); code != 507 || body != `{"detail": "`+apierror.IdentityStorageFullMessage+`"}` {
				t.Fatalf("eve's platform run past her share: %d %.300s", code, body)
			}
			if code, body := doAs(t, e.tr, "eve", key, "POST", "/api/threads",
				`{"thread_id":"eve-big","metadata":{"pad":"`+strings.Repeat("p", 200<<10)+`"}}`); code != 507 || body != `{"detail": "`+apierror.IdentityStorageFullMessage+`"}` {
				t.Fatalf("eve's thread past her share: %d %.300s", code, body)
			}
			if code, body := doAs(t, e.tr, "eve", key, "POST", "/api/graphs/echo_agent/invoke",
				`{"input":{"messages":[{"role":"user","content":"`+msg+`"}]},"config":{"configurable":{"thread_id":"eve-chat"}}}`); code != 507 || !strings.Contains(body, apierror.IdentityStorageFullMessage) {
				t.Fatalf("eve's checkpoint past her share: %d %.300s", code, body)
			}
			if code, body := doAs(t, e.tr, "alice", key, "POST", "/api/graphs/support_agent/runs",
				`{"instance_id":"alice-0","input":{"user_message":"refund `+msg+`"}}`); code != 202 {
				t.Fatalf("alice refused while eve is full: %d %.300s", code, body)
			}
			if code, body := doAs(t, e.tr, "alice", key, "POST", "/api/graphs/echo_agent/invoke",
				`{"input":{"messages":[{"role":"user","content":"hello"}]},"config":{"configurable":{"thread_id":"alice-chat"}}}`); code != 200 {
				t.Fatalf("alice's invoke while eve is full: %d %.300s", code, body)
			}
			// carol's own turns fill her share with checkpoints: the turn past it is refused,
			// and her conversation so far is kept.
			turns := 0
			for ; turns < 100; turns++ {
				code, body := doAs(t, e.tr, "carol", key, "POST", "/api/graphs/echo_agent/invoke",
					`{"input":{"messages":[{"role":"user","content":"`+msg+`"}]},"config":{"configurable":{"thread_id":"carol-chat"}}}`)
				if code == 507 {
					if !strings.Contains(body, apierror.IdentityStorageFullMessage) {
						t.Fatalf("carol's checkpoint past her share: %.300s", body)
					}
					break
				}
				if code != 200 {
					t.Fatalf("carol turn %d: %d %.300s", turns, code, body)
				}
			}
			if turns == 0 || turns == 100 {
				t.Fatalf("carol refused after %d turns, want after some", turns)
			}
			if code, body := doAs(t, e.tr, "carol", key, "GET", "/api/graphs/echo_agent/threads/carol-chat/state", ""); code != 200 || !strings.Contains(body, msg) {
				t.Fatalf("carol's conversation after the refusal: %d %.200s", code, body)
			}
			for i := range full {
				if code, body := doAs(t, e.tr, "eve", key, "GET", fmt.Sprint("/api/runs/eve-", i), ""); code != 200 {
					t.Fatalf("eve's admitted run %d lost: %d %.200s", i, code, body)
				}
			}
			b := e.settings.MemoryBudget
			if used := b.UsedBy("eve"); used > b.Limits().PerIdentity {
				t.Fatalf("eve holds %d bytes, past her share of %d", used, b.Limits().PerIdentity)
			}
		})
	}
}

// Without isolation, platform threads past the budget are refused 507 in the platform's
// shape once they would leave less than an eighth of it, and every thread admitted is kept.
func TestEmbeddedDefault_ThreadsPastTheBudget_Refused507(t *testing.T) {
	env := map[string]string{"FUNCGRAPH_MEMORY_BUDGET": "8MiB"}
	for _, e := range embeddedApps(t, env, false) {
		t.Run(e.tr.Name, func(t *testing.T) {
			b := e.settings.MemoryBudget
			pad := strings.Repeat("p", 200<<10)
			n := 0
			for ; n < 100; n++ {
				code, body := do(t, e.tr, "POST", "/api/threads", fmt.Sprintf(`{"thread_id":"t-%d","metadata":{"pad":"%s"}}`, n, pad))
				if code == 507 {
					if body != `{"detail": "`+apierror.StorageFullMessage+`"}` {
						t.Fatalf("507 body: %s", body)
					}
					break
				}
				if code != 200 {
					t.Fatalf("create thread %d: %d %.200s", n, code, body)
				}
			}
			if n == 0 || n == 100 {
				t.Fatalf("refused after %d threads, want after some", n)
			}
			if limit := b.Limits().Total; b.Used() > limit-limit/8 {
				t.Fatalf("threads hold %d bytes, past 7/8 of %d", b.Used(), limit)
			}
			for i := range n {
				if code, body := do(t, e.tr, "GET", fmt.Sprint("/api/threads/t-", i), ""); code != 200 {
					t.Fatalf("admitted thread %d: %d %.200s", i, code, body)
				}
			}
		})
	}
}

// waitFinished waits until run id is finished.
func waitFinished(t *testing.T, app *exampleapp.App, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	run, err := app.Engine.WaitRun(ctx, id, nil)
	if err != nil || !run.RuntimeStatus.Finished() {
		t.Errorf("run %s: %v %s, want finished", id, err, run.RuntimeStatus)
	}
}
