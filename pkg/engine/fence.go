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
//   - A start: its head batch inserts, with the head and its run_started row, a claim row
//     "n<nonce>" (the start's nonce, random per start). A reader that concludes the start
//     will never store its head inserts that claim first, marked Fenced (fenceStart): once it
//     stands, every head batch of that start fails on it, whatever happens to the head
//     meanwhile — a replacement, a purge. If the insert meets the start's own claim, the start
//     landed, and the reader goes by the head. Only after that are the start's rows removed. A
//     start whose head batch fails reads its claim back (startFenced): fenced, it stops and
//     answers ErrConflict (503, "retry later") — never 202 for a run that cannot exist.
//   - An event batch that has not landed: the repair pass merges the head with If-Match on
//     the ETag it read before it drops the event's due row, so a late batch fails on that ETag
//     and the raise, still running, writes it again with a new due row (events.go); one that
//     already answered an error never lands.
//
// A run's own claim goes with the run (PurgeRun, and the clean-up of a replaced run). A fence
// claim stays: one small row per start a reader settled, never read by a scan. So what no
// fence refuses is a second copy of a start batch that landed (the SDK's retry of it)
// arriving only after its run was purged: the window is the client's retry window.
//
// Clocks still schedule: a due row is looked at once the local clock says it is due, and a
// fence is tried only on a row whose age, judged by the store's timestamps (the Timestamp the
// table service sets on every write, against the store's time read back from a row the pass
// touches, storeClock), is past Options.RepairAfter. A fast clock, a slow one, or a pass that
// runs late can then only make a start or event slower to repair, or fail a start that was
// still in flight with a retryable error — never lose a run or an event. A step's hold is
// judged the same way: its lease against the store's time (leaseOver, hold.go).

// Fence properties.
const (
	// pFenced marks a claim row a reader inserted to settle a start as never stored.
	pFenced = "Fenced"
	// pFence is the head property the fence of an event or of a cancel's intent merges (the
	// due row it settles).
	// Nothing reads it; writing it changes the head's ETag.
	pFence = "Fence"
	// iNonce is the index rows' copy of the run's nonce: what a fencer names the start by.
	iNonce = "Nonce"
)

// claimKey is the row key of the claim of the start with nonce: 'n' sorts after the history,
// inbox and dedup rows' letters and before the head's, and no other row key starts with it.
func claimKey(nonce string) string { return "n" + nonce }

// claimOp is the insert, in a start's head batch, of its claim.
func claimOp(runID, nonce, writeID string) Op {
	return Op{Kind: OpInsert, Entity: Entity{PartitionKey: runID, RowKey: claimKey(nonce), Properties: map[string]any{pWriteID: writeID}}}
}

// startID names one start: the index rows it writes before its head, and its nonce.
type startID struct {
	ref   indexRef
	nonce string
}

// fenceStart makes sure start s never stores its head: it inserts s's claim, marked Fenced.
// It returns stored, true when the claim is s's own — its head batch landed (the run may
// since have been replaced or purged) — and false when the fence stands. Errors leave the
// outcome open: the caller keeps what it would remove and tries later.
func (e *Engine) fenceStart(ctx context.Context, s startID) (stored bool, err error) {
	id := s.ref.runID
	op := Op{Kind: OpInsert, Entity: Entity{PartitionKey: id, RowKey: claimKey(s.nonce), Properties: map[string]any{pFenced: true}}}
	_, err = e.store.Submit(ctx, []Op{op})
	if err == nil {
		return false, nil
	}
	if refused(err) {
		return false, fmt.Errorf("fence start of run %s: %w", id, err)
	}
	// A conflict or an unknown outcome: the claim says whose it is.
	ent, gerr := e.store.Get(ctx, id, claimKey(s.nonce))
	switch {
	case gerr == nil:
		fenced, _ := ent.Properties[pFenced].(bool)
		return !fenced, nil
	case errors.Is(gerr, ErrNotFound):
		return false, fmt.Errorf("fence start of run %s: %w", id, err) // not written: try again later
	}
	return false, fmt.Errorf("fence start of run %s: %w (outcome unknown: %v)", id, err, gerr)
}

// settleStart settles start s, which a reader met with head h (nil: none) not its own: it
// fences it, and unless the start turns out to be the head after all (it landed meanwhile:
// settled is false), removes what it left — its index rows, in removal order, and its
// payloads. A start whose claim is its own landed, and has since been replaced or purged:
// what it left is garbage too.
func (e *Engine) settleStart(ctx context.Context, s startID) (settled bool, err error) {
	stored, err := e.fenceStart(ctx, s)
	if err != nil {
		return false, err
	}
	if stored {
		h, err := e.getHead(ctx, s.ref.runID)
		switch {
		case err == nil && h.nonce == s.nonce:
			return false, nil // it is the head: nothing to settle
		case err != nil && !errors.Is(err, ErrNotFound):
			return false, err
		}
	}
	return true, e.removeStart(ctx, s)
}

// removeStart removes what a settled start left: its index rows in removal order, and its
// payloads.
func (e *Engine) removeStart(ctx context.Context, s startID) error {
	ctx = context.WithoutCancel(ctx)
	if err := e.indexDelete(ctx, s.ref); err != nil {
		return fmt.Errorf("remove the index rows of a settled start: %w", err)
	}
	if s.nonce != "" {
		if _, err := e.payloads.DeletePrefix(ctx, payloadPrefix(s.ref.runID, s.nonce)); err != nil {
			return fmt.Errorf("remove the payloads of a settled start of run %s: %w", s.ref.runID, err)
		}
	}
	return nil
}

// startFenced reports whether a reader has fenced the start of run runID with nonce: its
// claim stands, marked Fenced. A start reads it when a head batch failed and the head is not
// its own.
func (e *Engine) startFenced(ctx context.Context, runID, nonce string) (bool, error) {
	ent, err := e.store.Get(ctx, runID, claimKey(nonce))
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read the claim of run %s: %w", runID, err)
	}
	fenced, _ := ent.Properties[pFenced].(bool)
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
// Errors: the store's, and a store that sets no timestamps.
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
