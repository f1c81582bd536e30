// Package azurefaults tests the durable engine on Azure Storage (Azurite) when storage does
// what production storage does: replies lost after the write was applied, 503 ServerBusy
// bursts. The engine runs on the real Azure backends (tablestore, queuestore, blobstore) with
// the Azure SDK's default retry options, behind fault-injecting proxies
// (internal/faultproxy), so the SDK really retries a write that already landed and the
// engine must resolve what its retry reports (the ambiguity rule of package engine).
//
// It holds only integration tests (build tag `integration`, names containing
// "Integration"), run by `make test` against the Azurite it starts. Each test ends by checking
// the run's final state, one stored event per accepted raise, a gap-free history and no
// orphan index or due row.
package azurefaults
