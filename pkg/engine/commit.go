package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
)

// errDropped reports a step whose commit lost to another writer that moved the run on (or
// finished, cancelled or purged it): the step's work is discarded, which is correct.
var errDropped = errors.New("engine: step dropped")

// maxRebase bounds how often a step re-applies its outcome to a head that changed only by
// raised events.
const maxRebase = 16

// restepError reports a commit that must not be rebased but recomputed: the head changed in
// a way that changes what the step should do (an event arrived for a wait that was about to
// time out). fresh is the head to compute it on.
type restepError struct{ fresh *head }

func (e *restepError) Error() string { return "engine: step must be recomputed" }

// commit writes the outcome *o. A conflict means another writer changed the head: if it only
// appended events (same generation and step, still active, same wait), the outcome is
// rebuilt on the fresh head and written again, after its own checks of the fresh head
// (rebaser: a wait re-checks the inbox, a retry whose attempt moved on is dropped); otherwise
// the step is dropped (errDropped). A timeout whose wait got its event meanwhile is not
// rebased: the event wins (*restepError). A result the table cannot hold fails the run on
// this attempt: *o becomes that failure.
//
// Every attempt carries the same write id: an error that is not a definite rejection (a
// conflict included: it may be the retry of an attempt that landed) is resolved by reading
// the commit's witness, and a commit that landed goes on as if Submit had answered. Its rows
// record the state as form says (stateRows; nil: whole, as for a step that changes none).
func (e *Engine) commit(ctx context.Context, base *head, o *outcome, form *stateRows) (*head, error) {
	ctx, err := atStepCommit(ctx, base, *o) // the test kit's seam (commit_hook.go)
	if err != nil {
		return nil, fmt.Errorf("commit step run=%s step=%d: %w", base.runID, base.step+1, err)
	}
	var sp spills
	stored := false
	id := newWriteID()
	for range maxRebase {
		if err := e.noteUnapplied(ctx, base, *o); err != nil {
			e.release(ctx, &sp, nil)
			return nil, err
		}
		n, ops := buildCommit(base, *o, e.clock(), id, form)
		if err := e.spill(ctx, base.runID, base.nonce, ops, &sp); err != nil {
			if (errors.Is(err, ErrTooLarge) || errors.Is(err, ErrStorageFull)) && !stored {
				stored = true
				*o = e.unstorable(base, err)
				ctx = failureRoom(ctx, err)
				continue
			}
			e.release(ctx, &sp, nil)
			return nil, err
		}
		if len(sp.byValue) > 0 { // else the properties hold n's own values
			n.absorb(ops[0].Entity.Properties)
		}
		if n.status == StatusFailed && base.active() {
			e.indexFailure(ctx, n) // before the head says Failed: a rewind by filter finds it (rewind_index.go)
		}
		etags, err := e.store.Submit(ctx, ops)
		if err == nil {
			return e.committed(ctx, base, n, ops, &sp, etags[0], nil)
		}
		if refused(err) {
			e.release(ctx, &sp, nil)
			if !stored {
				stored = true // convert once; a failure that cannot be stored is an infrastructure error
				*o = e.unstorable(base, err)
				ctx = failureRoom(ctx, err)
				continue
			}
			return nil, fmt.Errorf("commit step run=%s step=%d: %w", base.runID, base.step+1, err)
		}
		first := int64(0)
		if n.histSeq > base.histSeq {
			first = base.histSeq + 1
		}
		fresh, landed, rerr := e.resolveWrite(ctx, base.runID, base.gen, base.nonce, first, id)
		switch {
		case rerr != nil:
			sp.keep() // the batch may have landed and refer to them
			return nil, fmt.Errorf("commit step run=%s step=%d: %w (outcome unknown: %v)", base.runID, base.step+1, err, rerr)
		case landed:
			e.log.Info("commit landed although its answer was an error", "run_id", base.runID, "step", n.step, "error", err.Error())
			return e.committed(ctx, base, n, ops, &sp, "", fresh)
		case fresh == nil || errors.Is(err, ErrNotFound): // the head is gone (purged), or the event was consumed
			e.release(ctx, &sp, nil)
			return nil, errDropped
		case !errors.Is(err, ErrConflict):
			// Not stored, as far as a read can tell; a redelivery of the work item retries.
			sp.keep()
			return nil, fmt.Errorf("commit step run=%s step=%d: %w", base.runID, base.step+1, err)
		}
		if fresh.gen != base.gen || fresh.nonce != base.nonce || fresh.step != base.step || !fresh.active() || fresh.waiting != base.waiting {
			e.log.Debug("step dropped: run moved on", "run_id", base.runID, "step", base.step+1, "head_step", fresh.step, "status", string(fresh.status))
			e.release(ctx, &sp, nil)
			return nil, errDropped
		}
		fresh.stateVal = base.stateVal
		if r, ok := (*o).(rebaser); ok { // the outcome's own checks of the fresh head
			if err := r.rebase(ctx, e, base, fresh); err != nil {
				if errors.Is(err, errDropped) {
					e.log.Debug("step dropped: run moved on", "run_id", base.runID, "step", base.step+1, "head_step", fresh.step, "status", string(fresh.status))
				}
				e.release(ctx, &sp, nil)
				return nil, err
			}
		}
		base = fresh
	}
	e.release(ctx, &sp, nil)
	return nil, fmt.Errorf("commit step run=%s step=%d: head keeps changing: %w", base.runID, base.step+1, ErrConflict)
}

