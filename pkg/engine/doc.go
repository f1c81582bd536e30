// Package engine runs durable graphs (package durable) as event-sourced runs: every step of a
// run appends history rows and updates the run's head row in one conditional table
// transaction, so a step commits exactly once however often its work item is delivered.
//
// The engine owns the storage contracts it needs — Store (a table shaped after Azure Table
// storage), WorkQueue (at-least-once messages with a visibility timeout, shaped after Azure
// Queue storage) and PayloadStore (blobs for values too large for a table property) — with
// their errors and limits. Backends implement them: package memory (in-process twins) and the
// Azure backends. Their conformance suites are in package enginetest.
//
// An Engine starts, steps, signals, cancels, lists and purges runs (the Runs interface), and
// dispatches work items: either with its own workers (Start) or one delivery at a time from
// a host's queue trigger (HandleWorkItem).
//
// Every write can be recognised as the engine's own when read back: a storage error that is
// not a definite rejection — a timeout, a 5xx, and even ErrConflict or ErrNotFound, which a
// retried request can meet against its own first try — is resolved by reading the write's
// witness, never by assumption (ambiguity.go).
//
// It imports nothing of HTTP serving, the Functions host protocol or Azure: the runs HTTP API
// is package runsapi.
package engine

// The files, in reading order; calls go down the list, never up:
//
//	engine.go       Engine, New, Start, Close
//	start.go        StartRun
//	events.go       RaiseEvent
//	cancel.go       CancelRun
//	repair.go       Sweep and the due index (recovery and its cost model)
//	poison.go       the repair pass's rescue of the poison queue
//	dispatcher.go   the embedded workers: receive a work item, keep it hidden, delete it
//	                (or move it to the poison queue past MaxDequeueCount)
//	workitem.go     one work item: HandleWorkItem, the kill limit (restarts counted on the
//	                run), the step loop, dispatch of the next item
//	step.go         one step: the user's node, route or event handler, and what it loads
//	commit.go       the step's outcome and its batch: head merge and history rows
//	purge.go        PurgeRun, and the rows of replaced runs
//	wait.go         WaitRun
//	list.go         ListRuns: the index shards merged newest first, continuation tokens
//	index.go        the run index: sharded partitions, its rows, orphan clean-up
//	group.go        the group index: one group's runs, newest first, its unfinished ones oldest first
//	read.go         GetRun and History
//	version.go      a run whose graph version is not registered here: parked, not failed
//	observer.go     Observer hooks
//	ambiguity.go    the ambiguity rule: a write whose outcome is unknown is resolved by a read
//	head.go         the run's head row: its fields, read and written
//	rows.go         a run's partition: its row layout and keys, history rows
//	options.go      Options and the policies of graphs
//	runs.go         the Runs contract: Run, statuses, errors, instance ids
//	run_status.go   accessors of a Run
//	store.go        the Store contract
//	queue.go        the WorkQueue contract
//	payloads.go     the PayloadStore contract, and spilling large values to it
//	limits.go       the Azure Table limits every Store enforces
//	json.go         the JSON the engine writes by hand
