package a2aserver

import (
	"context"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// await waits for run to reach a state until accepts, within Options.MaxWait, calling each (when
// set) with every new state read. answered says the message just delivered an event to the
// run's wait: that wait is not an interruption, only one after it is (a wait is over once an
// event_applied or wait_timed_out row follows the last event_received row). A Runs without a
// feed answers at once. live, when set, is called with every record of the run's live channel
// (what its steps write while they run) as the feed brings it.
func (c *call) await(run engine.Run, answered bool, until func(state string) bool, each func(engine.Run) error, live func(engine.LiveRecord) error) (engine.Run, error) {
	feeder, ok := c.s.opts.Runs.(engine.RunFeeder)
	if !ok {
		return run, nil
	}
	ctx, cancel := context.WithTimeout(c.ctx(), c.s.opts.MaxWait)
	defer cancel()
	q := engine.FeedQuery{Live: live != nil}
	var received, applied int64
	last := taskState(run.RuntimeStatus, waitingEvent(run) != "")
	for !until(last) {
		if remaining := time.Until(deadline(ctx)); remaining > 0 {
			q.Wait = remaining
		}
		page, err := feeder.Feed(ctx, run.InstanceID, q)
		if ctx.Err() != nil {
			return run, nil // waited long enough: the task as it is
		}
		if err != nil {
			return engine.Run{}, err
		}
		q.After, q.Run, q.LiveAfter = page.NextAfter, page.Run, max(q.LiveAfter, page.LiveNext)
		for _, rec := range page.Live {
			if err := live(rec); err != nil {
				return run, err
			}
		}
		for _, it := range page.Items {
			switch it.Type {
			case engine.HistoryEventReceived:
				received = it.Sequence
			case engine.HistoryEventApplied, engine.HistoryEventRefused, engine.HistoryWaitTimedOut:
				applied = it.Sequence
			}
		}
		if len(page.Items) >= engine.FeedPageSize {
			continue // more rows at once: read on before judging the state
		}
		next, err := c.s.opts.Runs.GetRun(c.ctx(), run.InstanceID)
		if err != nil {
			return engine.Run{}, err
		}
		state := taskState(next.RuntimeStatus, waitingEvent(next) != "")
		if state == StateInputRequired && answered && applied <= received {
			state = StateWorking // the answered wait, its event not applied yet
			next.CustomStatus = nil
		}
		run = next
		if state != last && each != nil {
			if err := each(run); err != nil {
				return run, err
			}
		}
		last = state
	}
	return run, nil
}

func deadline(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}
