package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The failure index: the runs that failed, by the time they failed, so that a rewind by filter
// (RewindRuns: every run that failed in a window, after an outage) reads the failures of the
// window, never the runs table. Each failure of a run writes, before its failing commit (so
// that a run whose status reads Failed is in the index), and again with the status merge of
// the run index that follows it (indexSetStatus, which also repairs a run whose rows a crash
// left unwritten), one row in a partition of all failures and one in its graph's, sharded by
// run id as the run index is, and one in its owner's partition for a run with an owner:
//
//	PartitionKey  "~failed-<s>"  or  "~failed-<s>~<graph name>"  or  "~ofailed~<owner hash>"
//	RowKey        <19-digit failure time, unix ns at 100 ns precision>_<run id> (oldest first)
//	Properties    RunID, Gen, Nonce, Graph, Owner (for a run with an owner)
//
// A rewind deletes the rows of the failure it rewound; a purge deletes them; a run that fails
// again writes new ones. A row is only a pointer: a rewind by filter reads the run's head and
// rewinds only a run that is still Failed from that very failure (its generation, nonce and
// failure time), so a row left behind (a crash before its delete, a run replaced by a new
// start) rewinds nothing and is deleted when a rewind by filter meets it. A failing commit
// that loses a race and is rebuilt writes its rows again under its new time; the ones it wrote
// first name no failure of the head.
//
// Cost: a failure writes 4 T (6 with an owner), its rows before the commit and after it; a
// rewind by filter of a page of N rows reads indexShards partition queries (1 for an owner's)
// plus, per row, 1 T head read and, for a run it rewinds, a rewind (rewind.go) — bounded by
// the failures in the window and by N (RewindFilter.Limit ≤ MaxRewindLimit), whatever the
// number of runs kept.

const (
	failedPrefix      = "~failed"
	ownerFailedPrefix = "~ofailed~"
	iFailed           = "Failed"
)

// MaxRewindLimit bounds RewindFilter.Limit: the index rows one call of RewindRuns reads, so
// the runs it rewinds.
const MaxRewindLimit = 100

// maxExceptGraphs bounds RewindFilter.ExceptGraphs (a query's conditions).
const maxExceptGraphs = 16

// RewindFilter selects the failed runs RewindRuns rewinds.
type RewindFilter struct {
	// GraphName keeps the runs of one graph; "" any graph.
	GraphName string
	// ExceptGraphs leaves out the runs of these graphs (a surface's internal graphs): a
	// condition of the index queries, so their failures are read but never rewound.
	ExceptGraphs []string
	// Owner keeps the runs whose metadata names that owner (MetadataOwnerKey); "" every
	// owner's.
	Owner string
	// FailedAfter (inclusive, required) and FailedBefore (exclusive) bound the time the runs
	// failed, within MinCreatedFilter..MaxCreatedFilter. A zero FailedBefore is the time of
	// the first call: its continuation token keeps it, so the pages of one rewind never reach
	// the failures of runs it rewound.
	FailedAfter, FailedBefore time.Time
	// Limit bounds the failures one call reads (so the runs it rewinds): 1..MaxRewindLimit, 0
	// meaning MaxRewindLimit.
	Limit int
	// Reason is recorded in each rewound run's history.
	Reason string
	// ContinuationToken continues a previous call (RewindResult.ContinuationToken) of the same
	// filter.
	ContinuationToken string
}

