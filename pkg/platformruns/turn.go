package platformruns

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/platform"
)

// The queue of a thread is its runs' engine group (engine.StartRunRequest.Group): the
// thread's unfinished runs, oldest first, are one bounded query (engine.RunQuery.OldestFirst).

// queueGroup returns the engine group of a thread's runs: the thread id itself when it is a
// valid group every store can key, else a digest of it (a run's state names its thread, so
// two threads sharing a digest would still be told apart).
func queueGroup(threadID string) string {
	if engine.ValidGroup(threadID) && !strings.ContainsRune(threadID, '\'') {
		return threadID
	}
	sum := sha256.Sum256([]byte(threadID))
	return "~sha256~" + hex.EncodeToString(sum[:])
}

// scanQueue calls fn on the thread's unfinished runs, oldest first, until fn returns false,
// reading batch runs at a time (each costs a head read): the number a caller expects to
// need. A run's turn comes in this order: the engine's creation time, then its id.
func scanQueue(ctx context.Context, eng Engine, threadID string, batch int, fn func(engine.Run, state) bool) error {
	q := engine.RunQuery{GraphName: GraphName, Group: queueGroup(threadID), Unfinished: true, OldestFirst: true, Limit: batch}
	for {
		page, err := eng.ListRuns(ctx, q)
		if err != nil {
			return fmt.Errorf("list the queue of thread %s: %w", threadID, err)
		}
		for _, r := range page.Runs {
			if s, ok := decodeState(r); ok && s.ThreadID == threadID && !fn(r, s) {
				return nil
			}
		}
		if page.ContinuationToken == "" {
			return nil
		}
		q.ContinuationToken = page.ContinuationToken
	}
}

// currentNode returns the node a Running run is at, "" when it has not begun.
func currentNode(r engine.Run) string {
	p, _ := r.Progress()
	return p.CurrentNode
}

// handedOff reports whether a run has executed: it is finished, or in its hand-off node.
func handedOff(r engine.Run) bool {
	return r.RuntimeStatus.Finished() || strings.HasPrefix(currentNode(r), handoffPrefix)
}

// waitTurn checks whether the run's turn has come: no run of its thread created before it is
// unfinished, runs in their hand-off node aside, and records the run's nonce (the stream's
// readers find its chunks by it, streams.go). It reads the thread's queue up to the run
// itself or a second run ahead of it (Ahead: 0, 1 or 2), so it costs one query and at most
// three head reads in the common case, however long the queue is.
func (b *Backend) waitTurn(ctx context.Context, s state) (any, error) {
	eng, _ := b.bound()
	if eng == nil {
		return nil, errNotBound
	}
	ahead := 0
	// Common cases: [self], [the running run, self], [a run handing off, the running run, self].
	err := scanQueue(ctx, eng, s.ThreadID, 3, func(r engine.Run, rs state) bool {
		if rs.RunID == s.RunID {
			return false
		}
		if !handedOff(r) {
			ahead++
		}
		return ahead < 2
	})
	if err != nil {
		return nil, err
	}
	info, _ := durable.StepInfoFrom(ctx)
	return durable.Update{"turn": ahead == 0, "ahead": ahead, "nonce": info.Nonce}, nil
}

// afterTurnCheck executes a run whose turn has come; any other waits for eventTurn, raised by
// the run before it when that one is done, and re-checks when it arrives or when the safety
// net runs out: recheck for the run next in line, recheckFar for those behind it.
func (b *Backend) afterTurnCheck(_ context.Context, s state) (any, error) {
	if s.Turn {
		return durable.Next(nodeExecute), nil
	}
	net := b.recheck
	if s.Ahead > 1 {
		net = b.recheckFar
	}
	return durable.WaitForEvent(eventTurn, nodeWaitTurn).Within(net, nodeWaitTurn), nil
}

// afterExecute goes to the hand-off node of the run's result.
func afterExecute(_ context.Context, s state) (any, error) {
	st := platform.RunStatus(s.Status)
	if !st.Terminal() {
		st = platform.RunError
	}
	return durable.Next(handoffPrefix + string(st)), nil
}

// handOff wakes the next run of the thread; a failure is retried (Policy).
func (b *Backend) handOff(ctx context.Context, s state) (any, error) {
	eng, _ := b.bound()
	if eng == nil {
		return nil, errNotBound
	}
	return nil, wakeNext(ctx, eng, s.ThreadID, s.RunID)
}

// wakeNext raises eventTurn on the first unfinished run of the thread that has not executed,
// the run done aside, unless that run is executing already. Cost: one query, a head read per
// run met (two in the common case: the run done and the next), and the event.
func wakeNext(ctx context.Context, eng Engine, threadID, done string) error {
	var next *engine.Run
	// Common case: [the run done, the next].
	err := scanQueue(ctx, eng, threadID, 2, func(r engine.Run, rs state) bool {
		if rs.RunID == done || handedOff(r) {
			return true
		}
		next = &r
		return false
	})
	if err != nil || next == nil || currentNode(*next) == nodeExecute {
		return err
	}
	err = eng.RaiseEvent(ctx, next.InstanceID, eventTurn, nil)
	var fin *engine.RunFinishedError
	if errors.As(err, &fin) || errors.Is(err, engine.ErrRunNotFound) {
		return nil // finished or purged meanwhile: its own hand-off, or a re-check, goes on
	}
	if err != nil {
		return fmt.Errorf("wake the next run of thread %s: %w", threadID, err)
	}
	return nil
}
