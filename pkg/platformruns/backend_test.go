package platformruns_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/platform"
	"github.com/funcgraph/funcgraph/pkg/platformruns"
)

// execFunc is a func-field fake of platform.RunExecutor.
type execFunc func(ctx context.Context, run platform.Run) (platform.RunStatus, error)

func (f execFunc) ExecuteRun(ctx context.Context, run platform.Run) (platform.RunStatus, error) {
	return f(ctx, run)
}

// storage is shared engine storage: two engines on it stand for two instances.
type storage struct {
	store engine.Store
	queue engine.WorkQueue
	blobs engine.PayloadStore
}

func newStorage() storage {
	return storage{memory.NewStore(), memory.NewQueue(), memory.NewPayloadStore()}
}

// instance starts an engine with the backend on st, bound to exec.
func instance(t *testing.T, st storage, exec platform.RunExecutor) platform.RunBackend {
	t.Helper()
	reg := durable.NewRegistry()
	b, err := platformruns.Register(reg)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(engine.Options{Registry: reg, Store: st.store, Queue: st.queue, Payloads: st.blobs,
		PollInterval: 20 * time.Millisecond, Policies: map[string]engine.GraphPolicy{platformruns.GraphName: platformruns.Policy}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	rb, err := b.Bind(e)(exec)
	if err != nil {
		t.Fatal(err)
	}
	return rb
}

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func submit(t *testing.T, rb platform.RunBackend, tid string, i int) platform.Run {
	t.Helper()
	at := t0.Add(time.Duration(i) * time.Millisecond)
	run := platform.Run{RunID: fmt.Sprintf("run-%s-%d", tid, i), ThreadID: tid, CreatedAt: at, UpdatedAt: at, Status: platform.RunPending,
		Request: platform.RunRequest{AssistantID: "echo_agent", StreamMode: "values", MultitaskStrategy: "enqueue"}}
	if err := rb.Submit(t.Context(), run); err != nil {
		t.Fatal(err)
	}
	return run
}

func join(t *testing.T, rb platform.RunBackend, run platform.Run) platform.Run {
	t.Helper()
	got, err := rb.Join(t.Context(), run.ThreadID, run.RunID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// Runs of one thread execute one at a time in submission order, also when the thread is
// briefly busy (ErrRetryLater), and are visible to another instance on the same storage.
func TestBackend_FIFOPerThreadAcrossInstances(t *testing.T) {
	st := newStorage()
	var mu sync.Mutex
	var order []string
	running := map[string]int{}
	busy := 2 // the first run finds its thread busy twice
	exec := execFunc(func(ctx context.Context, run platform.Run) (platform.RunStatus, error) {
		mu.Lock()
		if busy > 0 {
			busy--
			mu.Unlock()
			return "", platform.ErrRetryLater
		}
		running[run.ThreadID]++
		if running[run.ThreadID] > 1 {
			mu.Unlock()
			return platform.RunError, errors.New("two runs of one thread at once")
		}
		order = append(order, run.RunID)
		mu.Unlock()
		time.Sleep(5 * time.Millisecond) // widen the window an overlap would need
		mu.Lock()
		running[run.ThreadID]--
		mu.Unlock()
		return platform.RunSuccess, nil
	})
	a, b := instance(t, st, exec), instance(t, st, exec)
	var runs []platform.Run
	for i := range 4 {
		rb := a
		if i%2 == 1 {
			rb = b
		}
		runs = append(runs, submit(t, rb, "t1", i))
	}
	for _, r := range runs {
		if got := join(t, b, r); got.Status != platform.RunSuccess {
			t.Fatalf("run %s = %s; want success", r.RunID, got.Status)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	want := fmt.Sprint([]string{"run-t1-0", "run-t1-1", "run-t1-2", "run-t1-3"})
	if fmt.Sprint(order) != want {
		t.Fatalf("order = %v; want %s", order, want)
	}
	list, err := a.List(t.Context(), "t1", "", 2, 1)
	if err != nil || len(list) != 2 || list[0].RunID != "run-t1-2" || list[1].RunID != "run-t1-1" {
		t.Fatalf("List(limit 2, offset 1) = %+v, %v; want run-t1-2, run-t1-1", list, err)
	}
	if active, err := a.Active(t.Context(), "t1"); err != nil || active {
		t.Fatalf("Active after all finished = %v, %v", active, err)
	}
}

func TestBackend_CancelInterruptsRunningAndPending(t *testing.T) {
	started := make(chan string, 4)
	exec := execFunc(func(ctx context.Context, run platform.Run) (platform.RunStatus, error) {
		started <- run.RunID
		<-ctx.Done()
		return platform.RunInterrupted, nil
	})
	rb := instance(t, newStorage(), exec)
	first := submit(t, rb, "t1", 0)
	second := submit(t, rb, "t1", 1)
	if id := <-started; id != first.RunID {
		t.Fatalf("started %s first", id)
	}
	if got, _ := rb.Get(t.Context(), "t1", first.RunID); got.Status != platform.RunRunning {
		t.Fatalf("first = %s; want running", got.Status)
	}
	if got, _ := rb.Get(t.Context(), "t1", second.RunID); got.Status != platform.RunPending {
		t.Fatalf("second = %s; want pending behind the first", got.Status)
	}
	if active, _ := rb.Active(t.Context(), "t1"); !active {
		t.Fatal("Active = false with two unfinished runs")
	}
	if err := rb.Cancel(t.Context(), "t1", second.RunID, true); err != nil {
		t.Fatal(err)
	}
	if err := rb.Cancel(t.Context(), "t1", first.RunID, true); err != nil {
		t.Fatal(err)
	}
	for _, r := range []platform.Run{first, second} {
		if got := join(t, rb, r); got.Status != platform.RunInterrupted {
			t.Fatalf("%s = %s; want interrupted", r.RunID, got.Status)
		}
	}
	if err := rb.Cancel(t.Context(), "t1", first.RunID, false); !errors.Is(err, platform.ErrRunFinished) {
		t.Fatalf("Cancel(finished) = %v; want ErrRunFinished", err)
	}
	for _, tc := range []struct{ tid, rid string }{{"t1", "nope"}, {"t2", first.RunID}} {
		if _, err := rb.Get(t.Context(), tc.tid, tc.rid); !errors.Is(err, platform.ErrRunNotFound) {
			t.Fatalf("Get(%s, %s) = %v; want ErrRunNotFound", tc.tid, tc.rid, err)
		}
	}
}

func TestBind_RequiresTheRetryPolicy(t *testing.T) {
	reg := durable.NewRegistry()
	b, err := platformruns.Register(reg)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Bind(e)(execFunc(nil)); err == nil {
		t.Fatal("Bind without platformruns.Policy succeeded")
	}
}

// A join bounded by its context's deadline (the platform's wait bound) ends with
// context.DeadlineExceeded while the durable run goes on, and a later join answers it.
func TestBackend_JoinPastItsDeadlineLeavesTheRunGoing(t *testing.T) {
	release := make(chan struct{})
	rb := instance(t, newStorage(), execFunc(func(context.Context, platform.Run) (platform.RunStatus, error) {
		<-release
		return platform.RunSuccess, nil
	}))
	run := submit(t, rb, "tj", 1)
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if _, err := rb.Join(ctx, run.ThreadID, run.RunID); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("bounded join: %v, want context.DeadlineExceeded", err)
	}
	got, err := rb.Get(t.Context(), run.ThreadID, run.RunID)
	if err != nil || got.Status.Terminal() {
		t.Fatalf("run after the bounded join: %+v %v, want unfinished", got, err)
	}
	close(release)
	if got := join(t, rb, run); got.Status != platform.RunSuccess {
		t.Fatalf("join after release: %s, want success", got.Status)
	}
}
