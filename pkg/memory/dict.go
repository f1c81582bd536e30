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
// to dictMaxEntries strings and dictMaxBytes bytes. Guarded by the Store's mu.
type dict struct {
	seed   maphash.Seed
	ids    map[uint64]uint32 // hash of a value → its index in list
	list   []string
	bytes  int
	counts map[uint64]uint8 // uses of the candidates, by hash
}

const (
	dictMinLen     = 4   // shorter strings save nothing
	dictMaxLen     = 512 // longer ones are rarely repeated whole
	dictMinUses    = 16  // more than a run's own values repeat within its rows
	dictMaxEntries = 1 << 16
	dictMaxBytes   = 4 << 20
	dictCandidates = 1 << 14 // the candidate counts are cleared when they reach this many
)

// index returns the index of v, adding v when it is now frequent; ok is false when v stays
// inline.
func (d *dict) index(v string) (uint32, bool) {
	if len(v) < dictMinLen || len(v) > dictMaxLen {
		return 0, false
	}
	if d.ids == nil {
		d.seed = maphash.MakeSeed()
		d.ids = map[uint64]uint32{}
		d.counts = map[uint64]uint8{}
	}
	h := maphash.String(d.seed, v)
	if i, ok := d.ids[h]; ok {
		return i, d.list[i] == v // a hash collision stays inline
	}
	if len(d.list) >= dictMaxEntries || d.bytes+len(v) > dictMaxBytes {
		return 0, false
	}
	n := d.counts[h] + 1
	if n < dictMinUses {
		if len(d.counts) >= dictCandidates {
			clear(d.counts)
		}
		d.counts[h] = n
		return 0, false
	}
	delete(d.counts, h)
	i := uint32(len(d.list))
	d.list = append(d.list, strings.Clone(v))
	d.bytes += len(v)
	d.ids[h] = i
	return i, true
}
