// Package blobstore is the engine's PayloadStore on Azure Blob storage: state, updates and
// event payloads too large for a table property are stored as block blobs named by their
// key ("<run id>/<generation>/<name>") in one container, and a run's payloads are purged
// by listing its prefix.
//
// Every write is idempotent, so the Azure SDK's retry of a request whose reply was lost is
// harmless: a Put replaces the blob with the same bytes (keys are unique per value written),
// and DeletePrefix counts a blob already gone as deleted.
//
// Not for: locks (see bloblock), creating containers (azure.Clients.EnsureContainer, which
// Open calls), or small values (they belong in the table row).
package blobstore
