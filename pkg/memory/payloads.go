package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// PayloadStore is an in-memory engine.PayloadStore. For tests and the embedded default,
// not production.
type PayloadStore struct {
	mu   sync.Mutex
	data map[string][]byte // guarded by mu
}

var _ engine.PayloadStore = (*PayloadStore)(nil)

// NewPayloadStore returns an empty payload store.
func NewPayloadStore(...Option) *PayloadStore {
	return &PayloadStore{data: map[string][]byte{}}
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
