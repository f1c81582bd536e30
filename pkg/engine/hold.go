package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// A step's hold: which start of the current step runs it, and until when its claim stands.
// The rule it serves, the kill limit, is described in workitem.go; this file holds the
// mechanics.
//
// A start that may be a restart (a redelivered work item, or a head that already holds a
// hold or counted deaths) writes a hold with its begin merge, before any user code runs:
// Holder, a random id, and HoldUntil, now + Options.StepLease by its own clock. Every commit
// clears both. A start that ends without a commit — an error, a wait that needs nothing, a
// dropped step — releases its hold (releaseHold): a merge of the head that clears it,
// recognised by the holder's id, so a conflict or a lost reply is settled by reading the head
// again. A release that cannot be written leaves the hold behind; this engine remembers it
// (holdBook) and never counts it, and any other engine counts it only once its lease is
// over.
//
// The next start that finds a hold judges it (deaths, leaseOver): unreleased, past its lease,
// and not known to this engine as one of its own handlings that is running or ended with an
// error, it was left by a worker that died holding the step — crashed, killed, or timed
// out — and counts as one death (Restarts). The lease is what a live holder may take:
// the embedded dispatcher redelivers an item only after its visibility timeout, so
// VisibilityTimeout/2 leaves a dead worker's hold expired when its item comes back; under
// the Functions host a handling lives at most functionTimeout, and launch sets the lease to
// it. The lease is judged by the store's time, never by a local clock (which may be minutes
// off the holder's): the head's Timestamp, set by the store when it wrote the hold, against
// the store's time read back from a row the judge touches (storeNow). HoldUntil, the end of
// the lease by the holder's own clock, is what the holder meant; no judge reads it. A head
// written again since the hold (an event stored while the step ran) only makes the hold look
// younger: a judgement can spare a dead holder, never count a live one, and it never decides
// what a write did. The store's time costs 2 T, paid only by a start that finds a hold this
// engine does not know; a first delivery with a clean head reads and writes nothing more.

// begin starts h's current step: it judges the hold a previous start left on the head (a
// death when its lease is over), fails the run past the kill limit, and writes one head
// merge when something needs writing — a Pending run turns Running (so a status read while
// the entrypoint runs says Running), and a start that may be a restart (redelivered, or the
// head holds a hold or counted deaths) takes its own hold. A first delivery of a running
// run with a clean head writes nothing. It returns the head to run from (nil: the handling
// is done, as when the run moved on or failed as poison) and the hold taken (nil: none).
func (e *Engine) begin(ctx context.Context, h *head, redelivered bool) (*head, *hold, error) {
	for range maxRebase {
		deaths, err := e.deaths(ctx, h)
		if err != nil {
			return nil, nil, err // an error, never a death
		}
		if e.overKillLimit(deaths) {
			return nil, nil, e.failPoison(ctx, h, deaths+1)
		}
		takes := redelivered || h.restarts > 0 || h.holder != ""
		if h.status != StatusPending && !takes {
			return h, nil, nil
		}
		o := &begun{}
		var hd *hold
		if takes {
			hd = &hold{id: newWriteID(), runID: h.runID}
			o.hold, o.holdUntil, o.deaths = hd.id, e.clock().UnixNano()+int64(e.opts.StepLease), deaths-h.restarts
			e.holds.start(hd.id)
			if o.deaths > 0 {
				e.log.Warn("a start of the step died holding it", "run_id", h.runID, "step", h.step+1, "node", h.node,
					"deaths", deaths, "max_step_starts", e.opts.MaxStepStarts)
			}
		}
		var out outcome = o
		n, err := e.commit(ctx, h, &out, nil) // a begin records no state
		var restep *restepError
		switch {
		case errors.As(err, &restep):
			if hd != nil {
				e.holds.finish(hd.id, true) // never stored
			}
			h = restep.fresh // another start judged the hold first, or its holder released it
			continue
		case errors.Is(err, errDropped):
			if hd != nil {
				e.holds.finish(hd.id, true)
			}
			return nil, nil, nil
		case err != nil:
			if hd != nil {
				e.holds.finish(hd.id, false) // its outcome may be unknown: never count it here
			}
			return nil, nil, err // storage errors never count towards poison
		}
		if hd != nil {
			hd.etag = n.etag
		}
		return n, hd, nil
	}
	return nil, nil, fmt.Errorf("begin step run=%s step=%d: head keeps changing: %w", h.runID, h.step+1, ErrConflict)
}

