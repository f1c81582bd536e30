package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// The run index lists runs without scanning the run store. Each run generation has one
// index row in a partition of all runs and one in a partition of its graph, plus, while it
// is Pending or Running, one in each of the matching active partitions. The partitions are
// sharded by run id, so that starts and finishes spread over indexShards partitions per
// family instead of queueing on one:
//
//	PartitionKey  "~runs-<s>"  or  "~graph-<s>~<graph name>"      (every run)
//	              "~active-<s>"  or  "~active-<s>~<graph name>"   (while Pending or Running)
//	              s = FNV-1a(run id) mod indexShards, in decimal
//	RowKey        <19-digit (MaxInt64 - created, 100 ns precision)>_<run id>
//	Properties    RunID, Gen, Nonce, Graph, Hash, Version, Status ("active" until the run
//	              finishes, then its final status), Created, Group for a grouped run
//	              and Owner for a run with an owner (owner.go)
//
// A run started with a group (StartRunRequest.Group) also has rows in its group's two
// partitions, and a run whose metadata names an owner rows in its owner's two partitions,
// with the same lifecycle (group.go, owner.go); every row of such a run carries its Group and
// Owner.
//
// A Pending or Running filter reads the active partitions, which hold only unfinished runs,
// so its cost follows the runs in flight, not every run ever kept.
//
// Row keys start with a digit and run rows ("r", "h…", "i…") with a letter, so even a run whose
// id equals an index partition key shares no row with it, and every index query is bounded
// to the digit range. Newest runs sort first in every shard, and a created-time filter is a
// row-key range; a listing merges the shards newest first (list.go).
//
// Throughput. An Azure table partition serves about 2,000 entities per second. A run writes
// each family twice (its row at start; its status merge, or its active row's delete, at the
// finish), so one partition caps a family at about 1,000 run lifecycles per second, and
// indexShards partitions at indexShards × 1,000 — 8,000 with 8 shards, above what one
// storage account serves (about 20,000 requests per second, and a run costs at least 17
// table operations, so about 1,200 runs per second per account).
//
// Cost: four inserts when a run starts, two merges and two deletes when it finishes, four
// deletes when it is purged or replaced (a grouped run, and a run with an owner: two inserts,
// a merge and a delete, and two deletes more each) — O(1) per run lifecycle, none per step.
// Index rows are written outside the run's transaction: the rows are inserted before the
// head, so a stored run is always listed; its status is written after the finishing commit,
// and a list that finds it stale (a crash in between) repairs it. The status a list returns
// is always read from the run's head.
//
// No orphans. A start that fails removes its rows (and its due row); one whose outcome is
// unknown leaves them to the repair pass, which removes them with the due row once it has
// fenced the start (its claim row, fence.go). A listing, and the repair pass's walk of the
// active index, that meet a row whose head is missing, or is another generation, do not list it,
// and remove it the same way — fenced first — once the row is older than Options.RepairAfter by
// the store's timestamps, so an orphan costs one head read at most until the next listing that
// sees it, and a start still in flight is never robbed of its rows: at worst it is fenced and
// answers a retryable error. A finished run whose status merge failed stays in the active
// index until a listing or the repair pass's walk of the active index (reconcile.go) meets it
// and records its status.
const (
	indexShards       = 8
	indexAllPrefix    = "~runs"
	indexGraphPrefix  = "~graph"
	indexActivePrefix = "~active"
	indexRowFrom      = "0"
	indexRowTo        = ":" // the byte after '9'
	indexActive       = "active"

	iRunID, iGen, iGraph, iStatus, iCreated = "RunID", "Gen", "Graph", "Status", "Created"
	iHash, iVersion, iGroup                 = "Hash", "Version", "Group"
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

// validIndexRowKey reports whether rk has the shape of an index row key.
func validIndexRowKey(rk string) bool {
	if len(rk) < 21 || rk[19] != '_' || !storableInstanceID(rk[20:]) {
		return false
	}
	for i := range 19 {
		if rk[i] < '0' || rk[i] > '9' {
			return false
		}
	}
	return true
}

// indexShard returns the shard of a run id.
func indexShard(runID string) int {
	// FNV-1a, 32 bits, inline (hash/fnv's would allocate its state and a copy of runID).
	h := uint32(2166136261)
	for i := 0; i < len(runID); i++ {
		h ^= uint32(runID[i])
		h *= 16777619
	}
	return int(h % indexShards)
}

// indexRef locates the index rows of one run generation.
type indexRef struct {
	runID, graph, rowKey string
	group                string // "" for none
	owner                string // "" for none
	keys                 string // the run's search keys as pSearchKeys holds them, "" for none (searchkeys.go)
}

func (h *head) indexRef() indexRef {
	return indexRef{runID: h.runID, graph: h.graph, group: h.group, owner: h.owner, keys: h.searchKeys, rowKey: indexRowKey(h.created, h.runID)}
}

// indexRow is the key of one index row.
type indexRow struct{ pk, rk string }

// rows returns the keys of the run's index rows: of every run (its family's and its graph's,
// then its group's, its owner's and its search keys'), then of the active ones.
func (r indexRef) rows() (all, active []indexRow) {
	a, act := r.partitions()
	all = []indexRow{{a[0], r.rowKey}, {a[1], r.rowKey}}
	active = []indexRow{{act[0], r.rowKey}, {act[1], r.rowKey}}
	if r.group != "" {
		ga, gact := groupPartitions(r.group)
		all = append(all, indexRow{ga, r.rowKey})
		active = append(active, indexRow{gact, flipRowKey(r.rowKey)})
	}
	if r.owner != "" {
		oa, oact := ownerPartitions(r.owner)
		all = append(all, indexRow{oa, r.rowKey})
		active = append(active, indexRow{oact, r.rowKey})
	}
	all = append(all, searchKeyRows(r.keys, r.rowKey)...)
	return all, active
}

// removal returns the keys of the run's index rows in the order they are deleted: the rows
// no repair starts from first, then the two it starts from — its row in the active family,
// which the repair pass walks (reconcile.go), and its row in the family of every run, which
// listings read — last. A removal that fails part-way thus leaves a row from which a later
// listing or pass removes the rest.
func (r indexRef) removal() []indexRow {
	all, active := r.rows()
	out := make([]indexRow, 0, len(all)+len(active))
	out = append(out, active[1:]...)
	out = append(out, all[1:]...)
	return append(out, active[0], all[0])
}

// shardPrefix returns the partition prefix of family in shard s.
func shardPrefix(family string, s int) string {
	return family + "-" + strconv.Itoa(s)
}

// graphPartition returns the partition of graph within a family's shard prefix.
func graphPartition(prefix, graph string) string { return prefix + "~" + graph }

// groupPartitions returns the partitions of a group: every run, and the unfinished ones.
func groupPartitions(group string) (all, active string) {
	return groupPrefix + group, groupActivePrefix + group
}

// flipRowKey turns an index row key ordered newest first into the key of the same run ordered
// oldest first, and back: MaxInt64 - n is its own inverse.
func flipRowKey(rk string) string {
	n, err := strconv.ParseInt(rk[:19], 10, 64)
	if err != nil || n < 0 {
		return rk
	}
	return padRowTime(math.MaxInt64-n) + rk[19:]
}

// partitions returns the run's partitions of all runs and of its graph, then its active ones.
func (r indexRef) partitions() (all, active [2]string) {
	s := indexShard(r.runID)
	runs, graphs, act := shardPrefix(indexAllPrefix, s), shardPrefix(indexGraphPrefix, s), shardPrefix(indexActivePrefix, s)
	return [2]string{runs, graphPartition(graphs, r.graph)}, [2]string{act, graphPartition(act, r.graph)}
}

func indexStatus(s RunStatus) string {
	if s == StatusPending || s == StatusRunning {
		return indexActive
	}
	return string(s)
}

// finishedStatusConds returns the index conditions of a listing by a finished status s: rows
// that record s, and rows still marked active. The finishing commit writes the head first and
// the index rows after it (or a crash leaves them unwritten until a listing repairs them), so
// a run whose status reads s may have a row that says active for a while; the listing reads
// its head, keeps it if the head's status is s (listedRun) and repairs the row (indexedHead).
// A run a status read shows finished is thus listed by that status at once. It costs a head
// read per active run in the range listed, which the active runs bound, not the history.
func finishedStatusConds(s RunStatus) []Cond {
	var cs []Cond
	for _, other := range []RunStatus{StatusCompleted, StatusFailed, StatusTerminated} {
		if other != s {
			cs = append(cs, Cond{Property: iStatus, Op: CondNe, Value: string(other)})
		}
	}
	return cs
}

// indexInsert writes the index rows of a run generation that is about to be stored. A row
// that exists already (an earlier attempt of this start) gets this start's properties merged
// in.
func (e *Engine) indexInsert(ctx context.Context, h *head) error {
	all, active := h.indexRef().rows()
	// One map for every row: a store never retains the caller's map.
	props := map[string]any{
		iRunID: h.runID, iGen: h.gen, iNonce: h.nonce, iGraph: h.graph, iHash: h.hash, iVersion: h.version, iStatus: indexActive, iCreated: h.created,
	}
	if h.group != "" {
		props[iGroup] = h.group
	}
	if h.owner != "" {
		props[iOwner] = h.owner
	}
	if h.searchKeys != "" {
		props[pSearchKeys] = h.searchKeys
	}
	for _, row := range append(all, active...) {
		var err error
		for range 4 { // a row deleted between the insert and the merge is inserted again
			_, err = e.store.Submit(ctx, []Op{{Kind: OpInsert, Entity: Entity{PartitionKey: row.pk, RowKey: row.rk, Properties: props}}})
			if !errors.Is(err, ErrConflict) {
				break
			}
			_, err = e.store.Submit(ctx, []Op{{Kind: OpMerge, IfMatch: ETagAny, Entity: Entity{PartitionKey: row.pk, RowKey: row.rk, Properties: props}}})
			if !errors.Is(err, ErrNotFound) {
				break // deleted meanwhile (a fencer's clean-up): insert it again
			}
		}
		if err != nil {
			return fmt.Errorf("index run %s: %w", h.runID, err)
		}
	}
	return nil
}

// indexSetStatus records a finished run's status. Best effort: a listing, or the repair pass's
// walk of the active index, repairs a stale row. The rows in the active partitions go only
// once every status is recorded, so that a failed merge leaves the run where that walk finds
// it.
func (e *Engine) indexSetStatus(ctx context.Context, h *head) {
	ctx = context.WithoutCancel(ctx) // the run's commit is stored: a shutdown must not skip this
	if h.status == StatusFailed {
		e.indexFailure(ctx, h) // the failure index a rewind by filter reads (rewind_index.go)
	}
	all, active := h.indexRef().rows()
	props := map[string]any{iStatus: indexStatus(h.status)} // shared: a store never retains it
	failed := false
	for _, row := range all {
		_, err := e.store.Submit(ctx, []Op{{Kind: OpMerge, IfMatch: ETagAny, Entity: Entity{PartitionKey: row.pk, RowKey: row.rk, Properties: props}}})
		if err != nil && !errors.Is(err, ErrNotFound) {
			// Unknown outcome: the row says whether the status is recorded.
			if ent, gerr := e.store.Get(ctx, row.pk, row.rk); gerr == nil && str(ent.Properties, iStatus) == props[iStatus] || errors.Is(gerr, ErrNotFound) {
				continue
			}
			failed = true
			e.log.Warn("index: record status", "run_id", h.runID, "error", err.Error())
		}
	}
	if h.active() || failed {
		return
	}
	// The row the repair pass walks goes last: a failure leaves it for the walk to retry.
	for _, row := range append(active[1:len(active):len(active)], active[0]) {
		_, err := e.store.Submit(ctx, []Op{{Kind: OpDelete, IfMatch: ETagAny, Entity: Entity{PartitionKey: row.pk, RowKey: row.rk}}})
		if err != nil && !errors.Is(err, ErrNotFound) {
			if _, gerr := e.store.Get(ctx, row.pk, row.rk); errors.Is(gerr, ErrNotFound) {
				continue // the delete landed: its answer was lost
			}
			e.log.Warn("index: remove finished run from the active index", "run_id", h.runID, "error", err.Error())
			return
		}
	}
}

// indexDelete removes the index rows of one run generation, in removal order: a failure
// leaves a row a listing or the repair pass starts from.
func (e *Engine) indexDelete(ctx context.Context, ref indexRef) error {
	for _, row := range ref.removal() {
		_, err := e.store.Submit(ctx, []Op{{Kind: OpDelete, IfMatch: ETagAny, Entity: Entity{PartitionKey: row.pk, RowKey: row.rk}}})
		if err != nil && !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("unindex run %s: %w", ref.runID, err)
		}
	}
	return nil
}

