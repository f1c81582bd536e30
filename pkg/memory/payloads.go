package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/membudget"
)

// PayloadStore is an in-memory engine.PayloadStore. For tests and the embedded default,
// not production. With a budget (WithBudget) a payload counts against its run's identity.
type PayloadStore struct {
	budget *membudget.Budget // nil: nothing accounted

	mu   sync.Mutex
	data map[string][]byte // guarded by mu
}

var _ engine.PayloadStore = (*PayloadStore)(nil)

// NewPayloadStore returns an empty payload store.
func NewPayloadStore(opts ...Option) *PayloadStore {
	return &PayloadStore{budget: newConfig(opts).budget, data: map[string][]byte{}}
}

// Put implements engine.PayloadStore.
func (p *PayloadStore) Put(ctx context.Context, key string, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := engine.CheckPayloadKey(key); err != nil {
		return fmt.Errorf("put payload: %w", err)
	}
	if len(data) > engine.MaxPayloadBytes {
		return fmt.Errorf("put payload %s: %d bytes: %w", key, len(data), engine.ErrTooLarge)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.budget != nil {
		n := payloadBytes(key, len(data))
		if old, ok := p.data[key]; ok {
			n -= payloadBytes(key, len(old))
		}
		if err := p.budget.Charge(budgetContext(ctx), runScope(payloadRun(key)), n); err != nil {
			return fmt.Errorf("put payload %s: %w", key, refusal(err))
		}
	}
	p.data[key] = slices.Clone(data)
	return nil
}

// Get implements engine.PayloadStore.
func (p *PayloadStore) Get(ctx context.Context, key string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := engine.CheckPayloadKey(key); err != nil {
		return nil, fmt.Errorf("get payload: %w", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	d, ok := p.data[key]
	if !ok {
		return nil, fmt.Errorf("get payload %s: %w", key, engine.ErrNotFound)
	}
	return slices.Clone(d), nil
}

// DeletePrefix implements engine.PayloadStore.
func (p *PayloadStore) DeletePrefix(ctx context.Context, prefix string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if prefix == "" {
		return 0, fmt.Errorf("delete payloads: empty prefix: %w", engine.ErrInvalidEntity)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for k := range p.data {
		if strings.HasPrefix(k, prefix) {
			if p.budget != nil {
				_ = p.budget.Charge(ctx, runScope(payloadRun(k)), -payloadBytes(k, len(p.data[k])))
			}
			delete(p.data, k)
			n++
		}
	}
	return n, nil
}

// Len returns the number of stored payloads (for tests).
func (p *PayloadStore) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.data)
}
