package engine

import (
	"context"
	"fmt"
)

// GenerationHistorian is an optional capability of a Runs: reading the history of one
// generation of a run that continued as new (durable.ContinueAsNew). The Engine implements
// it.
type GenerationHistorian interface {
	// GenerationHistory pages through the history rows of generation gen of the run (0 its
	// first), oldest first, as History does for the current one. The current and the
	// previous generation are kept. Errors: ErrRunNotFound; *GenerationNotKeptError for a
	// generation the run no longer keeps, or has not reached.
	GenerationHistory(ctx context.Context, instanceID string, gen int64, continuationToken string, limit int) (HistoryList, error)
}

// GenerationNotKeptError reports a generation whose history a run does not hold: one before
// the previous generation (its rows were deleted when the run continued as new again), or
// one the run has not reached.
type GenerationNotKeptError struct {
	// InstanceID names the run.
	InstanceID string
	// Generation is the generation asked for, Current the run's.
	Generation, Current int64
}

// Error names the run, the generation and the ones the run keeps.
func (e *GenerationNotKeptError) Error() string {
	if e.Generation > e.Current {
		return fmt.Sprintf("run '%s' is at generation %d; it has no generation %d", e.InstanceID, e.Current, e.Generation)
	}
	return fmt.Sprintf("run '%s' keeps the history of generations %d and %d only; generation %d was deleted when the run continued as new",
		e.InstanceID, max(e.Current-1, 0), e.Current, e.Generation)
}

var _ GenerationHistorian = (*Engine)(nil)

// GenerationHistory implements GenerationHistorian: the current generation's rows as History
// reads them, the previous generation's from its first row up to the current one's.
func (e *Engine) GenerationHistory(ctx context.Context, instanceID string, gen int64, continuationToken string, limit int) (HistoryList, error) {
	if !ValidInstanceID(instanceID) {
		return HistoryList{}, ErrRunNotFound
	}
	h, err := e.getHead(ctx, instanceID)
	if err != nil {
		return HistoryList{}, runLookupError(err)
	}
	switch {
	case gen == h.continued:
		return e.History(ctx, instanceID, continuationToken, limit)
	case gen != h.continued-1 || gen < 0:
		return HistoryList{}, &GenerationNotKeptError{InstanceID: instanceID, Generation: gen, Current: h.continued}
	}
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, MaxPageSize)
	q := Query{PartitionKey: instanceID, RowKeyFrom: histKey(h.gen, max(h.prevContinuedSeq, 1)), RowKeyTo: histKey(h.gen, h.continuedSeq),
		Limit: limit, Continuation: continuationToken}
	page, err := e.store.Query(ctx, q)
	if err != nil {
		return HistoryList{}, fmt.Errorf("query history run=%s generation=%d: %w", instanceID, gen, err)
	}
	out := HistoryList{Events: make([]HistoryEvent, 0, len(page.Entities)), ContinuationToken: page.Continuation}
	for _, ent := range page.Entities {
		ev, err := e.historyEvent(ctx, ent)
		if err != nil {
			return HistoryList{}, err
		}
		out.Events = append(out.Events, ev)
	}
	return out, nil
}
