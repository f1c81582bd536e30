package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The run index lists runs without scanning the run store. Each run generation has one
// index row in the partition of all runs and one in the partition of its graph:
//
//	PartitionKey  "~runs"  or  "~graph~<graph name>"          (every run)
//	              "~active"  or  "~active~<graph name>"       (while the run is Pending or Running)
//	RowKey        <19-digit (MaxInt64 - created, 100 ns precision)>_<run id>
//	Properties    RunID, Gen, Graph, Status ("active" until the run finishes, then its final
//	              status), Created
//
// A Pending or Running filter reads the active partitions, which hold only unfinished runs,
// so its cost follows the runs in flight, not every run ever kept.
//
// Row keys start with a digit and run rows ("r", "h…", "i…") with a letter, so even a run whose
// id equals an index partition key shares no row with it, and every index query is bounded
// to the digit range. Newest runs sort first, and a created-time filter is a row-key range.
//
// Cost: four inserts when a run starts, two merges and two deletes when it finishes, two
// deletes when it is purged or replaced — O(1) per run lifecycle, none per step. A list page is one partition
// query plus one head read per listed run; it never touches a history row. Index rows are
// written outside the run's transaction: the row is inserted before the head, so a stored run
// is always listed; its status is written after the finishing commit, and a list that finds it
// stale (a crash in between) repairs it. The status a list returns is always read from the
// run's head.
const (
	indexAllPartition   = "~runs"
	indexGraphPartition = "~graph~"
	indexActivePrefix   = "~active"
	indexRowFrom        = "0"
	indexRowTo          = ":" // the byte after '9'
	indexActive         = "active"

	iRunID, iGen, iGraph, iStatus, iCreated = "RunID", "Gen", "Graph", "Status", "Created"
)

// indexTime is the precision Azure Table keeps for a DateTime.
const indexTime = 100 * time.Nanosecond

func indexRowKey(created time.Time, runID string) string {
	inv := math.MaxInt64 - created.Truncate(indexTime).UnixNano()
	return padRowTime(inv) + "_" + runID
}

func padRowTime(n int64) string {
	s := strconv.FormatInt(n, 10)
	return strings.Repeat("0", 19-len(s)) + s
}

func indexPartitions(graph string) [2]string {
	return [2]string{indexAllPartition, indexGraphPartition + graph}
}

func activePartitions(graph string) [2]string {
	return [2]string{indexActivePrefix, indexActivePrefix + "~" + graph}
}

func indexStatus(s RunStatus) string {
	if s == StatusPending || s == StatusRunning {
		return indexActive
	}
	return string(s)
}

// indexInsert writes the index rows of a run generation that is about to be stored.
func (e *Engine) indexInsert(ctx context.Context, h *head) error {
	rk := indexRowKey(h.created, h.runID)
	all, active := indexPartitions(h.graph), activePartitions(h.graph)
	for _, pk := range append(all[:], active[:]...) {
		_, err := e.store.Submit(ctx, []Op{{Kind: OpInsert, Entity: Entity{PartitionKey: pk, RowKey: rk, Properties: map[string]any{
			iRunID: h.runID, iGen: h.gen, iGraph: h.graph, iStatus: indexActive, iCreated: h.created,
		}}}})
		if errors.Is(err, ErrConflict) { // an earlier attempt of this start wrote it
			_, err = e.store.Submit(ctx, []Op{{Kind: OpMerge, IfMatch: ETagAny, Entity: Entity{PartitionKey: pk, RowKey: rk, Properties: map[string]any{
				iGen: h.gen, iStatus: indexActive,
			}}}})
		}
		if err != nil {
			return fmt.Errorf("index run %s: %w", h.runID, err)
		}
	}
	return nil
}

