package memory

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/membudget"
)

// LiveStore is an in-memory engine.LiveStore. For tests and the embedded default, not
// production. With a budget (WithBudget) a log counts against its run's identity, as the
// run's payloads do: its key and the capacity its bytes hold (a growing log's slack
// included), so an append that grows the buffer is charged for the buffer.
type LiveStore struct {
	budget *membudget.Budget // nil: nothing accounted

	mu   sync.Mutex
	logs map[string]*liveLog // guarded by mu
}

// liveLog is one log: its bytes and how many appends made them.
type liveLog struct {
	data    []byte
	appends int
}

// bytes returns the log's bytes (nil for no log).
func (l *liveLog) bytes() []byte {
	if l == nil {
		return nil
	}
	return l.data
}

var _ engine.LiveStore = (*LiveStore)(nil)

// NewLiveStore returns an empty live store.
func NewLiveStore(opts ...Option) *LiveStore {
	return &LiveStore{budget: newConfig(opts).budget, logs: map[string]*liveLog{}}
}

// Append implements engine.LiveStore.
func (s *LiveStore) Append(ctx context.Context, key string, at int64, data []byte) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := engine.ValidateLiveAppend(key, at, data); err != nil {
		return 0, fmt.Errorf("append live %s: %w", key, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.logs[key]
	switch {
	case l == nil && at > 0:
		return 0, fmt.Errorf("append live %s at %d: %w", key, at, engine.ErrNotFound)
	case l != nil && l.appends >= engine.MaxLiveAppends: // full at any offset, as a sealed blob is
		return 0, fmt.Errorf("append live: %w", &engine.LimitError{Limit: "live appends", Key: key, Size: l.appends + 1, Max: engine.MaxLiveAppends})
	case l != nil && int64(len(l.data)) != at:
		return 0, fmt.Errorf("append live %s at %d: length %d: %w", key, at, len(l.data), engine.ErrConflict)
	}
	grown := append(l.bytes(), data...) // l's own bytes unchanged until it takes grown
	if s.budget != nil {
		n := int64(cap(grown) - cap(l.bytes()))
		if l == nil {
			n = liveBytes(key, cap(grown))
		}
		if err := s.budget.Charge(budgetContext(ctx), runScope(payloadRun(key)), n); err != nil {
			return 0, fmt.Errorf("append live %s: %w", key, refusal(err))
		}
	}
	if l == nil {
		l = &liveLog{}
		s.logs[key] = l
	}
	l.data = grown
	l.appends++
	return int64(len(l.data)), nil
}

// Read implements engine.LiveStore.
func (s *LiveStore) Read(ctx context.Context, key string, from int64, max int) ([]byte, int64, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	if err := engine.ValidateLiveRead(from, max); err != nil {
		return nil, 0, fmt.Errorf("read live %s: %w", key, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.logs[key]
	if l == nil {
		return nil, 0, fmt.Errorf("read live %s: %w", key, engine.ErrNotFound)
	}
	n := int64(len(l.data))
	if from > n {
		return nil, n, fmt.Errorf("read live %s from %d: length %d: %w", key, from, n, engine.ErrInvalidQuery)
	}
	end := min(n, from+int64(max))
	return append([]byte(nil), l.data[from:end]...), n, nil
}

// Length implements engine.LiveStore.
func (s *LiveStore) Length(ctx context.Context, key string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.logs[key]
	if l == nil {
		return 0, fmt.Errorf("live length %s: %w", key, engine.ErrNotFound)
	}
	return int64(len(l.data)), nil
}

// DeletePrefix implements engine.LiveStore.
func (s *LiveStore) DeletePrefix(ctx context.Context, prefix string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if prefix == "" {
		return 0, fmt.Errorf("delete live logs: empty prefix: %w", engine.ErrInvalidEntity)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k, l := range s.logs {
		if strings.HasPrefix(k, prefix) {
			if s.budget != nil {
				_ = s.budget.Charge(ctx, runScope(payloadRun(k)), -liveBytes(k, cap(l.data)))
			}
			delete(s.logs, k)
			n++
		}
	}
	return n, nil
}

// Len returns the number of stored logs (for tests).
func (s *LiveStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.logs)
}
