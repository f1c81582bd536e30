package engine

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// What an active run is waiting for that its custom status does not say: the end of a durable
// sleep, the next attempt of its node after a failed one, and the branches of its open fan-out
// that wait to retry. The head holds the first two (its NotBefore, and Attempt telling a retry's
// back-off from a sleep), so GetRun reports them for free; a branch keeps its back-off in its own
// progress row (branch_progress.go), so GetRunDetail reads them with one range query over the
// open region's progress rows, whose back-off the query's filter keeps to those still ahead.
//
// "Still ahead" is judged by this engine's clock: a status read only reports it, nothing
// decides by it (a wake-up or back-off that has just passed by this clock is not reported; the
// run or branch is then running, or about to).

// NodeRetry is the next attempt of a run's current node, whose last attempt failed and whose
// retry policy backs off before it runs again.
type NodeRetry struct {
	// Attempt is the number of the next attempt (2: the first retry).
	Attempt int
	// At is when the back-off ends: the attempt runs from then on.
	At time.Time
}

// BranchRetry is a branch of a run's open fan-out whose attempt failed and that waits for its
// retry policy's back-off before it runs again.
type BranchRetry struct {
	// Index is the branch's index in its fan-out, from 0.
	Index int
	// Attempt is the number of the branch's next attempt (StepInfo.Attempt it will see).
	Attempt int
	// At is when the back-off ends.
	At time.Time
}

// MaxListedBranchRetries bounds Run.BranchRetries: a wider fan-out reports its first
// MaxListedBranchRetries branches waiting to retry, by index.
const MaxListedBranchRetries = 100

// RunDetailer is an optional capability of a Runs: GetRunDetail is GetRun plus the branches
// of the run's open fan-out that wait to retry (Run.BranchRetries). Engine implements it.
type RunDetailer interface {
	// GetRunDetail returns the run as GetRun does, with BranchRetries filled. Errors: GetRun's,
	// and the store's when the progress rows cannot be read.
	GetRunDetail(ctx context.Context, instanceID string) (Run, error)
}

var _ RunDetailer = (*Engine)(nil)

// activity sets r's SleepingUntil and NodeRetry from h, a Running run's head, as of now.
func activity(r *Run, h *head, now time.Time) {
	if h.status != StatusRunning || h.notBefore <= now.UnixNano() {
		return
	}
	at := time.Unix(0, h.notBefore).UTC()
	if h.attempt > 0 {
		r.NodeRetry = &NodeRetry{Attempt: int(h.attempt) + 1, At: at}
	} else {
		r.SleepingUntil = at
	}
}

// GetRunDetail implements RunDetailer: GetRun, and for a run with an open fan-out one query of
// its branches' progress rows whose back-off is ahead (at most MaxListedBranchRetries rows
// returned).
func (e *Engine) GetRunDetail(ctx context.Context, instanceID string) (Run, error) {
	if !ValidInstanceID(instanceID) {
		return Run{}, ErrRunNotFound
	}
	h, err := e.getHead(ctx, instanceID)
	if err != nil {
		return Run{}, runLookupError(err)
	}
	r, err := e.runOf(ctx, h)
	if err != nil || h.branchCount == 0 || !h.active() {
		return r, err
	}
	r.BranchRetries, err = e.branchRetries(ctx, h)
	return r, err
}

// branchRetries reads the branches of h's open region whose back-off is ahead by this engine's
// clock, in index order.
func (e *Engine) branchRetries(ctx context.Context, h *head) ([]BranchRetry, error) {
	now := e.clock().UnixNano()
	q := Query{PartitionKey: h.runID, RowKeyFrom: seqKey('k', h.gen, h.slotSeq(0)), RowKeyTo: seqKey('k', h.gen, h.regionEnd()),
		Where: []Cond{{Property: pNotBefore, Op: CondGt, Value: now}}, Limit: MaxListedBranchRetries}
	page, err := e.store.Query(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("read branch progress of run %s: %w", h.runID, err)
	}
	var out []BranchRetry
	for _, ent := range page.Entities {
		// "k<gen:6>-<slot:16>-<nonce>" (progressKey)
		rk := ent.RowKey
		if len(rk) < 25 || rk[24:] != "-"+h.nonce {
			continue // another run's of the id
		}
		seq, err := strconv.ParseInt(rk[8:24], 10, 64)
		if err != nil || seq < h.branchBase || (seq-h.branchBase)%BranchSlots != 0 {
			continue
		}
		p := ent.Properties
		nb := i64(p, pNotBefore)
		if nb <= now || i64(p, pAttempt) == 0 {
			continue
		}
		out = append(out, BranchRetry{Index: int((seq - h.branchBase) / BranchSlots), Attempt: int(i64(p, pAttempt)+i64(p, pDeaths)) + 1,
			At: time.Unix(0, nb).UTC()})
	}
	return out, nil
}
