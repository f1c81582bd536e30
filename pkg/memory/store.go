package memory

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
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
	codec    codec                 // guarded by mu
	parts    map[string]*partition // guarded by mu
	pkeys    []string              // partition keys (with emptied or repeated ones until sorted), sorted and exact when !pkDirty; guarded by mu
	pkDirty  bool                  // guarded by mu
	etagNext uint64                // guarded by mu
}

// partition holds its rows sorted by row key, inline: a row is 32 bytes besides its key and
// its encoded properties (props.go), which share one string.
type partition struct {
	rows []row
}

type row struct {
	data string // the row key, then the encoded properties
	meta uint64 // the ETag's number << 16 | the length of the row key (at most 1 536 bytes)
	ts   int64  // Unix nanoseconds
}

func (r *row) key() string { return r.data[:r.meta&0xffff] }
func (r *row) enc() string { return r.data[r.meta&0xffff:] }

// find returns the index of the row rk, or where it would be inserted.
func (p *partition) find(rk string) (int, bool) {
	return slices.BinarySearchFunc(p.rows, rk, func(r row, k string) int { return strings.Compare(r.key(), k) })
}

// insert inserts r at j. The rows grow by a quarter at a time (a run's partition holds a
// few rows; append would leave it up to half empty).
func (p *partition) insert(j int, r row) {
	if n := len(p.rows); n == cap(p.rows) {
		p.rows = append(make([]row, 0, n+1+n/4), p.rows...)
	}
	p.rows = slices.Insert(p.rows, j, r)
}

// lookup returns the row rk, nil when missing.
func (p *partition) lookup(rk string) *row {
	if p == nil {
		return nil
	}
	if i, ok := p.find(rk); ok {
		return &p.rows[i]
	}
	return nil
}

var _ engine.Store = (*Store)(nil)

// NewStore returns an empty store.
func NewStore(opts ...Option) *Store {
	c := newConfig(opts)
	return &Store{clock: c.clock, noETags: c.noETags, parts: map[string]*partition{}}
}

var _ engine.RowReader = (*Store)(nil)

// Get implements engine.Store.
func (s *Store) Get(ctx context.Context, partitionKey, rowKey string) (engine.Entity, error) {
	var ent engine.Entity
	err := s.read(ctx, partitionKey, rowKey, func(r *row) { ent = s.entity(partitionKey, r) })
	return ent, err
}

// GetRow implements engine.RowReader: the properties are decoded as Get decodes them,
// without the map, and after mu is released: a row's encoding is never changed, only
// replaced, and the name table and the dictionary only append, so the slices taken under mu
// hold what the row refers to.
func (s *Store) GetRow(ctx context.Context, partitionKey, rowKey string, visit func(name string, value any)) (string, time.Time, error) {
	var etag, enc string
	var ts time.Time
	var names []string
	var boxed []any
	err := s.read(ctx, partitionKey, rowKey, func(r *row) {
		var buf [24]byte
		etag, ts = string(r.appendETag(buf[:0])), time.Unix(0, r.ts).UTC()
		enc, names, boxed = r.enc(), s.codec.names.list, s.codec.dict.boxed
	})
	if err != nil {
		return "", time.Time{}, err
	}
	for enc != "" {
		var e entry
		e, enc = next(enc)
		name := e.inline
		if e.id != 0 {
			name = names[e.id-1]
		}
		visit(name, decodeValue(e, boxed))
	}
	return etag, ts, nil
}

// read calls f with the row partitionKey/rowKey while holding mu.
func (s *Store) read(ctx context.Context, partitionKey, rowKey string, f func(*row)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := engine.ValidateKey("PartitionKey", partitionKey); err != nil {
		return err
	}
	if err := engine.ValidateKey("RowKey", rowKey); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.parts[partitionKey].lookup(rowKey)
	if r == nil {
		return fmt.Errorf("get %s/%s: %w", partitionKey, rowKey, engine.ErrNotFound)
	}
	f(r)
	return nil
}

// entity returns the stored row r as an entity of partition pk.
func (s *Store) entity(pk string, r *row) engine.Entity {
	var buf [24]byte
	return engine.Entity{PartitionKey: pk, RowKey: r.key(), ETag: string(r.appendETag(buf[:0])),
		Timestamp: time.Unix(0, r.ts).UTC(), Properties: s.codec.toMap(r.enc())}
}

func (r *row) appendETag(b []byte) []byte { return appendETag(b, r.meta>>16) }

func appendETag(b []byte, n uint64) []byte {
	return append(strconv.AppendUint(append(b, `W/"`...), n, 10), '"')
}

// etagStrings sets etags[i] to the ETag of number tags[i] (0: a deleted row, no ETag), all
// substrings of one string: one allocation for the batch.
func etagStrings(etags []string, tags []uint64) {
	var buf [8 * 24]byte
	var ends [8]int
	b := buf[:0]
	for i, n := range tags {
		if n != 0 {
			b = appendETag(b, n)
		}
		ends[i] = len(b)
	}
	all, start := string(b), 0
	for i := range tags {
		etags[i], start = all[start:ends[i]], ends[i]
	}
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
		if err := check(op, p.lookup(op.Entity.RowKey)); err != nil {
			return nil, fmt.Errorf("submit batch: %w", &engine.BatchError{Index: i, Err: err})
		}
	}
	if p == nil {
		p = &partition{}
		s.parts[pk] = p
		s.pkeys = append(s.pkeys, pk)
		s.pkDirty = true
		if len(s.pkeys) > 2*len(s.parts)+64 { // emptied keys: compact, amortised O(1) per append
			s.compactKeys()
		}
	}
	now := s.clock().UnixNano()
	etags := make([]string, len(ops))
	var tags [8]uint64 // the ETag numbers of the first ops, turned into strings at the end
	for i, op := range ops {
		rk := op.Entity.RowKey
		j, _ := p.find(rk) // found unless an insert: check ran
		switch op.Kind {
		case engine.OpDelete:
			p.rows = slices.Delete(p.rows, j, j+1)
			continue
		case engine.OpInsert:
			p.insert(j, row{data: s.codec.encode(rk, op.Entity.Properties)})
		case engine.OpReplace:
			p.rows[j].data = s.codec.encode(rk, op.Entity.Properties)
		case engine.OpMerge:
			p.rows[j].data = s.codec.merge(rk, p.rows[j].enc(), op.Entity.Properties)
		}
		r := &p.rows[j]
		s.etagNext++
		r.meta, r.ts = s.etagNext<<16|uint64(len(rk)), now
		if !s.noETags {
			if i < len(tags) {
				tags[i] = s.etagNext
			} else {
				var buf [24]byte
				etags[i] = string(r.appendETag(buf[:0]))
			}
		}
	}
	if !s.noETags {
		etagStrings(etags, tags[:min(len(ops), len(tags))])
	}
	if len(p.rows) == 0 {
		// Its key leaves pkeys at the next sort (a search here would cost one comparison per
		// partition on every emptied partition).
		delete(s.parts, pk)
		s.pkDirty = true
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
	var buf [24]byte
	if op.IfMatch != engine.ETagAny && op.IfMatch != string(cur.appendETag(buf[:0])) {
		return fmt.Errorf("%s %s: condition not satisfied: %w", op.Kind, op.Entity.RowKey, engine.ErrConflict)
	}
	return nil
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
