// Package checkpointtest is the conformance suite of checkpoint.Saver. Every backend runs it:
// the in-memory twin in its unit tests, Azure Blob storage (blobcheckpoint) on Azurite.
package checkpointtest
