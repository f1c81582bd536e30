package threads

import (
	"container/heap"
	"strings"
	"time"
)

// ownerIndex is what a bounded Memory knows of each owner's threads, so that making room
// costs O(log n) instead of a scan: per owner the count of its threads and a min-heap of those
// that are not busy (least recently updated first), and a max-heap of the owners by how many
// threads they could drop. Every write of the store keeps it up to date (reindex). Owned by
// the Memory; guarded by its mu.
type ownerIndex struct {
	owners map[string]*ownerThreads
	idle   map[string]*idleEntry // thread id → its entry in its owner's heap (not busy only)
	heavy  heavyHeap             // owners with a thread that is not busy, the most first
}

type ownerThreads struct {
	name string
	all  int      // its threads, busy or not
	idle idleHeap // its threads that are not busy
	pos  int      // index in heavy; -1 when not there
}

type idleEntry struct {
	id  string
	at  time.Time
	pos int
}

func newOwnerIndex() *ownerIndex {
	return &ownerIndex{owners: map[string]*ownerThreads{}, idle: map[string]*idleEntry{}}
}

// reindex moves thread old (nil: none) to t (nil: removed) in the index.
func (x *ownerIndex) reindex(old, t *Thread) {
	if old != nil {
		o := x.owners[ownerOf(*old)]
		if e := x.idle[old.ThreadID]; e != nil {
			heap.Remove(&o.idle, e.pos)
			delete(x.idle, old.ThreadID)
		}
		o.all--
		x.settle(o)
	}
	if t != nil {
		name := ownerOf(*t)
		o := x.owners[name]
		if o == nil {
			o = &ownerThreads{name: name, pos: -1}
			x.owners[name] = o
		}
		o.all++
		if t.Status != StatusBusy {
			e := &idleEntry{id: t.ThreadID, at: t.UpdatedAt}
			heap.Push(&o.idle, e)
			x.idle[t.ThreadID] = e
		}
		x.settle(o)
	}
}

// settle puts o where it belongs in heavy after its idle heap changed, and forgets an owner
// with no thread.
func (x *ownerIndex) settle(o *ownerThreads) {
	switch {
	case len(o.idle) == 0 && o.pos >= 0:
		heap.Remove(&x.heavy, o.pos)
	case len(o.idle) > 0 && o.pos < 0:
		heap.Push(&x.heavy, o)
	case o.pos >= 0:
		heap.Fix(&x.heavy, o.pos)
	}
	if o.all == 0 {
		delete(x.owners, o.name)
	}
}

// count returns how many threads owner has.
func (x *ownerIndex) count(owner string) int {
	if o := x.owners[owner]; o != nil {
		return o.all
	}
	return 0
}

// oldestOf returns owner's least recently updated thread that is not busy.
func (x *ownerIndex) oldestOf(owner string) (string, bool) {
	if o := x.owners[owner]; o != nil && len(o.idle) > 0 {
		return o.idle[0].id, true
	}
	return "", false
}

// oldestOfHeaviest returns the least recently updated thread that is not busy of the owner
// with the most such threads: creator's on a tie, else the smallest owner name.
func (x *ownerIndex) oldestOfHeaviest(creator string) (string, bool) {
	if len(x.heavy) == 0 {
		return "", false
	}
	top := x.heavy[0]
	if c := x.owners[creator]; c != nil && len(c.idle) == len(top.idle) {
		top = c
	}
	return top.idle[0].id, true
}

// idleHeap orders an owner's threads least recently updated first (ties by id).
type idleHeap []*idleEntry

func (h idleHeap) Len() int { return len(h) }
func (h idleHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].id < h[j].id
}
func (h idleHeap) Swap(i, j int)  { h[i], h[j] = h[j], h[i]; h[i].pos, h[j].pos = i, j }
func (h *idleHeap) Push(v any)    { e := v.(*idleEntry); e.pos = len(*h); *h = append(*h, e) }
func (h *idleHeap) Pop() any      { old := *h; e := old[len(old)-1]; *h = old[:len(old)-1]; return e }
func (h heavyHeap) Len() int      { return len(h) }
func (h heavyHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i]; h[i].pos, h[j].pos = i, j }
func (h *heavyHeap) Push(v any)   { o := v.(*ownerThreads); o.pos = len(*h); *h = append(*h, o) }
func (h *heavyHeap) Pop() any {
	old := *h
	o := old[len(old)-1]
	o.pos = -1
	*h = old[:len(old)-1]
	return o
}

// heavyHeap orders owners by how many threads they could drop, the most first (ties by the
// smallest name).
type heavyHeap []*ownerThreads

func (h heavyHeap) Less(i, j int) bool {
	if len(h[i].idle) != len(h[j].idle) {
		return len(h[i].idle) > len(h[j].idle)
	}
	return strings.Compare(h[i].name, h[j].name) < 0
}