// committed finishes a commit that is stored: it releases the payloads the batch does not
// refer to, records a finished run in the index and returns the new head. etag is the head's
// new ETag from Submit; when it is unknown, the head is read back (afterBlindCommit), or
// fresh, the head a resolving read returned, is used.
func (e *Engine) committed(ctx context.Context, base, n *head, ops []Op, sp *spills, etag string, fresh *head) (*head, error) {
	e.release(ctx, sp, ops)
	if base.stateRef != "" && n.stateRef != base.stateRef {
		// The head no longer refers to the state it replaced; nothing else does.
		e.release(ctx, &spills{byValue: map[string]string{"": base.stateRef}}, nil)
	}
	if base.active() && !n.active() {
		e.indexSetStatus(ctx, n)
		e.notifyParent(ctx, n) // a child run that finished (child_links.go)
	}
	e.changes.notify(n.runID)
	if n.etag = etag; n.etag != "" || !n.active() {
		return n, nil
	}
	if fresh != nil {
		return e.continueFrom(n, fresh)
	}
	return e.afterBlindCommit(ctx, n)
}

// afterBlindCommit learns the ETag of a commit whose store returned none, by reading the
// head back. The commit happened (Submit succeeded): if the head still holds this step,
// anything else on it (raised events) came after, and the run goes on from the head as
// read; if another writer moved the run on (a cancel, a duplicate worker), that writer
// drives it and this worker stops (errDropped), never mistaking its own commit for a lost
// one.
func (e *Engine) afterBlindCommit(ctx context.Context, n *head) (*head, error) {
	fresh, err := e.getHead(ctx, n.runID)
	if err != nil {
		return nil, fmt.Errorf("reread head after commit run=%s step=%d: %w", n.runID, n.step, err)
	}
	return e.continueFrom(n, fresh)
}

// continueFrom returns fresh, the head read after commit n was stored, to go on from, or
// errDropped when another writer has moved the run on since.
func (e *Engine) continueFrom(n, fresh *head) (*head, error) {
	if fresh.gen != n.gen || fresh.nonce != n.nonce || fresh.step != n.step || fresh.status != n.status || fresh.attempt != n.attempt {
		e.log.Debug("run moved on after commit", "run_id", n.runID, "step", n.step, "head_step", fresh.step)
		return nil, errDropped
	}
	fresh.stateVal = n.stateVal
	return fresh, nil
}

