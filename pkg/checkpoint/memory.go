package checkpoint

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/funcgraph/funcgraph/pkg/membudget"
)

// Defaults of MemoryOptions.
const (
	// DefaultMemoryMaxThreads is the default MemoryOptions.MaxThreads.
	DefaultMemoryMaxThreads = 1000
	// DefaultMemoryMaxBytes is the default MemoryOptions.MaxBytes (64 MiB).
	DefaultMemoryMaxBytes = 64 << 20
)

// MemoryOptions configures Memory. The zero value means the defaults.
type MemoryOptions struct {
	// MaxThreads bounds the threads kept: past it a write forgets the least recently written
	// thread of the owner holding the most threads (see Budget). 0 means 1000.
	MaxThreads int
	// MaxBytes bounds the bytes kept (values, writes and metadata): while it is exceeded a
	// write forgets the least recently written other thread of the owner holding the most
	// bytes. 0 means 64 MiB.
	MaxBytes int
	// Now is the clock of the sweep's grace period; nil means time.Now.
	Now func() time.Time
	// Budget, when set, accounts what each thread holds (budget.go) to its owner, and refuses
	// a write that would pass its limits with ErrStorageFull (nothing written). Share it with
	// the app's other in-memory stores (docs/limits.md#memory-budget).
	//
	// A thread's owner is the identity of the write that created it (membudget.NewWork; ""
	// for none), budget or not. Past MaxThreads (or MaxBytes) a write forgets the least
	// recently written thread of the owner holding the most threads (or bytes), the writer's
	// own on a tie: one identity's load forgets its own threads, never those of an identity
	// holding fewer.
	Budget *membudget.Budget
}

// Memory is the in-process Saver: everything lives in this process's memory, bounded by
// MaxThreads and MaxBytes, and is lost on restart. For tests, demos and a single instance,
// not production.
type Memory struct {
	opts MemoryOptions

	mu      sync.Mutex
	threads map[string]*memThread // guarded by mu
	order   []string              // thread ids, least recently written first; guarded by mu
	total   int                   // bytes of all threads; guarded by mu
	owners  map[string]*ownerLoad // what each owner's threads hold; guarded by mu
}

// ownerLoad is what one owner's threads hold.
type ownerLoad struct{ threads, bytes int }

type memThread struct {
	owner   string // the identity of the write that created it
	ns      map[string]*memNS
	bytes   int
	items   int   // checkpoints, values and writes held
	charged int64 // bytes accounted on the budget
}

type memNS struct {
	cps    map[string]*memCheckpoint
	latest string
	values map[string]map[string]memValue // channel → version → value
}

type memCheckpoint struct {
	cp     Checkpoint
	writes map[string]Write // by task id and index
}

type memValue struct {
	v  Value
	at time.Time
}

var _ Saver = (*Memory)(nil)

// NewMemory returns an empty in-process saver.
func NewMemory(opts MemoryOptions) *Memory {
	if opts.MaxThreads <= 0 {
		opts.MaxThreads = DefaultMemoryMaxThreads
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMemoryMaxBytes
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Memory{opts: opts, threads: map[string]*memThread{}, owners: map[string]*ownerLoad{}}
}

// Bytes returns the bytes kept, as MaxBytes counts them.
func (m *Memory) Bytes() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.total
}

// Put implements Saver.
func (m *Memory) Put(ctx context.Context, threadID, ns string, cp Checkpoint, values map[string]Value) error {
	if err := CheckPut(threadID, ns, cp, values); err != nil {
		return fmt.Errorf("put checkpoint: %w", err)
	}
	cp = cloneCheckpoint(cp)
	m.mu.Lock()
	defer m.mu.Unlock()
	est := len(cp.Metadata) + itemBytes*(len(values)+1)
	for _, v := range values {
		est += len(v.Data)
	}
	held, err := m.reserve(ctx, threadID, est)
	if err != nil {
		return fmt.Errorf("put checkpoint: %w", err)
	}
	t, n := m.namespace(ctx, threadID, ns)
	t.charged += held
	now := m.opts.Now()
	for ch, v := range values {
		if n.values[ch] == nil {
			n.values[ch] = map[string]memValue{}
		}
		ver := cp.ChannelVersions[ch]
		old, exists := n.values[ch][ver]
		m.grow(t, len(v.Data)-len(old.v.Data))
		if !exists {
			t.items++
		}
		n.values[ch][ver] = memValue{v: Value{SerdeType: v.SerdeType, Data: slices.Clone(v.Data)}, at: now}
	}
	if old := n.cps[cp.ID]; old != nil {
		m.grow(t, -len(old.cp.Metadata))
		t.items -= 1 + len(old.writes)
		for _, w := range old.writes {
			m.grow(t, -len(w.Value.Data))
		}
	}
	n.cps[cp.ID] = &memCheckpoint{cp: cp, writes: map[string]Write{}}
	m.grow(t, len(cp.Metadata))
	t.items++
	if cp.ID >= n.latest {
		n.latest = cp.ID
	}
	m.settle(ctx, threadID, t)
	m.evict(ctx, threadID)
	return nil
}

