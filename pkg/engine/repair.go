package engine

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"sync"
	"sync/atomic"
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
// Only three writes are not backed by a work item yet: a start (the head is written, then its
// first item enqueued), an event that wakes a waiting run (the event is stored and accepted,
// then the wake-up enqueued), and the cancel of a run that waits for a child (the cancel is
// stored and answered, then the child's cancel enqueued). For these an intent row goes to a
// small due index first — partition "§due-<shard>", row key "<due time in ms, 15
// digits>-<random>", the run, its nonce and step — and is deleted once the item is on the
// queue; a cancel's, once its step is done (cancel_family.go). Sweep reads only the rows
// already due by the local clock (a range query per shard), so it touches no history row and
// its cost is independent of how many runs exist: at 1 000 or 1 000 000 runs an idle pass costs
// dueShards queries that return nothing, plus the bounded walk of the active index
// (reconcile.go).
//
// The local clock only schedules: a due row is acted on once it is RepairAfter old by the
// store's timestamps (storeClock), and what the pass concludes from a missing write it makes
// true with a conditional write first — a start that is not the head is fenced off with its
// claim row before its rows go, an event whose batch has not landed with an If-Match merge on
// the head before its due row goes (fence.go). The due index is its own cursor: a row the
// pass settles is deleted, one it cannot settle is moved RepairAfter later, so a pass starts
// where the last one stopped and never meets the same stuck rows first.
//
// Bounds. One pass reads at most duePerShard due rows per shard and settles them at most
// sweepParallel at a time; it walks at most activePerPass rows of the active index; retention
// purges at most Retention.PerPass runs. No part starts new work past sweepBudget (2 min,
// well inside the host's functionTimeout: 5 min by default on the Consumption plan), so a pass
// never runs into the timeout that would restart the process; what is left waits for the
// next pass.
//
// Storage operations (table T, queue Q), steady state:
//   - node step: 1 T (one batch: head merge + history rows; +1 T read when the store
//     returns no ETags), 0 Q while a worker continues the run in-process;
//   - per work item: 1 Q receive + 1 Q delete, 1 T head read, Q Extend every
//     VisibilityTimeout/3 while it runs, 1 Q enqueue per hand-off or timer;
//   - start: 3 T (due row, head batch with its claim row, due delete) + 4 T index inserts +
//     1 Q, and with ReceiveOnStart 1 Q receive (start_receive.go); the first visit adds 1 T
//     (Running); a start that replaces a finished run: the
//     insert that meets it, the head and the claim read back, the due row naming it (+4 T),
//     and its index rows merged again;
//   - event: 2 T (head read, batch) + 2 T and 1 Q more when it wakes the run;
//   - cancel: 2 T (head read, batch) and the run's index rows; +1 T (its intent) and 1 Q when
//     the run waits for a child, whose cancel is a step of its own (cancel_family.go), else the
//     parent's notice when it has one (4 T + 1 Q);
//   - repair pass: dueShards T queries; 2 T to read the store's time when a row is due; for
//     each due row RepairAfter old, 1 T head read, 1 T delete and at most 1 Q enqueue — or, for
//     a start that never stored its head, 1 T fence (the claim insert) and 4 T deletes of its
//     index rows (6 for a grouped run) and 1 payload prefix delete, or for an event whose batch
//     has not landed 1 T merge, or for a cancel's intent its step (cancel_family.go) or, when
//     its batch has not landed, 1 T merge; the walk of the active index: 2 T (cursor read and
//     write), 1 T query and up to activePerPass head reads; 1 Q receive of the poison queue,
//     plus for each poison message (at most poisonPerPass) 1 T head read, 1 Q delete and at
//     most 1 Q enqueue;
//   - a redelivered item that starts a step: +1 T (its hold, workitem.go), +1 T more to
//     release it when the handling ends without a commit, +2 T to read the store's time when
//     it finds a hold this engine does not know (hold.go).

// dueShards is the number of due index partitions (spreading intent writes).
const dueShards = 8

// Due row kinds.
const (
	dueStart  = "start"  // the first work item of a start
	dueEvent  = "event"  // the wake-up of an event that matched the wait
	dueCancel = "cancel" // a cancel's intent to cancel its run's child (cancel_family.go)
)

// Due row properties. A start's row also names its graph, group (pGroup), owner (pOwner),
// search keys (pSearchKeys) and index row key (pIndexRow), so that the repair pass can fence
// a start that never stored its head and remove its index rows, and, once the start knows it replaces a finished run, that
// run's nonce (pOldNonce), whose payloads the pass deletes when the start's own clean-up did
// not.
// A start that stored its head but could not delete the replaced run's payloads marks its row
// Stored: the pass then deletes them without fencing a head that a purge may have removed.
const pRun, pKind, pIndexRow, pOldNonce, pStored = "Run", "Kind", "IndexRow", "OldNonce", "Stored"