// failureRoom returns ctx for the write of the failure that replaces a result refused with
// err: marked as making room (MakingRoom) when the store refused it for want of room, so that
// a store holding all it may still records the failure, a few hundred bytes, and the run
// ends, instead of its work item retrying for as long as the store stays full.
func failureRoom(ctx context.Context, err error) context.Context {
	if errors.Is(err, ErrStorageFull) {
		return MakingRoom(ctx)
	}
	return ctx
}

// unstorable returns the outcome that replaces one whose commit the table refuses (a
// property, entity or batch above Azure's limits, e.g. a route's event name of 100 KiB): a
// run failure that names the limit, so the run fails on this attempt instead of retrying as
// an infrastructure error.
func (e *Engine) unstorable(base *head, err error) outcome {
	cause := "step result cannot be stored: invalid table entity"
	var le *LimitError
	if errors.As(err, &le) {
		cause = fmt.Sprintf("step result too large to store: %s of %d above the limit of %d", le.Limit, le.Size, le.Max)
		if le.Property != "" {
			cause += " (property " + le.Property + ")"
		}
	} else if errors.Is(err, ErrStorageFull) {
		cause = "step result cannot be stored: the run store is full (its memory budget)"
	} else if errors.Is(err, ErrTooLarge) {
		cause = "step result too large to store"
	}
	e.log.Warn("orchestrator failed: graph="+base.graph+" hash="+base.hash, "run_id", base.runID, "error", cause)
	o := failure("orchestrator", OrchestratorName, cause)
	o.node = base.node
	return o
}

// spillable names the properties whose values may move to the payload store.
var spillable = [...]string{pState, pOutput, pInput, pData, pPayload}

// spills remembers the payloads one write (with its rebases) stored, so that a rebase reuses
// them and the payloads no commit refers to are deleted: a rebased, dropped or failed
// commit leaves no orphan. Only a crash between a payload write and its commit can; it lies
// under the run's prefix and goes with the run's purge or replacement.
type spills struct {
	byValue map[string]string // value → key
}

// spill moves property values above InlineLimit to the payload store, leaving "" and a
// "<name>Ref" property with the key "<run id>/<run nonce>/<engine id>-<n>.json". Keys are
// unique per value written, so a losing writer never overwrites the winner's payload.
func (e *Engine) spill(ctx context.Context, runID, nonce string, ops []Op, sp *spills) error {
	for i := range ops {
		props := ops[i].Entity.Properties
		for _, name := range spillable {
			v, ok := props[name].(string)
			if !ok || len(v) <= e.opts.InlineLimit || utf16Len(v) <= e.opts.InlineLimit {
				continue
			}
			key, done := sp.byValue[v]
			if !done {
				key = payloadPrefix(runID, nonce) + e.id + "-" + strconv.FormatInt(e.spillSeq.Add(1), 10) + ".json"
				if err := e.payloads.Put(ctx, key, []byte(v)); err != nil {
					return fmt.Errorf("spill %s of run %s: %w", name, runID, err)
				}
				if sp.byValue == nil {
					sp.byValue = map[string]string{}
				}
				sp.byValue[v] = key
			}
			props[name] = ""
			props[name+refSuffix] = key
		}
	}
	return nil
}

// release deletes the payloads sp stored that the committed ops (nil: none) do not refer
// to. Failures are logged: the payload is then an orphan under the run's prefix.
func (e *Engine) release(ctx context.Context, sp *spills, committed []Op) {
	if len(sp.byValue) == 0 {
		return
	}
	used := map[string]bool{}
	for _, op := range committed {
		for _, name := range spillable {
			if k, ok := op.Entity.Properties[name+refSuffix].(string); ok && k != "" {
				used[k] = true
			}
		}
	}
	for _, key := range sp.byValue {
		if used[key] {
			continue
		}
		// Keys end in ".json" and never extend one another, so the prefix is the key alone.
		if _, err := e.payloads.DeletePrefix(context.WithoutCancel(ctx), key); err != nil {
			e.log.Warn("delete unused payload", "key", key, "error", err.Error())
		}
	}
	sp.byValue = nil
}

// keep forgets the payloads sp stored without deleting them: a write whose outcome is
// unknown may refer to them.
func (sp *spills) keep() { sp.byValue = nil }