// indexDeleteExcept is indexDelete of ref's rows but those keep has too: a replaced run's
// rows when the run that replaced it was created in the same 100 ns (a clock that stood
// still, or went back) and shares their keys.
func (e *Engine) indexDeleteExcept(ctx context.Context, ref, keep indexRef) error {
	if ref.rowKey != keep.rowKey {
		return e.indexDelete(ctx, ref)
	}
	kept := map[indexRow]bool{}
	for _, row := range keep.removal() {
		kept[row] = true
	}
	for _, row := range ref.removal() {
		if kept[row] {
			continue
		}
		_, err := e.store.Submit(ctx, []Op{{Kind: OpDelete, IfMatch: ETagAny, Entity: Entity{PartitionKey: row.pk, RowKey: row.rk}}})
		if err != nil && !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("unindex run %s: %w", ref.runID, err)
		}
	}
	return nil
}

// unindex removes the index rows of a generation that will never be stored, or whose head
// is gone. Best effort: a listing removes what it leaves.
func (e *Engine) unindex(ctx context.Context, ref indexRef, why string) {
	if err := e.indexDelete(context.WithoutCancel(ctx), ref); err != nil {
		e.log.Warn("index: remove the rows of "+why, "run_id", ref.runID, "error", err.Error())
	}
}

