// Package tablethreads is the threads.Store of the platform routes on Azure Table storage.
//
// Layout: one entity per thread. PartitionKey is a hash bucket of the thread id ("t00" to
// "tff", the first byte of its SHA-256), RowKey the thread id percent-encoded (every byte but
// ASCII letters, digits and "-_.~"). Columns: created_at and updated_at (Edm.DateTime, UTC),
// status, assistant_id, and JSON text in metadata_json, values_json and interrupts_json;
// JSON longer than one property allows continues in metadata_json_1, values_json_1, ...
// Values longer than 64 Ki UTF-16 units live in a blob of the values container instead
// (Options.Container), named threads/<escaped thread id>/values-<uuid>.json (checkpoint.Escape),
// and the entity's values_ref names it: a new blob per write, so a writer that loses the
// compare-and-swap deletes its own blob and the winner deletes the one it replaced; Delete
// removes the thread's blobs. The record limits are the threads package's (threads.CheckSize:
// 16 MiB of values, 256 KiB of metadata), the same as the in-memory store's.
//
// Why buckets, not a single "thread" partition (the Python hosting package's table thread
// store, docs/lineage.md): a partition is served by one
// partition server (about 2 000 entities/s), and every run takes and releases its thread's
// lock with a conditional write, so one partition would cap the whole app's run rate and make
// every user's threads contend. Hashing spreads threads over 256 partitions while a thread
// still maps to exactly one entity addressed by a point read.
//
// Index. Search, Count and ResetStaleLocks never list the thread table: they read index rows
// in a companion table (Options.IndexTable, default the table's name followed by "index"),
// in three families, each sharded over 8 partitions by FNV-1a of the thread id except the
// owner's:
//
//	all-<s>            every thread
//	st-<s>~<status>    the threads with that status
//	ow~<hash>          the threads whose metadata "owner" is that string (SHA-256, 128 bits)
//
// RowKey <19 digits: MaxInt64 - created, 100 ns>!<thread id, order-preserving base 64>!<nonce>,
// so a partition lists newest first, ties by thread id, the order Search returns. The row
// names the thread (tid) and the entity version it was written for (v); the entity keeps its
// version (ix_v, bumped by every write) and the nonce of its row in each family (ix_c, ix_s,
// ix_o). Search picks the owner's partition when the query asks for a string owner, else the
// status's shards when it filters by status, else the shards of all threads; metadata
// filters other than a string owner (and the status, with an owner) are checked on the
// entity. Only the order the routes serve (created_at, newest first: they answer 501 to
// sort_by and sort_order) is indexed; an updated_at order would cost two index writes on
// every write of a thread for a listing no route offers.
//
// Writes. Azure batches are per partition, so index rows are separate writes from the
// entity: the rows a write adds (a new status, owner or thread) are written before the
// entity's compare-and-swap, which records their nonces; the rows it replaces are deleted
// after it. So a stored thread always has its rows, and a crash leaves at most extra rows.
// Each row key is new (its nonce), so a writer deletes only rows no one else writes: its own
// after a refused write, the replaced ones after a stored one. After a write whose outcome is
// unknown (a timeout) its rows stay. A reader checks every row against the thread's entity
// (the point read that returns the thread): the row is live when the entity's nonce for
// the family names it; otherwise it is skipped, and deleted when it is dead: the entity's
// version reached the row's (its writer can no longer win), or the row is older than 5
// minutes (a write that never stored its entity, or a deleted thread's). Delete removes the
// entity, then its rows. Rows never change the answer: an extra row costs the reader who
// meets it one point read, once.
//
// Cost (T = thread-table request, I = index-table request; 1 query = 1 page of up to 1 000
// rows):
//
//	create                          1 T + 2 or 3 I (rows: all, status, owner)
//	Acquire / Release               2 T (read + compare-and-swap) + 2 I (new status row,
//	                                old one deleted); + 2 I when the owner changes
//	PatchMetadata                   2 T (+ 2 I when the owner changes); Delete 2 T + 2-3 I
//	Search page (offset O, limit L) 8 I queries (1 for an owner) with $top O+L + one T read
//	                                per row until L threads match: O+L, plus the threads the
//	                                metadata filters drop, plus extra rows met
//	Count                           the family's rows (8 queries + 1 per 1 000 rows) + one T
//	                                read per row: the matching threads (with a string owner,
//	                                the owner's threads)
//	ResetStaleLocks                 8 I queries over the busy rows + one T read per busy
//	                                thread + 2 T and 2 I per thread it resets
//
// None depends on the number of threads kept (TestStore_StorageOps_Integration). Count reads
// each thread it counts, so a count of most threads costs more requests than a scan of the
// table would (one per thread, not per 1 000); an exact count from rows alone would need two
// more index writes per status change (marking a row before the entity moves past it), so
// the per-row check is what the index does instead.
//
// Every write is a compare-and-swap: read the entity, then replace it with If-Match on its
// ETag; a 412 re-reads and retries, up to 3 attempts, after which Acquire answers
// ErrThreadBusy and the other writes an error. The store refuses records past the threads
// limits, and entities above 1 MiB, with ErrTooLarge, and logs a warning from 90 %; each
// property stays under 64 KiB.
//
// Not for: checkpoints (see blobcheckpoint); the table must exist (Open creates it through
// azure.Clients).
package tablethreads