// namespace returns the namespace, creating it and marking the thread most recently written.
// Called with m.mu held.
func (m *Memory) namespace(ctx context.Context, threadID, ns string) (*memThread, *memNS) {
	t := m.threads[threadID]
	if t == nil {
		t = &memThread{ns: map[string]*memNS{}, owner: membudget.OwnerOf(ctx)}
		if o, ok := m.ownerOfScope(threadID); ok {
			t.owner = o // the budget's account decides when it has one
		}
		m.threads[threadID] = t
		m.load(t.owner).threads++
	} else {
		m.order = slices.DeleteFunc(m.order, func(id string) bool { return id == threadID })
	}
	m.order = append(m.order, threadID)
	n := t.ns[ns]
	if n == nil {
		n = &memNS{cps: map[string]*memCheckpoint{}, values: map[string]map[string]memValue{}}
		t.ns[ns] = n
	}
	return t, n
}

func (m *Memory) grow(t *memThread, d int) {
	t.bytes += d
	m.total += d
	m.load(t.owner).bytes += d
}

// load returns owner's load, creating it. Called with m.mu held.
func (m *Memory) load(owner string) *ownerLoad {
	l := m.owners[owner]
	if l == nil {
		l = &ownerLoad{}
		m.owners[owner] = l
	}
	return l
}

// evict forgets threads other than keep while a bound is exceeded: each time the least
// recently written thread of the owner holding the most threads (past MaxThreads) or bytes
// (past MaxBytes), keep's owner first on a tie, then the smallest name. It stops when only
// keep is left to forget. Called with m.mu held.
func (m *Memory) evict(ctx context.Context, keep string) {
	for len(m.order) > m.opts.MaxThreads || m.total > m.opts.MaxBytes {
		byThreads := len(m.order) > m.opts.MaxThreads
		victim := m.heaviest(m.threads[keep].owner, keep, byThreads)
		if victim == "" {
			return
		}
		m.dropThread(ctx, victim)
	}
}

// heaviest returns the least recently written thread, other than keep, of the owner holding
// the most threads (byThreads) or bytes, with keepOwner first on a tie and then the smallest
// name; "" when keep is the only thread. It scans the owners and the order once each.
// Called with m.mu held.
func (m *Memory) heaviest(keepOwner, keep string, byThreads bool) string {
	best, found := "", false
	var bestN int
	for o, l := range m.owners {
		n := l.bytes
		if byThreads {
			n = l.threads
		}
		if o == keepOwner && l.threads == 1 {
			continue // its one thread is keep
		}
		better := !found || n > bestN || n == bestN && (o == keepOwner || best != keepOwner && o < best)
		if better {
			best, bestN, found = o, n, true
		}
	}
	if !found {
		return ""
	}
	for _, id := range m.order {
		if id != keep && m.threads[id].owner == best {
			return id
		}
	}
	return ""
}

func (m *Memory) dropThread(ctx context.Context, threadID string) {
	if t := m.threads[threadID]; t != nil {
		m.total -= t.bytes
		m.release(ctx, threadID, t.charged)
		delete(m.threads, threadID)
		l := m.load(t.owner)
		if l.threads--; l.threads == 0 {
			delete(m.owners, t.owner)
		} else {
			l.bytes -= t.bytes
		}
	}
	m.order = slices.DeleteFunc(m.order, func(id string) bool { return id == threadID })
}

