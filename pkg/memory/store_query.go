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
	s.mu.Lock()
	defer s.mu.Unlock()
	var pks []string
	if q.PartitionKey != "" {
		pks = []string{q.PartitionKey}
	} else {
		if s.pkDirty {
			s.compactKeys()
		}
		i, _ := slices.BinarySearch(s.pkeys, startPK)
		pks = s.pkeys[i:]
	}
	exactRK, hasExact := exactRowKey(q.Where)
	var page engine.Page
	for _, pk := range pks {
		if pk < startPK {
			continue
		}
		p := s.parts[pk]
		if p == nil {
			continue
		}
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
				return page, nil
			}
			page.Entities = append(page.Entities, s.entity(pk, r))
		}
	}
	return page, nil
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
			if v, ok = s.codec.get(r.enc(), c.Property); !ok {
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
func (s *Store) compactKeys() {
	keys := s.pkeys[:0]
	for _, pk := range s.pkeys {
		if s.parts[pk] != nil {
			keys = append(keys, pk)
		}
	}
	slices.Sort(keys)
	s.pkeys = slices.Compact(keys)
	s.pkDirty = false
}
