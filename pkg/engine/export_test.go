package engine

import "time"

// SetSweepBudget sets how long e's repair passes start new work (tests shorten it to make a
// pass stop after its first unit of each part).
func SetSweepBudget(e *Engine, d time.Duration) { e.sweepBudget = d }

// IndexShard returns the index shard of a run id, for tests that place runs in one shard.
func IndexShard(runID string) int { return indexShard(runID) }