// indexSetStatus records a finished run's status. Best effort: a list repairs a stale row.
func (e *Engine) indexSetStatus(ctx context.Context, h *head) {
	rk := indexRowKey(h.created, h.runID)
	for _, pk := range indexPartitions(h.graph) {
		_, err := e.store.Submit(ctx, []Op{{Kind: OpMerge, IfMatch: ETagAny, Entity: Entity{PartitionKey: pk, RowKey: rk, Properties: map[string]any{
			iStatus: indexStatus(h.status),
		}}}})
		if err != nil && !errors.Is(err, ErrNotFound) {
			e.log.Warn("index: record status", "run_id", h.runID, "error", err.Error())
		}
	}
	if h.active() {
		return
	}
	for _, pk := range activePartitions(h.graph) {
		_, err := e.store.Submit(ctx, []Op{{Kind: OpDelete, IfMatch: ETagAny, Entity: Entity{PartitionKey: pk, RowKey: rk}}})
		if err != nil && !errors.Is(err, ErrNotFound) {
			e.log.Warn("index: remove finished run from the active index", "run_id", h.runID, "error", err.Error())
		}
	}
}

// indexDelete removes the index rows of the generation created at created.
func (e *Engine) indexDelete(ctx context.Context, runID, graph string, created time.Time) error {
	rk := indexRowKey(created, runID)
	all, active := indexPartitions(graph), activePartitions(graph)
	for _, pk := range append(all[:], active[:]...) {
		_, err := e.store.Submit(ctx, []Op{{Kind: OpDelete, IfMatch: ETagAny, Entity: Entity{PartitionKey: pk, RowKey: rk}}})
		if err != nil && !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("unindex run %s: %w", runID, err)
		}
	}
	return nil
}

// indexQuery turns a run query into one query of the index.
func indexQuery(q RunQuery, limit int) Query {
	iq := Query{PartitionKey: indexAllPartition, RowKeyFrom: indexRowFrom, RowKeyTo: indexRowTo, Limit: limit, Continuation: q.ContinuationToken}
	if q.GraphName != "" {
		iq.PartitionKey = indexGraphPartition + q.GraphName
	}
	// Row keys hold MaxInt64 - created as a fixed-width number, so for a bound t:
	// created < t ⇔ number ≥ MaxInt64-t+1, and created ≥ t ⇔ number < MaxInt64-t+1.
	if !q.CreatedBefore.IsZero() {
		iq.RowKeyFrom = padRowTime(math.MaxInt64 - q.CreatedBefore.UnixNano() + 1)
	}
	if !q.CreatedAfter.IsZero() {
		iq.RowKeyTo = padRowTime(math.MaxInt64 - q.CreatedAfter.UnixNano() + 1)
	}
	switch {
	case q.Status == StatusPending || q.Status == StatusRunning:
		iq.PartitionKey = indexActivePrefix
		if q.GraphName != "" {
			iq.PartitionKey = indexActivePrefix + "~" + q.GraphName
		}
	case q.Status != "":
		iq.Where = []Cond{{Property: iStatus, Op: CondEq, Value: indexStatus(q.Status)}}
	}
	return iq
}

// ListRuns implements Runs: runs matching q, newest first, one page at a time, from the run
// index. Limit defaults to 100 (at most 1000). A page may hold fewer runs than Limit and still
// carry a continuation token.
func (e *Engine) ListRuns(ctx context.Context, q RunQuery) (RunList, error) {
	if err := q.Validate(); err != nil {
		return RunList{}, fmt.Errorf("list runs: %w", err)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, MaxPageSize)
	page, err := e.store.Query(ctx, indexQuery(q, limit))
	if err != nil {
		return RunList{}, fmt.Errorf("list runs: %w", err)
	}
	runs := make([]*Run, len(page.Entities))
	errs := make([]error, len(page.Entities))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i, ent := range page.Entities {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			runs[i], errs[i] = e.listedRun(ctx, ent, q)
		}()
	}
	wg.Wait()
	out := RunList{Runs: make([]Run, 0, len(runs)), ContinuationToken: page.Continuation}
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
// was replaced or purged, or never stored) or the run's live status does not match q.
func (e *Engine) listedRun(ctx context.Context, ent Entity, q RunQuery) (*Run, error) {
	id, _ := ent.Properties[iRunID].(string)
	gen, _ := ent.Properties[iGen].(int64)
	h, err := e.getHead(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if h.gen != gen {
		return nil, nil
	}
	if st, _ := ent.Properties[iStatus].(string); st != indexStatus(h.status) {
		e.indexSetStatus(ctx, h) // repair what a crash after the finishing commit left
	}
	if q.Status != "" && h.status != q.Status {
		return nil, nil
	}
	r, err := e.toRun(ctx, h)
	if err != nil {
		return nil, err
	}
	return &r, nil
}
