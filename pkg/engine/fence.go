package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Storage decides; clocks only schedule.
//
// The repair pass and the listings meet rows that speak of a write not seen yet: a due row or
// index rows of a start whose head is missing, a due row of an event that has not woken its
// run. Whether that write will ever land, no clock can tell: a batch may land minutes after it
// was sent (the SDK retrying under throttling, a paused process), after its caller got an
// error, and the clock of the instance looking at it may be ahead. So what a reader concludes
// from a missing row it first makes true with a conditional write — a fence — and only then
// acts on it:
//
//   - A start that never stored its head (fenceStart): its primary index row (in the "~runs"
//     family) is marked Fenced, or a marked placeholder is inserted where it is missing; then
//     the head row is made to refuse the start's head batch — a tombstone inserted where no
//     head is (the start's insert then fails), or a merge of the Fence property with If-Match
//     on a tombstone or on the finished run the start may be replacing (its replace,
//     conditioned on the ETag it read, then fails). Only after that are the start's rows
//     removed: its index rows, the primary one last, then (the repair pass) its due row. A
//     start whose head batch fails reads its due row and primary index row back before it
//     writes again (startFenced): one gone, or the row marked, it stops and answers
//     ErrConflict (503, "retry later") — never 202 for a run that cannot exist.
//   - An event batch that has not landed: the repair pass merges the head with If-Match on
//     the ETag it read before it drops the event's due row, so a late batch fails on that ETag
//     and the raise, still running, writes it again with a new due row (events.go); one that
//     already answered an error never lands.
//
// A tombstone is a head row with the Tombstone property: every read of a head takes it for
// "no run" (ErrNotFound), so a run's status, history, purge and listings read it as not found,
// and a later start of the id replaces it with If-Match on its ETag. It stays until then: one
// small row per start a fence settled, never read by a scan.
//
// Clocks still schedule: a due row is looked at once the local clock says it is due, and a
// fence is tried only on a row whose age, judged by the store's timestamps (the Timestamp the
// table service sets on every write, against the store's time read back from a row the pass
// touches, storeClock), is past Options.RepairAfter. A fast clock, a slow one, or a pass that
// runs late can then only make a start or event slower to repair, or fail a start that was
// still in flight with a retryable error — never lose a run or an event.

// Fence properties.
const (
	// pTombstone marks a head row that is no run (a fence where no head was).
	pTombstone = "Tombstone"
	// pFence is the head property a fence merges: what it settled (a start's nonce, or the
	// due row of an event). Nothing reads it; writing it changes the row's ETag.
	pFence = "Fence"
	// iFenced marks the primary index row of a start a fencer is settling as never stored.
	iFenced = "Fenced"
	// iNonce is the index rows' copy of the run's nonce: what a fencer names the start by.
	iNonce = "Nonce"
)

// maxFenceTries bounds the reads and conditional writes of one fence against writers that
// keep changing the head.
const maxFenceTries = 4

// tombstoneError is how a head read reports a tombstone: no run (it wraps ErrNotFound), with
// the ETag a start replaces it on.
type tombstoneError struct{ runID, etag string }

func (e *tombstoneError) Error() string { return "run " + e.runID + " is a tombstone" }

// Unwrap returns ErrNotFound: a tombstone is no run.
func (e *tombstoneError) Unwrap() error { return ErrNotFound }

// startID names one start: the index rows it writes before its head, and the head it writes.
type startID struct {
	ref   indexRef
	nonce string // "" when the rows do not say (index rows of an earlier release)
	gen   int64  // as its rows name it; only a placeholder row and owns (without a nonce) use it
}

// owns reports whether h is the head this start stored.
func (s startID) owns(h *head) bool {
	if s.nonce != "" {
		return h.nonce == s.nonce
	}
	ref := h.indexRef()
	return h.gen == s.gen && ref.rowKey == s.ref.rowKey && ref.legacy == s.ref.legacy
}

// primary returns the key of the index row a fence marks and a start reads back: its row in
// the family of every run.
func (r indexRef) primary() indexRow {
	all, _ := r.partitions()
	return indexRow{all[0], r.rowKey}
}

