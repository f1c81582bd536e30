package memory

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// Store is an in-memory engine.Store with Azure Table semantics. For tests and the embedded
// default, not production: nothing survives the process.
type Store struct {
	clock   func() time.Time
	noETags bool

	mu       sync.Mutex
	parts    map[string]*partition // guarded by mu
	pkeys    []string              // partition keys, sorted when !pkDirty; guarded by mu
	pkDirty  bool                  // guarded by mu
	etagNext uint64                // guarded by mu
}

type partition struct {
	rows map[string]*row
	keys []string // sorted row keys
}

type row struct {
	props props
	etag  string
	ts    time.Time
}

var _ engine.Store = (*Store)(nil)

// NewStore returns an empty store.
func NewStore(opts ...Option) *Store {
	c := newConfig(opts)
	return &Store{clock: c.clock, noETags: c.noETags, parts: map[string]*partition{}}
}

// Get implements engine.Store.
func (s *Store) Get(ctx context.Context, partitionKey, rowKey string) (engine.Entity, error) {
	if err := ctx.Err(); err != nil {
		return engine.Entity{}, err
	}
	if err := engine.ValidateKey("PartitionKey", partitionKey); err != nil {
		return engine.Entity{}, err
	}
	if err := engine.ValidateKey("RowKey", rowKey); err != nil {
		return engine.Entity{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.parts[partitionKey]
	if p == nil {
		return engine.Entity{}, fmt.Errorf("get %s/%s: %w", partitionKey, rowKey, engine.ErrNotFound)
	}
	r := p.rows[rowKey]
	if r == nil {
		return engine.Entity{}, fmt.Errorf("get %s/%s: %w", partitionKey, rowKey, engine.ErrNotFound)
	}
	return r.entity(partitionKey, rowKey), nil
}

func (r *row) entity(pk, rk string) engine.Entity {
	return engine.Entity{PartitionKey: pk, RowKey: rk, ETag: r.etag, Timestamp: r.ts, Properties: r.props.toMap()}
}

func cloneValue(v any) any {
	if b, ok := v.([]byte); ok {
		return slices.Clone(b)
	}
	return v
}

// Submit implements engine.Store.
func (s *Store) Submit(ctx context.Context, ops []engine.Op) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := engine.ValidateBatch(ops); err != nil {
		return nil, fmt.Errorf("submit batch: %w", err)
	}
	pk := ops[0].Entity.PartitionKey
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.parts[pk]
	for i, op := range ops {
		var cur *row
		if p != nil {
			cur = p.rows[op.Entity.RowKey]
		}
		if err := check(op, cur); err != nil {
			return nil, fmt.Errorf("submit batch: %w", &engine.BatchError{Index: i, Err: err})
		}
	}
	if p == nil {
		p = &partition{rows: map[string]*row{}}
		s.parts[pk] = p
		s.pkeys = append(s.pkeys, pk)
		s.pkDirty = true
	}
	now := s.clock().UTC()
	etags := make([]string, len(ops))
	for i, op := range ops {
		rk := op.Entity.RowKey
		switch op.Kind {
		case engine.OpDelete:
			delete(p.rows, rk)
			if j, found := slices.BinarySearch(p.keys, rk); found {
				p.keys = slices.Delete(p.keys, j, j+1)
			}
			continue
		case engine.OpInsert:
			p.rows[rk] = &row{props: newProps(op.Entity.Properties)}
			insertSorted(&p.keys, rk)
		case engine.OpReplace:
			p.rows[rk].props = newProps(op.Entity.Properties)
		case engine.OpMerge:
			r := p.rows[rk]
			r.props = r.props.merge(op.Entity.Properties)
		}
		r := p.rows[rk]
		s.etagNext++
		var buf [24]byte
		r.etag = string(append(strconv.AppendUint(append(buf[:0], `W/"`...), s.etagNext, 10), '"'))
		r.ts = now
		if !s.noETags {
			etags[i] = r.etag
		}
	}
	if len(p.rows) == 0 {
		delete(s.parts, pk)
		if j := slices.Index(s.pkeys, pk); j >= 0 {
			s.pkeys = slices.Delete(s.pkeys, j, j+1)
		}
	}
	return etags, nil
}

// check applies the Azure rules of one op against the stored row (nil when missing).
func check(op engine.Op, cur *row) error {
	if op.Kind == engine.OpInsert {
		if cur != nil {
			return fmt.Errorf("insert %s: entity already exists: %w", op.Entity.RowKey, engine.ErrConflict)
		}
		return nil
	}
	if cur == nil {
		return fmt.Errorf("%s %s: %w", op.Kind, op.Entity.RowKey, engine.ErrNotFound)
	}
	if op.IfMatch != engine.ETagAny && op.IfMatch != cur.etag {
		return fmt.Errorf("%s %s: condition not satisfied: %w", op.Kind, op.Entity.RowKey, engine.ErrConflict)
	}
	return nil
}

// insertSorted inserts k into the sorted slice; appending is the common case (row keys of a
// run grow).
func insertSorted(keys *[]string, k string) {
	ks := *keys
	if n := len(ks); n == 0 || ks[n-1] < k {
		*keys = append(ks, k)
		return
	}
	j, _ := slices.BinarySearch(ks, k)
	*keys = slices.Insert(ks, j, k)
}

// Len returns the number of stored entities (for tests).
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, p := range s.parts {
		n += len(p.rows)
	}
	return n
}