// Validate reports a filter RewindRuns refuses (ErrInvalidQuery).
func (f RewindFilter) Validate() error {
	inRange := func(t time.Time) bool { return !t.Before(MinCreatedFilter) && !t.After(MaxCreatedFilter) }
	switch {
	case f.FailedAfter.IsZero():
		return fmt.Errorf("%w: failed_after is required", ErrInvalidQuery)
	case !inRange(f.FailedAfter) || !f.FailedBefore.IsZero() && !inRange(f.FailedBefore):
		return fmt.Errorf("%w: failed_after and failed_before must be within %s..%s", ErrInvalidQuery,
			MinCreatedFilter.Format(time.RFC3339), MaxCreatedFilter.Format(time.RFC3339))
	case !f.FailedBefore.IsZero() && !f.FailedBefore.After(f.FailedAfter):
		return fmt.Errorf("%w: failed_before must be after failed_after", ErrInvalidQuery)
	case f.Limit < 0 || f.Limit > MaxRewindLimit:
		return fmt.Errorf("%w: limit must be within 1..%d", ErrInvalidQuery, MaxRewindLimit)
	case len(f.ExceptGraphs) > maxExceptGraphs:
		return fmt.Errorf("%w: at most %d graphs may be left out", ErrInvalidQuery, maxExceptGraphs)
	}
	return nil
}

// RewindResult is what one call of RewindRuns did.
type RewindResult struct {
	// Rewound lists the runs rewound, in the order they failed.
	Rewound []string
	// ContinuationToken continues with the next failures; "" when the window is done.
	ContinuationToken string
}

// failureKey is the row key of h's failure in the failure index.
func failureKey(h *head) string {
	return padRowTime(h.updated.Truncate(indexTime).UnixNano()) + "_" + h.runID
}

// failureRows returns the keys of the failure index rows of h's failure.
func failureRows(h *head) []indexRow {
	s := shardPrefix(failedPrefix, indexShard(h.runID))
	rk := failureKey(h)
	rows := []indexRow{{s, rk}, {graphPartition(s, h.graph), rk}}
	if h.owner != "" {
		rows = append(rows, indexRow{ownerFailedPartition(h.owner), rk})
	}
	return rows
}

// ownerFailedPartition is owner's partition of the failure index (the owner's hash, as its
// run index partitions have: owner.go).
func ownerFailedPartition(owner string) string {
	all, _ := ownerPartitions(owner)
	return ownerFailedPrefix + all[len(ownerPrefix):]
}

// indexFailure writes the failure index rows of h, a Failed head. Best effort: a run missing
// from the index is still rewound by its id; a listing that repairs its status writes them.
func (e *Engine) indexFailure(ctx context.Context, h *head) {
	props := map[string]any{iRunID: h.runID, iGen: h.gen, iNonce: h.nonce, iGraph: h.graph}
	if h.owner != "" {
		props[iOwner] = h.owner
	}
	for _, row := range failureRows(h) {
		op := Op{Kind: OpMerge, IfMatch: ETagAny, Entity: Entity{PartitionKey: row.pk, RowKey: row.rk, Properties: props}}
		_, err := e.store.Submit(ctx, []Op{op})
		if errors.Is(err, ErrNotFound) {
			op.Kind, op.IfMatch = OpInsert, ""
			if _, err = e.store.Submit(ctx, []Op{op}); errors.Is(err, ErrConflict) {
				err = nil // inserted meanwhile, or by this insert's first try
			}
		}
		if err != nil {
			e.log.Warn("index: record a failure", "run_id", h.runID, "error", err.Error())
		}
	}
}

// unindexFailure deletes the failure index rows of h, when it is Failed. Best effort: a row
// left is deleted by the next rewind by filter that meets it.
func (e *Engine) unindexFailure(ctx context.Context, h *head) {
	if h.status != StatusFailed {
		return
	}
	ctx = context.WithoutCancel(ctx)
	for _, row := range failureRows(h) {
		e.deleteIndexRow(ctx, row)
	}
}

// deleteIndexRow deletes one index row, best effort.
func (e *Engine) deleteIndexRow(ctx context.Context, row indexRow) {
	_, err := e.store.Submit(ctx, []Op{{Kind: OpDelete, IfMatch: ETagAny, Entity: Entity{PartitionKey: row.pk, RowKey: row.rk}}})
	if err != nil && !errors.Is(err, ErrNotFound) {
		e.log.Warn("index: remove a failure row", "partition", row.pk, "row", row.rk, "error", err.Error())
	}
}

