// Package threads is the thread store contract of the LangGraph-Platform-compatible routes:
// the Thread record, the Store interface with its errors, and Memory, the in-process twin
// (NewMemory, NewBoundedMemory to cap the threads kept, in total and per owner, or
// NewLimitedMemory to also hold them to a byte budget shared with the other in-memory stores,
// package membudget).
//
// A thread carries the platform's bookkeeping (status, bound assistant, metadata, last run
// output); a graph's checkpoints live in the graph's own checkpointer, not here. The run lock
// of a thread is its status: Acquire moves it to busy atomically, Release sets the final
// status.
//
// Not for: checkpoints (package checkpoint), HTTP (package platform). Storage backends live in
// packages named for their dependency (pkg/azure/tablethreads on Azure Table storage); every
// backend runs the conformance suite in threadstest.
package threads
