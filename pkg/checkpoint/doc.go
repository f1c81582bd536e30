// Package checkpoint is the checkpointer contract of hosted graphs: a Saver keeps a thread's
// checkpoints per namespace (each one a set of channel versions plus metadata), the channel
// values they point at, and the pending writes of each checkpoint, with the maintenance the
// hosting routes need (delete a thread, delete checkpoints before an id, keep the last N, sweep
// orphaned values). Memory (NewMemory) is the in-process twin, bounded in bytes and threads.
//
// The data model follows LangGraph's checkpointers: checkpoint ids sort lexicographically in
// creation order (NewID), channel versions are
// "<32-digit counter>.<16-digit random fraction>" (NextVersion), listings go newest first,
// and one writer per thread is assumed (the thread lock provides it).
//
// Not for: thread records and the busy lock (package platform/threads), run history (the
// durable engine). Backends live in packages named for their dependency
// (pkg/azure/blobcheckpoint on Azure Blob storage); every backend runs the conformance suite in
// checkpointtest.
package checkpoint
