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
// It imports nothing of HTTP serving, the Functions host protocol or Azure: the runs HTTP API
// is package runsapi.
package engine
