package engine

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"time"
)

// Recovery and its cost model.
//
// Nothing periodic or per request scans a table that grows with history. Progress rides on
// the queue: the worker holding a work item keeps it hidden while it runs (renewing its
// visibility) and deletes it only after its commit and whatever comes next — the next
// item, a retry back-off or wait-timeout timer (delayed messages; early ones go back with
// the remaining delay) — are durably stored. A worker that dies leaves its item to come
// back; a redelivered item whose step has passed carries the run's current step, and
// duplicate chains collapse at the conditional commit.
//
// A work item that runs out of deliveries (a step that kills its worker, or a storage outage
// longer than the delivery budget) lands in the queue's poison queue; the repair pass reads it
// (poison.go), so no run is stranded there, and only the restart count kept on the run
// (workitem.go) may fail it as poison.
//
// Only two writes are not backed by a work item yet: a start (the head is written, then
// its first item enqueued) and an event that wakes a waiting run (the event is stored and
// accepted, then the wake-up enqueued). For these an intent row goes to a small due index
// first — partition "§due-<shard>", row key "<due time in ms, 15 digits>-<random>", the
// run, its nonce and step — and is deleted once the item is on the queue. Sweep reads only
// the rows already due (a range query per shard), so it touches no history row and its cost
// is independent of how many runs exist: at 1 000 or 1 000 000 runs an idle pass costs
// dueShards queries that return nothing. Instance ids are printable ASCII, so no run's
// partition can be called "§due-…".
//
// Storage operations (table T, queue Q), steady state:
//   - node step: 1 T (one batch: head merge + history rows; +1 T read when the store
//     returns no ETags), 0 Q while a worker continues the run in-process;
//   - per work item: 1 Q receive + 1 Q delete, 1 T head read, Q Extend every
//     VisibilityTimeout/3 while it runs, 1 Q enqueue per hand-off or timer;
//   - start: 3 T (due row, head batch, due delete) + 1 Q; the first visit adds 1 T (Running);
//   - event: 2 T (head read, batch) + 2 T and 1 Q more when it wakes the run;
//   - repair pass: dueShards T queries, plus for each overdue row 1 T head read, 1 T
//     delete and at most 1 Q enqueue (or, for a start that never stored its head, 4 T
//     deletes of its index rows instead, 6 for a grouped run); 1 Q receive of the poison queue, plus for each
//     poison message (at most poisonPerPass) 1 T head read, 1 Q delete and at most 1 Q enqueue;
//   - a redelivered item that starts a step: +1 T (its hold, workitem.go), +1 T more to
//     release it when the handling ends without a commit.

// dueShards is the number of due index partitions (spreading intent writes).
const dueShards = 8

// Due row kinds.
const (
	dueStart = "start" // the first work item of a start
	dueEvent = "event" // the wake-up of an event that matched the wait
)

// Due row properties. A start's row also names its graph, its group (pGroup), its owner
// (pOwner) and its index row key (pIndexRow), so that the repair pass can remove the index
// rows of a start that never stored its head.
const pRun, pKind, pIndexRow = "Run", "Kind", "IndexRow"

// dueRow locates an intent row (zero: none).
type dueRow struct {
	partition, rowKey string
	step              int64
}

func duePartition(runID string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(runID))
	return "§due-" + strconv.Itoa(int(h.Sum32()%dueShards))
}

// dueKeyAt is the row key prefix of rows due at t; rows due before t sort before it.
func dueKeyAt(t time.Time) string {
	return string(padInt(nil, t.UnixMilli(), 15))
}

// writeDue records that h's next step must be on the queue by now + RepairAfter.
func (e *Engine) writeDue(ctx context.Context, h *head, kind string) (dueRow, error) {
	d := dueRow{partition: duePartition(h.runID), rowKey: dueKeyAt(e.clock().Add(e.opts.RepairAfter)) + "-" + newNonce(), step: h.step}
	props := map[string]any{pRun: h.runID, pNonce: h.nonce, pStep: h.step, pKind: kind}
	if kind == dueStart {
		props[pGraph], props[pIndexRow] = h.graph, h.indexRef().rowKey
		if h.group != "" {
			props[pGroup] = h.group
		}
		if h.owner != "" {
			props[pOwner] = h.owner
		}
	}
	_, err := e.store.Submit(ctx, []Op{{Kind: OpInsert, Entity: Entity{PartitionKey: d.partition, RowKey: d.rowKey, Properties: props}}})
	if err != nil && !errors.Is(err, ErrConflict) { // its key is random: a conflict is the retry of this very insert
		return dueRow{}, fmt.Errorf("write due row run=%s: %w", h.runID, err)
	}
	return d, nil
}

