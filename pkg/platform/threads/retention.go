package threads

import (
	"context"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/membudget"
)

// DefaultMemoryMaxThreads is the bound of the in-memory store the platform routes use when
// no Store is given: at most 16 MiB of values each, but a chat thread holds a few KB, so
// 10 000 threads are tens of MB.
const DefaultMemoryMaxThreads = 10000

// MemoryOptions configures NewLimitedMemory. The zero value is NewBoundedMemory's default.
type MemoryOptions struct {
	// MaxThreads bounds the threads kept (0: DefaultMemoryMaxThreads). Creating a thread past
	// it first drops the creator's own threads that are not busy, least recently updated
	// first; another owner's threads are never dropped (the owner is metadata "owner", a
	// string; threads without one are one owner's).
	MaxThreads int
	// Budget, when set, accounts every thread's bytes (its metadata, values and id, with the
	// cost of holding them) to its owner, and refuses a write that would pass its limits
	// with ErrStorageFull (nothing written). Share it with the other in-memory stores of the
	// app (docs/limits.md#memory-budget).
	Budget *membudget.Budget
}

// NewBoundedMemory returns an empty in-memory store that keeps at most maxThreads threads
// (maxThreads ≤ 0: DefaultMemoryMaxThreads). Creating a thread past the bound first drops
// the creator's threads that are not busy, least recently updated first, until one fits; a
// busy thread is never dropped, nor another owner's thread, so while the creator has no
// thread to drop the store grows past the bound. A dropped thread reads as deleted
// (ErrThreadNotFound).
func NewBoundedMemory(maxThreads int) *Memory {
	return NewLimitedMemory(MemoryOptions{MaxThreads: maxThreads})
}

// NewLimitedMemory returns an empty in-memory store bounded as opts say.
func NewLimitedMemory(opts MemoryOptions) *Memory {
	if opts.MaxThreads <= 0 {
		opts.MaxThreads = DefaultMemoryMaxThreads
	}
	return &Memory{threads: map[string]Thread{}, maxThreads: opts.MaxThreads, budget: opts.Budget}
}

// ownerOf returns the identity t's metadata names as its owner ("" for none).
func ownerOf(t Thread) string {
	owner, _ := t.Metadata["owner"].(string)
	return owner
}

// makeRoom drops, while the store is full, owner's least recently updated thread that is not
// busy. It scans every thread once per drop: creating past the bound costs O(threads), as a
// search does. m.mu must be held.
func (m *Memory) makeRoom(owner string) {
	for m.maxThreads > 0 && len(m.threads) >= m.maxThreads {
		victim, found := "", false
		var oldest Thread
		for id, t := range m.threads {
			if t.Status == StatusBusy || ownerOf(t) != owner {
				continue
			}
			if !found || t.UpdatedAt.Before(oldest.UpdatedAt) || t.UpdatedAt.Equal(oldest.UpdatedAt) && id < victim {
				victim, oldest, found = id, t, true
			}
		}
		if !found {
			return
		}
		_ = m.account(context.Background(), &oldest, nil)
		delete(m.threads, victim)
	}
}

// threadOverhead is what a thread costs besides its bytes: its map entry, its record and the
// decoded metadata map's buckets.
const threadOverhead = 560

// metadataFactor is how much more than its stored JSON a decoded metadata map holds in memory
// (boxed values, map buckets), measured by BenchmarkMemory_ThreadBytes.
const metadataFactor = 1

// threadBytes is what t holds in memory, as a budget accounts it.
func threadBytes(t *Thread) int64 {
	meta, _ := MetadataJSON(t.Metadata)
	return int64(len(t.ThreadID)+len(t.AssistantID)+len(t.Values)+metadataFactor*len(meta)) + threadOverhead
}

// account moves the budget from what old held to what t holds (nil: none), on their
// owners' accounts; a growth past the budget is refused with ErrStorageFull and nothing is
// accounted. A shrink is never refused. m.mu must be held.
func (m *Memory) account(ctx context.Context, old, t *Thread) error {
	if m.budget == nil {
		return nil
	}
	var oldOwner, owner string
	var oldBytes, bytes int64
	if old != nil {
		oldOwner, oldBytes = ownerOf(*old), threadBytes(old)
	}
	if t != nil {
		owner, bytes = ownerOf(*t), threadBytes(t)
	}
	if old != nil && t != nil && owner == oldOwner {
		bytes, oldBytes = bytes-oldBytes, 0
	}
	if t != nil {
		if err := m.budget.Grow(ctx, owner, bytes); err != nil {
			return fmt.Errorf("thread %q: %w: %w", t.ThreadID, ErrStorageFull, err)
		}
	}
	if oldBytes != 0 {
		_ = m.budget.Grow(ctx, oldOwner, -oldBytes)
	}
	return nil
}

// ptr returns a pointer to a copy of t.
func ptr(t Thread) *Thread { return &t }
