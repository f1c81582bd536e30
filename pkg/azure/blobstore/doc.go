// Package blobstore is the engine's PayloadStore on Azure Blob storage: state, updates and
// event payloads too large for a table property are stored as block blobs named by their
// key ("<run id>/<generation>/<name>") in one container, and a run's payloads are purged
// by listing its prefix.
//
// Not for: locks (see bloblock), creating containers (azure.Clients.EnsureContainer, which
// Open calls), or small values (they belong in the table row).
package blobstore