// indexRewound lists n, a run being rewound, as active again in the run index: its rows in
// the active partitions (deleted when it failed) inserted, its status "active" merged into
// the others (indexInsert). Written before the rewind, so that a rewound run is always in the
// active index, and again after it; a listing meeting the rows of a rewind that did not land
// repairs them (indexedHead). Best effort.
func (e *Engine) indexRewound(ctx context.Context, n *head) {
	if err := e.indexInsert(context.WithoutCancel(ctx), n); err != nil {
		e.log.Warn("index: list a rewound run as active", "run_id", n.runID, "error", err.Error())
	}
}

// failureCursors returns the cursors of f's window: the owner's partition, or the
// indexShards partitions of every failure or of f's graph.
func failureCursors(f RewindFilter, limit int) []*listCursor {
	base := Query{Limit: listFetch(limit), RowKeyFrom: padRowTime(f.FailedAfter.Truncate(indexTime).UnixNano()), RowKeyTo: indexRowTo}
	if !f.FailedBefore.IsZero() {
		base.RowKeyTo = padRowTime(f.FailedBefore.Truncate(indexTime).UnixNano())
	}
	if f.Owner != "" {
		c := &listCursor{q: base}
		c.q.PartitionKey, c.q.Limit = ownerFailedPartition(f.Owner), singleFetch(limit)
		if f.GraphName != "" {
			c.q.Where = []Cond{{Property: iGraph, Op: CondEq, Value: f.GraphName}}
		}
		c.q.Where = exceptGraphs(c.q.Where, f.ExceptGraphs)
		return []*listCursor{c}
	}
	cs := make([]*listCursor, indexShards)
	for s := range cs {
		c := &listCursor{q: base}
		c.q.PartitionKey = shardPrefix(failedPrefix, s)
		if f.GraphName != "" {
			c.q.PartitionKey = graphPartition(c.q.PartitionKey, f.GraphName)
		}
		c.q.Where = exceptGraphs(nil, f.ExceptGraphs)
		cs[s] = c
	}
	return cs
}

// exceptGraphs appends to where a condition per graph the rows must not name.
func exceptGraphs(where []Cond, graphs []string) []Cond {
	for _, g := range graphs {
		where = append(where, Cond{Property: iGraph, Op: CondNe, Value: g})
	}
	return where
}

// RewindRuns implements Rewinder: it rewinds the runs that failed in f's window, oldest
// failure first, reading at most f.Limit failures of the failure index (see above) per call,
// and answers a token to go on with while the window holds more. A run is rewound at most once
// per failure: one rewound (by this call, an earlier one or RewindRun) is Running again, or
// failed anew, and its row no longer names its failure. Two calls at once rewind each run
// once (the rewind's conditional write). A storage error stops the call: the runs it rewound
// stay rewound, and the same call again goes on.
func (e *Engine) RewindRuns(ctx context.Context, f RewindFilter) (RewindResult, error) {
	if err := f.Validate(); err != nil {
		return RewindResult{}, fmt.Errorf("rewind runs: %w", err)
	}
	limit := f.Limit
	if limit == 0 {
		limit = MaxRewindLimit
	}
	// A window open at its end closes at its first call: a run that fails again after it is a
	// later failure, for a later call, and paging never chases failures as they happen.
	tok, err := f.windowEnd(e.clock())
	if err != nil {
		return RewindResult{}, fmt.Errorf("rewind runs: %w", err)
	}
	if !f.FailedBefore.After(f.FailedAfter) {
		return RewindResult{Rewound: []string{}}, nil // a window that begins after now
	}
	cs := failureCursors(f, limit)
	positions, err := decodeListToken(tok, len(cs))
	if err != nil {
		return RewindResult{}, fmt.Errorf("rewind runs: %w", err)
	}
	for i, c := range cs {
		switch p := positions; {
		case p == nil:
		case p[i] == tokenDone:
			c.done = true
		case p[i] != "":
			c.pos = p[i]
			c.q.Where = append(c.q.Where, Cond{Property: "RowKey", Op: CondGt, Value: p[i]})
		}
	}
	out := RewindResult{Rewound: []string{}}
	if f.GraphName != "" && !ValidGraphName(f.GraphName) || f.Owner != "" && !ValidOwner(f.Owner) {
		return out, nil
	}
	rows, token, err := e.mergeShards(ctx, cs, limit)
	if err != nil {
		return RewindResult{}, fmt.Errorf("rewind runs: %w", err)
	}
	done := make([]bool, len(rows))
	errs := make([]error, len(rows))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i, row := range rows {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			done[i], errs[i] = e.rewindListed(ctx, row.ent, f)
		}()
	}
	wg.Wait()
	for i, row := range rows {
		if errs[i] != nil {
			return RewindResult{}, fmt.Errorf("rewind runs: %w", errs[i])
		}
		if done[i] {
			out.Rewound = append(out.Rewound, str(row.ent.Properties, iRunID))
		}
	}
	if token != "" {
		out.ContinuationToken = strconv.FormatInt(f.FailedBefore.UnixNano(), 10) + "." + token
	}
	return out, nil
}

