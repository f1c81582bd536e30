package engine

import "time"

// SetSweepBudget sets how long e's repair passes start new work (tests shorten it to make a
// pass stop after its first unit of each part).
func SetSweepBudget(e *Engine, d time.Duration) { e.sweepBudget = d }

// SetSweepParallel sets how many rows e's repair passes settle at a time (seeded tests set 1,
// so that a pass makes its storage calls in one order).
func SetSweepParallel(e *Engine, n int) { e.sweepParallel = n }

// IndexShard returns the index shard of a run id, for tests that place runs in one shard.
func IndexShard(runID string) int { return indexShard(runID) }
