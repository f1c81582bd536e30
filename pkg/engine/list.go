package engine

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
)

// A listing reads the indexShards partitions of one index family (index.go) and merges them
// newest first: every shard is read in row-key order, a page takes the smallest row key among
// the shards' next rows until it holds Limit rows, and the continuation token records, per
// shard, the row key of the last row taken from it (or that the shard is exhausted). A shard
// is fetched a few rows more than its fair share of a page at a time (listFetch), and again
// only when the merge empties its buffer, so a page of N runs costs indexShards partition
// queries in the common case (fewer once shards are exhausted), plus N head reads. An owner's listing (owner.go) and a group's
// (group.go) have one cursor, fetched a row more than the page holds (singleFetch), so that a
// page that takes the last row knows it and carries no token: one query per page, plus N head
// reads.

// listCursor is one shard of a listing and where it stands.
type listCursor struct {
	q Query // the shard's query, fixed for one call (a store continuation needs it)
	// oldestFirst: a group's partition of unfinished runs, whose row keys are flipped
	// (group.go)
	oldestFirst bool
	pos         string   // row key of the last row taken; "" none yet
	buf         []Entity // rows fetched and not taken
	done        bool     // nothing more to fetch or take
}

// tokenDone marks an exhausted shard in a continuation token; no row key starts with '~'.
const tokenDone = "~"

// listFetch is how many rows a shard is fetched at a time for a page of limit rows.
func listFetch(limit int) int {
	return min(limit, max(8, 2*((limit+indexShards-1)/indexShards)))
}

// singleFetch is how many rows the one cursor of an owner's or a group's listing is fetched
// at a time for a page of limit rows: one more, so that a store that has no more says so.
func singleFetch(limit int) int {
	return min(limit+1, MaxPageSize)
}

// createdRange returns the row-key range of q's created-time filter in a family ordered
// newest first. Row keys hold MaxInt64 - created as a fixed-width number, so for a bound t:
// created < t ⇔ number ≥ MaxInt64-t+1, and created ≥ t ⇔ number < MaxInt64-t+1.
func createdRange(q RunQuery) (from, to string) {
	from, to = indexRowFrom, indexRowTo
	if !q.CreatedBefore.IsZero() {
		from = padRowTime(math.MaxInt64 - q.CreatedBefore.UnixNano() + 1)
	}
	if !q.CreatedAfter.IsZero() {
		to = padRowTime(math.MaxInt64 - q.CreatedAfter.UnixNano() + 1)
	}
	return from, to
}

// listCursors returns the shards q reads (a group's listing: its one partition, group.go; an
// owner's: its one partition, owner.go), positioned by q's continuation token.
func listCursors(q RunQuery, limit int) ([]*listCursor, error) {
	var cs []*listCursor
	switch {
	case len(q.Keys) > 0:
		cs = []*listCursor{searchKeyCursor(q, limit)}
	case q.Group != "":
		c := groupCursor(q, limit)
		if q.Owner != "" {
			c.q.Where = append(c.q.Where, Cond{Property: iOwner, Op: CondEq, Value: q.Owner})
		}
		cs = []*listCursor{c}
	case q.Owner != "":
		cs = []*listCursor{ownerCursor(q, limit)}
	default:
		cs = shardCursors(q, limit)
	}
	positions, err := decodeListToken(q.ContinuationToken, len(cs))
	if err != nil || positions == nil {
		return cs, err
	}
	for i, c := range cs {
		switch p := positions[i]; p {
		case tokenDone:
			c.done = true
		case "":
		default:
			c.pos = p
			c.q.Where = append(c.q.Where, Cond{Property: "RowKey", Op: CondGt, Value: p})
		}
	}
	return cs, nil
}

// shardCursors returns the cursors of the indexShards partitions of q's family.
func shardCursors(q RunQuery, limit int) []*listCursor {
	family := indexAllPrefix
	if q.unfinished() {
		family = indexActivePrefix
	} else if q.GraphName != "" {
		family = indexGraphPrefix
	}
	base := Query{Limit: listFetch(limit)}
	base.RowKeyFrom, base.RowKeyTo = createdRange(q)
	if q.Status != "" && !q.unfinished() {
		base.Where = append(base.Where, finishedStatusConds(q.Status)...)
	}
	cs := make([]*listCursor, indexShards)
	for s := range cs {
		c := &listCursor{q: base}
		c.q.Where = append([]Cond(nil), base.Where...)
		c.q.PartitionKey = shardPrefix(family, s)
		if q.GraphName != "" {
			c.q.PartitionKey = graphPartition(c.q.PartitionKey, q.GraphName)
		}
		if q.GraphHash != "" {
			c.q.Where = append(c.q.Where, Cond{Property: iHash, Op: CondEq, Value: q.GraphHash})
		}
		cs[s] = c
	}
	return cs
}