// Repair pass bounds (see "Bounds" above).
const (
	// duePerShard is how many due rows one pass reads from each due shard.
	duePerShard = 32
	// sweepParallel is how many rows (due or active index) a pass settles at a time.
	sweepParallel = 8
	// sweepBudget is how long a pass starts new work.
	sweepBudget = 2 * time.Minute
)

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
	props := map[string]any{pRun: h.runID, pNonce: h.nonce, pStep: h.step, pKind: kind}
	if kind == dueStart {
		props[pGraph], props[pIndexRow] = h.graph, h.indexRef().rowKey
		if h.group != "" {
			props[pGroup] = h.group
		}
		if h.owner != "" {
			props[pOwner] = h.owner
		}
		if h.searchKeys != "" {
			props[pSearchKeys] = h.searchKeys
		}
	}
	return e.writeDueProps(ctx, h, props)
}

// writeDueProps inserts a due row of h's run with props, due at now + RepairAfter.
func (e *Engine) writeDueProps(ctx context.Context, h *head, props map[string]any) (dueRow, error) {
	d := dueRow{partition: duePartition(h.runID), rowKey: dueKeyAt(e.clock().Add(e.opts.RepairAfter)) + "-" + newNonce(), step: h.step}
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

// dueStored marks the due row of a start that stored its head and keeps the row for the
// repair pass to delete the replaced run's payloads. Best effort: unmarked, the pass fences
// the head first, which changes nothing for a stored run.
func (e *Engine) dueStored(ctx context.Context, d dueRow) {
	_, err := e.store.Submit(context.WithoutCancel(ctx), []Op{{Kind: OpMerge, IfMatch: ETagAny, Entity: Entity{PartitionKey: d.partition, RowKey: d.rowKey, Properties: map[string]any{pStored: true}}}})
	if err != nil {
		e.log.Warn("mark due row of a stored start", "row", d.rowKey, "error", err.Error())
	}
}

// dueReplacing records on a start's due row the nonce of the finished run it is about to
// replace. A row gone means a fencer settled the start: its next head write reads that back
// (startFenced), so that is no error here.
func (e *Engine) dueReplacing(ctx context.Context, d dueRow, oldNonce string) error {
	_, err := e.store.Submit(ctx, []Op{{Kind: OpMerge, IfMatch: ETagAny, Entity: Entity{PartitionKey: d.partition, RowKey: d.rowKey,
		Properties: map[string]any{pOldNonce: oldNonce}}}})
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("name the replaced run on the due row: %w", err)
	}
	return nil
}

// sweepPass is one repair pass: its time budget, its parallelism and the store's clock.
type sweepPass struct {
	deadline time.Time // the pass starts no new work past it (wall time, not Options.Clock)
	parallel int
	clock    *storeClock
}

func (e *Engine) newSweepPass() *sweepPass {
	return &sweepPass{deadline: time.Now().Add(e.sweepBudget), parallel: e.sweepParallel, clock: e.newStoreClock()}
}

// expired reports whether the pass is out of time.
func (p *sweepPass) expired() bool { return !time.Now().Before(p.deadline) }

