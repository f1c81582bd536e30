package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Retention bounds how many finished runs the engine keeps: Sweep purges, oldest first, the
// finished runs past MaxRuns or created more than MaxAge ago, as PurgeRun does (rows, head,
// payloads, index rows). A run that is Pending or Running is never touched, however old.
// The zero value keeps every run.
//
// It reads only the run index ("~runs-<s>" partitions, finished rows only) — never a run's
// history, never a scan of the run store: with MaxAge alone, one query page per index shard
// starting at the age's row key; with MaxRuns, the newest MaxRuns/8 finished rows of each of
// the 8 shards are read and skipped first, so keep MaxRuns small (it is meant for the
// in-memory backend). Each pass purges at most PerPass runs; the rest wait for the next.
// Rows in the legacy, unsharded index partitions are not considered.
//
// On a store that accounts its runs to owners (RunAccounts: the in-memory store with a byte
// budget) the limits apply per owner: each owner keeps its own newest MaxRuns finished runs
// (MaxRuns/8 per shard), and while an owner is Crowded its oldest finished runs go too
// (oldest first within each shard), so one owner's load never purges another owner's runs.
// A pass then reads every finished row of the index (the store is in memory).
type Retention struct {
	// MaxAge purges finished runs created more than MaxAge ago (0: no age limit).
	MaxAge time.Duration
	// MaxRuns keeps about this many finished runs, the newest (0: no count limit). The
	// count is kept per index shard (MaxRuns/8 each, rounded up), so the total may differ
	// by the shards' imbalance.
	MaxRuns int
	// PerPass caps the runs one Sweep purges (default 100).
	PerPass int
}

// enabled reports whether r purges anything.
func (r Retention) enabled() bool { return r.MaxAge > 0 || r.MaxRuns > 0 }

func (r Retention) validate() error {
	if r.MaxAge < 0 || r.MaxRuns < 0 || r.PerPass < 0 {
		return errors.New("retention: max age, max runs and runs per pass must not be negative")
	}
	return nil
}

// retentionPerPass is the default Retention.PerPass.
const retentionPerPass = 100

// retain purges finished runs past e.opts.Retention and returns how many it purged.
func (e *Engine) retain(ctx context.Context) (int, error) {
	r := e.opts.Retention
	if !r.enabled() {
		return 0, nil
	}
	budget := r.PerPass
	if budget == 0 {
		budget = retentionPerPass
	}
	keep := 0
	if r.MaxRuns > 0 {
		keep = (r.MaxRuns + indexShards - 1) / indexShards
	}
	from := indexRowFrom
	if r.MaxAge > 0 && r.MaxRuns == 0 {
		from = retentionCutoffKey(e.clock().Add(-r.MaxAge))
	}
	acc, _ := e.store.(RunAccounts)
	if acc != nil && !acc.AccountsRuns() {
		acc = nil
	}
	purged := 0
	var errs []error
	for shard := 0; shard < indexShards && purged < budget; shard++ {
		pk := indexAllPrefix + "-" + strconv.Itoa(shard)
		var n int
		var err error
		if acc != nil {
			n, err = e.retainShardByOwner(ctx, acc, pk, from, keep, budget-purged)
		} else {
			n, err = e.retainShard(ctx, pk, from, keep, budget-purged)
		}
		purged += n
		if err != nil {
			errs = append(errs, err)
		}
	}
	if purged > 0 {
		e.log.Info("retention purged finished runs", "runs", purged)
	}
	return purged, errors.Join(errs...)
}

// retentionCutoffKey is the first index row key of the runs created before t: row keys
// invert the creation time, so older runs sort after it.
func retentionCutoffKey(t time.Time) string {
	return padRowTime(math.MaxInt64 - t.Truncate(indexTime).UnixNano())
}

