// Package lock provides per-thread locks for graph hosting: the ThreadLock contract, the
// in-process lock used by default, and a distributed lock on Azure Blob leases for apps that
// scale out.
//
// InProcessThreadLock (zero value ready) serialises a thread inside one process.
// BlobLeaseThreadLock takes a lease on one marker blob per (graph, thread) and renews it in
// the background; build it with NewBlobLeaseThreadLock on an existing container, or with
// OpenBlobLease from a storage connection string. Conformance tests for any ThreadLock live
// in package locktest.
//
// A lock says who may run a thread; it does not fence storage writes. Graphs that must not
// write after losing a distributed lock watch the loss signal their lock offers (the optional
// LossNotifier interface, or ContextWithLoss). This package reads no environment variables.
package lock
