// Package memory holds in-memory twins of the durable engine's storage interfaces — a table
// Store, a WorkQueue, a PayloadStore and a LiveStore (NewStore, NewQueue, NewPayloadStore,
// NewLiveStore) — for tests and for the embedded default of the standalone server. They
// enforce the same rules as the Azure backends (the Azure Table limits of
// engine.ValidateBatch, ETags, visibility timeouts, the append blob limits of a live log), so
// a test that passes here does not hide a write Azure would reject. WithBudget holds a Store,
// a PayloadStore and a LiveStore to a byte budget (package membudget), as the embedded
// default does.
//
// Nothing here is durable: a process restart loses every run. Use the Azure backends in
// production.
package memory
