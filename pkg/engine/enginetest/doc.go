// Package enginetest holds the conformance suites of the durable engine's storage
// interfaces — RunStoreTests, RunWorkQueueTests, RunPayloadStoreTests and RunLiveStoreTests,
// and RunSearchKeyTests, the engine's search keys over a Store —
// and instrumented wrappers that count storage operations or fail them — before or after they
// are applied, losing their reply the way a retrying SDK sees it, or all at once in an outage
// (CountingStore, CountingQueue, FaultStore, FaultQueue, Outage) — for engine tests, and
// ApprovalGraph, a graph built in versions for redeploy tests.
//
// Every backend runs the same suites: the in-memory twins in plain `go test`, the Azure
// backends against Azurite in `make test`. The suites check behaviour visible through the
// interfaces, including the Azure limits every backend must enforce itself (a Store's table
// limits, a LiveStore's append blob limits).
package enginetest
