// Package blobcheckpoint is a checkpoint.Saver on one Azure Blob container, laid out as the
// Python hosting package's blob checkpointer lays it out (parity: docs/lineage.md):
//
//	threads/<tid>/ns/<ns>/checkpoints/<cid>/checkpoint.bin      the checkpoint, written last (blob metadata serde_type, parent_id)
//	threads/<tid>/ns/<ns>/checkpoints/<cid>/metadata.bin        its metadata (serde_type)
//	threads/<tid>/ns/<ns>/checkpoints/<cid>/writes/<task>/<i>.bin  pending writes (serde_type, channel, task_id, task_path)
//	threads/<tid>/ns/<ns>/values/<channel>/<version>.bin        channel values (serde_type; "empty" for an absent channel)
//	threads/<tid>/ns/<ns>/latest.json                           {"checkpoint_id":"<cid>"}, a hint only moved forward
//
// Every path segment is percent-encoded like the lock's marker names (checkpoint.Escape: a
// whole "." or ".." becomes "%2E" or "%2E%2E", never a dot segment), so the default namespace
// gives a literal "ns//" segment; blob metadata values are encoded the
// same way, keeping them ASCII. Put writes values, metadata, checkpoint.bin, then latest.json
// (compare-and-swap on its ETag, only when the new id sorts at or after the current one), so
// checkpoint.bin marks a checkpoint committed. Get reads an explicit id, else the hint, else
// scans the namespace's prefix. One writer per thread is assumed (the thread lock).
//
// Limits are enforced before any request: blob names within 1024 characters, metadata within
// 8 KiB, values within checkpoint.MaxValueBytes. Service errors are mapped to the contract's
// errors in one place (classify), without the request URL or the service's message.
//
// Not for: thread records (tablethreads), engine payloads (blobstore).
package blobcheckpoint
