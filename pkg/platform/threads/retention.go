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
	// MaxThreads bounds the threads kept, all owners together (0: DefaultMemoryMaxThreads).
	// The owner of a thread is its metadata "owner", a string; threads without one are one
	// owner's, "" (isolation off, or the master key's).
	//
	// Creating a thread first holds its owner to MaxThreadsPerOwner, by dropping that owner's
	// own least recently updated thread that is not busy; then, while the store holds
	// MaxThreads, it drops the least recently updated thread that is not busy of the owner
	// with the most such threads (the creator's own on a tie). So a creator never loses a
	// thread to another identity's load, unless it holds as many as anyone. A busy thread is
	// never dropped: with nothing to drop the store grows past the bound. A creation costs
	// O(log n) (index.go).
	MaxThreads int
	// MaxThreadsPerOwner bounds one named owner's threads (0: a quarter of MaxThreads, at
	// least 1; the owner "" has only MaxThreads), as the memory budget's per-identity share
	// is a quarter of its total by default.
	MaxThreadsPerOwner int
	// Budget, when set, accounts every thread's bytes (its metadata, values and id, with the
	// cost of holding them) to its owner, and refuses a write that would pass its limits
	// with ErrStorageFull (nothing written). Share it with the other in-memory stores of the
	// app (docs/limits.md#memory-budget).
	Budget *membudget.Budget
}

// NewBoundedMemory returns an empty in-memory store that keeps at most maxThreads threads
// (maxThreads ≤ 0: DefaultMemoryMaxThreads), and each named owner a quarter of them
// (MemoryOptions). A dropped thread reads as deleted (ErrThreadNotFound); what graphs keep
// for it stays, and the platform routes keep its id from being claimed by another identity.
func NewBoundedMemory(maxThreads int) *Memory {
	return NewLimitedMemory(MemoryOptions{MaxThreads: maxThreads})
}

// NewLimitedMemory returns an empty in-memory store bounded as opts say.
func NewLimitedMemory(opts MemoryOptions) *Memory {
	if opts.MaxThreads <= 0 {
		opts.MaxThreads = DefaultMemoryMaxThreads
	}
	if opts.MaxThreadsPerOwner <= 0 {
		opts.MaxThreadsPerOwner = max(1, opts.MaxThreads/4)
	}
	return &Memory{threads: map[string]Thread{}, maxThreads: opts.MaxThreads, perOwner: opts.MaxThreadsPerOwner,
		budget: opts.Budget, index: newOwnerIndex()}
}

// ownerOf returns the identity t's metadata names as its owner ("" for none).
func ownerOf(t Thread) string {
	owner, _ := t.Metadata["owner"].(string)
	return owner
}

// makeRoom makes room for a new thread of owner: it drops owner's own least recently updated
// threads that are not busy while a named owner holds its bound, then, while the store is
// full, the least recently updated thread that is not busy of the owner holding the most
// (owner's own on a tie). m.mu must be held.
func (m *Memory) makeRoom(owner string) {
	if m.index == nil {
		return
	}
	for owner != "" && m.index.count(owner) >= m.perOwner {
		id, ok := m.index.oldestOf(owner)
		if !ok {
			break
		}
		m.drop(id)
	}
	for len(m.threads) >= m.maxThreads {
		id, ok := m.index.oldestOfHeaviest(owner)
		if !ok {
			return
		}
		m.drop(id)
	}
}

// drop forgets thread id to make room. m.mu must be held.
func (m *Memory) drop(id string) {
	t := m.threads[id]
	_ = m.account(context.Background(), &t, nil)
	m.remove(t)
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