// begun is the start of a step (begin): a Pending run turns Running, and/or the start takes
// the step's hold.
type begun struct {
	// hold is the hold this start takes ("" for none), holdUntil the end of its lease in unix
	// nanos, deaths the deaths its judgement of the head's hold added (the kill limit,
	// workitem.go).
	hold      string
	holdUntil int64
	deaths    int64
}

func (o *begun) stepNode() string { return "" }

func (o *begun) apply(c *commitBuilder) {
	n, base := c.n, c.base
	n.restarts = base.restarts + o.deaths
	n.holder, n.holdUntil = o.hold, o.holdUntil
	if base.status == StatusPending {
		// Durable Functions sets the custom status before the first activity: from here on
		// the run reads Running with the entrypoint as current_node.
		n.status = StatusRunning
		n.custom = customStatus(base, base.node)
	}
}

// rebase has the caller judge the fresh head again when another start judged the step's
// hold first, or its holder released it (the kill limit, workitem.go).
func (o *begun) rebase(_ context.Context, _ *Engine, base, fresh *head) error {
	if fresh.holder != base.holder || fresh.restarts != base.restarts {
		return &restepError{fresh: fresh}
	}
	return nil
}

// maxBookedHolds bounds the ended holds a holdBook remembers.
const maxBookedHolds = 4096

// hold is one handling's hold on its run's current step.
type hold struct {
	id    string // the head's Holder while this handling holds the step
	runID string
	etag  string // the head's ETag as this handling's begin merge left it
}

// holdBook is what an engine knows of the holds its own handlings took: held by a handling
// running now, or left by one that ended without a commit and whose release did not land.
// The engine never counts a hold it knows as a death. A handling whose goroutine is taken
// down (a death, as far as this process can tell) is forgotten, so its hold counts once its
// lease is over. Past maxBookedHolds ended holds, the oldest are forgotten.
type holdBook struct {
	mu      sync.Mutex
	running map[string]bool // guarded by mu: hold id → its handling is running
	ended   []string        // guarded by mu: the ended holds of running, oldest first
}

// start records that a handling of this engine takes hold id.
func (b *holdBook) start(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.running == nil {
		b.running = map[string]bool{}
	}
	b.running[id] = true
}

// finish records that the handling holding id ended: released (its hold is gone from the
// head, or was never stored) or not.
func (b *holdBook) finish(id string, released bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if released {
		delete(b.running, id)
		return
	}
	if b.running == nil {
		b.running = map[string]bool{}
	}
	b.running[id] = false
	b.ended = append(b.ended, id)
	for len(b.ended) > maxBookedHolds {
		delete(b.running, b.ended[0])
		b.ended = b.ended[1:]
	}
}

// abandon forgets id when its handling never finished it: the handling's goroutine was
// taken down mid-step.
func (b *holdBook) abandon(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.running[id] {
		delete(b.running, id)
	}
}

// knows reports whether id is a hold of this engine's own handlings, running or ended.
func (b *holdBook) knows(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.running[id]
	return ok
}

