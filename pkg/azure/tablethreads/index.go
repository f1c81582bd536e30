package tablethreads

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// The index (doc.go) lives in a companion table. Families and their partitions:
//
//	all-<s>             every thread                      (nonce ix_c)
//	st-<s>~<status>     threads with that status          (nonce ix_s)
//	ow~<owner hash>     threads whose metadata "owner" is that string (nonce ix_o)
//	                    s = FNV-1a(thread id) mod indexShards
//
// RowKey: <19-digit MaxInt64 - created (100 ns)>!<sortable(thread id)>!<nonce>, so a
// partition lists newest first, ties by thread id, as threads.SortAndPage does. Properties:
// tid (the thread id) and v (the entity version the row was written for).
const (
	indexShards   = 8
	familyAll     = "all"
	familyStatus  = "st"
	familyOwner   = "ow"
	ownerKey      = "owner"
	pVer          = "ix_v"
	pNonceAll     = "ix_c"
	pNonceStatus  = "ix_s"
	pNonceOwner   = "ix_o"
	rowTID, rowV  = "tid", "v"
	indexRowFrom  = "0"
	indexRowUntil = ":" // the byte after '9'
)

// repairAfter is how old a row that no stored thread vouches for must be before a reader
// deletes it, when it may belong to a write in flight (rows are written before the entity).
const repairAfter = 5 * time.Minute

// ixState is the index bookkeeping of a thread entity: its version (bumped by every write) and
// the nonce of its row in each family ("" when it has none).
type ixState struct {
	ver                int64
	all, status, owner string
}

// ixRow is one index row: where it is, the thread it names, and what it needs to be live.
type ixRow struct {
	pk, rk, tid, nonce string
	ver                int64
	written            time.Time
}

func shard(tid string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(tid))
	return int(h.Sum32() % indexShards)
}

func allPartition(s int) string { return familyAll + "-" + strconv.Itoa(s) }

func statusPartition(s int, st threads.Status) string {
	return familyStatus + "-" + strconv.Itoa(s) + "~" + string(st)
}

func ownerPartition(owner string) string {
	sum := sha256.Sum256([]byte(owner))
	return familyOwner + "~" + hex.EncodeToString(sum[:16])
}

// ownerOf is the owner the index serves: metadata "owner" when it is a string.
func ownerOf(meta map[string]any) (string, bool) {
	o, ok := meta[ownerKey].(string)
	return o, ok
}

func newNonce() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func indexRowKey(created time.Time, tid, nonce string) string {
	inv := strconv.FormatInt(math.MaxInt64-created.Truncate(100*time.Nanosecond).UnixNano(), 10)
	return strings.Repeat("0", 19-len(inv)) + inv + "!" + sortable(tid) + "!" + nonce
}

// sortableDigits are 64 key-safe characters in ascending byte order.
const sortableDigits = "-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"

// sortable encodes s six bits a character (its last bits zero-padded) in sortableDigits, so
// that the encodings, each followed by "!" (below every digit), sort as the strings do: a
// 256-byte thread id takes 342 characters, which keeps the row key under the 512 the service
// allows.
func sortable(s string) string {
	var sb strings.Builder
	var acc uint32
	bits := 0
	for i := 0; i < len(s); i++ {
		acc, bits = acc<<8|uint32(s[i]), bits+8
		for bits >= 6 {
			bits -= 6
			sb.WriteByte(sortableDigits[acc>>bits&63])
		}
	}
	if bits > 0 {
		sb.WriteByte(sortableDigits[acc<<(6-bits)&63])
	}
	return sb.String()
}

// rowsOf returns the index rows t has under ix.
func rowsOf(t threads.Thread, ix ixState) []ixRow {
	var rows []ixRow
	add := func(pk, nonce string) {
		if nonce != "" {
			rows = append(rows, ixRow{pk: pk, rk: indexRowKey(t.CreatedAt, t.ThreadID, nonce), tid: t.ThreadID, nonce: nonce, ver: ix.ver})
		}
	}
	s := shard(t.ThreadID)
	add(allPartition(s), ix.all)
	add(statusPartition(s, t.Status), ix.status)
	if o, ok := ownerOf(t.Metadata); ok {
		add(ownerPartition(o), ix.owner)
	}
	return rows
}

// nextIndex returns the index state of next, written over prev (stored with old): a family
// keeps its nonce while the thread stays in the same partition of it, and gets a new one
// (a new row) otherwise. added are the rows to write before the entity, dropped the rows to
// delete once it is stored.
func nextIndex(prev threads.Thread, old ixState, next threads.Thread) (ix ixState, added, dropped []ixRow) {
	ix = ixState{ver: old.ver + 1, all: old.all, status: old.status, owner: old.owner}
	if ix.all == "" {
		ix.all = newNonce()
	}
	if ix.status == "" || prev.Status != next.Status {
		ix.status = newNonce()
	}
	po, pok := ownerOf(prev.Metadata)
	no, nok := ownerOf(next.Metadata)
	switch {
	case !nok:
		ix.owner = ""
	case ix.owner == "" || !pok || po != no:
		ix.owner = newNonce()
	}
	before, after := rowsOf(prev, old), rowsOf(next, ix)
	key := func(r ixRow) string { return r.pk + "\x00" + r.rk }
	seen := map[string]bool{}
	for _, r := range before {
		seen[key(r)] = true
	}
	kept := map[string]bool{}
	for _, r := range after {
		if seen[key(r)] {
			kept[key(r)] = true
		} else {
			added = append(added, r)
		}
	}
	for _, r := range before {
		if !kept[key(r)] {
			dropped = append(dropped, r)
		}
	}
	return ix, added, dropped
}