// fenceStart makes sure start s never stores its head, and reports whether it did so: false
// means the head is s's (the start landed) and its mark is cleared. It marks s's primary index
// row, then makes the head row refuse s's head batch with a write conditioned on what it read:
// no row — insert a tombstone; a tombstone or a finished run (which s may be replacing) —
// merge the Fence property with If-Match. An active run already refuses s. The caller then
// removes s's rows (removeStart). Errors leave the outcome open: the caller keeps what it
// would remove and tries later. A fence on a finished run's head is a write to it: retention
// counts that run's age from then (retention.go).
func (e *Engine) fenceStart(ctx context.Context, s startID) (bool, error) {
	if err := e.markFenced(ctx, s); err != nil {
		return false, err
	}
	id := s.ref.runID
	for range maxFenceTries {
		h, err := e.getHead(ctx, id)
		var tomb *tombstoneError
		var op Op
		switch {
		case errors.As(err, &tomb):
			op = Op{Kind: OpMerge, IfMatch: tomb.etag, Entity: Entity{PartitionKey: id, RowKey: headRowKey, Properties: map[string]any{pFence: s.nonce}}}
		case errors.Is(err, ErrNotFound):
			op = Op{Kind: OpInsert, Entity: Entity{PartitionKey: id, RowKey: headRowKey, Properties: map[string]any{pTombstone: true, pFence: s.nonce}}}
		case err != nil:
			return false, fmt.Errorf("fence start of run %s: %w", id, err)
		case s.owns(h):
			e.unmarkFenced(ctx, s)
			return false, nil
		case h.active():
			// s never writes its head conditioned on an active run (it answers RunExistsError),
			// and its insert fails while a head is there.
			return true, nil
		default: // finished: s may be replacing it, whatever generation its rows or due row say
			op = Op{Kind: OpMerge, IfMatch: h.etag, Entity: Entity{PartitionKey: id, RowKey: headRowKey, Properties: map[string]any{pFence: s.nonce}}}
		}
		_, err = e.store.Submit(ctx, []Op{op})
		if err == nil {
			return true, nil
		}
		if refused(err) {
			return false, fmt.Errorf("fence start of run %s: %w", id, err)
		}
		// A conflict, a not-found or an unknown outcome: read again. A fence whose answer was
		// lost is met as the head it wrote, and fenced again on its ETag (harmless).
	}
	return false, fmt.Errorf("fence start of run %s: head keeps changing: %w", id, ErrConflict)
}

// markFenced marks s's primary index row, inserting a marked placeholder (the run's keys,
// status active: no retention pass takes it) where the row is missing: a start that has not
// written it yet then finds it taken, merges its own properties into it and keeps the mark.
func (e *Engine) markFenced(ctx context.Context, s startID) error {
	row := s.ref.primary()
	for range maxFenceTries {
		_, err := e.store.Submit(ctx, []Op{{Kind: OpMerge, IfMatch: ETagAny, Entity: Entity{PartitionKey: row.pk, RowKey: row.rk, Properties: map[string]any{iFenced: true}}}})
		if errors.Is(err, ErrNotFound) {
			props := map[string]any{iRunID: s.ref.runID, iGen: s.gen, iGraph: s.ref.graph, iStatus: indexActive, iFenced: true}
			if s.nonce != "" {
				props[iNonce] = s.nonce
			}
			if s.ref.group != "" {
				props[iGroup] = s.ref.group
			}
			if s.ref.owner != "" {
				props[iOwner] = s.ref.owner
			}
			_, err = e.store.Submit(ctx, []Op{{Kind: OpInsert, Entity: Entity{PartitionKey: row.pk, RowKey: row.rk, Properties: props}}})
			if errors.Is(err, ErrConflict) {
				continue // written meanwhile (or by this very insert's first try): mark it
			}
		}
		if err != nil {
			return fmt.Errorf("mark the start of run %s fenced: %w", s.ref.runID, err)
		}
		return nil
	}
	return fmt.Errorf("mark the start of run %s fenced: index row keeps changing: %w", s.ref.runID, ErrConflict)
}

// unmarkFenced clears the mark of a start that landed after all. Best effort: a mark on the
// row of a stored run changes nothing but a start's read-back, which comes before its head.
func (e *Engine) unmarkFenced(ctx context.Context, s startID) {
	row := s.ref.primary()
	_, err := e.store.Submit(context.WithoutCancel(ctx), []Op{{Kind: OpMerge, IfMatch: ETagAny, Entity: Entity{PartitionKey: row.pk, RowKey: row.rk, Properties: map[string]any{iFenced: false}}}})
	if err != nil && !errors.Is(err, ErrNotFound) {
		e.log.Warn("index: clear the fence mark of a stored run", "run_id", s.ref.runID, "error", err.Error())
	}
}