// retainShard purges, from one index partition, up to budget finished runs past the newest
// keep finished ones (and, with a MaxAge, any older than the cutoff). It reads at most
// keep + budget finished rows.
func (e *Engine) retainShard(ctx context.Context, pk, from string, keep, budget int) (int, error) {
	r := e.opts.Retention
	cutoff := ""
	if r.MaxAge > 0 {
		cutoff = retentionCutoffKey(e.clock().Add(-r.MaxAge))
	}
	q := Query{PartitionKey: pk, RowKeyFrom: from, RowKeyTo: indexRowTo,
		Where: []Cond{{Property: iStatus, Op: CondNe, Value: indexActive}}, Limit: min(1000, keep+budget)}
	seen, purged := 0, 0
	for purged < budget && seen < keep+budget {
		page, err := e.store.Query(ctx, q)
		if err != nil {
			return purged, fmt.Errorf("retention: read index %s: %w", pk, err)
		}
		for _, ent := range page.Entities {
			if purged >= budget || seen >= keep+budget {
				break
			}
			seen++
			if seen <= keep && (cutoff == "" || ent.RowKey < cutoff) {
				continue
			}
			ok, err := e.retainRun(ctx, ent)
			if err != nil {
				return purged, err
			}
			if ok {
				purged++
			}
		}
		if page.Continuation == "" {
			break
		}
		q.Continuation = page.Continuation
	}
	return purged, nil
}

// retainShardByOwner is retainShard per owner (acc): it reads every finished row of one index
// partition, then, for each owner in the order first met (newest run first), purges oldest
// first the owner's runs past its newest keep (or older than the age cutoff), and more while
// the owner is crowded, up to budget runs in all.
func (e *Engine) retainShardByOwner(ctx context.Context, acc RunAccounts, pk, from string, keep, budget int) (int, error) {
	r := e.opts.Retention
	cutoff := ""
	if r.MaxAge > 0 {
		cutoff = retentionCutoffKey(e.clock().Add(-r.MaxAge))
	}
	q := Query{PartitionKey: pk, RowKeyFrom: from, RowKeyTo: indexRowTo,
		Where: []Cond{{Property: iStatus, Op: CondNe, Value: indexActive}}, Limit: 1000}
	byOwner := map[string][]Entity{} // newest first
	var owners []string
	for {
		page, err := e.store.Query(ctx, q)
		if err != nil {
			return 0, fmt.Errorf("retention: read index %s: %w", pk, err)
		}
		for _, ent := range page.Entities {
			o := acc.RunOwner(str(ent.Properties, iRunID))
			if _, ok := byOwner[o]; !ok {
				owners = append(owners, o)
			}
			byOwner[o] = append(byOwner[o], ent)
		}
		if page.Continuation == "" {
			break
		}
		q.Continuation = page.Continuation
	}
	purged := 0
	for _, o := range owners {
		rows := byOwner[o]
		for i := len(rows) - 1; i >= 0 && purged < budget; i-- {
			past := (keep > 0 && i >= keep) || (cutoff != "" && rows[i].RowKey >= cutoff)
			if !past && !acc.Crowded(o) {
				break // the newer rows are within the limits too
			}
			ok, err := e.retainRun(ctx, rows[i])
			if err != nil {
				return purged, err
			}
			if ok {
				purged++
			}
		}
	}
	return purged, nil
}

// retainRun purges the run an index row names when the row is its head's generation and the
// run is finished; it leaves everything else (a row of another generation, a run started
// again, an orphan: listings settle those).
func (e *Engine) retainRun(ctx context.Context, ent Entity) (bool, error) {
	id := str(ent.Properties, iRunID)
	h, err := e.getHead(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("retention: read run %s: %w", id, err)
	}
	if h.gen != i64(ent.Properties, iGen) || !h.status.Finished() || h.indexRef().rowKey != ent.RowKey {
		return false, nil
	}
	err = e.PurgeRun(ctx, id)
	var (
		notFinished *RunNotFinishedError
		awaited     *ChildAwaitedError
	)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrRunNotFound), errors.As(err, &notFinished):
		return false, nil // started again or purged meanwhile
	case errors.As(err, &awaited):
		return false, nil // a child run its parent has not read yet: a later pass purges it
	}
	return false, fmt.Errorf("retention: %w", err)
}