// dropOrphan settles an index row a listing or the repair pass took whose head is missing or is
// another generation: once the row is RepairAfter old by the store's time (clk), it fences the
// start that wrote the row and removes its rows (settleStart, fence.go). Until then the start
// may still be storing its head, and the row is left alone. Best effort: a failure leaves the
// row to the next reader.
func (e *Engine) dropOrphan(ctx context.Context, row listedRow, clk *storeClock) {
	p := row.ent.Properties
	old, err := clk.older(ctx, row.ent.Timestamp, e.opts.RepairAfter)
	if err != nil {
		e.log.Warn("index: judge the age of an orphan row", "run_id", str(p, iRunID), "error", err.Error())
	}
	if !old {
		return
	}
	s := startID{ref: indexRef{runID: str(p, iRunID), graph: str(p, iGraph), group: str(p, iGroup), owner: str(p, iOwner), keys: str(p, pSearchKeys), rowKey: row.rowKey()},
		nonce: str(p, iNonce)}
	settled, err := e.settleStart(ctx, s)
	if err != nil {
		e.log.Warn("index: remove the rows of a start that never stored its head, or of a replaced or purged run", "run_id", s.ref.runID, "error", err.Error())
		return
	}
	if settled {
		e.log.Info("index: removed the rows of a start that never stored its head, or of a replaced or purged run", "run_id", s.ref.runID, "graph", s.ref.graph)
	}
}
