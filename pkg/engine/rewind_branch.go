package engine

import (
	"context"
	"errors"
	"fmt"
)

// A rewound fan-out (rewind.go): the region is opened again after the run_rewound row, and
// each of its branches goes to the queue again. A branch whose row in the failed region
// (CarryBase) is branch_completed is carried: its worker copies that row's data into its slot
// of the new region, through the same exactly-once insert a branch's completion takes, and
// never runs its node; the events it emitted stay where they were recorded. A branch that
// failed there runs again, with a fresh progress row (fresh attempts). Cost per carried
// branch: 1 T read of its old row (and its payload when spilled) and 1 T batch.

// carryBranch carries branch b of h's rewound region when it completed in the failed one: it
// reports whether it did (its completion is stored, and the join is enqueued when due).
func (e *Engine) carryBranch(ctx context.Context, h *head, b branchRef) (bool, error) {
	ent, err := e.store.Get(ctx, h.runID, histKey(h.gen, h.carryBase+b.index*BranchSlots))
	switch {
	case errors.Is(err, ErrNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("read carried branch %d of run %s: %w", b.index, h.runID, err)
	case str(ent.Properties, pType) != HistoryBranchCompleted:
		return false, nil // it failed: it runs again
	}
	data, err := e.readSpilled(ctx, str(ent.Properties, pData), str(ent.Properties, pData+refSuffix))
	if err != nil {
		return false, fmt.Errorf("read carried branch %d of run %s: %w", b.index, h.runID, err)
	}
	stored, err := e.commitBranch(ctx, h, b, 0, false, data, nil)
	if err != nil || !stored {
		return true, err
	}
	return true, e.afterBranch(ctx, h, b.index)
}

// dispatchRegion puts every branch of n's rewound region on the queue.
func (e *Engine) dispatchRegion(ctx context.Context, n *head) error {
	branches, err := e.regionBranches(ctx, n)
	if err != nil {
		return err
	}
	return e.dispatchBranches(ctx, n, branches)
}
