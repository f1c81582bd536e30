// Package lock provides per-thread locks for graph hosting: the ThreadLock contract, the
// in-process lock used by default, and a distributed lock on Azure Blob leases for apps that
// scale out.
//
// A lock says who may run a thread; it does not fence storage writes. Graphs that must not
// write after losing a distributed lock watch the loss signal their lock offers.
package lock
