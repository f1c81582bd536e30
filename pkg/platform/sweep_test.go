package platform

import (
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// Mount registers the timer-triggered sweep; a tick moves threads busy for longer than the
// age to error and leaves fresher ones busy.
func TestMount_StaleLockTimer(t *testing.T) {
	app, err := host.New(host.Options{Logger: funchosttest.TestLogger(t), PlatformCompat: true})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	store := threads.NewMemory()
	svc, err := Mount(app, Options{Threads: store, Now: func() time.Time { return now }, StaleLockAge: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	ctx := t.Context()
	for id, at := range map[string]time.Time{"stale": now.Add(-11 * time.Minute), "fresh": now.Add(-9 * time.Minute)} {
		if err := store.Create(ctx, threads.Thread{ThreadID: id, CreatedAt: at, UpdatedAt: at, Status: threads.StatusIdle}); err != nil {
			t.Fatal(err)
		}
		if _, err := store.Acquire(ctx, id, "chat", nil, at); err != nil {
			t.Fatal(err)
		}
	}
	var timer *funchost.TimerFunction
	for _, fn := range app.FunctionApp().TimerFunctions() {
		if fn.Name == StaleLockFunction {
			timer = &fn
		}
	}
	if timer == nil || timer.Schedule != DefaultStaleLockSchedule {
		t.Fatalf("timer = %+v; want %s on %s", timer, StaleLockFunction, DefaultStaleLockSchedule)
	}
	if _, err := timer.Handler(ctx, funchost.TimerInfo{}); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]threads.Status{"stale": threads.StatusError, "fresh": threads.StatusBusy} {
		if got, _ := store.Get(ctx, id); got.Status != want {
			t.Errorf("%s: status %s; want %s", id, got.Status, want)
		}
	}
	if _, err := Mount(app, Options{StaleLockAge: -time.Second}); err == nil {
		t.Error("Mount with a negative stale lock age succeeded")
	}
}
