package engine

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// A branch's progress: what a step keeps on the run's head (its attempt, its back-off, the
// deaths counted against it and its hold, see hold.go and workitem.go), a branch keeps in a
// row of its own, so that a branch survives redelivery, lost deletes and worker deaths
// exactly as a step does. Its queue message only wakes it: whatever the message says, the
// row decides which attempt runs and when.
//
// The row, "k<gen:6>-<slot:16>-<nonce>" (slot: the sequence of the branch's completion row,
// so it is unique within its generation; the nonce, so a purged and restarted run of the id
// never reads it), is written only when there is progress to keep:
//
//   - a failed attempt that is retried: Attempt (failed attempts so far) and NotBefore (the
//     end of the back-off), and the hold and the deaths of the attempt cleared;
//   - a start that may be a restart (a redelivered item, or a row that holds a hold or
//     counted deaths) takes a hold (Holder, HoldUntil), judged by the next start as a step's
//     is: past its lease by the store's time (the row's Timestamp against the store's clock,
//     hold.go), unreleased and not this engine's own, it counts as a death
//     (Restarts; Deaths counts all of the branch's starts that may have run its handler
//     and died, for StepInfo.Attempt). The branch fails
//     once it was started MaxStepStarts times without completing, with the same error a
//     step gets; storage errors alone never get it there.
//
// Every delivery of a branch reads it (one point read; not found, for a branch on its first
// attempt that nothing held): a copy of the fan-out's own message, enqueued twice by a
// retried request, is delivered as a first delivery too. Nothing deletes the row while its
// run lives: a fan-out's rows go with the run's (purge, and the clean-up of a replaced run's
// generations).
//
// The row never decides whether the branch completed: its completion row does (branch.go).

// Branch progress properties (the head's names for the same things, hold.go, head_retry.go).
const pDeaths = "Deaths"

// progressKey is the row key of the progress of branch i of h's open region.
func progressKey(h *head, i int64) string { return seqKey('k', h.gen, h.slotSeq(i)) + "-" + h.nonce }

// branchProgress is a branch's progress row as read (exists false: no row yet).
type branchProgress struct {
	exists    bool
	etag      string
	attempt   int64 // failed attempts
	notBefore int64 // unix nanos: no attempt before
	restarts  int64 // deaths counted against the current attempt
	deaths    int64 // deaths counted against the branch, all attempts
	holder    string
	holdUntil int64
	writeID   string
	written   time.Time // the store's Timestamp of the row: what its hold's lease is judged by
}

// props returns the row's properties as p says.
func (p *branchProgress) props() map[string]any {
	return map[string]any{pAttempt: p.attempt, pNotBefore: p.notBefore, pRestarts: p.restarts, pDeaths: p.deaths,
		pHolder: p.holder, pHoldUntil: p.holdUntil, pWriteID: p.writeID}
}

// readProgress reads the progress of branch i of h's region.
func (e *Engine) readProgress(ctx context.Context, h *head, i int64) (branchProgress, error) {
	ent, err := e.store.Get(ctx, h.runID, progressKey(h, i))
	if errors.Is(err, ErrNotFound) {
		return branchProgress{}, nil
	}
	if err != nil {
		return branchProgress{}, fmt.Errorf("read progress of branch %d of run %s: %w", i, h.runID, err)
	}
	p := ent.Properties
	return branchProgress{exists: true, etag: ent.ETag, attempt: i64(p, pAttempt), notBefore: i64(p, pNotBefore),
		restarts: i64(p, pRestarts), deaths: i64(p, pDeaths), holder: str(p, pHolder), holdUntil: i64(p, pHoldUntil),
		writeID: str(p, pWriteID), written: ent.Timestamp}, nil
}

// errProgressMoved reports a progress write that met a row another writer changed: the
// caller reads it again and judges afresh.
var errProgressMoved = errors.New("branch progress changed")

// writeProgress writes next as branch i's progress over cur (an insert when cur has no row,
// else a merge on its ETag) and returns it as stored. A conflict, or an outcome left unknown,
// is settled by reading the row: next's write id there means it landed; anything else is
// errProgressMoved.
//
// A progress row is the bookkeeping of a branch the fan-out's commit admitted, a few hundred
// bytes, one row per branch: it is written as making room (MakingRoom), so that a store that
// holds all it may lets the branch run to its end (a result, or its failure) instead of
// refusing its every start.
func (e *Engine) writeProgress(ctx context.Context, h *head, i int64, cur, next branchProgress) (branchProgress, error) {
	ctx = MakingRoom(ctx)
	next.writeID = newWriteID()
	op := Op{Kind: OpInsert, Entity: Entity{PartitionKey: h.runID, RowKey: progressKey(h, i), Properties: next.props()}}
	if cur.exists {
		op.Kind, op.IfMatch = OpMerge, cur.etag
	}
	etags, err := e.store.Submit(ctx, []Op{op})
	if err == nil {
		next.exists = true
		if len(etags) == 1 && etags[0] != "" {
			next.etag = etags[0]
			return next, nil
		}
	} else if refused(err) {
		return cur, fmt.Errorf("write progress of branch %d of run %s: %w", i, h.runID, err)
	}
	fresh, rerr := e.readProgress(ctx, h, i)
	switch {
	case rerr != nil && err == nil:
		return cur, rerr
	case rerr != nil:
		return cur, fmt.Errorf("write progress of branch %d of run %s: %w (outcome unknown: %v)", i, h.runID, err, rerr)
	case fresh.exists && fresh.writeID == next.writeID:
		return fresh, nil
	case err == nil:
		return fresh, errProgressMoved // written, and changed again since: judge afresh
	}
	return fresh, errProgressMoved
}

