package engine

import (
	"context"
	"errors"
	"fmt"
)

// The ambiguity rule: a write whose outcome is unknown is resolved by a read, never by
// assumption.
//
// A storage call has three outcomes, not two:
//   - succeeded (nil);
//   - definitely rejected, nothing written: a write over a limit or malformed (ErrTooLarge,
//     ErrInvalidEntity), which the service refuses alike on every try;
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
// work item is dropped as stale or settled by the conditional commit).

// refused reports whether a Submit error says the batch was refused on every try, so it
// wrote nothing. Any other error leaves the outcome unknown.
func refused(err error) bool {
	return errors.Is(err, ErrTooLarge) || errors.Is(err, ErrInvalidEntity)
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