// fill fetches rows into an empty buffer until it holds some or the shard is exhausted.
func (c *listCursor) fill(ctx context.Context, store Store) error {
	for len(c.buf) == 0 && !c.done {
		page, err := store.Query(ctx, c.q)
		if err != nil {
			return err
		}
		c.buf = page.Entities
		c.q.Continuation = page.Continuation
		if len(c.buf) == 0 && page.Continuation == "" {
			c.done = true
		}
	}
	return nil
}

// take removes the cursor's next row.
func (c *listCursor) take() Entity {
	ent := c.buf[0]
	c.buf = c.buf[1:]
	c.pos = ent.RowKey
	if len(c.buf) == 0 && c.q.Continuation == "" {
		c.done = true
	}
	return ent
}

// listedRow is an index row taken by a listing, with the shard it came from.
type listedRow struct {
	ent         Entity
	oldestFirst bool // ent's row key is flipped (group.go)
}

// rowKey returns the row key of the run's rows ordered newest first.
func (r listedRow) rowKey() string {
	if r.oldestFirst {
		return flipRowKey(r.ent.RowKey)
	}
	return r.ent.RowKey
}

// mergeShards takes up to limit rows from the shards, newest first, and returns them with the
// continuation token of what is left ("" when every shard is exhausted).
func (e *Engine) mergeShards(ctx context.Context, cs []*listCursor, limit int) ([]listedRow, string, error) {
	var rows []listedRow
	for len(rows) < limit {
		var best *listCursor
		for _, c := range cs {
			if err := c.fill(ctx, e.store); err != nil {
				return nil, "", err
			}
			if len(c.buf) > 0 && (best == nil || c.buf[0].RowKey < best.buf[0].RowKey) {
				best = c
			}
		}
		if best == nil {
			break
		}
		rows = append(rows, listedRow{ent: best.take(), oldestFirst: best.oldestFirst})
	}
	return rows, encodeListToken(cs), nil
}

// encodeListToken returns the continuation token of the cursors' positions, or "" when all
// are exhausted: base64url of a JSON array with, per shard, the last row key taken ("" for
// none yet) or tokenDone.
func encodeListToken(cs []*listCursor) string {
	positions := make([]string, len(cs))
	more := false
	for i, c := range cs {
		if c.done {
			positions[i] = tokenDone
			continue
		}
		more = true
		positions[i] = c.pos
	}
	if !more {
		return ""
	}
	b, _ := json.Marshal(positions)
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeListToken returns the n positions of a continuation token (nil for ""). Errors:
// ErrInvalidQuery for anything encodeListToken does not write for n cursors.
func decodeListToken(tok string, n int) ([]string, error) {
	if tok == "" {
		return nil, nil
	}
	bad := fmt.Errorf("%w: bad continuation token", ErrInvalidQuery)
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return nil, bad
	}
	var positions []string
	if err := json.Unmarshal(raw, &positions); err != nil || len(positions) != n {
		return nil, bad
	}
	for _, p := range positions {
		if p != "" && p != tokenDone && !validIndexRowKey(p) {
			return nil, bad
		}
	}
	return positions, nil
}

// ListRuns implements Runs: runs matching q, newest first, one page at a time, from the run
// index. Limit defaults to 100 (at most 1000). A page may hold fewer runs than Limit and still
// carry a continuation token. A graph name, group, owner or search key no run can have
// (ValidGraphName, ValidGroup, ValidOwner, CheckSearchKeys) lists nothing. A listing by Keys
// reads the partition of its first key only (searchkeys.go), a Group listing that group's
// partitions (group.go), an Owner listing that owner's (owner.go): neither a page nor its
// token then stems from other runs.
// Errors: ErrInvalidQuery for a continuation token ListRuns did not return, a time filter
// outside MinCreatedFilter..MaxCreatedFilter, or fields RunQuery says do not go together.
func (e *Engine) ListRuns(ctx context.Context, q RunQuery) (RunList, error) {
	if err := q.validate(); err != nil {
		return RunList{}, fmt.Errorf("list runs: %w", err)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, MaxPageSize)
	cs, err := listCursors(q, limit) // reads nothing: the token is checked first
	if err != nil {
		return RunList{}, fmt.Errorf("list runs: %w", err)
	}
	if q.GraphName != "" && !ValidGraphName(q.GraphName) || q.Group != "" && !ValidGroup(q.Group) || q.Owner != "" && !ValidOwner(q.Owner) ||
		CheckSearchKeys(q.Keys) != nil {
		return RunList{Runs: []Run{}}, nil
	}
	rows, token, err := e.mergeShards(ctx, cs, limit)
	if err != nil {
		return RunList{}, fmt.Errorf("list runs: %w", err)
	}
	runs := make([]*Run, len(rows))
	errs := make([]error, len(rows))
	clk := e.newStoreClock() // read only if an orphan row needs its age
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i, row := range rows {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			runs[i], errs[i] = e.listedRun(ctx, row, q, clk)
		}()
	}
	wg.Wait()
	out := RunList{Runs: make([]Run, 0, len(runs)), ContinuationToken: token}
	for i, r := range runs {
		if errs[i] != nil {
			return RunList{}, fmt.Errorf("list runs: %w", errs[i])
		}
		if r != nil {
			out.Runs = append(out.Runs, *r)
		}
	}
	return out, nil
}