// PutWrites implements Saver.
func (m *Memory) PutWrites(ctx context.Context, ref Ref, writes []Write) error {
	if err := CheckWrites(ref, writes); err != nil {
		return fmt.Errorf("put writes: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	est := itemBytes * (len(writes) + 1)
	for _, w := range writes {
		est += len(w.Value.Data)
	}
	held, err := m.reserve(ctx, ref.ThreadID, est)
	if err != nil {
		return fmt.Errorf("put writes: %w", err)
	}
	t, n := m.namespace(ctx, ref.ThreadID, ref.NS)
	t.charged += held
	c := n.cps[ref.ID]
	if c == nil {
		// Writes may precede their checkpoint's commit; keep them on an uncommitted shell.
		c = &memCheckpoint{writes: map[string]Write{}}
		n.cps[ref.ID] = c
		t.items++
	}
	for _, w := range writes {
		key := w.TaskID + "\x00" + strconv.Itoa(w.Idx)
		old, exists := c.writes[key]
		if exists && w.Idx >= 0 {
			continue
		}
		m.grow(t, len(w.Value.Data)-len(old.Value.Data))
		if !exists {
			t.items++
		}
		w.Value.Data = slices.Clone(w.Value.Data)
		c.writes[key] = w
	}
	m.settle(ctx, ref.ThreadID, t)
	m.evict(ctx, ref.ThreadID)
	return nil
}

// committed reports whether c holds a committed checkpoint (not a shell of early writes).
func (c *memCheckpoint) committed() bool { return c.cp.ID != "" }

// Get implements Saver.
func (m *Memory) Get(_ context.Context, ref Ref) (Tuple, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.lookup(ref.ThreadID, ref.NS)
	id := ref.ID
	if n != nil && id == "" {
		id = n.latest
	}
	if n == nil || n.cps[id] == nil || !n.cps[id].committed() {
		return Tuple{}, fmt.Errorf("get checkpoint %q of thread %q: %w", ref.ID, ref.ThreadID, ErrNotFound)
	}
	return n.tuple(ref.ThreadID, ref.NS, n.cps[id]), nil
}

func (m *Memory) lookup(threadID, ns string) *memNS {
	if t := m.threads[threadID]; t != nil {
		return t.ns[ns]
	}
	return nil
}

func (n *memNS) tuple(threadID, ns string, c *memCheckpoint) Tuple {
	tp := Tuple{ThreadID: threadID, NS: ns, Checkpoint: cloneCheckpoint(c.cp), Values: map[string]Value{}}
	for ch, ver := range c.cp.ChannelVersions {
		if v, ok := n.values[ch][ver]; ok && v.v.SerdeType != SerdeEmpty {
			tp.Values[ch] = Value{SerdeType: v.v.SerdeType, Data: slices.Clone(v.v.Data)}
		}
	}
	for _, w := range c.writes {
		w.Value.Data = slices.Clone(w.Value.Data)
		tp.Writes = append(tp.Writes, w)
	}
	SortWrites(tp.Writes)
	return tp
}

// SortWrites orders writes by task id, then index.
func SortWrites(ws []Write) {
	slices.SortFunc(ws, func(a, b Write) int {
		return cmp.Or(cmp.Compare(a.TaskID, b.TaskID), cmp.Compare(a.Idx, b.Idx))
	})
}

// ids returns the committed checkpoint ids, newest first.
func (n *memNS) ids() []string {
	var out []string
	for id, c := range n.cps {
		if c.committed() {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	slices.Reverse(out)
	return out
}

// List implements Saver.
func (m *Memory) List(_ context.Context, threadID, ns string, opts ListOptions) ([]Tuple, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.lookup(threadID, ns)
	if n == nil {
		return nil, nil
	}
	var out []Tuple
	for _, id := range n.ids() {
		if opts.Before != "" && id >= opts.Before {
			continue
		}
		out = append(out, n.tuple(threadID, ns, n.cps[id]))
		if opts.Limit > 0 && len(out) == opts.Limit {
			break
		}
	}
	return out, nil
}

// DeleteThread implements Saver.
func (m *Memory) DeleteThread(ctx context.Context, threadID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dropThread(ctx, threadID)
	return nil
}

// DeleteBefore implements Saver.
func (m *Memory) DeleteBefore(ctx context.Context, ref Ref) (int, error) {
	if err := CheckNames(ref.ThreadID, ref.NS, ref.ID); err != nil {
		return 0, fmt.Errorf("delete checkpoints: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.lookup(ref.ThreadID, ref.NS)
	if n == nil {
		return 0, nil
	}
	var doomed []string
	for id := range n.cps {
		if id < ref.ID {
			doomed = append(doomed, id)
		}
	}
	return m.deleteCheckpoints(ctx, ref.ThreadID, n, doomed), nil
}

// deleteCheckpoints removes the given checkpoints and counts the committed ones. Called
// with m.mu held.
func (m *Memory) deleteCheckpoints(ctx context.Context, threadID string, n *memNS, ids []string) int {
	t := m.threads[threadID]
	count := 0
	for _, id := range ids {
		c := n.cps[id]
		if c.committed() {
			count++
		}
		d := len(c.cp.Metadata)
		for _, w := range c.writes {
			d += len(w.Value.Data)
		}
		m.grow(t, -d)
		t.items -= 1 + len(c.writes)
		delete(n.cps, id)
	}
	m.settle(ctx, threadID, t)
	return count
}

// Prune implements Saver.
func (m *Memory) Prune(ctx context.Context, threadID, ns string, keep int) (int, error) {
	if keep < 0 {
		return 0, fmt.Errorf("prune checkpoints: %w: keep must not be negative, got %d", ErrInvalidArgument, keep)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.lookup(threadID, ns)
	if n == nil {
		return 0, nil
	}
	var buf [16]string
	ids := buf[:0]
	for id, c := range n.cps {
		if c.committed() {
			ids = append(ids, id)
		}
	}
	if len(ids) <= keep {
		return 0, nil
	}
	if len(ids) == keep+1 { // the steady state of a thread pruned on every step: drop the oldest
		return m.deleteCheckpoints(ctx, threadID, n, []string{slices.Min(ids)}), nil
	}
	slices.Sort(ids)
	return m.deleteCheckpoints(ctx, threadID, n, ids[:len(ids)-keep]), nil
}

// SweepOrphanedValues implements Saver.
func (m *Memory) SweepOrphanedValues(ctx context.Context, threadID string, opts SweepOptions) (SweepReport, error) {
	grace, err := sweepGrace(opts)
	if err != nil {
		return SweepReport{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var rep SweepReport
	t := m.threads[threadID]
	if t == nil {
		return rep, nil
	}
	cutoff := m.opts.Now().Add(-grace)
	for _, ns := range slices.Sorted(maps.Keys(t.ns)) {
		n := t.ns[ns]
		used := map[string]bool{}
		for _, c := range n.cps {
			for ch, ver := range c.cp.ChannelVersions {
				used[ch+"\x00"+ver] = true
			}
		}
		for ch, vers := range n.values {
			for ver, v := range vers {
				if used[ch+"\x00"+ver] || !v.at.Before(cutoff) {
					continue
				}
				rep.Orphans++
				if opts.Delete {
					m.grow(t, -len(v.v.Data))
					t.items--
					delete(vers, ver)
					rep.Deleted++
				}
			}
		}
	}
	m.settle(ctx, threadID, t)
	return rep, nil
}

// sweepGrace returns the grace period of opts.
func sweepGrace(opts SweepOptions) (time.Duration, error) {
	switch {
	case opts.Grace < 0:
		return 0, fmt.Errorf("sweep values: %w: grace must not be negative", ErrInvalidArgument)
	case opts.Grace == 0:
		return DefaultGrace, nil
	}
	return opts.Grace, nil
}

// SweepGrace returns the grace period opts ask for: DefaultGrace for 0, ErrInvalidArgument
// for a negative one. Backends share it.
func SweepGrace(opts SweepOptions) (time.Duration, error) { return sweepGrace(opts) }

func cloneCheckpoint(cp Checkpoint) Checkpoint {
	cp.ChannelVersions = maps.Clone(cp.ChannelVersions)
	if cp.ChannelVersions == nil {
		cp.ChannelVersions = map[string]string{}
	}
	if len(cp.Metadata) == 0 {
		cp.Metadata = json.RawMessage("{}")
	}
	cp.Metadata = slices.Clone(cp.Metadata)
	cp.TS = cp.TS.UTC()
	return cp
}
