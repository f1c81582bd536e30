// Package enginetest holds the conformance suites of the durable engine's storage
// interfaces — RunStoreTests, RunWorkQueueTests and RunPayloadStoreTests — and instrumented
// wrappers that count or fail storage operations (CountingStore, CountingQueue, FaultStore,
// FaultQueue, Outage) for engine tests, and ApprovalGraph, a graph built in versions for
// redeploy tests.
//
// Every backend runs the same suites: the in-memory twins in plain `go test`, the Azure
// backends against Azurite in `make test`. The suites check behaviour visible through the
// interfaces, including the Azure Table limits every Store must reject.
package enginetest