// putRows writes index rows (before the entity they index).
func (s *Store) putRows(ctx context.Context, rows []ixRow) error {
	for _, r := range rows {
		b, err := json.Marshal(map[string]any{
			"PartitionKey": r.pk, "RowKey": r.rk, rowTID: r.tid,
			rowV: strconv.FormatInt(r.ver, 10), rowV + "@odata.type": "Edm.Int64",
		})
		if err != nil {
			return fmt.Errorf("encode index row: %w", err)
		}
		if _, err := s.index.UpsertEntity(ctx, b, nil); err != nil {
			return fmt.Errorf("write index row of thread %q: %w", r.tid, reduce(err))
		}
	}
	return nil
}

// dropRows deletes index rows no entity refers to; a failure leaves them to the readers'
// repair.
func (s *Store) dropRows(ctx context.Context, rows []ixRow) {
	ctx = context.WithoutCancel(ctx)
	for _, r := range rows {
		if _, err := s.index.DeleteEntity(ctx, r.pk, r.rk, nil); err != nil && !isNotFound(err) {
			s.logger.Warn("delete thread index row", "thread_id", r.tid, "partition", r.pk, "error", err)
		}
	}
}

// live reports whether row is the row of family for the stored thread t (with ix); when it
// is not and it can no longer become so, it is deleted. found is false for a missing thread.
func (s *Store) live(ctx context.Context, row ixRow, found bool, t threads.Thread, ix ixState) bool {
	if found {
		for _, r := range rowsOf(t, ix) {
			if r.pk == row.pk && r.rk == row.rk {
				return true
			}
		}
	}
	// A row is dead when the thread's version reached the row's without taking it (its
	// writer's compare-and-swap can no longer succeed), or when it is older than any write
	// in flight.
	if found && row.ver <= ix.ver || time.Since(row.written) > repairAfter {
		s.dropRows(ctx, []ixRow{row})
	}
	return false
}

// decodeRow reads an index row of a listing.
func decodeRow(pk string, b []byte) (ixRow, error) {
	var e map[string]any
	if err := json.Unmarshal(b, &e); err != nil {
		return ixRow{}, fmt.Errorf("decode thread index row: %w", err)
	}
	r := ixRow{pk: pk}
	r.rk, _ = e["RowKey"].(string)
	r.tid, _ = e[rowTID].(string)
	r.ver = int64Prop(e[rowV])
	if i := strings.LastIndexByte(r.rk, '!'); i >= 0 {
		r.nonce = r.rk[i+1:]
	}
	if ts, ok := e["Timestamp"].(string); ok {
		r.written, _ = time.Parse(time.RFC3339Nano, ts)
	}
	return r, nil
}

// int64Prop reads an Edm.Int64 property (JSON text) or a plain number.
func int64Prop(v any) int64 {
	switch x := v.(type) {
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	case float64:
		return int64(x)
	}
	return 0
}

// cursor reads one index partition in row-key order, a page of at most top rows at a time.
type cursor struct {
	pk    string
	pager interface {
		More() bool
		NextPage(context.Context) (aztables.ListEntitiesResponse, error)
	}
	buf []ixRow
}

func (s *Store) newCursor(pk string, top int) *cursor {
	f := fmt.Sprintf("PartitionKey eq '%s' and RowKey ge '%s' and RowKey lt '%s'", pk, indexRowFrom, indexRowUntil)
	sel := "RowKey," + rowTID + "," + rowV + ",Timestamp"
	opts := &aztables.ListEntitiesOptions{Filter: &f, Select: &sel}
	if top > 0 {
		t := int32(min(top, 1000))
		opts.Top = &t
	}
	return &cursor{pk: pk, pager: s.index.NewListEntitiesPager(opts)}
}

// peek returns the cursor's next row, reading a page when needed; ok is false at the end.
func (c *cursor) peek(ctx context.Context) (ixRow, bool, error) {
	for len(c.buf) == 0 {
		if !c.pager.More() {
			return ixRow{}, false, nil
		}
		page, err := c.pager.NextPage(ctx)
		if err != nil {
			return ixRow{}, false, fmt.Errorf("list thread index: %w", reduce(err))
		}
		for _, b := range page.Entities {
			r, err := decodeRow(c.pk, b)
			if err != nil {
				return ixRow{}, false, err
			}
			c.buf = append(c.buf, r)
		}
	}
	return c.buf[0], true, nil
}

// merged reads several partitions of one family as one list, newest first.
type merged []*cursor

// next returns the row with the smallest row key among the cursors' heads.
func (m merged) next(ctx context.Context) (ixRow, bool, error) {
	best := -1
	var row ixRow
	for i, c := range m {
		r, ok, err := c.peek(ctx)
		if err != nil {
			return ixRow{}, false, err
		}
		if ok && (best < 0 || r.rk < row.rk) {
			best, row = i, r
		}
	}
	if best < 0 {
		return ixRow{}, false, nil
	}
	m[best].buf = m[best].buf[1:]
	return row, true, nil
}

// family returns the partitions that list every thread q can match: the owner's when q asks
// for a string owner, else the status's shards, else all shards.
func family(q threads.Query) []string {
	if o, ok := ownerOf(q.Metadata); ok {
		return []string{ownerPartition(o)}
	}
	out := make([]string, indexShards)
	for i := range out {
		if q.Status != "" {
			out[i] = statusPartition(i, q.Status)
		} else {
			out[i] = allPartition(i)
		}
	}
	return out
}
