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
// finished runs past MaxRuns or finished more than MaxAge ago, as PurgeRun does (rows, head,
// payloads, index rows). A run that is Pending or Running is never touched, however old.
// The zero value keeps every run.
//
// Age counts from a run's finish, judged by the store's timestamps: a run is past MaxAge when
// the last write to its head (the commit that finished it) is MaxAge old by the store's time,
// so a run that waited two days for an approval is kept MaxAge after it finished, and a
// client polling for its result finds it. A clock that is off changes nothing.
//
// It reads only the run index ("~runs-<s>" partitions, finished rows only) — never a run's
// history, never a scan of the run store: with MaxAge alone, the finished rows of the runs
// created before the age (no run finished before it was created), from one query page per
// index shard starting at the age's row key, with a head read for each (which the purge reads
// anyway), at most PerPass + retentionSlack rows a shard; with MaxRuns, the newest MaxRuns/8
// finished rows of each of the 8 shards are read and skipped first, so keep MaxRuns small (it
// is meant for the in-memory backend). With both, a run is purged past either limit: the
// newest MaxRuns are kept only while they are younger than MaxAge. Each pass purges at most
// PerPass runs, and starts no purge past the repair pass's time budget; the rest wait for the
// next. A purge deletes its payloads with the payload store's bounded parallelism.
//
// On a store that accounts its runs to owners (RunAccounts: the in-memory store with a byte
// budget) the limits apply per owner: each owner keeps its own newest MaxRuns finished runs
// (MaxRuns/8 per shard), and while an owner is Crowded its oldest finished runs go too
// (oldest first within each shard), so one owner's load never purges another owner's runs.
// A pass then reads every finished row of the index (the store is in memory).
type Retention struct {
	// MaxAge purges finished runs that finished more than MaxAge ago (0: no age limit).
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

// retentionSlack is how many finished rows past its budget a pass reads in one shard: runs
// created before the age that finished after it, kept for now.
const retentionSlack = 100

// retentionPass is what one retention pass decides by: the repair pass (its time budget),
// the row key before which runs were created before the age ("": no age limit) and the store
// time before which a run finished too long ago.
type retentionPass struct {
	*sweepPass
	cutoff      string
	finishedBy  time.Time
	keep        int
	purgedTotal int // purges started by this pass, over every shard
}

// more reports whether the pass may start another purge: within its time budget, or none yet.
func (p *retentionPass) more() bool { return p.purgedTotal == 0 || !p.expired() }

// retain purges finished runs past e.opts.Retention and returns how many it purged.
func (e *Engine) retain(ctx context.Context, pass *sweepPass) (int, error) {
	r := e.opts.Retention
	if !r.enabled() {
		return 0, nil
	}
	budget := r.PerPass
	if budget == 0 {
		budget = retentionPerPass
	}
	rp := &retentionPass{sweepPass: pass}
	if r.MaxRuns > 0 {
		rp.keep = (r.MaxRuns + indexShards - 1) / indexShards
	}
	var errs []error
	if r.MaxAge > 0 {
		now, err := pass.clock.now(ctx)
		switch {
		case err == nil:
			rp.finishedBy = now.Add(-r.MaxAge)
			rp.cutoff = retentionCutoffKey(rp.finishedBy)
		case r.MaxRuns == 0:
			return 0, fmt.Errorf("retention: %w", err)
		default:
			errs = append(errs, fmt.Errorf("retention: the age limit waits for the next pass: %w", err))
		}
	}
	from := indexRowFrom
	if rp.keep == 0 {
		from = rp.cutoff
	}
	acc, _ := e.store.(RunAccounts)
	if acc != nil && !acc.AccountsRuns() {
		acc = nil
	}
	purged := 0
	for shard := 0; shard < indexShards && purged < budget && rp.more(); shard++ {
		pk := indexAllPrefix + "-" + strconv.Itoa(shard)
		var n int
		var err error
		if acc != nil {
			n, err = e.retainShardByOwner(ctx, rp, acc, pk, from, budget-purged)
		} else {
			n, err = e.retainShard(ctx, rp, pk, from, budget-purged)
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
// keep finished ones and, with a MaxAge, those that finished before it. It reads at most
// keep + budget + retentionSlack finished rows.
func (e *Engine) retainShard(ctx context.Context, rp *retentionPass, pk, from string, budget int) (int, error) {
	limit := rp.keep + budget + retentionSlack
	q := Query{PartitionKey: pk, RowKeyFrom: from, RowKeyTo: indexRowTo,
		Where: []Cond{{Property: iStatus, Op: CondNe, Value: indexActive}}, Limit: min(1000, limit)}
	seen, purged := 0, 0
	for purged < budget && seen < limit {
		page, err := e.store.Query(ctx, q)
		if err != nil {
			return purged, fmt.Errorf("retention: read index %s: %w", pk, err)
		}
		for _, ent := range page.Entities {
			if purged >= budget || seen >= limit || !rp.more() {
				return purged, nil
			}
			seen++
			overCount := rp.keep > 0 && seen > rp.keep
			if !overCount && (rp.cutoff == "" || ent.RowKey < rp.cutoff) {
				continue // within the count, and created after the age
			}
			finishedBy := rp.finishedBy
			if overCount {
				finishedBy = time.Time{}
			}
			ok, err := e.retainRun(ctx, rp, ent, finishedBy)
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
// first the owner's runs past its newest keep (or finished before the age), and more while
// the owner is crowded, up to budget runs in all.
func (e *Engine) retainShardByOwner(ctx context.Context, rp *retentionPass, acc RunAccounts, pk, from string, budget int) (int, error) {
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
		for i := len(rows) - 1; i >= 0 && purged < budget && rp.more(); i-- {
			overCount := rp.keep > 0 && i >= rp.keep
			aged := rp.cutoff != "" && rows[i].RowKey >= rp.cutoff
			crowded := acc.Crowded(o)
			if !overCount && !aged && !crowded {
				break // the newer rows are within the limits too
			}
			finishedBy := rp.finishedBy
			if overCount || crowded {
				finishedBy = time.Time{}
			}
			ok, err := e.retainRun(ctx, rp, rows[i], finishedBy)
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
// run is finished — with finishedBy set, only if the head's last write (its finish) is before
// it by the store's time; it leaves everything else (a row of another generation, a run
// started again, an orphan: listings and the repair pass settle those).
func (e *Engine) retainRun(ctx context.Context, rp *retentionPass, ent Entity, finishedBy time.Time) (bool, error) {
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
	if !finishedBy.IsZero() && (h.stamp.IsZero() || !h.stamp.Before(finishedBy)) {
		return false, nil // finished less than MaxAge ago
	}
	rp.purgedTotal++
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
