// Package tablethreads is the threads.Store of the platform routes on Azure Table storage.
//
// Layout: one entity per thread. PartitionKey is a hash bucket of the thread id ("t00" to
// "tff", the first byte of its SHA-256), RowKey the thread id percent-encoded (every byte but
// ASCII letters, digits and "-_.~"). Columns: created_at and updated_at (Edm.DateTime, UTC),
// status, assistant_id, and JSON text in metadata_json, values_json and interrupts_json;
// JSON longer than one property allows continues in metadata_json_1, values_json_1, ...
//
// Why buckets, not the original's single "thread" partition: a partition is served by one
// partition server (about 2 000 entities/s), and every run takes and releases its thread's
// lock with a conditional write, so one partition would cap the whole app's run rate and make
// every user's threads contend. Hashing spreads threads over 256 partitions while a thread
// still maps to exactly one entity addressed by a point read. Search and count scan the table
// (with `status eq` pushed to the service; metadata filtering and sorting are client-side, as
// in the original), which a single partition would not have avoided either.
//
// Every write is a compare-and-swap: read the entity, then replace it with If-Match on its
// ETag; a 412 re-reads and retries, up to 3 attempts, after which Acquire answers
// ErrThreadBusy and the other writes an error. The store refuses entities above 1 MiB
// (ErrTooLarge) and logs a warning from 90 %; each property stays under 64 KiB.
//
// Not for: checkpoints (see blobcheckpoint); the table must exist (Open creates it through
// azure.Clients).
package tablethreads