// removeStart removes what a fenced start left: its index rows in removal order, the primary
// one last (a start that reads it back finds it marked until the others are gone), and its
// payloads (by its nonce, when known).
func (e *Engine) removeStart(ctx context.Context, s startID) error {
	ctx = context.WithoutCancel(ctx)
	for _, row := range s.ref.removal() {
		_, err := e.store.Submit(ctx, []Op{{Kind: OpDelete, IfMatch: ETagAny, Entity: Entity{PartitionKey: row.pk, RowKey: row.rk}}})
		if err != nil && !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("remove the index rows of a fenced start of run %s: %w", s.ref.runID, err)
		}
	}
	if s.nonce != "" {
		if _, err := e.payloads.DeletePrefix(ctx, payloadPrefix(s.ref.runID, s.nonce)); err != nil {
			return fmt.Errorf("remove the payloads of a fenced start of run %s: %w", s.ref.runID, err)
		}
	}
	return nil
}

// startFenced reports whether a fencer has settled the start whose index rows are ref and due
// row is due as never stored: its due row is gone (the repair pass deletes it last), or its
// primary index row is gone or marked (a listing's fence, or a repair pass's under way). A
// start reads them before every head write after its first, and before it writes its index
// rows again, so that it never stores a head whose rows a fencer removes.
func (e *Engine) startFenced(ctx context.Context, ref indexRef, due dueRow) (bool, error) {
	if _, err := e.store.Get(ctx, due.partition, due.rowKey); errors.Is(err, ErrNotFound) {
		return true, nil
	} else if err != nil {
		return false, fmt.Errorf("read due row of run %s: %w", ref.runID, err)
	}
	row := ref.primary()
	ent, err := e.store.Get(ctx, row.pk, row.rk)
	if errors.Is(err, ErrNotFound) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("read index row of run %s: %w", ref.runID, err)
	}
	fenced, _ := ent.Properties[iFenced].(bool)
	return fenced, nil
}

// Rows of the repair pass's own bookkeeping: no run's partition holds '§', and row keys that
// start with a digit are no run's rows (RunRow).
const (
	repairPartition = "§repair"
	clockRow        = "0clock"
)

// storeClock reads the store's time once, on first use, for one repair pass or listing; its
// ages are judged on the store's timestamps, never on the local clock. Safe for concurrent use.
type storeClock struct {
	e    *Engine
	once sync.Once
	t    time.Time
	err  error
}

func (e *Engine) newStoreClock() *storeClock { return &storeClock{e: e} }

// now returns the store's time as of the first call.
func (c *storeClock) now(ctx context.Context) (time.Time, error) {
	c.once.Do(func() { c.t, c.err = c.e.storeNow(ctx) })
	return c.t, c.err
}

// older reports whether a row the store stamped written is at least d old by the store's
// time. A row without a stamp (a store that sets none) is old: the schedule that brought the
// reader to it stands, and the fence keeps the conclusion safe.
func (c *storeClock) older(ctx context.Context, written time.Time, d time.Duration) (bool, error) {
	if written.IsZero() {
		return true, nil
	}
	now, err := c.now(ctx)
	if err != nil {
		return false, err
	}
	return now.Sub(written) >= d, nil
}

// storeNow returns the store's current time: it merges a tick into the clock row (inserting
// it the first time) and reads back the row's Timestamp, which the store sets. Cost: 2 T.
func (e *Engine) storeNow(ctx context.Context) (time.Time, error) {
	op := Op{Kind: OpMerge, IfMatch: ETagAny, Entity: Entity{PartitionKey: repairPartition, RowKey: clockRow, Properties: map[string]any{"Tick": newNonce()}}}
	_, err := e.store.Submit(ctx, []Op{op})
	if errors.Is(err, ErrNotFound) {
		op.Kind, op.IfMatch = OpInsert, ""
		if _, err = e.store.Submit(ctx, []Op{op}); errors.Is(err, ErrConflict) {
			err = nil // inserted meanwhile, or by this insert's first try: its stamp is recent
		}
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("read the store's clock: %w", err)
	}
	ent, err := e.store.Get(ctx, repairPartition, clockRow)
	if err != nil {
		return time.Time{}, fmt.Errorf("read the store's clock: %w", err)
	}
	if ent.Timestamp.IsZero() {
		return time.Time{}, errors.New("read the store's clock: the store sets no timestamps")
	}
	return ent.Timestamp, nil
}
