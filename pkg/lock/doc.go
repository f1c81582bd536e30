// Package lock provides per-thread locks for graph hosting: the ThreadLock contract, its
// optional LossNotifier capability, and the in-process lock used by default.
//
// InProcessThreadLock (zero value ready) serialises a thread inside one process. Apps that
// scale out use a distributed lock: BlobLeaseThreadLock in package bloblock
// (pkg/azure/bloblock) takes a lease on one marker blob per (graph, thread). Conformance tests
// for any ThreadLock live in package locktest.
//
// A lock says who may run a thread; it does not fence storage writes. Graphs that must not
// write after losing a distributed lock watch the loss signal their lock offers (the optional
// LossNotifier interface, or ContextWithLoss). This package reads no environment variables
// and knows no storage service.
package lock
