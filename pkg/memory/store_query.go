package memory

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// Query implements engine.Store.
func (s *Store) Query(ctx context.Context, q engine.Query) (engine.Page, error) {
	if err := ctx.Err(); err != nil {
		return engine.Page{}, err
	}
	if err := engine.ValidateQuery(q); err != nil {
		return engine.Page{}, err
	}
	limit := q.Limit
	if limit == 0 {
		limit = engine.MaxPageSize
	}
	startPK, startRK, err := decodeToken(q.Continuation)
	if err != nil {
		return engine.Page{}, err
	}
	exactRK, hasExact := exactRowKey(q.Where)
	var page engine.Page
	// scan adds the matching rows of partition pk to the page; false when the page is full.
	scan := func(pk string, p *partition) bool {
		from := q.RowKeyFrom
		if pk == startPK && startRK > from {
			from = startRK
		}
		rows := p.rows
		if hasExact { // a point lookup per partition instead of a scan
			rows = nil
			if j, ok := p.find(exactRK); ok && exactRK >= from {
				rows = p.rows[j : j+1]
			}
			from = ""
		}
		i, _ := slices.BinarySearchFunc(rows, from, func(r row, k string) int { return strings.Compare(r.key(), k) })
		for j := range rows[i:] {
			r := &rows[i+j]
			if q.RowKeyTo != "" && r.key() >= q.RowKeyTo {
				break
			}
			if !s.matchAll(q.Where, pk, r) {
				continue
			}
			if len(page.Entities) == limit {
				page.Continuation = encodeToken(pk, r.key())
				return false
			}
			page.Entities = append(page.Entities, s.entity(pk, r))
		}
		return true
	}
	if pk := q.PartitionKey; pk != "" {
		sh := s.shardOf(pk)
		sh.mu.Lock()
		defer sh.mu.Unlock()
		if p := sh.parts[pk]; p != nil && pk >= startPK {
			scan(pk, p)
		}
		return page, nil
	}
	for i := range s.shards {
		s.shards[i].mu.Lock()
		defer s.shards[i].mu.Unlock()
	}
	s.eachPartition(startPK, scan)
	return page, nil
}

// eachPartition calls f on every partition from the key from on, in key order (a merge of
// the shards' sorted keys), until f returns false. Called with every shard's lock held.
func (s *Store) eachPartition(from string, f func(pk string, p *partition) bool) {
	var at [storeShards]int
	for i := range s.shards {
		sh := &s.shards[i]
		if sh.pkDirty {
			sh.compactKeys()
		}
		at[i], _ = slices.BinarySearch(sh.pkeys, from)
	}
	for {
		best := -1
		for i := range s.shards {
			if at[i] < len(s.shards[i].pkeys) && (best < 0 || s.shards[i].pkeys[at[i]] < s.shards[best].pkeys[at[best]]) {
				best = i
			}
		}
		if best < 0 {
			return
		}
		sh := &s.shards[best]
		pk := sh.pkeys[at[best]]
		at[best]++
		if !f(pk, sh.parts[pk]) {
			return
		}
	}
}

// exactRowKey returns the row key of a "RowKey eq" condition, if any.
func exactRowKey(conds []engine.Cond) (string, bool) {
	for _, c := range conds {
		if c.Property == "RowKey" && c.Op == engine.CondEq {
			if s, ok := c.Value.(string); ok {
				return s, true
			}
		}
	}
	return "", false
}

// Tokens are base64("pk\x00rk"); keys cannot hold control characters.
func encodeToken(pk, rk string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(pk + "\x00" + rk))
}

func decodeToken(tok string) (pk, rk string, err error) {
	if tok == "" {
		return "", "", nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return "", "", fmt.Errorf("%w: bad continuation token", engine.ErrInvalidQuery)
	}
	pk, rk, ok := strings.Cut(string(raw), "\x00")
	if !ok || pk == "" { // as tablestore: every token names the partition it continues in
		return "", "", fmt.Errorf("%w: bad continuation token", engine.ErrInvalidQuery)
	}
	return pk, rk, nil
}

func (s *Store) matchAll(conds []engine.Cond, pk string, r *row) bool {
	for _, c := range conds {
		var v any
		switch c.Property {
		case "PartitionKey":
			v = pk
		case "RowKey":
			v = r.key()
		default:
			var ok bool
			lc := s.codecOf(r.key())
			lc.mu.Lock()
			v, ok = lc.get(r.enc(), c.Property)
			lc.mu.Unlock()
			if !ok {
				return false
			}
		}
		cmp, ok := compare(v, c.Value)
		if !ok {
			return false
		}
		var hold bool
		switch c.Op {
		case engine.CondEq:
			hold = cmp == 0
		case engine.CondNe:
			hold = cmp != 0
		case engine.CondLt:
			hold = cmp < 0
		case engine.CondLe:
			hold = cmp <= 0
		case engine.CondGt:
			hold = cmp > 0
		case engine.CondGe:
			hold = cmp >= 0
		}
		if !hold {
			return false
		}
	}
	return true
}

// compare orders a stored value against a condition value; ok is false when the types differ
// (as in Azure, such a condition is false).
func compare(a, b any) (int, bool) {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return strings.Compare(x, y), ok
	case int64, int32:
		xi := toInt(x)
		switch b.(type) {
		case int64, int32:
			return cmpInt(xi, toInt(b)), true
		}
	case float64:
		if y, ok := b.(float64); ok {
			switch {
			case x < y:
				return -1, true
			case x > y:
				return 1, true
			}
			return 0, true
		}
	case bool:
		if y, ok := b.(bool); ok {
			return cmpInt(boolInt(x), boolInt(y)), true
		}
	case time.Time:
		if y, ok := b.(time.Time); ok {
			return x.Compare(y), true
		}
	case []byte:
		if y, ok := b.([]byte); ok {
			return bytes.Compare(x, y), true
		}
	}
	return 0, false
}

func toInt(v any) int64 {
	if i, ok := v.(int32); ok {
		return int64(i)
	}
	return v.(int64)
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// compactKeys sorts pkeys and drops the keys of emptied partitions and repeats (a partition
// emptied and filled again is appended again). Called with mu held.
func (sh *shard) compactKeys() {
	keys := sh.pkeys[:0]
	for _, pk := range sh.pkeys {
		if sh.parts[pk] != nil {
			keys = append(keys, pk)
		}
	}
	slices.Sort(keys)
	sh.pkeys = slices.Compact(keys)
	sh.pkDirty = false
}
