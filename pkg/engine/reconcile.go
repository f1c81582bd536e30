package engine

import (
	"context"
	"errors"
	"fmt"
)

// The repair pass's walk of the active index. A run's finishing commit is followed by the
// merge of its final status into its index rows and the delete of its active rows
// (indexSetStatus); when those fail (a storage error, a crash in between), the run stays
// "active" in the index, where retention, which reads only finished rows, would never purge
// it. Listings of unfinished runs repair such rows as they meet them; the walk makes sure
// every one is met without a listing: each pass reads the next activePerPass rows of one
// active partition ("~active-<s>", one shard after the other), from a cursor kept in the
// store, reads their heads (at most sweepParallel at a time) and records the status of the
// finished ones; a row whose head is missing or another generation is settled as a listing
// settles it (dropOrphan: once RepairAfter old by the store's time, fenced first). The
// cursor moves to the next partition at the end of one, so a walk of the whole index takes
// (active runs / activePerPass) + indexShards passes, whatever the number of finished
// runs.
//
// Cost per pass: 1 T cursor read, 1 T query (a few when the store returns empty pages), up
// to activePerPass T head reads, 1 T cursor write, plus the repairs.

// activePerPass bounds the active index rows one repair pass reads.
const activePerPass = 64

// The walk's cursor: a row of the repair partition with the shard it reads and the row key it
// has read up to ("": from the start).
const (
	activeCursorRow            = "0active"
	pCursorShard, pCursorAfter = "Shard", "After"
)

// reconcileActive walks the next stretch of the active index (see above).
func (e *Engine) reconcileActive(ctx context.Context, pass *sweepPass) error {
	shard, after, err := e.activeCursor(ctx)
	if err != nil {
		return err
	}
	q := Query{PartitionKey: shardPrefix(indexActivePrefix, shard), RowKeyFrom: indexRowFrom, RowKeyTo: indexRowTo, Limit: activePerPass}
	if after != "" {
		q.Where = []Cond{{Property: "RowKey", Op: CondGt, Value: after}}
	}
	var page Page
	for range 4 { // a store may answer an empty page that still has a continuation
		if page, err = e.store.Query(ctx, q); err != nil {
			return fmt.Errorf("walk the active index: %w", err)
		}
		if len(page.Entities) > 0 || page.Continuation == "" {
			break
		}
		q.Continuation = page.Continuation
	}
	rows := page.Entities
	n, errs := pass.each(len(rows), func(i int) error {
		if _, _, err := e.indexedHead(ctx, listedRow{ent: rows[i]}, pass.clock); err != nil {
			return fmt.Errorf("walk the active index: %w", err)
		}
		return nil
	})
	switch {
	case n > 0:
		after = rows[n-1].RowKey
		if n == len(rows) && page.Continuation == "" {
			shard, after = (shard+1)%indexShards, ""
		}
	case page.Continuation == "":
		shard, after = (shard+1)%indexShards, ""
	}
	if err := e.saveActiveCursor(ctx, shard, after); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// activeCursor reads where the walk of the active index stands.
func (e *Engine) activeCursor(ctx context.Context) (shard int, after string, err error) {
	ent, err := e.store.Get(ctx, repairPartition, activeCursorRow)
	if errors.Is(err, ErrNotFound) {
		return 0, "", nil
	}
	if err != nil {
		return 0, "", fmt.Errorf("read the active index cursor: %w", err)
	}
	shard, after = int(i64(ent.Properties, pCursorShard)), str(ent.Properties, pCursorAfter)
	if shard < 0 || shard >= indexShards || after != "" && !validIndexRowKey(after) {
		return 0, "", nil // not a cursor this code wrote: start over
	}
	return shard, after, nil
}

// saveActiveCursor records where the walk stands. Two passes at once may both move it; the
// later write wins, and at worst a stretch is walked twice.
func (e *Engine) saveActiveCursor(ctx context.Context, shard int, after string) error {
	props := map[string]any{pCursorShard: int64(shard), pCursorAfter: after}
	_, err := e.store.Submit(ctx, []Op{{Kind: OpMerge, IfMatch: ETagAny, Entity: Entity{PartitionKey: repairPartition, RowKey: activeCursorRow, Properties: props}}})
	if errors.Is(err, ErrNotFound) {
		_, err = e.store.Submit(ctx, []Op{{Kind: OpInsert, Entity: Entity{PartitionKey: repairPartition, RowKey: activeCursorRow, Properties: props}}})
		if errors.Is(err, ErrConflict) {
			err = nil // another pass wrote one meanwhile
		}
	}
	if err != nil {
		return fmt.Errorf("save the active index cursor: %w", err)
	}
	return nil
}
