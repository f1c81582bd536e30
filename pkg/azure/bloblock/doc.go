// Package bloblock is the distributed lock.ThreadLock of funcgraph on Azure Blob leases
// (BlobLeaseThreadLock): a lease on one marker blob per (graph,
// thread), renewed in the background, so instances of a scaled-out app serialise a thread's
// requests. GRAPH_LOCK_BACKEND=distributed selects it (pkg/launch opens it).
//
// Open builds it from the app's *azure.Clients, the same clients the engine's stores are
// opened from, so connection strings, "UseDevelopmentStorage=true" and identity-based
// settings (AzureWebJobsStorage__accountName, __blobServiceUri, __credential, __clientId)
// all work; Open creates the container if it is missing. New builds it on an existing
// container client.
//
// A lease says who may run a thread; it does not fence storage writes. A holder learns that
// its lease was lost through Lost (lock.LossNotifier, lock.ContextWithLoss).
//
// Not for: the contract, the in-process lock or the conformance suite (package lock and
// lock/locktest); storage other than Azure Blob.
package bloblock
