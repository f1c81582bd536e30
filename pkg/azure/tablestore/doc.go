// Package tablestore is the engine's run/history Store on Azure Table storage.
//
// One table holds every run; a run is one partition (its instance id), so its head row and
// history rows commit together in one entity group transaction. Every conditional write
// sends If-Match; the service's 412 and 409 become engine.ErrConflict and 404 becomes
// engine.ErrNotFound here, and nowhere else. Azure's limits (key characters and sizes, 252
// properties, 64 KiB per value, 1 MiB per entity, 100 operations and 4 MiB per batch, one
// partition per batch) are checked in code before anything is sent, because Azurite accepts
// more than Azure does.
//
// Retries are the Azure SDK's (its defaults, or the clients' options): a batch whose reply was
// lost, or that met a 500 or 503, is sent again. The store does not try to tell a retry's 409
// or 412 from another writer's — it reports ErrConflict either way, as the engine.Store
// contract allows — nor a transport error or an exhausted 5xx from a refusal: only
// ErrTooLarge and ErrInvalidEntity say that nothing was written. The engine resolves the rest
// by reading what it wrote back (the ambiguity rule, package engine); turning the retries off
// would leave the same ambiguity after every dropped connection and move throttling retries
// into the engine.
//
// Submit returns the new ETag of every operation: the aztables SDK drops them, so the store
// captures the raw multipart reply of the batch and reads each sub-response's ETag header
// (one table operation per commit, no re-read of the head).
//
// Value types: string, []byte, bool, int32, int64 (sent as Edm.Int64), float64 (always
// annotated Edm.Double, NaN and ±Inf included) and time.Time (Edm.DateTime: UTC, 100 ns
// precision, years 1601–9999). Strings must be valid UTF-8.
//
// Not for: creating tables (azure.Clients.EnsureTable, which Open calls), payloads too large
// for a property (blobstore), or queries without a PartitionKey on tables that grow with
// history (they scan the whole table; the engine must not issue them periodically or per
// request).
package tablestore
