package threads_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/platform/threads"
	"github.com/funcgraph/funcgraph/pkg/platform/threads/threadstest"
)

func TestBoundedMemory_Conformance(t *testing.T) {
	threadstest.RunStoreTests(t, func(*testing.T) threads.Store { return threads.NewBoundedMemory(0) })
}

// TestBoundedMemory_PastTheBound_DropsOldestNotBusy: creating past the bound drops the least
// recently updated thread that is not busy; a busy thread stays however old, and while every
// thread is busy the store grows past the bound.
func TestBoundedMemory_PastTheBound_DropsOldestNotBusy(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := threads.NewBoundedMemory(3)
	create := func(id string, at time.Time) {
		t.Helper()
		if err := s.Create(ctx, threads.Thread{ThreadID: id, CreatedAt: at, UpdatedAt: at, Status: threads.StatusIdle}); err != nil {
			t.Fatal(err)
		}
	}
	create("busy-oldest", t0)
	if _, err := s.Acquire(ctx, "busy-oldest", "a", nil, t0); err != nil {
		t.Fatal(err)
	}
	create("b", t0.Add(time.Minute))
	create("c", t0.Add(2*time.Minute))
	if err := s.Release(ctx, "b", threads.StatusIdle, nil, t0.Add(3*time.Minute)); err != nil { // b is now newer than c
		t.Fatal(err)
	}
	create("d", t0.Add(4*time.Minute))
	for id, want := range map[string]bool{"busy-oldest": true, "b": true, "c": false, "d": true} {
		_, err := s.Get(ctx, id)
		if got := err == nil; got != want || err != nil && !errors.Is(err, threads.ErrThreadNotFound) {
			t.Errorf("thread %s kept = %v (%v), want %v", id, got, err, want)
		}
	}
	if n, _ := s.Count(ctx, threads.Query{}); n != 3 {
		t.Fatalf("%d threads, want 3", n)
	}

	all := threads.NewBoundedMemory(2)
	for i := range 4 {
		id := fmt.Sprint("busy-", i)
		if err := all.Create(ctx, threads.Thread{ThreadID: id, CreatedAt: t0, UpdatedAt: t0, Status: threads.StatusBusy}); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := all.Count(ctx, threads.Query{}); n != 4 {
		t.Fatalf("all busy: %d threads, want 4 (none dropped)", n)
	}
}

// TestBoundedMemory_LoadLoop_CountStable: thousands of threads created and released leave
// the store at its bound.
func TestBoundedMemory_LoadLoop_CountStable(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const bound = 100
	s := threads.NewBoundedMemory(bound)
	for i := range 5000 {
		at := t0.Add(time.Duration(i) * time.Second)
		id := fmt.Sprint("t", i)
		if err := s.Create(ctx, threads.Thread{ThreadID: id, CreatedAt: at, UpdatedAt: at, Status: threads.StatusIdle}); err != nil {
			t.Fatal(err)
		}
		if n, _ := s.Count(ctx, threads.Query{}); n > bound {
			t.Fatalf("after %d creates: %d threads, want at most %d", i+1, n, bound)
		}
	}
	if _, err := s.Get(ctx, "t4999"); err != nil {
		t.Fatalf("newest thread: %v", err)
	}
}
