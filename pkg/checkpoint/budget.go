package checkpoint

import (
	"context"
	"errors"
	"fmt"
)

// ErrStorageFull reports a write that would grow a saver holding all it may: the in-memory
// saver's byte budget (MemoryOptions.Budget). Nothing was written.
var ErrStorageFull = errors.New("checkpoint: storage full")

// What a Memory with a budget accounts for a thread: the bytes MaxBytes counts (values,
// writes, metadata), plus itemBytes for each checkpoint, value and write it holds and
// threadBytes for the thread itself (their maps, structs and ids), so that the accounted
// bytes follow the live heap.
const (
	itemBytes   = 160
	threadBytes = 256
)

// scope is the budget scope of a thread's checkpoints.
func scope(threadID string) string { return "checkpoint/" + threadID }

// ownerOfScope returns the identity the budget accounts threadID's checkpoints to, and
// whether it has an account for them. Called with m.mu held.
func (m *Memory) ownerOfScope(threadID string) (string, bool) {
	if m.opts.Budget == nil {
		return "", false
	}
	return m.opts.Budget.ScopeOwner(scope(threadID))
}

// reserve accounts est bytes more for threadID (and threadBytes when it holds nothing yet)
// before a write, and returns what it accounted; settle then brings it to what the write
// left. Called with m.mu held.
func (m *Memory) reserve(ctx context.Context, threadID string, est int) (int64, error) {
	if m.opts.Budget == nil {
		return 0, nil
	}
	n := int64(est)
	if m.threads[threadID] == nil {
		n += threadBytes
	}
	if err := m.opts.Budget.Charge(ctx, scope(threadID), n); err != nil {
		return 0, fmt.Errorf("thread %q: %w: %w", threadID, ErrStorageFull, err)
	}
	return n, nil
}

// settle brings what the budget holds for t to what it holds now: never more than reserve
// accounted, so it is never refused. Called with m.mu held.
func (m *Memory) settle(ctx context.Context, threadID string, t *memThread) {
	if m.opts.Budget == nil || t == nil {
		return
	}
	want := int64(t.bytes+itemBytes*t.items) + threadBytes
	if d := want - t.charged; d != 0 {
		_ = m.opts.Budget.Charge(ctx, scope(threadID), d)
		t.charged = want
	}
}

// release returns what the budget holds for a forgotten thread. Called with m.mu held.
func (m *Memory) release(ctx context.Context, threadID string, charged int64) {
	if m.opts.Budget != nil && charged != 0 {
		_ = m.opts.Budget.Charge(ctx, scope(threadID), -charged)
	}
}
