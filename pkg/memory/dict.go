package memory

import (
	"hash/maphash"
	"strings"
)

// dict is a store's dictionary of frequent string values: a string written often enough
// (dictMinUses times, counted by its hash among the recent candidates) is kept once and rows
// hold its index. What a waiting run repeats from every other — its graph, node, event and
// status names, its custom status, its route decisions — is then 2 or 3 bytes a row. A
// value unique to a run (its id, its state) never gets there. The dictionary only grows, up
// to dictMaxEntries strings and dictMaxBytes bytes. Guarded by its lockedCodec's mu.
type dict struct {
	seed   maphash.Seed
	ids    map[uint64]uint32 // hash of a value → its index in list
	list   []string
	boxed  []any // list's strings as interface values: reading one back allocates nothing
	bytes  int
	counts *[dictSlots]uint8 // uses of the candidates, by hash (a candidate may share its slot)
	uses   int               // counted since counts was cleared
	// recent caches entries by a cheap slot of their value (length, first and last byte), so
	// the values the engine writes all the time (names, statuses) are found without hashing.
	recent [64]struct {
		v string
		i uint32
	}
}

const (
	dictMinLen     = 4   // shorter strings save nothing
	dictMaxLen     = 512 // longer ones are rarely repeated whole
	dictMinUses    = 16  // more than a run's own values repeat within its rows
	dictMaxEntries = 1 << 16
	dictMaxBytes   = 4 << 20
	dictCandidates = 1 << 14 // the candidate counts are cleared after this many uses
	// dictSlots is the number of candidate counters: 4 times dictCandidates, so that few
	// values share one before it is cleared.
	dictSlots = 1 << 16
)

// index returns the index of v, adding v when it is now frequent; ok is false when v stays
// inline.
func (d *dict) index(v string) (uint32, bool) {
	if len(v) < dictMinLen || len(v) > dictMaxLen {
		return 0, false
	}
	slot := &d.recent[(uint(len(v))*31+uint(v[0])+7*uint(v[len(v)-1]))%uint(len(d.recent))]
	if slot.v == v {
		return slot.i, true
	}
	if d.ids == nil {
		d.seed = maphash.MakeSeed()
		d.ids = map[uint64]uint32{}
		d.counts = new([dictSlots]uint8)
	}
	h := maphash.String(d.seed, v)
	if i, ok := d.ids[h]; ok {
		if d.list[i] != v {
			return 0, false // a hash collision stays inline
		}
		slot.v, slot.i = d.list[i], i
		return i, true
	}
	if len(d.list) >= dictMaxEntries || d.bytes+len(v) > dictMaxBytes {
		return 0, false
	}
	count := &d.counts[h%dictSlots]
	if *count+1 < dictMinUses {
		if d.uses++; d.uses >= dictCandidates {
			clear(d.counts[:])
			d.uses = 0
		}
		*count++
		return 0, false
	}
	*count = 0
	i := uint32(len(d.list))
	v = strings.Clone(v)
	d.list = append(d.list, v)
	d.boxed = append(d.boxed, v)
	d.bytes += len(v)
	d.ids[h] = i
	return i, true
}