// each calls f(0), f(1), … f(n-1), at most p.parallel at a time, and starts none past the
// pass's budget (the first always runs). It returns how many it started — a prefix — and the
// errors of those that failed.
func (p *sweepPass) each(n int, f func(i int) error) (int, []error) {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	sem := make(chan struct{}, p.parallel)
	started := 0
	for i := range n {
		if i > 0 && p.expired() {
			break
		}
		started++
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := f(i); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return started, errs
}

// Sweep is the one periodic repair pass, and returns how many runs it dispatched. It dispatches
// the runs whose start or waking event was stored but whose work item never reached the queue
// (a failed enqueue, a crash in between), settles the starts that never stored their head and
// the events whose batch did not land — fencing them first, so that a late write fails instead
// of landing unnoticed (fence.go) —, takes the steps of a family's cancel whose work item was
// lost or whose worker died (cancel_family.go), settles the work items that ran out of
// deliveries on the queue's poison queue (poison.go): back on the work queue if their run still
// needs them, failing the run if its step keeps killing its worker, and walks a bounded stretch
// of the active index to record the status of runs whose index row a failed merge left "active"
// (reconcile.go). It reads only the due index rows whose time has come, at most poisonPerPass
// poison messages and activePerPass active index rows — never a run's history, never a scan —
// and leaves alone runs that progressed, are running a slow step or are backing off. A
// duplicate dispatch is harmless: a work item that is no longer current is dropped, and two
// workers on one step are settled by the conditional commit. Every part is bounded (see
// "Bounds" in repair.go) and starts no new work past a budget of two minutes. The embedded
// engine runs it every SweepInterval; under Functions, call it from a timer trigger. With
// Options.Retention set, the pass then purges the finished runs past it (at most
// Retention.PerPass, from the run index). Every part runs even when another fails.
func (e *Engine) Sweep(ctx context.Context) (int, error) {
	pass := e.newSweepPass()
	n, err := e.sweepDue(ctx, pass)
	rescued, perr := e.rescuePoison(ctx)
	if perr != nil {
		perr = fmt.Errorf("sweep: %w", perr)
	}
	aerr := e.reconcileActive(ctx, pass)
	if aerr != nil {
		aerr = fmt.Errorf("sweep: %w", aerr)
	}
	_, rerr := e.retain(ctx, pass)
	if rerr != nil {
		rerr = fmt.Errorf("sweep: %w", rerr)
	}
	return n + rescued, errors.Join(err, perr, aerr, rerr)
}

// sweepDue settles the due index rows whose time has come: at most duePerShard a shard.
func (e *Engine) sweepDue(ctx context.Context, pass *sweepPass) (int, error) {
	to := dueKeyAt(e.clock().Add(time.Millisecond))
	var (
		rows []Entity
		errs []error
	)
	for shard := range dueShards {
		page, err := e.store.Query(ctx, Query{PartitionKey: "§due-" + strconv.Itoa(shard), RowKeyTo: to, Limit: duePerShard})
		if err != nil {
			errs = append(errs, fmt.Errorf("sweep due rows: %w", err))
			continue
		}
		rows = append(rows, page.Entities...)
	}
	var n atomic.Int64
	_, rerrs := pass.each(len(rows), func(i int) error {
		dispatched, err := e.repairDue(ctx, rows[i], pass.clock)
		if dispatched {
			n.Add(1)
		}
		if err != nil {
			e.postponeDue(ctx, rows[i])
			return fmt.Errorf("sweep: %w", err)
		}
		return nil
	})
	return int(n.Load()), errors.Join(append(errs, rerrs...)...)
}

// repairDue settles one due row once it is RepairAfter old by the store's time (younger rows
// are left for a later pass; the local clock only put them in the query): it dispatches the
// run when the row's step is still undone and nobody took it up; a start that never stored
// its head is fenced off and its rows removed, an event whose batch has not landed is fenced
// off (fence.go); a cancel's intent has its step taken here (cancelBelow); then the row is
// deleted. A row it leaves (a fence that met a change, a
// start that landed meanwhile) is read again by the next pass. It returns whether it
// dispatched the run.
func (e *Engine) repairDue(ctx context.Context, ent Entity, clk *storeClock) (bool, error) {
	if old, err := clk.older(ctx, ent.Timestamp, e.opts.RepairAfter); err != nil || !old {
		return false, err
	}
	runID := str(ent.Properties, pRun)
	h, err := e.getHead(ctx, runID)
	switch {
	case errors.Is(err, ErrNotFound):
		h = nil
	case err != nil:
		return false, err
	}
	var dispatched, settled bool
	switch str(ent.Properties, pKind) {
	case dueStart:
		dispatched, settled, err = e.repairStart(ctx, ent, h)
	case dueCancel:
		_, err = e.cancelBelow(ctx, ent, h) // the step itself, which deletes the rows it settles (cancel_family.go)
	default:
		dispatched, settled, err = e.repairEvent(ctx, ent, h)
	}
	if err != nil || !settled {
		return dispatched, err
	}
	_, err = e.store.Submit(ctx, []Op{{Kind: OpDelete, IfMatch: ETagAny, Entity: Entity{PartitionKey: ent.PartitionKey, RowKey: ent.RowKey}}})
	if err != nil && !errors.Is(err, ErrNotFound) {
		return dispatched, fmt.Errorf("delete due row: %w", err)
	}
	return dispatched, nil
}

// repairStart settles the due row of a start, h its run's head (nil: none). A stored start
// still Pending at its first step is dispatched; one that is not the head is settled — fenced,
// its index rows and payloads removed (settleStart) — unless the row says the start stored its
// head (pStored: the start kept the row only for the replaced run's payloads). The payloads of
// the run the start replaced (pOldNonce) are deleted once that run is no longer the head.
// settled is false when the row must stay: the start turned out to be the head.
func (e *Engine) repairStart(ctx context.Context, ent Entity, h *head) (dispatched, settled bool, err error) {
	p := ent.Properties
	s := startID{ref: indexRef{runID: str(p, pRun), graph: str(p, pGraph), group: str(p, pGroup), owner: str(p, pOwner), keys: str(p, pSearchKeys), rowKey: str(p, pIndexRow)},
		nonce: str(p, pNonce)}
	stored, _ := p[pStored].(bool)
	switch {
	case h != nil && h.nonce == s.nonce:
		if h.status == StatusPending && h.step == i64(p, pStep) { // Running: a worker has taken the first step
			if err := e.dispatchLate(ctx, h); err != nil {
				return false, false, err
			}
			dispatched = true
		}
	case !stored:
		settled, err := e.settleStart(ctx, s)
		if err != nil || !settled {
			return false, false, err
		}
		e.log.Info("repair: settled a start that never stored its head", "run_id", s.ref.runID, "graph", s.ref.graph)
	}
	if old := str(p, pOldNonce); old != "" && (h == nil || h.nonce != old) {
		if _, err := e.payloads.DeletePrefix(ctx, payloadPrefix(s.ref.runID, old)); err != nil {
			return dispatched, false, fmt.Errorf("delete the payloads of a replaced run: %w", err)
		}
	}
	return dispatched, true, nil
}

// repairEvent settles the due row of an event that matched its run's wait, h the run's head
// (nil: none). A run still at that step and runnable (the event stored) is dispatched. One
// still waiting there has not got the event: its batch may yet land, so the head is merged
// with If-Match on the ETag read — a late batch, conditioned on an earlier ETag, then fails,
// and a raise still running retries it with a new due row (events.go). settled is false when
// the head changed meanwhile: the next pass reads it again.
func (e *Engine) repairEvent(ctx context.Context, ent Entity, h *head) (dispatched, settled bool, err error) {
	p := ent.Properties
	switch {
	case h == nil || h.nonce != str(p, pNonce) || !h.active() || h.step != i64(p, pStep):
		return false, true, nil // another run of the id, finished, or moved on
	case h.waiting != "" && h.runnable:
		if err := e.dispatchLate(ctx, h); err != nil {
			return false, false, err
		}
		return true, true, nil
	}
	_, err = e.store.Submit(ctx, []Op{{Kind: OpMerge, IfMatch: h.etag, Entity: Entity{PartitionKey: h.runID, RowKey: headRowKey,
		Properties: map[string]any{pFence: "event " + ent.RowKey}}}})
	switch {
	case err == nil:
		return false, true, nil
	case refused(err):
		return false, false, fmt.Errorf("fence event of run %s: %w", h.runID, err)
	}
	return false, false, nil // the head changed (or the outcome is unknown): read it again next pass
}

// dispatchLate enqueues the work item of a run whose own enqueue was lost.
func (e *Engine) dispatchLate(ctx context.Context, h *head) error {
	delay := time.Duration(0)
	if now := e.clock().UnixNano(); h.notBefore > now {
		delay = time.Duration(h.notBefore - now)
	}
	if err := e.dispatch(ctx, h, delay); err != nil {
		return err
	}
	e.log.Info("repair dispatched a run whose work item was lost", "run_id", h.runID, "graph", h.graph, "step", h.step)
	return nil
}

// postponeDue moves a due row the pass could not settle RepairAfter later (one batch: the row
// at its new key, the old one deleted), so that the next pass does not meet it before the rows
// behind it. Best effort: a row left in place is met again, as before.
func (e *Engine) postponeDue(ctx context.Context, ent Entity) {
	rk := dueKeyAt(e.clock().Add(e.opts.RepairAfter)) + "-" + newNonce()
	ifMatch := ent.ETag
	if ifMatch == "" {
		ifMatch = ETagAny
	}
	_, err := e.store.Submit(context.WithoutCancel(ctx), []Op{
		{Kind: OpInsert, Entity: Entity{PartitionKey: ent.PartitionKey, RowKey: rk, Properties: ent.Properties}},
		{Kind: OpDelete, IfMatch: ifMatch, Entity: Entity{PartitionKey: ent.PartitionKey, RowKey: ent.RowKey}},
	})
	if err != nil && !errors.Is(err, ErrConflict) && !errors.Is(err, ErrNotFound) {
		e.log.Warn("postpone due row", "row", ent.RowKey, "error", err.Error())
	}
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