// payloadPrefix is the key prefix of every payload of one run (one generation and nonce).
func payloadPrefix(runID, nonce string) string { return runID + "/" + nonce + "/" }

// The ambiguity rule: a write whose outcome is unknown is resolved by a read, never by
// assumption.
//
// A storage call has three outcomes, not two:
//   - succeeded (nil);
//   - definitely rejected, nothing written: a write over a limit or malformed (ErrTooLarge,
//     ErrInvalidEntity), which the service refuses alike on every try, or refused by a full
//     store (ErrStorageFull);
//   - unknown: every other error. A transport error, a timeout, a 500 or 503 may come after
//     the service applied the write. And the Azure SDK retries such failures, so a first try
//     that landed makes its own retry fail — an insert with 409, an If-Match with 412, a
//     delete with 404 — and the store reports ErrConflict or ErrNotFound for a write that
//     succeeded. So ErrConflict and ErrNotFound are unknown outcomes too until a read says
//     whose write is stored.
//
// The engine keeps the SDK's retries (they absorb throttling and most transport failures
// at no cost to the engine) and makes every write recognisable when read back: each carries
// a random write id, stamped on the head (WriteID) and on every row it inserts. On an error
// that is not a definite rejection, the writer reads a witness: the head (still carrying its
// id if nobody wrote after it), else the first row the write inserted, at a key fixed before
// the write (history rows are immutable, so they witness a write even after the head moved
// on, and after the inbox row an event inserted was consumed). A start is recognised by its
// run's nonce, a purge by the head being gone. What the witness says decides: the write
// landed (carry on as if it had answered), or it did not (the conflict is another writer's,
// handled as before; an unknown error is returned, nothing assumed). Reads happen only on
// these error paths: a steady step still costs one batch and no read.
//
// Writes whose repetition is harmless need no witness: deletes with ETagAny (a 404 is
// success), merges with ETagAny (index rows), inserts at random keys (due rows: a 409 is
// the first try), the head's AwaitVersion flag (set again by the next delivery if it did not
// land), payload puts (unconditional, at keys unique per value) and enqueues (a duplicate
// work item is dropped as stale or settled by the conditional commit). A step's hold is its
// own witness: its release reads the head back and looks for the holder's id (hold.go).

// refused reports whether a Submit error says the batch was refused on every try, so it
// wrote nothing. Any other error leaves the outcome unknown.
func refused(err error) bool {
	return errors.Is(err, ErrTooLarge) || errors.Is(err, ErrInvalidEntity) || errors.Is(err, ErrStorageFull)
}

// newWriteID returns a random write id.
func newWriteID() string { return newNonce() }

// resolveWrite reads whether a write with id landed on run runID (generation gen, nonce) when
// its Submit failed with an error that is not a definite rejection. seq is the history
// sequence of the first row the write inserted (0: it inserted none, so only the head can
// witness it). It returns the head as read (nil: no head) and whether the write landed.
func (e *Engine) resolveWrite(ctx context.Context, runID string, gen int64, nonce string, seq int64, id string) (*head, bool, error) {
	fresh, err := e.getHead(ctx, runID)
	if errors.Is(err, ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("resolve write %s: %w", id, err)
	}
	if fresh.writeID == id {
		return fresh, true, nil
	}
	if seq == 0 || fresh.gen != gen || fresh.nonce != nonce || fresh.histSeq < seq {
		return fresh, false, nil // its rows would be there: history only grows within a run
	}
	own, err := e.ownRow(ctx, runID, histKey(gen, seq), id)
	if err != nil {
		return nil, false, fmt.Errorf("resolve write %s: %w", id, err)
	}
	return fresh, own, nil
}

// ownRow reports whether the row at rk was inserted by the write with id.
func (e *Engine) ownRow(ctx context.Context, runID, rk, id string) (bool, error) {
	ent, err := e.store.Get(ctx, runID, rk)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read row %s/%s: %w", runID, rk, err)
	}
	return str(ent.Properties, pWriteID) == id, nil
}
