// Package blobstore holds the engine's stores on Azure Blob storage: the PayloadStore (New),
// where state, updates and event payloads too large for a table property are stored as block
// blobs named by their key ("<run id>/<generation>/<name>") in one container, and the
// LiveStore (NewLive), where each run's live channel is an append blob in a container of its
// own, grown by Append Block conditioned on its length. A run's blobs are purged by listing
// its prefix.
//
// Every payload write is idempotent, so the Azure SDK's retry of a request whose reply was
// lost is harmless: a Put replaces the blob with the same bytes (keys are unique per value
// written), and DeletePrefix counts a blob already gone as deleted. A live append is not: its
// retry meets the log its first try grew and reports engine.ErrConflict, which the caller
// resolves by reading, as engine.LiveStore says.
//
// Not for: locks (see bloblock), creating containers (azure.Clients.EnsureContainer, which
// Open and OpenLive call), or small values (they belong in the table row).
package blobstore