// windowEnd sets f.FailedBefore to the end its continuation token names ("<unix ns>.<list
// token>"), or for a first call without one to now, and returns the list token. Errors:
// ErrInvalidQuery for a token RewindRuns did not return for f.
func (f *RewindFilter) windowEnd(now time.Time) (string, error) {
	if f.ContinuationToken == "" {
		if f.FailedBefore.IsZero() {
			f.FailedBefore = now.Truncate(indexTime).Add(indexTime) // what failed up to now
		}
		return "", nil
	}
	bad := fmt.Errorf("%w: bad continuation token", ErrInvalidQuery)
	end, tok, ok := strings.Cut(f.ContinuationToken, ".")
	ns, err := strconv.ParseInt(end, 10, 64)
	if !ok || err != nil || tok == "" {
		return "", bad
	}
	if !f.FailedBefore.IsZero() && f.FailedBefore.UnixNano() != ns || ns <= f.FailedAfter.UnixNano() {
		return "", bad
	}
	f.FailedBefore = time.Unix(0, ns)
	return tok, nil
}

// rewindListed rewinds the run a failure row names when it is still Failed from that failure
// (and f's owner's), and deletes a row that names no current failure.
func (e *Engine) rewindListed(ctx context.Context, row Entity, f RewindFilter) (bool, error) {
	p := row.Properties
	id := str(p, iRunID)
	h, err := e.getHead(ctx, id)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return false, err
	}
	if err != nil || h.nonce != str(p, iNonce) || h.gen != i64(p, iGen) || f.Owner != "" && h.owner != f.Owner {
		e.deleteIndexRow(ctx, indexRow{row.PartitionKey, row.RowKey}) // its run is gone or replaced
		return false, nil
	}
	if h.status != StatusFailed || failureKey(h) != row.RowKey {
		if h.status != StatusFailed || failureKey(h) > row.RowKey {
			e.deleteIndexRow(ctx, indexRow{row.PartitionKey, row.RowKey}) // rewound, or failed again since
		}
		return false, nil
	}
	_, err = e.rewindOne(ctx, id, f.Reason, nil, 0)
	var nf *RunNotFailedError
	var unsup *RewindUnsupportedError
	switch {
	case errors.As(err, &nf), errors.Is(err, ErrRunNotFound):
		return false, nil // rewound meanwhile (another call), or purged
	case errors.As(err, &unsup):
		e.log.Warn("rewind by filter: a run left as it is", "run_id", id, "error", err.Error())
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}