// branchDied reports whether the hold on the progress p counts as a death: held, not one of
// this engine's own handlings' holds, and past its lease by the store's time (leaseOver).
func (e *Engine) branchDied(ctx context.Context, p branchProgress) (bool, error) {
	return e.leaseOver(ctx, p.holder, e.opts.StepLease, p.written)
}

// branchStart is what beginBranch settled for one delivery of a branch.
type branchStart struct {
	progress branchProgress
	hold     *hold         // the hold taken (nil: none)
	wait     time.Duration // > 0: the branch backs off; put its item back after wait
	starts   int64         // > 0: the branch was started this often without completing; it fails
}

// attempt is StepInfo.Attempt of the start st: 1 + the attempts that failed + the starts
// that may have run the handler and died (deaths).
func (st branchStart) attempt() int { return int(st.progress.attempt+st.progress.deaths) + 1 }

// beginBranch starts a delivery of branch i of h's region (its message it) from its progress
// p (as read; redelivered: the delivery may be a restart): a back-off not over yet sends it
// back to the queue; a hold past its lease counts as a death; past the kill limit the branch
// fails; a start that may be a restart takes a hold first. The progress it returns is the one
// the attempt runs under.
func (e *Engine) beginBranch(ctx context.Context, h *head, i int64, p branchProgress, it branchWork, redelivered bool) (branchStart, error) {
	for range maxRebase {
		now := e.clock().UnixNano()
		if p.notBefore > now {
			return branchStart{progress: p, wait: time.Duration(p.notBefore - now)}, nil
		}
		died := int64(0)
		if over, err := e.branchDied(ctx, p); err != nil {
			return branchStart{}, err // storage errors never count towards poison
		} else if over {
			died = 1
		}
		if e.overKillLimit(p.restarts + died) {
			return branchStart{progress: p, starts: p.restarts + died + 1}, nil
		}
		if !redelivered && p.restarts == 0 && p.holder == "" {
			return branchStart{progress: p}, nil
		}
		hd := &hold{id: newWriteID(), runID: h.runID}
		next := p
		next.restarts, next.deaths = p.restarts+died, p.deaths+died
		if redelivered && p.holder == "" && it.Attempt == p.attempt {
			// The start before, of this very attempt, held nothing (a first delivery does not
			// take a hold): that it died is inferred, for StepInfo.Attempt only (the kill limit
			// counts holds). A message of an attempt that failed since came back for another
			// reason (a lost delete).
			next.deaths++
		}
		next.holder, next.holdUntil = hd.id, now+int64(e.opts.StepLease)
		if died > 0 {
			e.log.Warn("a start of a branch died holding it", "run_id", h.runID, "step", h.step+1, "branch", i,
				"deaths", next.restarts, "max_step_starts", e.opts.MaxStepStarts)
		}
		e.holds.start(hd.id)
		stored, err := e.writeProgress(ctx, h, i, p, next)
		switch {
		case errors.Is(err, errProgressMoved):
			e.holds.finish(hd.id, true) // not ours: judge the fresh row
			p = stored
			continue
		case err != nil:
			e.holds.finish(hd.id, false) // its outcome may be unknown: never count it here
			return branchStart{}, err
		}
		hd.etag = stored.etag
		return branchStart{progress: stored, hold: hd}, nil
	}
	return branchStart{}, fmt.Errorf("begin branch %d of run %s: its progress keeps changing: %w", i, h.runID, ErrConflict)
}

// retryBranch records that attempt p.attempt+1 of branch i failed and is retried after
// delay: the progress moves to the next attempt, its hold and deaths cleared. A row another
// writer moved meanwhile is read again: one that already records a later attempt is left
// (a duplicate of this attempt recorded it). It returns the progress as stored.
func (e *Engine) retryBranch(ctx context.Context, h *head, i int64, p branchProgress, delay time.Duration) (branchProgress, error) {
	failed := p.attempt
	for range maxRebase {
		if p.attempt > failed {
			return p, nil
		}
		next := p
		next.attempt, next.notBefore = failed+1, e.clock().Add(delay).UnixNano()
		next.restarts, next.holder, next.holdUntil = 0, "", 0
		stored, err := e.writeProgress(ctx, h, i, p, next)
		if errors.Is(err, errProgressMoved) {
			p = stored
			continue
		}
		return stored, err
	}
	return p, fmt.Errorf("retry branch %d of run %s: its progress keeps changing: %w", i, h.runID, ErrConflict)
}

// releaseBranchHold clears hd from branch i's progress after its handling ended without
// settling the branch, as releaseHold does for a step (releaseRowHold).
func (e *Engine) releaseBranchHold(ctx context.Context, h *head, i int64, hd *hold, cause error) {
	e.releaseRowHold(ctx, hd, progressKey(h, i), "a branch's", cause, func(ctx context.Context) (bool, string, error) {
		p, err := e.readProgress(ctx, h, i)
		return err == nil && p.holder == hd.id, p.etag, err
	}, "run_id", h.runID, "branch", i)
}

// branchPoisonCause is the failure of a branch started starts times without completing.
func branchPoisonCause(starts int64) string {
	return fmt.Sprintf("started %d times without completing: its worker died or timed out each time", starts)
}
