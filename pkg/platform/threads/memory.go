package threads

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/funcgraph/funcgraph/pkg/membudget"
)

// Memory is the in-process Store: for tests and a single instance only. It does not survive
// a restart and does not coordinate scaled-out instances. It enforces the record limits
// (CheckSize) as the Azure store does. A store made by NewBoundedMemory or NewLimitedMemory
// keeps at most a given number of threads, and one with a budget at most its bytes
// (retention.go).
type Memory struct {
	maxThreads int               // 0: unbounded
	perOwner   int               // bound of one named owner's threads; 0: none
	budget     *membudget.Budget // nil: nothing accounted

	mu      sync.Mutex
	threads map[string]Thread // guarded by mu
	index   *ownerIndex       // nil when unbounded; guarded by mu
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty in-memory store without a bound on its threads.
func NewMemory() *Memory { return &Memory{threads: map[string]Thread{}} }

// clone returns t with its own metadata map and values, so callers cannot alias stored data.
func clone(t Thread) Thread {
	if t.Metadata != nil {
		t.Metadata = maps.Clone(t.Metadata)
	}
	if t.Values != nil {
		t.Values = append(json.RawMessage(nil), t.Values...)
	}
	return t
}

// Create implements Store.
func (m *Memory) Create(ctx context.Context, t Thread) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.threads[t.ThreadID]; ok {
		return fmt.Errorf("create thread %q: %w", t.ThreadID, ErrThreadExists)
	}
	if err := CheckSize(t); err != nil {
		return fmt.Errorf("create thread: %w", err)
	}
	m.makeRoom(ownerOf(t))
	if err := m.account(ctx, nil, &t); err != nil {
		return fmt.Errorf("create thread: %w", err)
	}
	m.set(nil, clone(t))
	return nil
}

// Get implements Store.
func (m *Memory) Get(_ context.Context, threadID string) (Thread, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.threads[threadID]
	if !ok {
		return Thread{}, fmt.Errorf("get thread %q: %w", threadID, ErrThreadNotFound)
	}
	return clone(t), nil
}

// PatchMetadata implements Store.
func (m *Memory) PatchMetadata(ctx context.Context, threadID string, metadata map[string]any, now time.Time) (Thread, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.threads[threadID]
	if !ok {
		return Thread{}, fmt.Errorf("patch thread %q: %w", threadID, ErrThreadNotFound)
	}
	t = clone(t)
	t.Metadata = MergeMetadata(t.Metadata, metadata)
	t.UpdatedAt = now.UTC()
	if err := CheckSize(t); err != nil {
		return Thread{}, fmt.Errorf("patch thread: %w", err)
	}
	if err := m.account(ctx, ptr(m.threads[threadID]), &t); err != nil {
		return Thread{}, fmt.Errorf("patch thread: %w", err)
	}
	m.set(ptr(m.threads[threadID]), t)
	return clone(t), nil
}

// Delete implements Store.
func (m *Memory) Delete(ctx context.Context, threadID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.threads[threadID]
	if !ok {
		return fmt.Errorf("delete thread %q: %w", threadID, ErrThreadNotFound)
	}
	_ = m.account(ctx, &t, nil)
	m.remove(t)
	return nil
}

// Search implements Store.
func (m *Memory) Search(_ context.Context, q Query) ([]Thread, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []Thread{}
	for _, t := range m.threads {
		if q.Matches(t) {
			out = append(out, clone(t))
		}
	}
	return SortAndPage(out, q), nil
}

// Count implements Store.
func (m *Memory) Count(_ context.Context, q Query) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, t := range m.threads {
		if q.Matches(t) {
			n++
		}
	}
	return n, nil
}

// Acquire implements Store.
func (m *Memory) Acquire(ctx context.Context, threadID, assistantID string, metadata map[string]any, now time.Time) (Thread, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.threads[threadID]
	switch {
	case !ok:
		return Thread{}, fmt.Errorf("acquire thread %q: %w", threadID, ErrThreadNotFound)
	case t.AssistantID != "" && t.AssistantID != assistantID:
		return Thread{}, &BoundError{ThreadID: threadID, Bound: t.AssistantID, Requested: assistantID}
	case t.Status == StatusBusy:
		return Thread{}, fmt.Errorf("acquire thread %q: %w", threadID, ErrThreadBusy)
	}
	t = clone(t)
	t.Status, t.UpdatedAt, t.AssistantID = StatusBusy, now.UTC(), assistantID
	t.Metadata = MergeMetadata(t.Metadata, metadata)
	if err := CheckSize(t); err != nil {
		return Thread{}, fmt.Errorf("acquire thread: %w", err)
	}
	if err := m.account(ctx, ptr(m.threads[threadID]), &t); err != nil {
		return Thread{}, fmt.Errorf("acquire thread: %w", err)
	}
	m.set(ptr(m.threads[threadID]), t)
	return clone(t), nil
}

// Release implements Store.
func (m *Memory) Release(ctx context.Context, threadID string, status Status, values json.RawMessage, now time.Time) error {
	if err := CheckReleaseStatus(status); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.threads[threadID]
	if !ok {
		return fmt.Errorf("release thread %q: %w", threadID, ErrThreadNotFound)
	}
	t = clone(t)
	t.Status, t.UpdatedAt = status, now.UTC()
	if values != nil {
		t.Values = append(json.RawMessage(nil), values...)
	}
	if err := CheckSize(t); err != nil {
		return fmt.Errorf("release thread: %w", err)
	}
	if err := m.account(ctx, ptr(m.threads[threadID]), &t); err != nil {
		return fmt.Errorf("release thread: %w", err)
	}
	m.set(ptr(m.threads[threadID]), t)
	return nil
}

// ResetStaleLocks implements Store.
func (m *Memory) ResetStaleLocks(_ context.Context, olderThan time.Duration, to Status, now time.Time) (int, error) {
	if err := CheckResetArgs(olderThan, to); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	cutoff, n := now.Add(-olderThan), 0
	for _, t := range m.threads {
		if t.Status == StatusBusy && t.UpdatedAt.Before(cutoff) {
			old := t
			t.Status, t.UpdatedAt = to, now.UTC()
			m.set(&old, t)
			n++
		}
	}
	return n, nil
}

// set stores t, which replaces old (nil: a new thread), keeping the index. m.mu must be held.
func (m *Memory) set(old *Thread, t Thread) {
	m.threads[t.ThreadID] = t
	if m.index != nil {
		m.index.reindex(old, &t)
	}
}

// remove forgets t, keeping the index. m.mu must be held.
func (m *Memory) remove(t Thread) {
	delete(m.threads, t.ThreadID)
	if m.index != nil {
		m.index.reindex(&t, nil)
	}
}
