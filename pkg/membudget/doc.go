// Package membudget accounts the bytes the in-memory stores hold (the embedded default's
// runs, run payloads, platform threads and checkpoints), in total and per identity, and
// refuses a write that would grow them past their limits: a Budget shared by those stores
// (memory.WithBudget, threads.MemoryOptions, checkpoint.MemoryOptions).
//
// A write on behalf of a caller's request (a context made by NewWork) is new work: a new
// run (a child run its family's root started included), an event, a new thread, a checkpoint
// written by a request. It is admitted only
// while it leaves an eighth of each limit free. Other writes (a run's steps, run by the
// engine's dispatcher) may use that last eighth, so a run already started can go on, or
// at least record its failure, when new work is refused. Shrinking writes are never
// refused, nor are the writes that make room (Exempt: a cancel). See docs/limits.md#memory-budget for the figures.
//
// Not for: the Azure stores, which need no such budget, or counting anything but the bytes
// the stores keep (a request's own buffers are bounded by the servers' body caps).
package membudget
