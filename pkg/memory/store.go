package memory

import (
	"context"
	"fmt"
	"hash/maphash"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/membudget"
)

// Store is an in-memory engine.Store with Azure Table semantics. For tests and the embedded
// default, not production: nothing survives the process.
//
// Partitions are spread over storeShards shards by their key, each with its own lock, and
// rows are encoded by one of storeCodecs codecs chosen by their row key, each with its own
// lock: writes to different runs rarely wait for each other. A batch holds its partition's
// shard for its whole check-and-write (it is atomic, as on Azure); a cross-partition query
// holds every shard, in order, for a consistent page. The rows of one row key in different
// partitions (a run's index rows) share a codec, so equal rows stay one string.
type Store struct {
	clock   func() time.Time
	noETags bool
	budget  *membudget.Budget // nil: nothing accounted (budget.go)
	seed    maphash.Seed
	etags   atomic.Uint64 // the last ETag number given; rows are numbered from 1
	shards  [storeShards]shard
	codecs  [storeCodecs]lockedCodec
}

const (
	storeShards = 16
	storeCodecs = 8
)

// shard is a group of partitions under one lock.
type shard struct {
	mu      sync.Mutex
	parts   map[string]*partition // guarded by mu
	pkeys   []string              // partition keys (with emptied or repeated ones until sorted), sorted and exact when !pkDirty; guarded by mu
	pkDirty bool                  // guarded by mu
	_       [64]byte              // keeps neighbouring shards' locks off one cache line
}

// lockedCodec is a codec and its lock. Locked after a shard when both are held, and never
// two at a time.
type lockedCodec struct {
	mu sync.Mutex
	codec
	_ [64]byte
}

func (s *Store) shardOf(pk string) *shard {
	return &s.shards[maphash.String(s.seed, pk)%storeShards]
}

func (s *Store) codecOf(rk string) *lockedCodec {
	return &s.codecs[maphash.String(s.seed, rk)%storeCodecs]
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
	s := &Store{clock: c.clock, noETags: c.noETags, budget: c.budget, seed: maphash.MakeSeed()}
	for i := range s.shards {
		s.shards[i].parts = map[string]*partition{}
	}
	return s
}

var _ engine.RowReader = (*Store)(nil)

// Get implements engine.Store.
func (s *Store) Get(ctx context.Context, partitionKey, rowKey string) (engine.Entity, error) {
	var ent engine.Entity
	err := s.read(ctx, partitionKey, rowKey, func(r *row) { ent = s.entity(partitionKey, r) })
	return ent, err
}

// GetRow implements engine.RowReader: the properties are decoded as Get decodes them,
// without the map, and without locks: a row's encoding is never changed, only replaced, and
// a codec's name table and dictionary only append, so the slices taken under its lock after
// the row was read hold what the row refers to.
func (s *Store) GetRow(ctx context.Context, partitionKey, rowKey string, visit func(name string, value any)) (string, time.Time, error) {
	var etag, enc string
	var ts time.Time
	var names []string
	var boxed []any
	err := s.read(ctx, partitionKey, rowKey, func(r *row) {
		var buf [24]byte
		etag, ts = string(r.appendETag(buf[:0])), time.Unix(0, r.ts).UTC()
		enc = r.enc()
	})
	if err != nil {
		return "", time.Time{}, err
	}
	c := s.codecOf(rowKey)
	c.mu.Lock()
	names, boxed = c.names.list, c.dict.boxed
	c.mu.Unlock()
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

// read calls f with the row partitionKey/rowKey while holding its shard's lock.
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
	sh := s.shardOf(partitionKey)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	r := sh.parts[partitionKey].lookup(rowKey)
	if r == nil {
		return fmt.Errorf("get %s/%s: %w", partitionKey, rowKey, engine.ErrNotFound)
	}
	f(r)
	return nil
}

// entity returns the stored row r as an entity of partition pk.
func (s *Store) entity(pk string, r *row) engine.Entity {
	var buf [24]byte
	c := s.codecOf(r.key())
	c.mu.Lock()
	props := c.toMap(r.enc())
	c.mu.Unlock()
	return engine.Entity{PartitionKey: pk, RowKey: r.key(), ETag: string(r.appendETag(buf[:0])),
		Timestamp: time.Unix(0, r.ts).UTC(), Properties: props}
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
	sh := s.shardOf(pk)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	p := sh.parts[pk]
	for i, op := range ops {
		if err := check(op, p.lookup(op.Entity.RowKey)); err != nil {
			return nil, fmt.Errorf("submit batch: %w", &engine.BatchError{Index: i, Err: err})
		}
	}
	var datas []string // with a budget: each op's new row, encoded and accounted before any change
	if s.budget != nil {
		var err error
		if datas, err = s.charge(ctx, pk, p, ops); err != nil {
			return nil, fmt.Errorf("submit batch: %w", err)
		}
	}
	if p == nil {
		p = &partition{}
		sh.parts[pk] = p
		sh.pkeys = append(sh.pkeys, pk)
		sh.pkDirty = true
		if len(sh.pkeys) > 2*len(sh.parts)+64 { // emptied keys: compact, amortised O(1) per append
			sh.compactKeys()
		}
	}
	now := s.clock().UnixNano()
	first := s.etags.Add(uint64(len(ops))) - uint64(len(ops)) // this batch numbers first+1 …
	etags := make([]string, len(ops))
	var tags [8]uint64 // the ETag numbers of the first ops, turned into strings at the end
	for i, op := range ops {
		rk := op.Entity.RowKey
		j, _ := p.find(rk) // found unless an insert: check ran
		if op.Kind == engine.OpDelete {
			p.rows = slices.Delete(p.rows, j, j+1)
			continue
		}
		switch {
		case datas != nil && op.Kind == engine.OpInsert:
			p.insert(j, row{data: datas[i]})
		case datas != nil:
			p.rows[j].data = datas[i]
		default:
			c := s.codecOf(rk)
			c.mu.Lock()
			switch op.Kind {
			case engine.OpInsert:
				p.insert(j, row{data: c.encode(rk, op.Entity.Properties)})
			case engine.OpReplace:
				p.rows[j].data = c.encode(rk, op.Entity.Properties)
			case engine.OpMerge:
				p.rows[j].data = c.merge(rk, p.rows[j].enc(), op.Entity.Properties)
			}
			c.mu.Unlock()
		}
		r := &p.rows[j]
		n := first + uint64(i) + 1
		r.meta, r.ts = n<<16|uint64(len(rk)), now
		if !s.noETags {
			if i < len(tags) {
				tags[i] = n
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
		delete(sh.parts, pk)
		sh.pkDirty = true
		if s.budget != nil {
			_ = s.budget.Charge(ctx, partitionScope(pk, ops), -partitionBytes(pk))
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
	var buf [24]byte
	if op.IfMatch != engine.ETagAny && op.IfMatch != string(cur.appendETag(buf[:0])) {
		return fmt.Errorf("%s %s: condition not satisfied: %w", op.Kind, op.Entity.RowKey, engine.ErrConflict)
	}
	return nil
}

// Len returns the number of stored entities (for tests).
func (s *Store) Len() int {
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for _, p := range sh.parts {
			n += len(p.rows)
		}
		sh.mu.Unlock()
	}
	return n
}