// clearDue deletes an intent row whose work item is on the queue (or that is void).
// Failures are logged: Sweep finds the row, sees the run progressed and deletes it.
func (e *Engine) clearDue(ctx context.Context, d dueRow) {
	if d.rowKey == "" {
		return
	}
	_, err := e.store.Submit(context.WithoutCancel(ctx), []Op{{Kind: OpDelete, IfMatch: ETagAny, Entity: Entity{PartitionKey: d.partition, RowKey: d.rowKey}}})
	if err != nil && !errors.Is(err, ErrNotFound) {
		e.log.Warn("delete due row", "row", d.rowKey, "error", err.Error())
	}
}

// Sweep is the one periodic repair pass, and returns how many runs it dispatched. It
// dispatches the runs whose start or waking event was stored but whose work item never
// reached the queue (a failed enqueue, a crash in between), and settles the work items that
// ran out of deliveries on the queue's poison queue (poison.go): back on the work queue if
// their run still needs them, failing the run if its step keeps killing its worker. It reads
// only the due index rows whose time has come and at most poisonPerPass poison messages —
// never a run's history, never a scan — and leaves alone runs that progressed, are running a
// slow step or are backing off. A duplicate dispatch is harmless: a work item that is no
// longer current is dropped, and two workers on one step are settled by the conditional
// commit. The embedded engine runs it every SweepInterval; under Functions, call it from a
// timer trigger. With Options.Retention set, the pass then purges the finished runs past it
// (at most Retention.PerPass, from the run index). Every part runs even when another fails.
func (e *Engine) Sweep(ctx context.Context) (int, error) {
	n, err := e.sweepDue(ctx)
	rescued, perr := e.rescuePoison(ctx)
	if perr != nil {
		perr = fmt.Errorf("sweep: %w", perr)
	}
	_, rerr := e.retain(ctx)
	if rerr != nil {
		rerr = fmt.Errorf("sweep: %w", rerr)
	}
	return n + rescued, errors.Join(err, perr, rerr)
}

// sweepDue dispatches the runs of the due index rows whose time has come.
func (e *Engine) sweepDue(ctx context.Context) (int, error) {
	now := e.clock()
	to := dueKeyAt(now.Add(time.Millisecond))
	n := 0
	for shard := range dueShards {
		q := Query{PartitionKey: "§due-" + strconv.Itoa(shard), RowKeyTo: to}
		for {
			page, err := e.store.Query(ctx, q)
			if err != nil {
				return n, fmt.Errorf("sweep due rows: %w", err)
			}
			for _, ent := range page.Entities {
				dispatched, err := e.repairDue(ctx, ent)
				if err != nil {
					return n, fmt.Errorf("sweep: %w", err)
				}
				if dispatched {
					n++
				}
			}
			if page.Continuation == "" {
				break
			}
			q.Continuation = page.Continuation
		}
	}
	return n, nil
}

// repairDue settles one overdue intent row: it dispatches the run when the row's step is
// still undone and nobody took it up, then deletes the row. A start whose head never landed
// (missing, or another run's) also loses its index rows.
func (e *Engine) repairDue(ctx context.Context, ent Entity) (bool, error) {
	p := ent.Properties
	runID, stuck := str(p, pRun), false
	h, err := e.getHead(ctx, runID)
	if str(p, pKind) == dueStart && str(p, pIndexRow) != "" &&
		(errors.Is(err, ErrNotFound) || err == nil && h.nonce != str(p, pNonce)) {
		e.unindex(ctx, indexRef{runID: runID, graph: str(p, pGraph), group: str(p, pGroup), owner: str(p, pOwner), rowKey: str(p, pIndexRow)}, "a start that never stored its head")
	}
	switch {
	case errors.Is(err, ErrNotFound):
	case err != nil:
		return false, err
	case h.nonce != str(p, pNonce) || !h.active() || h.step != i64(p, pStep):
		// Another run of the id, finished, or moved on: nothing to repair.
	case str(p, pKind) == dueStart:
		stuck = h.status == StatusPending // Running: a worker has taken the first step
	default:
		stuck = h.waiting != "" && h.runnable
	}
	if stuck {
		delay := time.Duration(0)
		if now := e.clock().UnixNano(); h.notBefore > now {
			delay = time.Duration(h.notBefore - now)
		}
		if err := e.dispatch(ctx, h, delay); err != nil {
			return false, err
		}
		e.log.Info("repair dispatched a run whose work item was lost", "run_id", runID, "graph", h.graph, "step", h.step)
	}
	_, err = e.store.Submit(ctx, []Op{{Kind: OpDelete, IfMatch: ETagAny, Entity: Entity{PartitionKey: ent.PartitionKey, RowKey: ent.RowKey}}})
	if err != nil && !errors.Is(err, ErrNotFound) {
		return stuck, fmt.Errorf("delete due row: %w", err)
	}
	return stuck, nil
}

func (e *Engine) sweepLoop(ctx context.Context) {
	defer e.wg.Done()
	t := time.NewTicker(e.opts.SweepInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := e.Sweep(ctx); err != nil && ctx.Err() == nil {
				e.log.Warn("sweep", "error", err.Error())
			}
		}
	}
}