// listedRun reads the run an index row names, or nil when the row is stale (the generation
// was replaced or purged, or never stored: then the row goes once it is old enough and fenced,
// dropOrphan) or the run's live status or hash does not match q.
func (e *Engine) listedRun(ctx context.Context, row listedRow, q RunQuery, clk *storeClock) (*Run, error) {
	h, current, err := e.indexedHead(ctx, row, clk)
	if err != nil || !current {
		return nil, err
	}
	if q.Status != "" && h.status != q.Status || q.Unfinished && !h.active() || q.GraphHash != "" && h.hash != q.GraphHash ||
		q.Owner != "" && h.owner != q.Owner || !hasSearchKeys(h.searchKeys, q.Keys) {
		return nil, nil
	}
	r, err := e.toRun(ctx, h)
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// indexedHead reads the head of the run an index row names. current is false when the row
// is not the head's generation; such a row is removed once it is old enough by the store's
// time (clk), and fenced (dropOrphan). A row whose status the finishing commit did not record
// (a crash in between) is repaired.
func (e *Engine) indexedHead(ctx context.Context, row listedRow, clk *storeClock) (h *head, current bool, err error) {
	p := row.ent.Properties
	h, err = e.getHead(ctx, str(p, iRunID))
	if errors.Is(err, ErrNotFound) {
		e.dropOrphan(ctx, row, clk)
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if str(p, iNonce) != h.nonce || h.gen != i64(p, iGen) || h.indexRef().rowKey != row.rowKey() {
		e.dropOrphan(ctx, row, clk)
		return nil, false, nil
	}
	if str(p, iStatus) != indexStatus(h.status) {
		e.indexSetStatus(ctx, h) // repair what a crash after the finishing commit left
	}
	return h, true, nil
}

// UnfinishedByVersion implements VersionCounter: it reads the active index of graph (every
// shard) and counts its rows per graph hash, in hash order. Cost: one query per 1,000
// unfinished runs and shard, no head read. A run a crash kept from leaving the active index
// after it finished, or the rows of a start that failed, count until a listing of the
// unfinished runs (Status Pending or Running) or the repair pass's walk of the active index
// repairs them: the count may be high, never low.
func (e *Engine) UnfinishedByVersion(ctx context.Context, graph string) ([]VersionCount, error) {
	if !ValidGraphName(graph) {
		return []VersionCount{}, nil
	}
	byHash := map[string]*VersionCount{}
	count := func(hash, version string) {
		c := byHash[hash]
		if c == nil {
			c = &VersionCount{GraphHash: hash, GraphVersion: version}
			byHash[hash] = c
		}
		c.Unfinished++
	}
	for s := range indexShards {
		q := Query{PartitionKey: graphPartition(shardPrefix(indexActivePrefix, s), graph), RowKeyFrom: indexRowFrom, RowKeyTo: indexRowTo}
		for {
			page, err := e.store.Query(ctx, q)
			if err != nil {
				return nil, fmt.Errorf("count unfinished runs of graph %s: %w", graph, err)
			}
			for _, ent := range page.Entities {
				count(str(ent.Properties, iHash), str(ent.Properties, iVersion))
			}
			if q.Continuation = page.Continuation; q.Continuation == "" {
				break
			}
		}
	}
	out := make([]VersionCount, 0, len(byHash))
	for _, c := range byHash {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b VersionCount) int { return strings.Compare(a.GraphHash, b.GraphHash) })
	return out, nil
}