// leaseOver reports whether the lease of a hold is over, judged by the store: holder names the
// hold, lease is how long its holder may take, and written is the Timestamp the store set on
// the row that carries the hold when it last wrote it (the hold's own write, or a later one
// that kept the hold). The lease is over when written is at least lease old by the store's
// time (storeNow); no local clock takes part. Since a later write of the row only makes the
// hold look younger, a wrong judgement spares a dead holder, never counts a live one.
//
// It reports false, reading nothing, for no hold (holder ""), for a hold this engine knows as
// one of its own handlings' (holdBook: running, or ended without a commit and not released),
// and for a row without a Timestamp (no store judgement to be had: nothing counts). Otherwise
// it reads the store's time: 2 T, so call it only where a hold was found. Errors: the store's
// time could not be read; the caller counts nothing and ends its handling with the error
// (storage errors are never deaths).
func (e *Engine) leaseOver(ctx context.Context, holder string, lease time.Duration, written time.Time) (bool, error) {
	if holder == "" || written.IsZero() || e.holds.knows(holder) {
		return false, nil
	}
	now, err := e.storeNow(ctx)
	if err != nil {
		return false, fmt.Errorf("judge the lease of a hold: %w", err)
	}
	return now.Sub(written) >= lease, nil
}

// deaths returns the deaths counted against h's current step: those recorded on the head,
// plus one for its hold when the hold's lease (Options.StepLease) is over by the store's time
// (leaseOver, on the head's Timestamp). Errors: leaseOver's.
func (e *Engine) deaths(ctx context.Context, h *head) (int64, error) {
	over, err := e.leaseOver(ctx, h.holder, e.opts.StepLease, h.stamp)
	if err != nil {
		return 0, err
	}
	if over {
		return h.restarts + 1, nil
	}
	return h.restarts, nil
}

// overKillLimit reports whether a step with deaths deaths was started MaxStepStarts times
// without completing: the deaths, and the start before them. At least one death is needed:
// a run with only failed handlings never reaches it.
func (e *Engine) overKillLimit(deaths int64) bool {
	return deaths > 0 && deaths+1 >= e.opts.MaxStepStarts
}

// releaseHold clears hd from its run's head after its handling ended without a commit. The
// merge is conditioned on the ETag hd was written with; a conflict or an unknown outcome is
// settled by reading the head: a head that no longer carries hd (released by this very
// merge, committed, taken over by another start, or the run finished or gone) is done with,
// one that still does is merged again. A release that does not land is remembered (holdBook)
// and logged: this engine will not count it, and others only past its lease.
func (e *Engine) releaseHold(ctx context.Context, hd *hold, cause error) {
	e.releaseRowHold(ctx, hd, headRowKey, "a step's", cause, func(ctx context.Context) (bool, string, error) {
		h, err := e.getHead(ctx, hd.runID)
		if errors.Is(err, ErrNotFound) {
			return false, "", nil
		}
		if err != nil {
			return false, "", err
		}
		return h.holder == hd.id && h.active(), h.etag, nil
	}, "run_id", hd.runID)
}

// releaseRowHold clears hd from the row rowKey of its run's partition that carries it (what
// names it in the log), as releaseHold says: holds reads the row again, reporting whether it
// still carries hd and its ETag.
func (e *Engine) releaseRowHold(ctx context.Context, hd *hold, rowKey, what string, cause error,
	holds func(context.Context) (bool, string, error), attrs ...any) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	etag := hd.etag
	var err error
	for range releaseAttempts {
		if etag != "" {
			_, err = e.store.Submit(ctx, []Op{{Kind: OpMerge, IfMatch: etag, Entity: Entity{PartitionKey: hd.runID, RowKey: rowKey,
				Properties: map[string]any{pHolder: "", pHoldUntil: int64(0)}}}})
			if err == nil {
				e.holds.finish(hd.id, true)
				return
			}
		}
		still, fresh, rerr := holds(ctx)
		if rerr != nil {
			err = rerr
			break
		}
		if !still {
			e.holds.finish(hd.id, true)
			return
		}
		etag = fresh
	}
	e.holds.finish(hd.id, false)
	if err != nil {
		attrs = append(attrs, "error", err.Error())
	}
	if cause != nil {
		attrs = append(attrs, "cause", cause.Error())
	}
	e.log.Warn("release "+what+" hold: left to its lease", attrs...)
}

// releaseAttempts bounds the merges of one releaseHold.
const releaseAttempts = 3
